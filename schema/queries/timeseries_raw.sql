-- One page of raw samples. Rendered per direction: CMP is > (forward) or < (backward),
-- DIR asc or desc.
-- $1 user, $2 series type ids, $3 their aggregations, $4 start, $5 end (exclusive),
-- $6/$7/$8 the cursor (ts, series type, source), $9 rows, $10 resolve duplicates by priority,
-- $11/$12 source ids and ranks, $13 the priority window in seconds.
with types as (
    -- Only series with rollups in the window (local days lie within a day of UTC days).
    select t.id
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
from types cross join lateral (
    select s.ts, s.series_type_id, s.data_source_id, s.value, s.zone_offset, s.is_daily_total
    from samples s
    where s.user_id = $1 and s.series_type_id = types.id
      and s.ts >= $4 and s.ts < $5 and s.ts {cmp}= $6
      and (s.ts, s.series_type_id, s.data_source_id) {cmp} ($6, $7, $8)
      and (not $10 or not exists (
          select 1 from samples b
          where b.user_id = $1 and b.series_type_id = s.series_type_id
            and b.ts >= to_timestamp(floor(extract(epoch from s.ts) / $13::float8) * $13::float8)
            and b.ts < to_timestamp(floor(extract(epoch from s.ts) / $13::float8) * $13::float8 + $13::float8)
            and b.data_source_id in (
                select better.id from ranked better
                where better.rank < (select own.rank from ranked own where own.id = s.data_source_id))))
    order by s.ts {dir}, s.data_source_id {dir}
    limit $9
) p
order by p.ts {dir}, p.series_type_id {dir}, p.data_source_id {dir}
limit $9
