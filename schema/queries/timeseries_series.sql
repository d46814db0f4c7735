-- The common table expressions every timeseries page starts with (put in place of SERIES):
-- the asked series that have rollups in the window (local days lie within a day of UTC days),
-- with their aggregations, and the user's sources with their ranks. $1 user, $2/$3 series type
-- ids and aggregations, $4/$5 the window, $11/$12 source ids and ranks.
types as (
    select t.id, t.agg
    from unnest($2::smallint[], $3::text[]) as t(id, agg)
    where exists (
        select 1 from daily_rollups r
        where r.user_id = $1 and r.series_type_id = t.id
          and r.local_date between ($4 at time zone 'UTC')::date - 1
                               and ($5 at time zone 'UTC')::date + 1)
       or exists (
        select 1 from sample_blocks b cross join lateral block_dates(b.day, b.local_days) d
        where b.user_id = $1 and b.series_type_id = t.id and b.local_figures is not null
          and b.day > $4 - interval '{span_days} days' and b.day < $5 + interval '1 day'
          and d between ($4 at time zone 'UTC')::date - 1 and ($5 at time zone 'UTC')::date + 1)
),
ranked as (
    select u.id, u.rank from unnest($11::uuid[], $12::int[]) as u(id, rank)
)
