-- Recounts the hourly rollups of the (series, source, hour) keys in samples_touched from the raw
-- samples. Run after hourly_rollups_clear.sql in the same transaction. $1 user id.
with keys as (select distinct series_type_id, data_source_id, hour from samples_touched)
insert into hourly_rollups
    (user_id, series_type_id, data_source_id, hour, sample_count, value_sum, total_count,
     total_sum, value_max, zone_offset)
select $1, k.series_type_id, k.data_source_id, k.hour,
       count(*) filter (where not coalesce(s.is_daily_total, false)),
       coalesce(sum(s.value order by s.ts) filter (where not coalesce(s.is_daily_total, false)), 0),
       count(*) filter (where s.is_daily_total),
       coalesce(sum(s.value order by s.ts) filter (where s.is_daily_total), 0),
       max(s.value), min(s.zone_offset)
from keys k
join samples s
  on s.user_id = $1 and s.series_type_id = k.series_type_id
 and s.data_source_id = k.data_source_id
 and s.ts >= k.hour and s.ts < k.hour + interval '1 hour'
group by k.series_type_id, k.data_source_id, k.hour
