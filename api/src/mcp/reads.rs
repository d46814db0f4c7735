//! What each tool reads and answers: the API's own pages, gathered up to the answer's bounds
//! (`bounds`), with the window, the counts and, when cut short, how to narrow the question.

use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::args::{
    BodyArgs, DaysArgs, FindUsersArgs, ScoresArgs, SeriesArgs, SleepArgs, UserArgs, WorkoutArgs,
};
use super::bounds::{self, LIST_DAYS, LIST_ITEMS, SUMMARY_DAYS, Window};
use super::caller::{Caller, ToolError};

/// A page of at most this many items is asked for at a time (the API's largest).
const PAGE: usize = 100;

/// A user id as a path segment: a UUID, nothing else.
fn user(raw: &str) -> Result<Uuid, ToolError> {
    Uuid::parse_str(raw.trim()).map_err(|_| {
        ToolError::Invalid(format!(
            "user_id '{raw}' is not a user's id (a UUID): find it with the find_users tool"
        ))
    })
}

/// The items of cursor pages of `path`, from the first page on, until `max` are read or the
/// pages end; and whether more were left.
async fn pages(
    api: &Caller,
    path: &str,
    query: &[(&str, String)],
    max: usize,
    keep: impl Fn(&Value) -> bool,
) -> Result<(Vec<Value>, bool), ToolError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut q = query.to_vec();
        q.push(("limit", PAGE.to_string()));
        if let Some(c) = cursor.take() {
            q.push(("cursor", c));
        }
        let page = api.get(path, &q).await?;
        let data = page.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
        for item in data.into_iter().filter(|i| keep(i)) {
            if items.len() == max {
                return Ok((items, true));
            }
            items.push(item);
        }
        match page.pointer("/pagination/next_cursor").and_then(Value::as_str) {
            Some(next) if page.pointer("/pagination/has_more") != Some(&Value::Bool(false)) => {
                cursor = Some(next.to_owned());
            }
            _ => return Ok((items, false)),
        }
    }
}

/// Adds `truncated` and, when it is, the `hint`.
fn cut(mut answer: Map<String, Value>, truncated: bool, hint: &str) -> Value {
    answer.insert("truncated".into(), Value::Bool(truncated));
    if truncated {
        answer.insert("hint".into(), Value::String(hint.to_owned()));
    }
    Value::Object(answer)
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

pub(crate) async fn find_users(api: &Caller, a: FindUsersArgs) -> Result<Value, ToolError> {
    let limit = a.limit.unwrap_or(20).clamp(1, 100);
    let mut query = vec![("limit", limit.to_string())];
    if let Some(search) = a.query.map(|q| q.trim().to_owned()).filter(|q| !q.is_empty()) {
        query.push(("search", search));
    }
    let page = api.get("/users", &query).await?;
    let users = page.get("items").cloned().unwrap_or_else(|| json!([]));
    let total = page.get("total").and_then(Value::as_i64).unwrap_or(0);
    let shown = users.as_array().map_or(0, Vec::len) as i64;
    let answer = object(json!({ "total": total, "users": users }));
    Ok(cut(
        answer,
        total > shown,
        "More users match: give a more specific query (an email, a name).",
    ))
}

pub(crate) async fn coverage(api: &Caller, a: UserArgs) -> Result<Value, ToolError> {
    let id = user(&a.user_id)?;
    let user = api.get(&format!("/users/{id}"), &[]).await?;
    let samples = api.get(&format!("/users/{id}/data-coverage"), &[]).await?;
    let connections = api.get(&format!("/users/{id}/connections"), &[]).await?;
    Ok(json!({
        "user": user,
        "samples": samples,
        "connections": connections,
        "note": "Sample days are UTC days. Workouts, sleep and summaries are read by their own tools over a window.",
    }))
}

/// A point as an assistant reads it: the API's sample with its source named in a word and
/// its unit once per series (in `units`).
fn point(sample: &Value) -> Value {
    let source = sample.get("source");
    let name = ["device_name", "source", "provider"]
        .iter()
        .find_map(|k| source.and_then(|s| s.get(*k)).and_then(Value::as_str))
        .unwrap_or("unknown");
    json!({
        "timestamp": sample.get("timestamp"),
        "type": sample.get("type"),
        "value": sample.get("value"),
        "source": name,
    })
}

pub(crate) async fn timeseries(api: &Caller, a: SeriesArgs) -> Result<Value, ToolError> {
    let id = user(&a.user_id)?;
    let types: Vec<String> =
        a.types.iter().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect();
    if types.is_empty() || types.len() > bounds::TYPES_MAX {
        return Err(ToolError::Invalid(format!(
            "types: name 1 to {} series types (heart_rate, steps, weight, …; data_coverage lists a user's)",
            bounds::TYPES_MAX
        )));
    }
    let window = Window::parse(&a.start_time, &a.end_time, LIST_DAYS)?;
    let max = a.max_points.unwrap_or(bounds::POINTS_DEFAULT).clamp(1, bounds::POINTS_MAX);
    let resolution = bounds::resolution(a.resolution.as_deref(), window, types.len(), max)?;
    let resolve = a.filter_by_priority.unwrap_or(true);
    let query = [
        ("start_time", a.start_time.clone()),
        ("end_time", a.end_time.clone()),
        ("types", types.join(",")),
        ("resolution", resolution.to_owned()),
        ("filter_by_priority", resolve.to_string()),
    ];
    let path = format!("/users/{id}/timeseries");
    let (samples, truncated) = pages(api, &path, &query, max as usize, |_| true).await?;
    let mut units = Map::new();
    for s in &samples {
        if let (Some(t), Some(u)) = (s.get("type").and_then(Value::as_str), s.get("unit")) {
            units.entry(t.to_owned()).or_insert_with(|| u.clone());
        }
    }
    let points: Vec<Value> = samples.iter().map(point).collect();
    let answer = object(json!({
        "user_id": id,
        "start_time": window.start,
        "end_time": window.end,
        "resolution": resolution,
        "aggregation": "per bucket: sums for additive series (steps, energy), means for levels (heart rate, weight)",
        "filter_by_priority": resolve,
        "units": units,
        "point_count": points.len(),
        "points": points,
    }));
    let hint = format!(
        "Cut at max_points ({max}): ask for a coarser resolution (1hour, 1day), fewer types or a shorter window."
    );
    Ok(cut(answer, truncated, &hint))
}

/// A daily summary (`activity`, `sleep`, `recovery`) over at most [`SUMMARY_DAYS`] days.
pub(crate) async fn summary(api: &Caller, kind: &str, a: DaysArgs) -> Result<Value, ToolError> {
    let id = user(&a.user_id)?;
    Window::parse(&a.start_date, &a.end_date, SUMMARY_DAYS)?;
    let query = [("start_date", a.start_date.clone()), ("end_date", a.end_date.clone())];
    let path = format!("/users/{id}/summaries/{kind}");
    let (days, truncated) = pages(api, &path, &query, SUMMARY_DAYS as usize + 1, |_| true).await?;
    let answer = object(json!({
        "user_id": id,
        "start_date": a.start_date,
        "end_date": a.end_date,
        "days_are": "the user's local days; days without data are left out",
        "day_count": days.len(),
        "days": days,
    }));
    Ok(cut(answer, truncated, "Ask for a shorter window."))
}

pub(crate) async fn body(api: &Caller, a: BodyArgs) -> Result<Value, ToolError> {
    let id = user(&a.user_id)?;
    let period = a.average_period.unwrap_or(7).clamp(1, 7);
    let query = [("average_period", period.to_string())];
    let body = api.get(&format!("/users/{id}/summaries/body"), &query).await?;
    Ok(json!({ "user_id": id, "average_period_days": period, "body": body }))
}

/// Sessions (`workouts`, `sleep`) starting in the window, newest first.
async fn sessions(
    api: &Caller,
    kind: &str,
    user_id: &str,
    start: &str,
    end: &str,
    resolve: Option<bool>,
    keep: impl Fn(&Value) -> bool,
) -> Result<Value, ToolError> {
    let id = user(user_id)?;
    Window::parse(start, end, LIST_DAYS)?;
    let resolve = resolve.unwrap_or(true);
    let query = [
        ("start_date", start.to_owned()),
        ("end_date", end.to_owned()),
        ("filter_by_priority", resolve.to_string()),
    ];
    let path = format!("/users/{id}/events/{kind}");
    let (items, truncated) = pages(api, &path, &query, LIST_ITEMS, keep).await?;
    let answer = object(json!({
        "user_id": id,
        "start_date": start,
        "end_date": end,
        "filter_by_priority": resolve,
        "times_are": "the user's local time, with its offset",
        "count": items.len(),
        "items": items,
    }));
    Ok(cut(answer, truncated, "More sessions in the window: ask for a shorter window."))
}

pub(crate) async fn workouts(api: &Caller, a: WorkoutArgs) -> Result<Value, ToolError> {
    let wanted = a.workout_type.map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty());
    let keep = |w: &Value| match &wanted {
        Some(t) => w.get("type").and_then(Value::as_str) == Some(t.as_str()),
        None => true,
    };
    let (start, end) = (&a.start_date, &a.end_date);
    sessions(api, "workouts", &a.user_id, start, end, a.filter_by_priority, keep).await
}

pub(crate) async fn sleep_sessions(api: &Caller, a: SleepArgs) -> Result<Value, ToolError> {
    let (start, end) = (&a.start_date, &a.end_date);
    sessions(api, "sleep", &a.user_id, start, end, a.filter_by_priority, |_| true).await
}

pub(crate) async fn health_scores(api: &Caller, a: ScoresArgs) -> Result<Value, ToolError> {
    let id = user(&a.user_id)?;
    Window::parse(&a.start_date, &a.end_date, LIST_DAYS)?;
    let mut query = vec![
        ("start_date", a.start_date.clone()),
        ("end_date", a.end_date.clone()),
        ("limit", LIST_ITEMS.to_string()),
    ];
    if let Some(c) = a.category.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty()) {
        query.push(("category", c));
    }
    let page = api.get(&format!("/users/{id}/health-scores"), &query).await?;
    let scores = page.get("data").cloned().unwrap_or_else(|| json!([]));
    let total = page.pointer("/pagination/total_count").and_then(Value::as_i64).unwrap_or(0);
    let shown = scores.as_array().map_or(0, Vec::len) as i64;
    let answer = object(json!({
        "user_id": id,
        "start_date": a.start_date,
        "end_date": a.end_date,
        "total": total,
        "scores": scores,
    }));
    Ok(cut(answer, total > shown, "More scores: name a category or ask for a shorter window."))
}
