-- Deletes the rollups that rollups_recount.sql rebuilds (the touched days and their
-- neighbours). $1 user id.
delete from daily_rollups r
using (
    select distinct series_type_id, data_source_id, d::date as local_date
    from samples_touched,
         generate_series(local_date - 1, local_date + 1, interval '1 day') as d
) k
where r.user_id = $1 and r.series_type_id = k.series_type_id
  and r.data_source_id = k.data_source_id and r.local_date = k.local_date
