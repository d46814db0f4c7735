-- One page of samples downsampled into UTC buckets of WIDTH (an hour or a day) per series and
-- source, from the rollups: additive series sum their intraday samples (their daily totals
-- where a bucket has no intraday sample), levels average, best efforts take the maximum, as
-- timeseries_subhour.sql does from raw samples. The window is read in pieces, each from the
-- coarsest rows that tile it: whole UTC days from utc_day_rollups and the sealed blocks' day
-- figures (day widths only; passed with the sealed hours, each at its day's start, inside
-- [$14, $15) where no sealed hour lies), whole hours from hourly_rollups and the sealed blocks' hours, the
-- partial hours at its edges from the raw samples. Each series
-- and source reads at most LIMIT rows of each piece (enough for ($9 + 1) buckets: a bucket
-- holds one row a day or an hour of its width, and an edge day up to 24 more), so its first
-- $9 buckets read are whole and a page costs the same whatever the window.
-- Rendered per direction and width: CMP is > or <, DIR asc or desc, WIDTH an interval literal,
-- HOURS:FROM:TO is timeseries_rollups_hours.sql over [FROM, TO), BOUND:COLUMN keeps the rows
-- from the cursor's bucket on, HELD whether a better source has samples in a bucket (the UTC
-- day rollups for days, hours_held.sql for hours). Parameters as in timeseries_raw.sql, and
-- $13 <= $14 <= $15 <= $16 cut the window [$4, $5) into pieces: raw [$4, $13), hours
-- [$13, $14), days [$14, $15), hours [$15, $16), raw [$16, $5); the sealed blocks' hours and
-- days of each piece (SEALED_HOURS, schema::blocks::hours_sql: $17 to $27 the hours of
-- [$13, $14), $28 to $38 the days, $39 to $49 the hours of [$15, $16)), then the sealed samples.
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
(select d.*
                 from ((select r.day as hour, r.sample_count, r.value_sum, r.total_count,
                               r.total_sum, r.value_max, r.zone_offset
                        from utc_day_rollups r
                        where r.user_id = $1 and r.series_type_id = types.id
                          and r.data_source_id = ranked.id and r.day >= $14 and r.day < $15
                          and {bound:r.day}
                        order by r.day {dir}
                        limit {limit})
                       union all
                       (select u.hour, u.sample_count, u.value_sum, u.total_count,
                               u.total_sum, u.value_max, u.zone_offset
                        from {sealed_hours}
                        where u.hour >= $14 and u.hour < $15 and {bound:u.hour}
                        order by u.hour {dir}
                        limit {limit})) d
                 order by d.hour {dir}
                 limit {limit})
                union all
                {hours:$13:$14}
                union all
                {hours:$15:$16}
                union all
                select time_bucket(interval '1 hour', s.ts),
                       (count(*) filter (where not coalesce(s.is_daily_total, false)))::integer,
                       coalesce(sum(s.value order by s.ts) filter (where not coalesce(s.is_daily_total, false)), 0),
                       (count(*) filter (where s.is_daily_total))::integer,
                       coalesce(sum(s.value order by s.ts) filter (where s.is_daily_total), 0),
                       max(s.value), min(s.zone_offset)
                from {samples} s
                where s.user_id = $1 and s.series_type_id = types.id
                  and s.data_source_id = ranked.id
                  and ((s.ts >= $4 and s.ts < $13) or (s.ts >= $16 and s.ts < $5))
                group by 1
            ) e
            where {bound:e.hour}
            order by e.hour {dir}
            limit {limit}
        ) h
        group by 1
    ) g
    where (g.ts, g.series_type_id, g.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not {held})
    order by g.ts {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
