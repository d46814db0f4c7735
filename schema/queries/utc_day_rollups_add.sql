-- Adds what a batch's new samples bring to their UTC day rollups: its hourly additions (the
-- parallel arrays hourly_rollups_add.sql takes) summed per day, in key order. Additions
-- commute, so writers adding beside each other (an import's chunks) keep the days exact.
-- $1 user id.
insert into utc_day_rollups as r
    (user_id, series_type_id, data_source_id, day, sample_count, value_sum, total_count,
     total_sum, value_max, zone_offset)
select $1, a.series_type_id, a.data_source_id, time_bucket(interval '1 day', a.hour),
       sum(a.sample_count), sum(a.value_sum), sum(a.total_count), sum(a.total_sum),
       max(a.value_max), min(a.zone_offset)
from unnest($2::smallint[], $3::uuid[], $4::timestamptz[], $5::integer[], $6::float8[],
            $7::integer[], $8::float8[], $9::float8[], $10::smallint[])
     as a(series_type_id, data_source_id, hour, sample_count, value_sum, total_count, total_sum,
          value_max, zone_offset)
group by 2, 3, 4
order by 2, 3, 4
on conflict (user_id, series_type_id, data_source_id, day) do update
    set sample_count = r.sample_count + excluded.sample_count,
        value_sum = r.value_sum + excluded.value_sum,
        total_count = r.total_count + excluded.total_count,
        total_sum = r.total_sum + excluded.total_sum,
        value_max = greatest(r.value_max, excluded.value_max),
        zone_offset = least(r.zone_offset, excluded.zone_offset),
        sealed = false,
        changed_at = now()
