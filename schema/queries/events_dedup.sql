-- Shared by the session lists (spliced in for DEDUP): leaves out session `e` when another
-- source of the user has a session overlapping at least half of the shorter of the two and
-- that source ranks better. A source's key is `rules::ranking::Ranking::rank`'s: its rank
-- (unknown: last), then its id. Sessions are assumed shorter than two days,
-- which bounds the search (NEAR: the user's sessions that start from two days before e's start
-- to its end, rows and sealed). RESOLVE: whether to; IDS/RANKS: the user's sources and ranks.
-- The sleep summaries read their nights through this same filter (`schema::summaries::sleep_ending`),
-- so the summaries and the event lists agree: the rule lives here only.
and (not {resolve} or not exists (
    select 1 from {near} o
    where o.user_id = $1 and o.data_source_id <> e.data_source_id
      and o.start_time > e.start_time - interval '2 days'
      and o.start_time < e.end_time and o.end_time > e.start_time
      and extract(epoch from least(o.end_time, e.end_time) - greatest(o.start_time, e.start_time))
          >= 0.5 * extract(epoch from least(o.end_time - o.start_time, e.end_time - e.start_time))
      and (coalesce((select u.rank from unnest({ids}::uuid[], {ranks}::int[]) as u(id, rank)
                     where u.id = o.data_source_id), 2147483647), o.data_source_id)
        < (coalesce((select u.rank from unnest({ids}::uuid[], {ranks}::int[]) as u(id, rank)
                     where u.id = e.data_source_id), 2147483647), e.data_source_id)))
