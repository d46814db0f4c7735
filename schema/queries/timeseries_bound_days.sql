-- Where a raw page can stop reading, from the daily rollups (one row per local day: a few
-- hundred a year, where the hourly rollups hold one per hour with samples). Per series and
-- source, the local day by which $6 samples lie past the cursor; the caller widens it by the
-- most a local day can lie from its UTC day (offsets are bounded to 18 hours: a day's margin)
-- and counts only days wholly past the cursor and inside the window, so the bound is never too
-- near. Null when no series reaches $6 samples: the page reads to the window's edge. Rendered
-- per direction: AGG min or max, DIR asc or desc.
-- $1 user, $2 series type ids, $3 source ids, $4/$5 the local days counted (both inclusive),
-- $6 rows.
select {agg}(b.day)
from unnest($2::smallint[]) as t(id)
cross join unnest($3::uuid[]) as src(id)
cross join lateral (
    select c.local_date as day
    from (
        select r.local_date, sum(r.sample_count + r.total_count) over (order by r.local_date {dir}) as n
        from (
            select r.local_date, r.sample_count, r.total_count
            from daily_rollups r
            where r.user_id = $1 and r.series_type_id = t.id and r.data_source_id = src.id
              and r.local_date between $4 and $5
            order by r.local_date {dir}
            limit $6
        ) r
    ) c
    where c.n >= $6
    order by c.local_date {dir}
    limit 1
) b
