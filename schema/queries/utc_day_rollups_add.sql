-- Adds what a batch's new samples bring to their UTC day rollups: one row per (series, source,
-- UTC day) from parallel arrays in key order, each the sum of the day's hourly additions
-- (rollups::write_hours sums them). Additions commute, so writers adding beside each other (an
-- import's chunks) keep the days exact. $1 user id.
insert into utc_day_rollups as r
    (user_id, series_type_id, data_source_id, day, sample_count, value_sum, total_count,
     total_sum, value_max, zone_offset)
select $1, a.*
from unnest($2::smallint[], $3::uuid[], $4::timestamptz[], $5::integer[], $6::float8[],
            $7::integer[], $8::float8[], $9::float8[], $10::smallint[])
     as a(series_type_id, data_source_id, day, sample_count, value_sum, total_count, total_sum,
          value_max, zone_offset)
on conflict (user_id, series_type_id, data_source_id, day) do update
    set sample_count = r.sample_count + excluded.sample_count,
        value_sum = r.value_sum + excluded.value_sum,
        total_count = r.total_count + excluded.total_count,
        total_sum = r.total_sum + excluded.total_sum,
        value_max = greatest(r.value_max, excluded.value_max),
        zone_offset = least(r.zone_offset, excluded.zone_offset),
        sealed = false,
        changed_at = now()
