//! The one source-priority rule, applied: a user's sources ranked (lower wins; the ranks come
//! from `schema::priority`), and the pick of the best-ranked among rows of several sources.

use std::collections::{BTreeMap, HashMap};

use crate::series::SeriesId;
use chrono::NaiveDate;
use schema::data_sources::DataSource;
use schema::summaries::DayRollup;
use uuid::Uuid;

/// A user's sources and their ranks.
#[derive(Debug, Clone, Default)]
pub struct Ranking {
    pub sources: Vec<DataSource>,
    ranks: HashMap<Uuid, i32>,
}

impl Ranking {
    /// From `(source, rank)` pairs, as `schema::priority::ranked_sources` reads them.
    pub fn new(ranked: Vec<(DataSource, i32)>) -> Ranking {
        let ranks = ranked.iter().map(|(s, r)| (s.id, *r)).collect();
        Ranking { sources: ranked.into_iter().map(|(s, _)| s).collect(), ranks }
    }

    /// The sort key of a source: its rank, then its id (a source unknown here ranks last).
    pub fn rank(&self, id: Uuid) -> (i32, Uuid) {
        (self.ranks.get(&id).copied().unwrap_or(i32::MAX), id)
    }

    /// Of several rollups (one series, one day), the best-ranked source's.
    pub fn best<'a>(&self, rows: impl IntoIterator<Item = &'a DayRollup>) -> Option<&'a DayRollup> {
        rows.into_iter().min_by_key(|r| self.rank(r.data_source_id))
    }

    /// `(source ids, ranks)` as parallel arrays, for the queries that resolve duplicates.
    pub fn arrays(&self) -> (Vec<Uuid>, Vec<i32>) {
        self.sources.iter().map(|s| (s.id, self.rank(s.id).0)).unzip()
    }

    /// The provider of a source, if it is the user's.
    pub fn provider_of(&self, id: Uuid) -> Option<&str> {
        self.sources.iter().find(|s| s.id == id).map(|s| s.provider.as_str())
    }
}

/// Rollups by local day, then series.
pub(crate) type ByDay = BTreeMap<NaiveDate, HashMap<SeriesId, Vec<DayRollup>>>;

/// Groups rollups by local day, then series.
pub fn by_day(rows: Vec<DayRollup>) -> ByDay {
    let mut out = ByDay::new();
    for r in rows {
        out.entry(r.local_date).or_default().entry(r.series_type_id).or_default().push(r);
    }
    out
}

/// The best-ranked source's rollup of `series` on a day's rows.
pub(crate) fn best_of<'a>(
    ranking: &Ranking,
    day: Option<&'a HashMap<SeriesId, Vec<DayRollup>>>,
    series: SeriesId,
) -> Option<&'a DayRollup> {
    ranking.best(day.and_then(|d| d.get(&series)).into_iter().flatten())
}

#[cfg(test)]
pub(crate) mod tests {
    use schema::rollups::DayFigures;

    use super::*;

    pub(crate) fn source(n: u128, provider: &str) -> DataSource {
        DataSource { id: Uuid::from_u128(n), provider: provider.into(), ..DataSource::default() }
    }

    pub(crate) fn rollup(
        source: u128,
        series: SeriesId,
        day: NaiveDate,
        sum: f64,
        count: i64,
    ) -> DayRollup {
        DayRollup {
            series_type_id: series,
            data_source_id: Uuid::from_u128(source),
            local_date: day,
            figures: DayFigures { sample_count: count, value_sum: sum, ..DayFigures::default() },
        }
    }

    #[test]
    fn the_better_ranked_source_wins_and_unknown_sources_rank_last() {
        let ranking = Ranking::new(vec![(source(1, "apple"), 2), (source(2, "oura"), 1)]);
        let day = NaiveDate::default();
        let rows = [
            rollup(1, SeriesId(1), day, 10.0, 1),
            rollup(2, SeriesId(1), day, 20.0, 1),
            rollup(3, SeriesId(1), day, 0.0, 1),
        ];
        assert_eq!(ranking.best(&rows).map(|r| r.data_source_id), Some(Uuid::from_u128(2)));
        assert_eq!(ranking.rank(Uuid::from_u128(3)).0, i32::MAX);
        assert_eq!(ranking.provider_of(Uuid::from_u128(1)), Some("apple"));
        let grouped = by_day(rows.to_vec());
        assert_eq!(grouped[&day][&SeriesId(1)].len(), 3);
        assert_eq!(
            best_of(&ranking, grouped.get(&day), SeriesId(1)).map(|r| r.figures.value_sum),
            Some(20.0)
        );
    }
}
