-- The hourly rollups of one piece [{from}, {to}) of a timeseries_rollups.sql window, for the
-- series and source of its lateral join, from the cursor's bucket on, at most LIMIT of them:
-- the rows, and the sealed days' hours kept in their blocks.
(select r.hour, r.sample_count, r.value_sum, r.total_count, r.total_sum, r.value_max,
        r.zone_offset
 from hourly_rollups r
 where r.user_id = $1 and r.series_type_id = types.id and r.data_source_id = ranked.id
   and r.hour >= {from} and r.hour < {to} and {bound:r.hour}
 order by r.hour {dir}
 limit {limit})
union all
(select u.hour, u.sample_count, u.value_sum, u.total_count, u.total_sum, u.value_max,
        u.zone_offset
 from {sealed_hours}
 where u.hour >= {from} and u.hour < {to} and {bound:u.hour}
 order by u.hour {dir}
 limit {limit})
