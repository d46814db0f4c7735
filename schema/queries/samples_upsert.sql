-- Moves one batch's staged samples (samples_in, already free of duplicate keys) into the
-- hypertable, in one statement: inserts new samples, updates those
-- whose value changed, adds the inserted rows to the per-local-day rollups, notes the days an
-- update touched (for an exact recount), and writes one outbox event per series type.
-- The event names its samples rather than copying them (copying costs a third of the ingest
-- rate): those of this user and series between start_time and end_time whose batch_id is this
-- batch. A sample changed again by a later batch is announced by that batch's event.
-- $1 user id, $2 batch id, $3 provider, $4 whether to write events.
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
              (xmax = 0) as inserted,
              local_day(ts, zone_offset) as local_date
),
rolled as (
    insert into daily_rollups as r
        (user_id, series_type_id, data_source_id, local_date,
         sample_count, value_sum, value_min, value_max, total_count, total_sum)
    select $1, series_type_id, data_source_id, local_date,
           count(*) filter (where not coalesce(is_daily_total, false)),
           coalesce(sum(value) filter (where not coalesce(is_daily_total, false)), 0),
           min(value) filter (where not coalesce(is_daily_total, false)),
           max(value) filter (where not coalesce(is_daily_total, false)),
           count(*) filter (where is_daily_total),
           coalesce(sum(value) filter (where is_daily_total), 0)
    from up
    where inserted
    group by series_type_id, data_source_id, local_date
    on conflict (user_id, series_type_id, local_date, data_source_id) do update
        set sample_count = r.sample_count + excluded.sample_count,
            value_sum = r.value_sum + excluded.value_sum,
            value_min = least(r.value_min, excluded.value_min),
            value_max = greatest(r.value_max, excluded.value_max),
            total_count = r.total_count + excluded.total_count,
            total_sum = r.total_sum + excluded.total_sum
    returning 1
),
touched as (
    insert into samples_touched (series_type_id, data_source_id, local_date)
    select distinct series_type_id, data_source_id, local_date from up where not inserted
    returning 1
),
events as (
    insert into outbox (event_type, user_id, payload)
    select st.event, $1,
           jsonb_build_object(
               'kind', 'timeseries', 'user_id', $1::uuid, 'provider', $3::text,
               'series_type', st.slug, 'batch_id', $2::uuid, 'sample_count', count(*),
               'start_time', min(up.ts), 'end_time', max(up.ts))
    from up join series_types st on st.id = up.series_type_id
    where $4
    group by st.event, st.slug
    returning 1
)
select count(*) filter (where inserted) as inserted,
       count(*) filter (where not inserted) as updated,
       (select count(*) from rolled) as rollup_rows,
       (select count(*) from touched) as touched_days,
       (select count(*) from events) as events
from up
