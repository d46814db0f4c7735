-- Adds what a batch's new samples bring to their (series, source, local day) rollups, one row per
-- key from parallel arrays (rollups::Additions builds them). $1 user id.
insert into daily_rollups as r
    (user_id, series_type_id, data_source_id, local_date,
     sample_count, value_sum, value_min, value_max, total_count, total_sum)
select $1, a.*
from unnest($2::smallint[], $3::uuid[], $4::date[], $5::bigint[], $6::float8[], $7::float8[],
            $8::float8[], $9::integer[], $10::float8[])
     as a(series_type_id, data_source_id, local_date, sample_count, value_sum, value_min,
          value_max, total_count, total_sum)
on conflict (user_id, series_type_id, local_date, data_source_id) do update
    set sample_count = r.sample_count + excluded.sample_count,
        value_sum = r.value_sum + excluded.value_sum,
        value_min = least(r.value_min, excluded.value_min),
        value_max = greatest(r.value_max, excluded.value_max),
        total_count = r.total_count + excluded.total_count,
        total_sum = r.total_sum + excluded.total_sum
