//! Menstrual flow records → menstrual cycles. A cycle starts on a day marked as a cycle start,
//! or on the first flow day after at least `NEW_CYCLE_GAP_DAYS` without flow; it lasts until
//! the next cycle starts. The period is the run of flow days from its start.

use chrono::{DateTime, Duration, Utc};
use schema::data_sources::NewDataSource;
use serde_json::{Value, json};

use super::records::MenstrualItem;

const NEW_CYCLE_GAP_DAYS: i64 = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub source: NewDataSource,
    pub start: DateTime<Utc>,
    /// The next cycle's start; `None` for the latest cycle.
    pub end: Option<DateTime<Utc>>,
    pub zone_offset: Option<i16>,
    pub cycle_length: Option<i32>,
    pub period_length: i32,
    pub details: Value,
}

fn bleeding(i: &MenstrualItem) -> bool {
    i.flow.as_deref().is_some_and(|f| f != "none")
}

/// Cycles of each source, oldest first.
pub fn cycles(mut items: Vec<MenstrualItem>) -> Vec<Cycle> {
    items.sort_by(|a, b| {
        (&a.source.source, &a.source.device_model, a.ts).cmp(&(
            &b.source.source,
            &b.source.device_model,
            b.ts,
        ))
    });
    let mut out: Vec<Cycle> = Vec::new();
    let mut current: Option<(Cycle, Vec<Value>, DateTime<Utc>, bool)> = None; // cycle, days, last flow, period open
    for i in &items {
        let same_source = current.as_ref().is_some_and(|(c, ..)| c.source == i.source);
        let starts = bleeding(i)
            && (i.cycle_start
                || !same_source
                || current.as_ref().is_none_or(|(_, _, last, _)| {
                    i.ts - *last >= Duration::days(NEW_CYCLE_GAP_DAYS)
                }));
        if starts {
            if let Some((mut c, days, _, _)) = current.take() {
                if c.source == i.source {
                    c.end = Some(i.ts);
                    c.cycle_length =
                        Some(((i.ts - c.start).num_hours() as f64 / 24.0).round() as i32);
                }
                c.details = json!({ "days": days });
                out.push(c);
            }
            let c = Cycle {
                source: i.source.clone(),
                start: i.ts,
                end: None,
                zone_offset: i.zone_offset,
                cycle_length: None,
                period_length: 0,
                details: Value::Null,
            };
            current = Some((c, Vec::new(), i.ts, true));
        }
        let Some((c, days, last, period_open)) = current.as_mut() else { continue };
        if c.source != i.source {
            continue;
        }
        days.push(json!({"date": i.ts, "flow": i.flow, "intermenstrual": i.flow.is_none()}));
        if bleeding(i) {
            if *period_open && i.ts - *last <= Duration::days(2) {
                c.period_length = ((i.ts - c.start).num_hours() as f64 / 24.0).round() as i32 + 1;
            } else if i.ts != c.start {
                *period_open = false;
            }
            *last = i.ts;
        }
    }
    if let Some((mut c, days, _, _)) = current {
        c.details = json!({ "days": days });
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(n: i64, flow: &str, start: bool) -> MenstrualItem {
        MenstrualItem {
            source: NewDataSource {
                provider: "phonehealth".into(),
                source: Some("Health".into()),
                ..Default::default()
            },
            ts: DateTime::from_timestamp(1_767_225_600 + n * 86_400, 0).unwrap_or_default(),
            zone_offset: Some(60),
            flow: Some(flow.into()),
            cycle_start: start,
        }
    }

    #[test]
    fn two_cycles_and_their_lengths() {
        let items = vec![
            day(0, "medium", true),
            day(1, "heavy", false),
            day(2, "light", false),
            day(3, "light", false),
            day(15, "none", false),
            day(28, "light", false),
            day(29, "medium", false),
        ];
        let c = cycles(items);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].period_length, 4);
        assert_eq!(c[0].cycle_length, Some(28));
        assert_eq!(c[0].end, Some(c[1].start));
        assert_eq!(c[1].period_length, 2);
        assert_eq!(c[1].cycle_length, None);
    }
}
