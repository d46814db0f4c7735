-- Moves one batch's staged samples (samples_in, already free of duplicate keys) into the
-- hypertable when some of them may be stored already: inserts new samples, updates those whose
-- value (or zone) changed, notes the days and hours an update touched (for an exact recount), and returns
-- the rows inserted or changed (samples::store adds the new ones to the rollups and announces
-- both). Batches whose samples are all new never come here: they are copied straight in.
-- $1 user id, $2 batch id.
with up as (
    insert into samples as s
        (user_id, series_type_id, data_source_id, ts, value, zone_offset, is_daily_total, batch_id)
    select $1, series_type_id, data_source_id, ts, value, zone_offset, is_daily_total, $2
    from samples_in
    on conflict (user_id, series_type_id, ts, data_source_id) do update
        set value = excluded.value,
            zone_offset = excluded.zone_offset,
            is_daily_total = excluded.is_daily_total,
            batch_id = excluded.batch_id
        where (s.value, s.zone_offset, s.is_daily_total)
              is distinct from (excluded.value, excluded.zone_offset, excluded.is_daily_total)
    returning series_type_id, data_source_id, ts, value, zone_offset, is_daily_total,
              (xmax = 0) as inserted
),
touched as (
    insert into samples_touched (series_type_id, data_source_id, local_date, hour)
    select distinct series_type_id, data_source_id, local_day(ts, zone_offset),
           time_bucket(interval '1 hour', ts)
    from up where not inserted
)
select * from up
