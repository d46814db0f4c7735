-- One page of samples downsampled into UTC buckets of WIDTH (shorter than an hour) per series
-- and source, from the raw samples, by the rules of timeseries_rollups.sql. The window is the
-- page's stretch (timeseries_bound.sql, counting hours that hold samples: each holds at least
-- one bucket), so a page reads about as many hours as it has rows whatever the window, and the
-- hypertable's chunks outside the stretch are not planned or read. Rendered per direction and
-- width: CMP is > or <, DIR asc or desc, WIDTH an interval literal, FROM the cursor's lower
-- bound on sample times (`$6` forward, `$4` backward) and TO its upper one (`$5` forward,
-- `$6 + WIDTH` backward). Parameters as in timeseries_raw.sql, then the sealed samples
-- ($13 to $21) and the sealed buckets ($22 to $29). Values are summed in time order, so an
-- answer never depends on the plan or on which samples are rows and which sealed.
with {series}
select p.ts, p.series_type_id, p.data_source_id, p.value, p.zone_offset, p.is_daily_total
from types cross join ranked cross join lateral (
    select b.*
    from (
        select time_bucket({width}, s.ts) as ts, types.id as series_type_id,
               ranked.id as data_source_id,
               case types.agg
                   when 'sum' then coalesce(sum(s.value order by s.ts) filter (where not coalesce(s.is_daily_total, false)),
                                            sum(s.value order by s.ts))
                   when 'max' then max(s.value)
                   else avg(s.value order by s.ts)
               end as value,
               min(s.zone_offset) as zone_offset,
               case when types.agg = 'sum' then bool_and(coalesce(s.is_daily_total, false)) end
                   as is_daily_total
        from {samples} s
        where s.user_id = $1 and s.series_type_id = types.id and s.data_source_id = ranked.id
          and s.ts >= $4 and s.ts < $5 and s.ts >= {from} and s.ts < {to}
        group by 1
        union all
        -- The sealed buckets, aggregated by schema::blocks::buckets from the sealed samples of
        -- the same stretch (then passed here as samples none), or none.
        select u.ts, types.id, ranked.id, u.value, u.zone_offset, u.is_daily_total
        from {buckets}
    ) b
    where (b.ts, b.series_type_id, b.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not {held})
    order by b.ts {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
