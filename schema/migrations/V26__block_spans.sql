-- A block spans up to 32 UTC days of one series and source (issue 31): a sparse series holds a
-- few samples a day, and a row a day (~300 bytes with its key) cost far more than its samples.
-- `day` is the first day the block holds, `span` how many days from it the block covers; blocks
-- of a series and source never overlap. A day's hours and day figures are kept per day of the
-- span: `hours` has a bit per hour of the span (bit 24 * d + h: hour h of day d), and each
-- `day_*` column an element per day (null where the day has no figures). Dense series keep a
-- block a day (schema::blocks::pack decides).
alter table sample_blocks add column span smallint not null default 1;
alter table sample_blocks alter column span drop default;
alter table sample_blocks add column hours varbit;
-- Bit h of the old mask becomes the bit at position h; a mask of 0 (hours still rows, blocks
-- of V22 the sealer has not sealed again) becomes null.
update sample_blocks
set hours = case when hour_mask = 0 then null else reverse(hour_mask::bit(24)::text)::varbit end;
alter table sample_blocks drop column hour_mask;
alter table sample_blocks
    alter column day_sample_count type integer[]
        using case when day_sample_count is null then null else array[day_sample_count] end,
    alter column day_value_sum type float8[]
        using case when day_sample_count is null then null else array[day_value_sum] end,
    alter column day_total_count type integer[]
        using case when day_sample_count is null then null else array[day_total_count] end,
    alter column day_total_sum type float8[]
        using case when day_sample_count is null then null else array[day_total_sum] end,
    alter column day_value_max type float8[]
        using case when day_sample_count is null then null else array[day_value_max] end,
    alter column day_zone_offset type smallint[]
        using case when day_sample_count is null then null else array[day_zone_offset] end;

drop function hour_bits(timestamptz, timestamptz, timestamptz);

-- How many hours with figures a block (starting at `day`, its bits `hours`) has among the hours
-- that start in [lo, hi). Null when its hours are still rows.
create function block_hours(day timestamptz, hours varbit, lo timestamptz, hi timestamptz)
returns integer
language sql immutable parallel safe
return bit_count(substring(hours
    from greatest(0, least(length(hours), ceil(extract(epoch from lo - day) / 3600)::int)) + 1
    for greatest(0, least(length(hours), ceil(extract(epoch from hi - day) / 3600)::int)
        - greatest(0, least(length(hours), ceil(extract(epoch from lo - day) / 3600)::int)))))::integer;
