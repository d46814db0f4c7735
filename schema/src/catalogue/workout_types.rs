//! Workout activity types: what the SDKs send (HealthKit snake_case, Health Connect and Samsung
//! upper case, lower-cased before lookup) → the unified workout type.
//! Unknown names become `other`; the literal `other` is `generic` (a workout the user called
//! "other"), as in the reference.

use std::collections::HashMap;
use std::sync::LazyLock;

/// The unified workout types.
pub(crate) const WORKOUT_TYPES: &[&str] = &[
    "running",
    "trail_running",
    "treadmill",
    "walking",
    "hiking",
    "mountaineering",
    "cycling",
    "mountain_biking",
    "indoor_cycling",
    "cyclocross",
    "swimming",
    "pool_swimming",
    "open_water_swimming",
    "strength_training",
    "cardio_training",
    "fitness_equipment",
    "elliptical",
    "rowing_machine",
    "stair_climbing",
    "yoga",
    "pilates",
    "stretching",
    "meditation",
    "cross_country_skiing",
    "alpine_skiing",
    "backcountry_skiing",
    "downhill_skiing",
    "snowboarding",
    "snowshoeing",
    "ice_skating",
    "snowmobiling",
    "winter_sports",
    "snow_sports",
    "rowing",
    "kayaking",
    "canoeing",
    "paddling",
    "stand_up_paddleboarding",
    "surfing",
    "kitesurfing",
    "windsurfing",
    "sailing",
    "water_polo",
    "wakeboarding",
    "water_skiing",
    "boating",
    "water_sports",
    "soccer",
    "basketball",
    "football",
    "american_football",
    "baseball",
    "tennis",
    "badminton",
    "volleyball",
    "handball",
    "rugby",
    "hockey",
    "floorball",
    "lacrosse",
    "cricket",
    "squash",
    "table_tennis",
    "padel",
    "pickleball",
    "racquetball",
    "racket_sports",
    "boxing",
    "martial_arts",
    "wrestling",
    "fencing",
    "rock_climbing",
    "indoor_climbing",
    "bouldering",
    "trail_hiking",
    "orienteering",
    "archery",
    "fishing",
    "hunting",
    "paragliding",
    "parkour",
    "golf",
    "skating",
    "inline_skating",
    "skateboarding",
    "horseback_riding",
    "gymnastics",
    "bowling",
    "curling",
    "disc_sports",
    "triathlon",
    "multisport",
    "motorcycling",
    "motor_sports",
    "dance",
    "aerobics",
    "group_exercise",
    "e_biking",
    "virtual_activity",
    "diving",
    "snorkeling",
    "walking_fitness",
    "casual_walking",
    "transition",
    "team_sports",
    "para_sports",
    "play",
    "wheelchair",
    "recovery",
    "gaming",
    "chores",
    "lifestyle",
    "work",
    "operations",
    "generic",
    "other",
    "sport",
];

/// `(wire name, lower case → unified type)` for names that differ from a unified type.
pub(crate) const WIRE_NAMES: &[(&str, &str)] = &[
    ("wheelchair_walk", "walking"),
    ("wheelchair_walk_pace", "walking"),
    ("wheelchair_run", "running"),
    ("wheelchair_run_pace", "running"),
    ("track_and_field", "running"),
    ("running_treadmill", "treadmill"),
    ("hand_cycling", "cycling"),
    ("biking", "cycling"),
    ("cycling_stationary", "indoor_cycling"),
    ("biking_stationary", "indoor_cycling"),
    ("stairs", "stair_climbing"),
    ("stair_climbing_machine", "stair_climbing"),
    ("jump_rope", "cardio_training"),
    ("cross_training", "cardio_training"),
    ("mixed_cardio", "cardio_training"),
    ("hiit", "cardio_training"),
    ("high_intensity_interval_training", "cardio_training"),
    ("mixed_metabolic_cardio_training", "cardio_training"),
    ("boot_camp", "cardio_training"),
    ("bootcamp", "cardio_training"),
    ("exercise_class", "cardio_training"),
    ("core_training", "strength_training"),
    ("functional_strength_training", "strength_training"),
    ("traditional_strength_training", "strength_training"),
    ("calisthenics", "strength_training"),
    ("weightlifting", "strength_training"),
    ("step_training", "aerobics"),
    ("barre", "aerobics"),
    ("fitness_gaming", "gaming"),
    ("preparation_and_recovery", "stretching"),
    ("flexibility", "stretching"),
    ("cooldown", "stretching"),
    ("mind_and_body", "stretching"),
    ("guided_breathing", "meditation"),
    ("cardio_dance", "dance"),
    ("social_dance", "dance"),
    ("dance_inspired_training", "dance"),
    ("dancing", "dance"),
    ("football_american", "american_football"),
    ("australian_football", "football"),
    ("football_australian", "football"),
    ("softball", "baseball"),
    ("frisbee_disc", "disc_sports"),
    ("ice_hockey", "hockey"),
    ("roller_hockey", "hockey"),
    ("climbing", "rock_climbing"),
    ("equestrian", "horseback_riding"),
    ("equestrian_sports", "horseback_riding"),
    ("skiing", "alpine_skiing"),
    ("skating_sports", "ice_skating"),
    ("paddle_sports", "paddling"),
    ("surfing_sports", "surfing"),
    ("water_fitness", "swimming"),
    ("swimming_pool", "pool_swimming"),
    ("swimming_open_water", "open_water_swimming"),
    ("underwater_diving", "diving"),
    ("scuba_diving", "diving"),
    ("kickboxing", "boxing"),
    ("tai_chi", "martial_arts"),
    ("swim_bike_run", "triathlon"),
    ("other_workout", "generic"),
    ("other", "generic"),
];

static BY_WIRE: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| WIRE_NAMES.iter().copied().collect());

/// The unified type of a workout type name as sent; `None` when none was sent.
pub fn unified(raw: Option<&str>) -> Option<&'static str> {
    let name = raw.map(str::trim).filter(|s| !s.is_empty())?;
    // HealthKit exports say `HKWorkoutActivityTypeTraditionalStrengthTraining`.
    let name = match name.strip_prefix("HKWorkoutActivityType") {
        Some(camel) => camel_to_snake(camel),
        None => name.to_ascii_lowercase(),
    };
    if let Some(found) = BY_WIRE.get(name.as_str()) {
        return Some(found);
    }
    Some(WORKOUT_TYPES.iter().copied().find(|t| *t == name).unwrap_or("other"))
}

fn camel_to_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wire_row_maps_to_a_unified_type() {
        for (wire, unified_type) in WIRE_NAMES {
            assert!(WORKOUT_TYPES.contains(unified_type), "{wire} -> {unified_type}");
            assert_eq!(unified(Some(wire)), Some(*unified_type));
            assert_eq!(*wire, wire.to_ascii_lowercase());
        }
    }

    #[test]
    fn each_client_spelling() {
        assert_eq!(unified(Some("running")), Some("running"));
        assert_eq!(unified(Some("RUNNING")), Some("running"));
        assert_eq!(unified(Some("RUNNING_TREADMILL")), Some("treadmill"));
        assert_eq!(unified(Some("hiit")), Some("cardio_training"));
        assert_eq!(
            unified(Some("HKWorkoutActivityTypeTraditionalStrengthTraining")),
            Some("strength_training")
        );
        assert_eq!(unified(Some("HKWorkoutActivityTypeRunning")), Some("running"));
        assert_eq!(unified(Some("other")), Some("generic"));
        assert_eq!(unified(Some("UNKNOWN_58")), Some("other"));
        assert_eq!(unified(Some("11007")), Some("other"));
        assert_eq!(unified(None), None);
        assert_eq!(unified(Some("  ")), None);
    }
}
