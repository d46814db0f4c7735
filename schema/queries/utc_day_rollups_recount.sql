-- Sets the UTC day rollups of the days of the hours in samples_touched to the sum of their
-- hourly rollups, after hourly_rollups_recount.sql in the same transaction (which holds the
-- user's exclusive writer lock, so no other writer adds to those days meanwhile). A stored hour
-- never loses all its samples short of a user's rebuild, which clears both tables. $1 user id.
with days as (
    select distinct series_type_id, data_source_id, time_bucket(interval '1 day', hour) as day
    from samples_touched
)
insert into utc_day_rollups as r
    (user_id, series_type_id, data_source_id, day, sample_count, value_sum, total_count,
     total_sum, value_max, zone_offset)
select $1, d.series_type_id, d.data_source_id, d.day, sum(h.sample_count), sum(h.value_sum),
       sum(h.total_count), sum(h.total_sum), max(h.value_max), min(h.zone_offset)
from days d
join hourly_rollups h
  on h.user_id = $1 and h.series_type_id = d.series_type_id
 and h.data_source_id = d.data_source_id
 and h.hour >= d.day and h.hour < d.day + interval '1 day'
group by d.series_type_id, d.data_source_id, d.day
on conflict (user_id, series_type_id, data_source_id, day) do update
    set sample_count = excluded.sample_count,
        value_sum = excluded.value_sum,
        total_count = excluded.total_count,
        total_sum = excluded.total_sum,
        value_max = excluded.value_max,
        zone_offset = excluded.zone_offset,
        sealed = false,
        changed_at = now()
