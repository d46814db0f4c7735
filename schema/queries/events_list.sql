-- One page of a user's sessions (TABLE: rows and sealed) that start in [$2, $3), newest first, from the cursor
-- ($4, $5) on; CMP/DIR render the direction (forward: <, desc). COLUMNS are the table's
-- output columns, DEDUP the cross-source duplicate filter (events_dedup.sql).
-- $1 user, $6 rows; with DEDUP, $7 resolve, $8/$9 source ids and ranks.
select {columns}
from {table} e
where e.user_id = $1 and e.start_time >= $2 and e.start_time < $3
  and (e.start_time, e.id) {cmp} ($4, $5)
  {dedup}
order by e.start_time {dir}, e.id {dir}
limit $6
