//! Which endpoints receive an event: enabled ones whose `filter_types` include the event
//! (none: all) and whose `user_id` is the event's user (none: all users). An endpoint scoped to
//! a user never receives an event without a user.

use schema::ids::UserId;

/// What the fan-out needs of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target<'a> {
    pub filter_types: Option<&'a [String]>,
    pub user_id: Option<UserId>,
    pub disabled: bool,
}

pub(crate) fn receives(target: &Target<'_>, event_type: &str, user: Option<UserId>) -> bool {
    !target.disabled
        && target.filter_types.is_none_or(|types| types.iter().any(|t| t == event_type))
        && target.user_id.is_none_or(|u| user == Some(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_user_scopes_combine() {
        let (ada, bob) = (UserId(uuid::Uuid::from_u128(1)), UserId(uuid::Uuid::from_u128(2)));
        let workouts = vec!["workout.created".to_string()];
        let all = Target { filter_types: None, user_id: None, disabled: false };
        assert!(receives(&all, "steps.created", Some(ada)));
        assert!(receives(&all, "connection.created", None));
        let ada_workouts =
            Target { filter_types: Some(&workouts), user_id: Some(ada), disabled: false };
        assert!(receives(&ada_workouts, "workout.created", Some(ada)));
        assert!(!receives(&ada_workouts, "workout.created", Some(bob)));
        assert!(!receives(&ada_workouts, "sleep.created", Some(ada)));
        assert!(!receives(&ada_workouts, "workout.created", None));
        let empty: Vec<String> = Vec::new();
        let nothing = Target { filter_types: Some(&empty), user_id: None, disabled: false };
        assert!(!receives(&nothing, "workout.created", Some(ada)));
        let off = Target { disabled: true, ..all };
        assert!(!receives(&off, "workout.created", Some(ada)));
    }
}
