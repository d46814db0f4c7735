-- The one rule for "which local day": an instant at its own zone offset (minutes east of UTC;
-- none means UTC). Rollups, the rollup recount and the sleep summaries' wake-up day all call
-- it, so the day a sample counts on and the day a night belongs to cannot drift apart. A plain
-- SQL function marked immutable is inlined by the planner: it costs nothing per row.
create function local_day(ts timestamptz, zone_offset smallint) returns date
language sql immutable parallel safe
as $$ select (ts at time zone 'UTC' + make_interval(mins => coalesce(zone_offset, 0)::int))::date $$;
