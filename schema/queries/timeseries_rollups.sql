-- One page of samples downsampled into UTC buckets of WIDTH (an hour or a day) per series and
-- source, from the hourly rollups: additive series sum their intraday samples (their daily
-- totals where a bucket has no intraday sample), levels average, best efforts take the
-- maximum, as timeseries_subhour.sql does from raw samples. A window that does not start or
-- end on the hour takes its partial edge hours from the raw samples. Each series and source
-- reads at most ($9 + 1) buckets of HOURS hours: as a bucket holds at most HOURS rollups, the
-- first $9 buckets read are whole, and a page costs the same whatever the window.
-- Rendered per direction and width: CMP is > or <, DIR asc or desc, WIDTH an interval literal,
-- BOUND keeps the hours from the cursor's bucket on. Parameters as in timeseries_raw.sql, and
-- $13/$14 the window's start and end rounded inward to the hour.
with {series}
select p.*
from types cross join ranked cross join lateral (
    select g.*
    from (
        select time_bucket({width}, h.hour) as ts, types.id as series_type_id,
               ranked.id as data_source_id,
               case types.agg
                   when 'sum' then case when sum(h.sample_count) > 0 then sum(h.value_sum)
                                        else sum(h.total_sum) end
                   when 'max' then max(h.value_max)
                   else (sum(h.value_sum) + sum(h.total_sum))
                        / (sum(h.sample_count) + sum(h.total_count))
               end as value,
               min(h.zone_offset) as zone_offset,
               case when types.agg = 'sum' then sum(h.sample_count) = 0 end as is_daily_total
        from (
            select e.*
            from (
                select r.hour, r.sample_count, r.value_sum, r.total_count, r.total_sum,
                       r.value_max, r.zone_offset
                from hourly_rollups r
                where r.user_id = $1 and r.series_type_id = types.id
                  and r.data_source_id = ranked.id and r.hour >= $13 and r.hour < $14
                union all
                select time_bucket(interval '1 hour', s.ts),
                       (count(*) filter (where not coalesce(s.is_daily_total, false)))::integer,
                       coalesce(sum(s.value) filter (where not coalesce(s.is_daily_total, false)), 0),
                       (count(*) filter (where s.is_daily_total))::integer,
                       coalesce(sum(s.value) filter (where s.is_daily_total), 0),
                       max(s.value), min(s.zone_offset)
                from samples s
                where s.user_id = $1 and s.series_type_id = types.id
                  and s.data_source_id = ranked.id
                  and ((s.ts >= $4 and s.ts < least($13, $5))
                       or (s.ts >= greatest($14, $13) and s.ts < $5))
                group by 1
            ) e
            where {bound}
            order by e.hour {dir}
            limit ($9::bigint + 1) * {hours}
        ) h
        group by 1
    ) g
    where (g.ts, g.series_type_id, g.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not exists (
          select 1 from hourly_rollups b
          where b.user_id = $1 and b.series_type_id = types.id
            and b.hour >= g.ts and b.hour < g.ts + {width}
            and b.data_source_id in (select better.id from ranked better where better.rank < ranked.rank)))
    order by g.ts {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
