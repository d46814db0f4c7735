-- One batch of the read-benchmark data set: users :first to :last (psql variables).
-- Deterministic: user n's ids and values depend only on n. See generate.sh.
--
-- Per user, for the year from 2025-11-01 (UTC): an Apple Watch and an iPhone; heart rate every
-- 2 hours from the watch (every minute for users 1 to 5, the heavy ones); steps every hour from
-- 07:00 to 19:00 from the phone; a resting heart rate and an HRV sample every morning; a night
-- of sleep every night and a run every other day from the watch. Users live in one of five
-- zones (-08:00, -05:00, UTC, +01:00, +09:00), so local days differ from UTC days.
set synchronous_commit = off;

create temporary table batch as
select n,
       ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid as user_id,
       ('10000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid as watch_id,
       ('20000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid as phone_id,
       ('30000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid as conn_id,
       (array[-480, -300, 0, 60, 540])[1 + n % 5]::smallint as off
from generate_series(:first::int, :last::int) n;

insert into users (id, email, created_at)
select user_id, 'bench' || n || '@example.com', '2025-10-31' from batch;
insert into connections (id, user_id, provider) select conn_id, user_id, 'phonehealth' from batch;
insert into data_sources (id, user_id, provider, user_connection_id, device_model, device_manufacturer, source, device_type)
select watch_id, user_id, 'phonehealth', conn_id, 'Watch6,2', 'Apple Inc.', 'com.apple.health.W', 'watch' from batch
union all
select phone_id, user_id, 'phonehealth', conn_id, 'iPhone15,2', 'Apple Inc.', 'com.apple.health.P', 'phone' from batch;

-- Heart rate: one series per user in time order, so the unique index grows at its end.
insert into samples (user_id, series_type_id, data_source_id, ts, value, zone_offset)
select b.user_id, 1, b.watch_id, t, 55 + (b.n * 7 + i * 13) % 60, b.off
from batch b
cross join lateral generate_series(0, case when b.n <= 5 then 525599 else 4379 end) i
cross join lateral (select timestamptz '2025-11-01 00:00:00+00'
                           + i * case when b.n <= 5 then interval '1 minute' else interval '2 hours' end) x(t);

-- Steps: hourly from 07:00 to 19:00 local.
insert into samples (user_id, series_type_id, data_source_id, ts, value, zone_offset, is_daily_total)
select b.user_id, 80, b.phone_id,
       timestamptz '2025-11-01 00:00:00+00' + d * interval '1 day' + h * interval '1 hour' - b.off * interval '1 minute',
       (d * 37 + h * 101 + b.n) % 900, b.off, false
from batch b, generate_series(0, 364) d, generate_series(7, 19) h;

-- Resting heart rate and HRV (SDNN) at 07:00 local.
insert into samples (user_id, series_type_id, data_source_id, ts, value, zone_offset)
select b.user_id, s.id, b.watch_id,
       timestamptz '2025-11-01 07:00:00+00' + d * interval '1 day' - b.off * interval '1 minute',
       case s.id when 2 then 52 + (d + b.n) % 12 else 35 + (d * 3 + b.n) % 40 end, b.off
from batch b, generate_series(0, 364) d, (values (2::smallint), (3::smallint)) s(id);

-- The local days', UTC hours' and UTC days' rollups, as ingest keeps them: written in the
-- order of their samples (user by user here), as ingest writes them in the transaction that
-- stores the samples. Left in hash-aggregate order they would lie scattered over the batch's
-- pages, where no ingest puts them.
insert into daily_rollups (user_id, series_type_id, data_source_id, local_date, sample_count, value_sum, value_min, value_max)
select s.user_id, s.series_type_id, s.data_source_id, (s.ts + s.zone_offset * interval '1 minute')::date,
       count(*), sum(s.value), min(s.value), max(s.value)
from samples s join batch b on s.user_id = b.user_id
group by 1, 2, 3, 4
order by 1, 2, 3, 4;

insert into hourly_rollups (user_id, series_type_id, data_source_id, hour, sample_count, value_sum,
                            total_count, total_sum, value_max, zone_offset)
select s.user_id, s.series_type_id, s.data_source_id, time_bucket(interval '1 hour', s.ts),
       count(*), sum(s.value), 0, 0, max(s.value), min(s.zone_offset)
from samples s join batch b on s.user_id = b.user_id
group by 1, 2, 3, 4
order by 1, 2, 3, 4;

insert into utc_day_rollups (user_id, series_type_id, data_source_id, day, sample_count, value_sum,
                             total_count, total_sum, value_max, zone_offset)
select h.user_id, h.series_type_id, h.data_source_id, time_bucket(interval '1 day', h.hour),
       sum(h.sample_count), sum(h.value_sum), 0, 0, max(h.value_max), min(h.zone_offset)
from hourly_rollups h join batch b on h.user_id = b.user_id
group by 1, 2, 3, 4
order by 1, 2, 3, 4;

-- A night (23:00 to 07:00 local) every night; a 45-minute run at 18:00 every other day.
insert into sleep_sessions (id, user_id, data_source_id, start_time, end_time, zone_offset, duration_seconds,
                            sleep_seconds, in_bed_seconds, deep_minutes, rem_minutes, light_minutes, awake_minutes,
                            efficiency_percent)
select ('40000000-' || lpad(to_hex(d), 4, '0') || '-4000-8000-' || lpad(to_hex(b.n), 12, '0'))::uuid,
       b.user_id, b.watch_id,
       timestamptz '2025-10-31 23:00:00+00' + d * interval '1 day' - b.off * interval '1 minute',
       timestamptz '2025-11-01 07:00:00+00' + d * interval '1 day' - b.off * interval '1 minute',
       b.off, 28800, 26400 - (d % 7) * 600, 28800, 80 + d % 20, 100 - d % 15, 260, 40 + (d % 7) * 10, 91.7
from batch b, generate_series(0, 364) d;

insert into workouts (id, user_id, data_source_id, type, start_time, end_time, zone_offset, duration_seconds,
                      calories_kcal, distance_meters, avg_heart_rate_bpm, max_heart_rate_bpm)
select ('50000000-' || lpad(to_hex(d), 4, '0') || '-4000-8000-' || lpad(to_hex(b.n), 12, '0'))::uuid,
       b.user_id, b.watch_id, 'running',
       timestamptz '2025-11-01 18:00:00+00' + d * interval '1 day' - b.off * interval '1 minute',
       timestamptz '2025-11-01 18:45:00+00' + d * interval '1 day' - b.off * interval '1 minute',
       b.off, 2700, 400 + d % 100, 7000 + (d * 31) % 3000, 145, 172
from batch b, generate_series(0, 364, 2) d;
