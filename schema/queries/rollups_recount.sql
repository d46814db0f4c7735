-- Recounts the rollups of the (series, source, local day) keys in samples_touched from the raw
-- samples: after an update the old value's contribution is unknown, so the day is rebuilt.
-- The neighbouring days are rebuilt too, since a changed zone offset can move a sample's day.
-- Run after rollups_clear.sql in the same transaction. $1 user id.
with keys as (
    select distinct series_type_id, data_source_id, d::date as local_date
    from samples_touched,
         generate_series(local_date - 1, local_date + 1, interval '1 day') as d
)
insert into daily_rollups
    (user_id, series_type_id, data_source_id, local_date,
     sample_count, value_sum, value_min, value_max, total_count, total_sum)
select $1, s.series_type_id, s.data_source_id, k.local_date,
       count(*) filter (where not coalesce(s.is_daily_total, false)),
       coalesce(sum(s.value order by s.ts) filter (where not coalesce(s.is_daily_total, false)), 0),
       min(s.value) filter (where not coalesce(s.is_daily_total, false)),
       max(s.value) filter (where not coalesce(s.is_daily_total, false)),
       count(*) filter (where s.is_daily_total),
       coalesce(sum(s.value order by s.ts) filter (where s.is_daily_total), 0)
from keys k
join samples s
  on s.user_id = $1 and s.series_type_id = k.series_type_id
 and s.data_source_id = k.data_source_id
 and s.ts >= k.local_date - interval '1 day' and s.ts < k.local_date + interval '2 days'
 and local_day(s.ts, s.zone_offset) = k.local_date
group by s.series_type_id, s.data_source_id, k.local_date
