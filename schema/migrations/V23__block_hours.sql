-- A sealed day keeps its hourly rollups in its block row (schema::blocks::hours): the sealer
-- moves the day's `hourly_rollups` rows into the block, unsealing moves them back. A sparse
-- series had an hour row per sample, ~150 bytes each with its index entry.
-- `hour_mask`: bit h set when hour h of the day has figures (what SQL reads to know that a
-- source has samples in an hour); `hour_exceptions`: the few hours whose figures do not follow
-- from the samples counted in time order, or null.
alter table sample_blocks
    add column hour_mask integer not null default 0,
    add column hour_exceptions bytea;
-- 0 only for the blocks sealed before this version, whose hours are still rows: they are
-- sealed again (their hours moved in) as soon as the sealer runs. Every later block sets it.
alter table sample_blocks alter column hour_mask drop default;
update utc_day_rollups r set sealed = false
from sample_blocks b
where b.user_id = r.user_id and b.series_type_id = r.series_type_id
  and b.data_source_id = r.data_source_id and b.day = r.day;

-- The bits of the hours of `day` whose start lies in [lo, hi): what `hour >= lo and hour < hi`
-- says of hourly_rollups rows, said of a block's hour_mask. Simple enough to be inlined.
create function hour_bits(day timestamptz, lo timestamptz, hi timestamptz) returns integer
language sql immutable parallel safe
return ((1::bigint << greatest(0, least(24, ceil(extract(epoch from hi - day) / 3600)::int)))
        - (1::bigint << greatest(0, least(24, ceil(extract(epoch from lo - day) / 3600)::int))))
       ::integer * (hi > lo)::int;

-- A user's days due for sealing (the sealer seals each user's due days together).
create index utc_day_rollups_unsealed_user on utc_day_rollups (user_id, day) where not sealed;
