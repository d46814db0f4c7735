-- Per UTC day rollups of samples, per series and source: the sum of the day's hourly rollups,
-- kept so by ingest (new samples' figures added to their day as to their hour, a recounted
-- hour's day summed again from its hours). `resolution=1day` pages read these, a row a bucket,
-- where they read up to 24 hourly rows a bucket (a year of a sample a minute was 2,424 rows a
-- page). Columns as in hourly_rollups; `day` is the UTC midnight.
create table utc_day_rollups (
    user_id        uuid not null,
    series_type_id smallint not null,
    data_source_id uuid not null,
    day            timestamptz not null,
    sample_count   integer not null,
    value_sum      double precision not null,
    total_count    integer not null,
    total_sum      double precision not null,
    value_max      double precision not null,
    zone_offset    smallint,
    primary key (user_id, series_type_id, data_source_id, day)
);

-- The hours stored before this version, in one pass (in key order, so a user's rows lie
-- together).
insert into utc_day_rollups
    (user_id, series_type_id, data_source_id, day, sample_count, value_sum, total_count,
     total_sum, value_max, zone_offset)
select user_id, series_type_id, data_source_id, time_bucket(interval '1 day', hour),
       sum(sample_count), sum(value_sum), sum(total_count), sum(total_sum), max(value_max),
       min(zone_offset)
from hourly_rollups
group by 1, 2, 3, 4
order by 1, 2, 3, 4;
