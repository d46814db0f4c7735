-- Workout routes of an Apple Health export: each `workout-routes/*.gpx` of the archive, parsed,
-- waits here (its workout may not be stored yet: the zip holds routes before or after
-- export.xml) until the import ends and gives it to every workout whose FileReference names
-- it. Rows live for one import run; a user's deletion takes them too.
create table export_routes (
    run_id  uuid not null,
    user_id uuid not null references users (id) on delete cascade,
    -- As the workout's FileReference names it: `/workout-routes/route_….gpx`.
    path    text not null,
    points  jsonb not null,
    primary key (run_id, path)
);

-- Export workouts kept `{"file_references": [...]}` in `route`; the references are in
-- `statistics.route_files` too, and `route` is the points only, as the SDK sends them.
update workouts set route = null where jsonb_typeof(route) = 'object';
