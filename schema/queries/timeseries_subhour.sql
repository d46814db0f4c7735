-- One page of samples downsampled into UTC buckets of WIDTH (shorter than an hour) per series
-- and source, from the raw samples, by the rules of timeseries_rollups.sql. The hourly rollups
-- give the hours that hold samples, in order from the cursor's hour; each such hour's samples
-- are bucketed on their own, and hours are read only until the page is full (an incremental
-- sort by hour, then bucket, under the limit). Every hour inside the window holds at least one
-- bucket, so ($9 + 3) hours always suffice (the cursor's and the window's partial hours may
-- hold none): a page costs the same whatever the window. Rendered per direction and width: CMP
-- is > or <, DIR asc or desc, WIDTH an interval literal, HOUR_CMP >= or <=. Parameters as in
-- timeseries_raw.sql, and $13 the window's start rounded down to the hour.
with {series}
select p.ts, p.series_type_id, p.data_source_id, p.value, p.zone_offset, p.is_daily_total
from types cross join ranked cross join lateral (
    select g.*
    from (
        select hr.hour, b.*
        from (
            select r.hour
            from hourly_rollups r
            where r.user_id = $1 and r.series_type_id = types.id
              and r.data_source_id = ranked.id and r.hour >= $13 and r.hour < $5
              and r.hour {hour_cmp} time_bucket(interval '1 hour', $6::timestamptz)
            order by r.hour {dir}
            limit $9::bigint + 3
        ) hr
        cross join lateral (
            select time_bucket({width}, s.ts) as ts, types.id as series_type_id,
                   ranked.id as data_source_id,
                   case types.agg
                       when 'sum' then coalesce(sum(s.value) filter (where not coalesce(s.is_daily_total, false)),
                                                sum(s.value))
                       when 'max' then max(s.value)
                       else avg(s.value)
                   end as value,
                   min(s.zone_offset) as zone_offset,
                   case when types.agg = 'sum' then bool_and(coalesce(s.is_daily_total, false)) end
                       as is_daily_total
            from samples s
            where s.user_id = $1 and s.series_type_id = types.id and s.data_source_id = ranked.id
              and s.ts >= greatest(hr.hour, $4) and s.ts < least(hr.hour + interval '1 hour', $5)
            group by 1
        ) b
    ) g
    where (g.ts, g.series_type_id, g.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not exists (
          select 1 from hourly_rollups x
          where x.user_id = $1 and x.series_type_id = types.id and x.hour = g.hour
            and x.data_source_id in (select better.id from ranked better where better.rank < ranked.rank)))
    order by g.hour {dir}, g.ts {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
