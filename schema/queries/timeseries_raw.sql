-- One page of raw samples. Rendered per direction: CMP is > (forward) or < (backward),
-- DIR asc or desc. The window is the page's stretch (timeseries_bound_days.sql), not the request's:
-- the hypertable's chunks outside it are not planned or read.
-- $1 user, $2 series type ids, $3 their aggregations, $4 start, $5 end (exclusive),
-- $6/$7/$8 the cursor (ts, series type, source), $9 rows, $10 resolve duplicates by priority
-- (per series and UTC hour, from the hourly rollups: HELD is hours_held.sql), $11/$12 source ids and ranks.
with {series}
select p.*
from types cross join lateral (
    select s.ts, s.series_type_id, s.data_source_id, s.value, s.zone_offset, s.is_daily_total
    from {samples} s
    where s.user_id = $1 and s.series_type_id = types.id
      and s.ts >= $4 and s.ts < $5 and s.ts {cmp}= $6
      and (s.ts, s.series_type_id, s.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not {held})
    order by s.ts {dir}, s.data_source_id {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
