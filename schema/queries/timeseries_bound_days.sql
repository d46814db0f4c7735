-- Where a raw page can stop reading, from the daily rollups (one row per local day: a few
-- hundred a year, where the hourly rollups hold one per hour with samples). Per series and
-- source, the local day by which $6 samples lie past the cursor; the caller widens it by the
-- most a local day can lie from its UTC day (offsets are bounded to 18 hours: a day's margin)
-- and counts only days wholly past the cursor and inside the window, so the bound is never too
-- near. Null when no series reaches $6 samples: the page reads to the window's edge. Rendered
-- per direction: AGG min or max, DIR asc or desc.
-- The local days a sealed block keeps (all inside the days counted) count as one row of their
-- samples (`local_samples`) on the last of them (HELD, forward; backward the first): never
-- sooner than they lie, so the bound is never too near.
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
            union all
            select (b.day at time zone 'UTC')::date + {held}, b.local_samples, 0
            from sample_blocks b
            where b.user_id = $1 and b.series_type_id = t.id and b.data_source_id = src.id
              and b.local_figures is not null
              and b.day > ($4::date - {span_days})::timestamp at time zone 'UTC'
              and b.day < $5::date::timestamp at time zone 'UTC'
              and (b.day at time zone 'UTC')::date + 1 >= $4
              and (b.day at time zone 'UTC')::date + b.span - 2 <= $5
            order by 1 {dir}
            limit $6
        ) r
    ) c
    where c.n >= $6
    order by c.local_date {dir}
    limit 1
) b
