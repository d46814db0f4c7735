-- Export workouts kept `{"file_references": [...]}` in `route`. The references are in
-- `statistics.route_files` too; `route` is now only points, as the SDK sends them, and an
-- export's `workout-routes/*.gpx` fill it (ingest/src/export/route_spool.rs).
update workouts set route = null where jsonb_typeof(route) = 'object';
