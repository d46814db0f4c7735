-- Deletes the hourly rollups that hourly_rollups_recount.sql rebuilds: the hours of the samples
-- an upsert changed (a changed sample keeps its instant, so it stays in its hour). $1 user id.
delete from hourly_rollups r
using (select distinct series_type_id, data_source_id, hour from samples_touched) k
where r.user_id = $1 and r.series_type_id = k.series_type_id
  and r.data_source_id = k.data_source_id and r.hour = k.hour
