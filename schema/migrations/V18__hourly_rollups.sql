-- Per UTC hour rollups of samples, per series and source, kept exact by ingest as the daily ones
-- are (new samples added, hours of changed samples recounted, rebuilt on reprocess, deleted
-- with the user). `resolution` pages of an hour or a day read these, so a page costs the same
-- whatever the window; finer pages and raw pages use them to find the hours that hold samples,
-- so every page scans a bounded stretch of the hypertable. Intraday samples and daily totals
-- are kept apart (sums use one or the other); the maximum and the zone offset are over every
-- sample of the hour. The key leads with what a page reads: one series of one source in time.
create table hourly_rollups (
    user_id        uuid not null,
    series_type_id smallint not null,
    data_source_id uuid not null,
    hour           timestamptz not null,
    sample_count   integer not null,
    value_sum      double precision not null,
    total_count    integer not null,
    total_sum      double precision not null,
    value_max      double precision not null,
    zone_offset    smallint,
    primary key (user_id, series_type_id, data_source_id, hour)
);

-- The samples stored before this version, in one pass.
insert into hourly_rollups
    (user_id, series_type_id, data_source_id, hour, sample_count, value_sum, total_count,
     total_sum, value_max, zone_offset)
select user_id, series_type_id, data_source_id, time_bucket(interval '1 hour', ts),
       count(*) filter (where not coalesce(is_daily_total, false)),
       coalesce(sum(value) filter (where not coalesce(is_daily_total, false)), 0),
       count(*) filter (where is_daily_total),
       coalesce(sum(value) filter (where is_daily_total), 0),
       max(value), min(zone_offset)
from samples
group by 1, 2, 3, 4;
