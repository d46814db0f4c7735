//! What a run did with the items it received: counts, and for every item it could not use, the
//! reason (a bounded set of codes, with a few examples each). Reported in the sync run and as
//! metrics; never a reason to fail the rest of the batch.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

/// How many examples are kept per reason.
const EXAMPLES: usize = 5;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    pub count: u64,
    pub examples: Vec<String>,
}

impl Tally {
    fn add(&mut self, example: Option<String>) {
        self.count += 1;
        if let Some(e) = example
            && self.examples.len() < EXAMPLES
            && !self.examples.contains(&e)
        {
            self.examples.push(e);
        }
    }
}

/// A drop reason that names a type not kept here, not a fault of the item.
fn unsupported(reason: &str) -> bool {
    reason.ends_with(".unknown_type")
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Items received, by kind (`records`, `sleep`, `workouts`).
    pub received: BTreeMap<&'static str, u64>,
    /// Items dropped, by reason (`record.unknown_type`, …).
    pub dropped: BTreeMap<&'static str, Tally>,
    /// Items kept with a problem (`record.invalid_zone_offset`: kept without its offset).
    pub warnings: BTreeMap<&'static str, Tally>,
}

impl Report {
    pub fn received(&mut self, kind: &'static str, n: u64) {
        *self.received.entry(kind).or_default() += n;
    }

    pub fn drop(&mut self, reason: &'static str, example: Option<String>) {
        self.dropped.entry(reason).or_default().add(example);
    }

    pub fn warn(&mut self, reason: &'static str, example: Option<String>) {
        self.warnings.entry(reason).or_default().add(example);
    }

    /// Adds another report's counts to this one.
    pub fn merge(&mut self, other: Report) {
        for (kind, n) in other.received {
            *self.received.entry(kind).or_default() += n;
        }
        for (into, from) in
            [(&mut self.dropped, other.dropped), (&mut self.warnings, other.warnings)]
        {
            for (reason, tally) in from {
                let t = into.entry(reason).or_default();
                t.count += tally.count;
                for e in tally.examples {
                    if t.examples.len() < EXAMPLES && !t.examples.contains(&e) {
                        t.examples.push(e);
                    }
                }
            }
        }
    }

    pub fn dropped_count(&self) -> u64 {
        self.dropped.values().map(|t| t.count).sum()
    }

    /// Items dropped because something was wrong with them: what makes a run `partial`. Items
    /// of a type this service keeps no series for (stand hours, mindful minutes) are skipped,
    /// not wrong: a run that dropped only those succeeded, and says what it skipped.
    pub fn problem_count(&self) -> u64 {
        self.dropped.iter().filter(|(r, _)| !unsupported(r)).map(|(_, t)| t.count).sum()
    }

    /// What a run's message adds: ` (2 item(s) dropped, 144 of unsupported types skipped)`, or
    /// nothing.
    pub fn said(&self) -> String {
        let problems = self.problem_count();
        let skipped = self.dropped_count() - problems;
        match (problems, skipped) {
            (0, 0) => String::new(),
            (p, 0) => format!(" ({p} item(s) dropped)"),
            (0, s) => format!(" ({s} item(s) of unsupported types skipped)"),
            (p, s) => format!(" ({p} item(s) dropped, {s} of unsupported types skipped)"),
        }
    }

    /// `{reason: {count, examples}}`, warnings under `warnings`.
    pub fn dropped_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        for (reason, tally) in &self.dropped {
            out.insert((*reason).to_string(), json!(tally));
        }
        if !self.warnings.is_empty() {
            out.insert("warnings".into(), json!(self.warnings));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_types_are_skipped_not_problems() {
        let mut r = Report::default();
        assert_eq!(r.said(), "");
        r.drop("record.unknown_type", Some("HKCategoryTypeIdentifierAppleStandHour".into()));
        r.drop("record.unknown_type", None);
        assert_eq!((r.problem_count(), r.dropped_count()), (0, 2));
        assert_eq!(r.said(), " (2 item(s) of unsupported types skipped)");
        r.drop("record.invalid_value", None);
        assert_eq!(r.problem_count(), 1);
        assert_eq!(r.said(), " (1 item(s) dropped, 2 of unsupported types skipped)");
    }

    #[test]
    fn tallies_keep_a_few_distinct_examples() {
        let mut r = Report::default();
        for i in 0..10 {
            r.drop("record.unknown_type", Some(format!("T{}", i % 7)));
        }
        r.drop("record.invalid_value", None);
        assert_eq!(r.dropped_count(), 11);
        let t = &r.dropped["record.unknown_type"];
        assert_eq!(t.count, 10);
        assert_eq!(t.examples, vec!["T0", "T1", "T2", "T3", "T4"]);
        assert_eq!(r.dropped_json()["record.invalid_value"]["count"], 1);
    }
}
