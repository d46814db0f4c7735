-- Where a sub-hour page can stop reading: per series and source, the hourly rollups (rows, and
-- the bits of sealed days' blocks) name the hours that hold samples, each giving the page at
-- least one bucket, so the hour by which $6 such hours lie past the cursor is known without
-- touching the hypertable; the page needs nothing past the nearest such hour (its first $6
-- buckets are among them, whatever the other series hold). Only hours wholly past the cursor
-- and inside the window are counted, so the bound is never too near; a series with no rollups
-- there gives no bound. Null when no series reaches $6 such hours: the page reads to the
-- window's edge. Rendered per direction: AGG min or max, DIR asc or desc, NEXT
-- `+ interval '1 hour'` forward (the bound is the hour's end) or nothing.
-- $1 user, $2 series type ids, $3 source ids, $4/$5 the hours counted ([from, to)), $6 rows.
select {agg}(b.bound)
from unnest($2::smallint[]) as t(id)
cross join unnest($3::uuid[]) as src(id)
cross join lateral (
    select c.hour {next} as bound
    from (
        select r.hour, count(*) over (order by r.hour {dir}) as n
        from (
            (select r.hour
             from hourly_rollups r
             where r.user_id = $1 and r.series_type_id = t.id and r.data_source_id = src.id
               and r.hour >= $4 and r.hour < $5
             order by r.hour {dir}
             limit $6)
            union all
            -- The sealed hours, from their blocks' bits (a block spans up to SPAN_DAYS days):
            -- every block holds an hour, but the two at the edges may hold none inside [$4, $5).
            -- Only the blocks that hold the first $6 of them are expanded (a dense series' day
            -- block holds 24: the blocks of $6 days would be 24 times the hours needed).
            (select k.day + h.i * interval '1 hour'
             from (
                 select c.day, c.hours
                 from (
                     select b.day, b.hours, b.n, sum(b.n) over (order by b.day {dir}) as upto
                     from (
                         select b.day, b.hours, block_bits(b.day, b.hours, 3600, $4, $5) as n
                         from sample_blocks b
                         where b.user_id = $1 and b.series_type_id = t.id
                           and b.data_source_id = src.id and b.hours is not null
                           and b.day > $4 - interval '{span_days} days' and b.day < $5
                         order by b.day {dir}
                         limit $6 + 2
                     ) b
                 ) c
                 where c.n > 0 and c.upto - c.n < $6
             ) k
             cross join generate_series(0, length(k.hours) - 1) as h(i)
             where get_bit(k.hours, h.i) = 1
               and k.day + h.i * interval '1 hour' >= $4 and k.day + h.i * interval '1 hour' < $5)
            order by 1 {dir}
            limit $6
        ) r
    ) c
    where c.n >= $6
    order by c.hour {dir}
    limit 1
) b
