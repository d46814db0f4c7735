-- Whether a source of SOURCES (a subquery of source ids) has samples of SERIES in an hour that
-- starts in [FROM, TO): an hourly rollup row, or a sealed block with the hour's bit (a block
-- spans up to SPAN_DAYS days, schema::blocks::store::SPAN_DAYS).
-- The rule of source priority in every page (a better source's samples in the hour or bucket).
(exists (select 1 from hourly_rollups x
         where x.user_id = $1 and x.series_type_id = {series}
           and x.hour >= {from} and x.hour < {to}
           and x.data_source_id in ({sources}))
 or exists (select 1 from sample_blocks x
            where x.user_id = $1 and x.series_type_id = {series}
              and x.day > {from} - interval '{span_days} days' and x.day < {to}
              and block_bits(x.day, x.hours, 3600, {from}, {to}) > 0
              and x.data_source_id in ({sources})))
