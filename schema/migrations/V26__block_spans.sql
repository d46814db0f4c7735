-- A block spans up to 32 UTC days of one series and source (issue 31): a sparse series holds a
-- few samples a day, and a row a day (~300 bytes with its key) cost far more than its samples.
-- `day` is the first day the block holds, `span` how many days from it the block covers; blocks
-- of a series and source never overlap. A day's hours and day figures are kept per day of the
-- span: `hours` has a bit per hour of the span (bit 24 * d + h: hour h of day d), and
-- `day_figures` the days' UTC day rollups, only those that do not follow from the samples
-- (schema::blocks::days). Dense series keep a block a day (schema::blocks::store::pack decides).
alter table sample_blocks add column span smallint not null default 1;
alter table sample_blocks alter column span drop default;
alter table sample_blocks add column hours varbit, add column day_figures bytea,
    add column days varbit;
-- Bit h of the old mask becomes the bit at position h; a mask of 0 (hours still rows, blocks
-- of V22 the sealer has not sealed again) becomes null. A day's figures (`day_*`, V25) become
-- `day_figures` (schema::blocks::days: a version byte, then for day 0 its figures as stored,
-- fixed widths big-endian); null where they are still a row, as before. `days`: a bit per day
-- of the span, set where the day has its figures (what a `1day` page counts blocks by).
update sample_blocks
set hours = case when hour_mask = 0 then null else reverse(hour_mask::bit(24)::text)::varbit end,
    day_figures = case when day_sample_count is null then null else
        '\x01000001'::bytea || int4send(day_sample_count) || float8send(day_value_sum)
        || int4send(day_total_count) || float8send(day_total_sum) || float8send(day_value_max)
        || case when day_zone_offset is null then '\x00'::bytea
                else '\x01'::bytea || int2send(day_zone_offset) end end,
    days = case when day_sample_count is null then null else B'1' end;
alter table sample_blocks
    drop column hour_mask,
    drop column day_sample_count,
    drop column day_value_sum,
    drop column day_total_count,
    drop column day_total_sum,
    drop column day_value_max,
    drop column day_zone_offset;

drop function hour_bits(timestamptz, timestamptz, timestamptz);

-- How many of a block's bits (the block starting at `day`, a bit per `width` seconds from it:
-- its `hours` or its `days`) are set among those whose time starts in [lo, hi). Null when the
-- bits are null (their figures are still rows).
create function block_bits(day timestamptz, bits varbit, width integer, lo timestamptz,
                           hi timestamptz)
returns integer
language sql immutable parallel safe
return bit_count(substring(bits
    from greatest(0, least(length(bits), ceil(extract(epoch from lo - day) / width)::int)) + 1
    for greatest(0, least(length(bits), ceil(extract(epoch from hi - day) / width)::int)
        - greatest(0, least(length(bits), ceil(extract(epoch from lo - day) / width)::int)))))::integer;

-- The blocks sealed before this version are blocks of a day each: the users that have them are
-- the sealer's to pack again, one at a time, once it has no day due (ingest::sealer::seal_due).
-- A row goes once its user's blocks are packed.
create table block_repacks (user_id uuid primary key);
insert into block_repacks select distinct user_id from sample_blocks;
