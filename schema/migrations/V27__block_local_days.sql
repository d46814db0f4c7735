-- A sealed block keeps the local day rollups (what summaries read) of the local days whose
-- samples all lie in it (issue 31): a `daily_rollups` row costs ~170 bytes with its index, more
-- than a sparse series' day of samples. A local day draws on the UTC day of its date and the
-- days either side (offsets are bounded to 18 hours), so a block of the UTC days
-- [day, day + span) keeps local days day + 1 to day + span - 2 (schema::blocks::local_days).
-- `local_days`: a bit per day of the span, bit i for the local date day + i, set where the
-- block holds that date's figures; `local_figures` the figures (null, both, when it holds none);
-- `local_samples` the samples they count, what a raw page's bound counts a block's days by.
alter table sample_blocks add column local_days varbit, add column local_figures bytea,
    add column local_samples integer;

-- The local dates whose figures a block holds: the set bits of its `local_days`.
create function block_dates(day timestamptz, bits varbit)
returns setof date
language sql immutable parallel safe
as $$
    select (day at time zone 'UTC')::date + i
    from generate_series(0, length(bits) - 1) i where get_bit(bits, i) = 1
$$;

-- Blocks sealed before this version hold no local days: their users are the sealer's to pack
-- again (ingest::sealer::seal_due), which moves the local days in.
insert into block_repacks select distinct user_id from sample_blocks on conflict do nothing;

-- Summaries read the local days of a user's series over a range of dates: only the blocks that
-- keep some (a dense series' blocks keep none: a day each).
create index sample_blocks_local_idx on sample_blocks (user_id, series_type_id, day)
    where local_figures is not null;
