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
),
ranked as (
    select u.id, u.rank from unnest($11::uuid[], $12::int[]) as u(id, rank)
)
