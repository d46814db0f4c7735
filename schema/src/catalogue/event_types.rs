//! The outgoing-webhook event types of the contract: session events and the timeseries group
//! events, whose children are the per-series events of their member series types.

use super::series_types::SERIES_TYPES;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventType {
    pub name: &'static str,
    pub description: &'static str,
    /// For a timeseries group event, `series.<slug>.created` of each member series.
    pub child_events: Vec<String>,
}

/// The session events ingest writes to the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEvent {
    WorkoutCreated,
    SleepCreated,
    MenstrualCycleCreated,
    ConnectionCreated,
    ConnectionRevoked,
}

impl SessionEvent {
    /// Its name in the catalogue (and on the wire).
    pub fn name(self) -> &'static str {
        match self {
            SessionEvent::WorkoutCreated => "workout.created",
            SessionEvent::SleepCreated => "sleep.created",
            SessionEvent::MenstrualCycleCreated => "menstrual_cycle.created",
            SessionEvent::ConnectionCreated => "connection.created",
            SessionEvent::ConnectionRevoked => "connection.revoked",
        }
    }
}

/// Session and connection events: fired once per saved session or connection change.
const SESSION_EVENTS: &[(&str, &str)] = &[
    ("connection.created", "A user connected a provider."),
    (
        "connection.revoked",
        "A connection became invalid or was disconnected; the user must re-authorize.",
    ),
    ("workout.created", "A new workout was saved."),
    ("sleep.created", "A new or merged sleep session was saved."),
    ("menstrual_cycle.created", "A new menstrual cycle record was saved."),
    ("activity.created", "A new generic activity session was saved."),
];

/// Timeseries group events: one per (user, provider, series type) in an ingested batch.
const GROUP_EVENTS: &[(&str, &str)] = &[
    (
        "heart_rate.created",
        "New heart-rate samples (heart rate, resting, walking average, AFib burden).",
    ),
    ("heart_rate_variability.created", "New heart-rate variability samples (SDNN, RMSSD)."),
    ("steps.created", "New step counts."),
    ("calories.created", "New active or basal energy samples."),
    ("spo2.created", "New blood oxygen saturation or perfusion index samples."),
    (
        "respiratory_rate.created",
        "New respiratory rate, breathing disturbance or lung function samples.",
    ),
    ("body_temperature.created", "New body or skin temperature samples."),
    ("stress.created", "New stress level or electrodermal activity samples."),
    ("blood_glucose.created", "New blood glucose, blood alcohol or insulin delivery samples."),
    ("blood_pressure.created", "New systolic or diastolic blood pressure samples."),
    (
        "body_composition.created",
        "New weight, body fat, BMI, lean mass and other body composition samples.",
    ),
    ("fitness_metrics.created", "New VO2 max, cardiovascular age or fitness age samples."),
    ("recovery_score.created", "New recovery score or body battery samples."),
    (
        "activity_timeseries.created",
        "New stand, exercise, flights, distance and other activity samples.",
    ),
    (
        "workout_metrics.created",
        "New cadence, power, speed, running, walking and swimming metrics.",
    ),
    (
        "environmental.created",
        "New audio exposure, daylight, UV, weather and other environmental samples.",
    ),
    ("timeseries.created", "New samples of a series type not mapped to a group above."),
];

/// Every event type, session events first.
pub fn all() -> Vec<EventType> {
    let sessions = SESSION_EVENTS.iter().map(|&(name, description)| EventType {
        name,
        description,
        child_events: Vec::new(),
    });
    let groups = GROUP_EVENTS.iter().map(|&(name, description)| EventType {
        name,
        description,
        child_events: SERIES_TYPES
            .iter()
            .filter(|t| t.event == name)
            .map(|t| t.child_event())
            .collect(),
    });
    sessions.chain(groups).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_events_are_in_the_catalogue() {
        use SessionEvent::*;
        for e in [
            WorkoutCreated,
            SleepCreated,
            MenstrualCycleCreated,
            ConnectionCreated,
            ConnectionRevoked,
        ] {
            assert!(SESSION_EVENTS.iter().any(|(name, _)| *name == e.name()), "{e:?}");
        }
    }

    #[test]
    fn every_series_belongs_to_exactly_one_listed_group() {
        let events = all();
        for t in SERIES_TYPES {
            let owners: Vec<_> =
                events.iter().filter(|e| e.child_events.contains(&t.child_event())).collect();
            assert_eq!(owners.len(), 1, "{} must be in exactly one group", t.slug);
            assert_eq!(owners[0].name, t.event);
        }
    }

    #[test]
    fn contract_memberships_hold() {
        let events = all();
        let children =
            |name: &str| events.iter().find(|e| e.name == name).map(|e| e.child_events.clone());
        let hr = children("heart_rate.created").unwrap_or_default();
        for slug in [
            "heart_rate",
            "resting_heart_rate",
            "walking_heart_rate_average",
            "atrial_fibrillation_burden",
        ] {
            assert!(hr.contains(&format!("series.{slug}.created")), "{slug}");
        }
        assert_eq!(children("steps.created"), Some(vec!["series.steps.created".to_string()]));
        assert_eq!(children("workout.created"), Some(vec![]));
        assert!(
            children("timeseries.created")
                .unwrap_or_default()
                .contains(&"series.latitude.created".to_string())
        );
    }
}
