-- Whether a source of SOURCES (a subquery of source ids) has samples of SERIES in an hour that
-- starts in [FROM, TO): an hourly rollup row, or a sealed day's block with the hour's bit.
-- The rule of source priority in every page (a better source's samples in the hour or bucket).
(exists (select 1 from hourly_rollups x
         where x.user_id = $1 and x.series_type_id = {series}
           and x.hour >= {from} and x.hour < {to}
           and x.data_source_id in ({sources}))
 or exists (select 1 from sample_blocks x
            where x.user_id = $1 and x.series_type_id = {series}
              and x.day > {from} - interval '1 day' and x.day < {to}
              and x.hour_mask & hour_bits(x.day, {from}, {to}) <> 0
              and x.data_source_id in ({sources})))
