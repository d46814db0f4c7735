-- A sealed day's UTC day rollup lives in its block row too (issue 31): for a sparse series a
-- day rollup row (~210 bytes with its index entry) cost more than the day's samples. The
-- sealer moves the day's `utc_day_rollups` row into these columns, as stored (its sums were
-- added batch by batch: copied, never recounted, so `1day` pages answer to the bit); unsealing
-- moves it back. Null: a block sealed before this version whose day rollup is still a row.
alter table sample_blocks
    add column day_sample_count integer,
    add column day_value_sum double precision,
    add column day_total_count integer,
    add column day_total_sum double precision,
    add column day_value_max double precision,
    add column day_zone_offset smallint;

-- The blocks sealed before, in one pass: their day rollups move in. (The blocks of V22, whose
-- day rollups are marked for sealing again to move their hours in, are left to the sealer.)
update sample_blocks b
set day_sample_count = r.sample_count, day_value_sum = r.value_sum,
    day_total_count = r.total_count, day_total_sum = r.total_sum,
    day_value_max = r.value_max, day_zone_offset = r.zone_offset
from utc_day_rollups r
where r.user_id = b.user_id and r.series_type_id = b.series_type_id
  and r.data_source_id = b.data_source_id and r.day = b.day and r.sealed;
delete from utc_day_rollups r
using sample_blocks b
where r.user_id = b.user_id and r.series_type_id = b.series_type_id
  and r.data_source_id = b.data_source_id and r.day = b.day and r.sealed
  and b.day_value_sum is not null;
