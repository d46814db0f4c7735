-- One page of samples downsampled into UTC buckets of WIDTH per series and source:
-- additive series sum (intraday samples; a source's daily totals only where it has no intraday
-- samples in the bucket), levels average, best efforts take the maximum. Rendered per
-- direction and width: CMP is > or <, DIR asc or desc, WIDTH an interval literal.
-- BOUND keeps samples from the cursor's bucket on. Parameters as in timeseries_raw.sql; $11/$12
-- list every source of the user.
with types as (
    select t.id, t.agg
    from unnest($2::smallint[], $3::text[]) as t(id, agg)
    where exists (
        select 1 from daily_rollups r
        where r.user_id = $1 and r.series_type_id = t.id
          and r.local_date between ($4 at time zone 'UTC')::date - 1
                               and ($5 at time zone 'UTC')::date + 1)
),
ranked as (
    select u.id, u.rank from unnest($11::uuid[], $12::int[]) as u(id, rank)
)
select p.*
from types cross join ranked cross join lateral (
    select g.*
    from (
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
          and s.ts >= $4 and s.ts < $5
          and {bound}
        group by time_bucket({width}, s.ts)
        order by time_bucket({width}, s.ts) {dir}
    ) g
    where (g.ts, g.series_type_id, g.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not exists (
          select 1 from samples b
          where b.user_id = $1 and b.series_type_id = types.id
            and b.ts >= to_timestamp(floor(extract(epoch from g.ts) / $13::float8) * $13::float8)
            and b.ts < to_timestamp(floor(extract(epoch from g.ts) / $13::float8) * $13::float8 + $13::float8)
            and b.data_source_id in (select better.id from ranked better where better.rank < ranked.rank)))
    order by g.ts {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
