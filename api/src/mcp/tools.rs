//! The MCP tools: what each is for, in words an agent acts on, and the read it makes
//! (`reads`). Every tool reads; none changes anything.

use axum::Router;
use axum::http::request::Parts;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::Value;

use super::args::{
    BodyArgs, DaysArgs, FindUsersArgs, ScoresArgs, SeriesArgs, SleepArgs, UserArgs, WorkoutArgs,
};
use super::caller::{Caller, ToolError};
use super::reads;

/// The tools of one MCP request: the REST API they read through.
#[derive(Clone)]
pub(crate) struct Tools {
    rest: Router,
}

impl Tools {
    pub(crate) fn new(rest: Router) -> Tools {
        Tools { rest }
    }

    fn caller(&self, parts: &Parts) -> Caller {
        Caller::new(&self.rest, parts)
    }
}

/// A tool's answer: its JSON as structured content, or a tool error (`isError`) saying what
/// to do about it.
fn answer(read: Result<Value, ToolError>) -> CallToolResult {
    match read {
        Ok(value) => CallToolResult::structured(value),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    }
}

#[tool_router]
impl Tools {
    #[tool(
        description = "Find the users of this deployment by part of their email, name, external id or id (all users, newest first, without a query). Start here: every other tool takes a user_id from this answer.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn find_users(
        &self,
        Parameters(args): Parameters<FindUsersArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::find_users(&self.caller(&parts), args).await)
    }

    #[tool(
        description = "What data a user has: the user's record, every series with its unit, sources and first and last day (UTC) with samples, and the connected providers. Call it before timeseries to know which types and days exist.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn data_coverage(
        &self,
        Parameters(args): Parameters<UserArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::coverage(&self.caller(&parts), args).await)
    }

    #[tool(
        description = "A user's time series (heart rate, steps, weight, SpO2, …) over a window of up to 366 days, at most max_points points (default 500): at resolution auto the finest bucket that fits is chosen (1min … 1day; sums for steps and energy, means for levels), raw gives single samples. Timestamps are the user's local time with offset; units are named in `units`. Sources overlapping in a bucket are resolved by the user's source priority unless filter_by_priority is false.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn timeseries(
        &self,
        Parameters(args): Parameters<SeriesArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::timeseries(&self.caller(&parts), args).await)
    }

    #[tool(
        description = "Daily activity of a user per local day (up to 92 days): steps, distance, active and total energy, active and sedentary minutes, intensity minutes, floors, heart rate; one source per figure by priority.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn activity_summary(
        &self,
        Parameters(args): Parameters<DaysArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::summary(&self.caller(&parts), "activity", args).await)
    }

    #[tool(
        description = "Sleep per night (up to 92 nights, by the local day the user woke up): bedtime and wake time, time asleep and in bed, deep, REM, light and awake minutes, efficiency, naps. Use it for questions like 'how did they sleep last week'.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn sleep_summary(
        &self,
        Parameters(args): Parameters<DaysArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::summary(&self.caller(&parts), "sleep", args).await)
    }

    #[tool(
        description = "Recovery per local day (up to 92 days): resting heart rate, heart rate variability, SpO2, respiratory rate, skin temperature and recovery scores where the sources give them.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn recovery_summary(
        &self,
        Parameters(args): Parameters<DaysArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::summary(&self.caller(&parts), "recovery", args).await)
    }

    #[tool(
        description = "A user's body now: the latest weight, height, body fat, muscle mass and BMI, resting heart rate and HRV averaged over the last days, recent temperature and blood pressure.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn body_summary(
        &self,
        Parameters(args): Parameters<BodyArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::body(&self.caller(&parts), args).await)
    }

    #[tool(
        description = "A user's workouts starting in a window (up to 366 days, at most 200, newest first): type, local start and end, duration, energy, distance, heart rate, pace, elevation, source. Filter by workout_type (running, cycling, …).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn workouts(
        &self,
        Parameters(args): Parameters<WorkoutArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::workouts(&self.caller(&parts), args).await)
    }

    #[tool(
        description = "A user's sleep sessions starting in a window (up to 366 days, at most 200, newest first), each with its stages over time: for the detail of single nights (sleep_summary gives the nightly figures).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn sleep_sessions(
        &self,
        Parameters(args): Parameters<SleepArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::sleep_sessions(&self.caller(&parts), args).await)
    }

    #[tool(
        description = "Health scores of a user in a window (up to 366 days, at most 200, newest first): sleep, recovery, readiness, activity, stress, resilience, body battery, strain — the vendors' own and those computed here (provider `internal`).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn health_scores(
        &self,
        Parameters(args): Parameters<ScoresArgs>,
        Extension(parts): Extension<Parts>,
    ) -> CallToolResult {
        answer(reads::health_scores(&self.caller(&parts), args).await)
    }
}

#[tool_handler(
    name = "wearhouse",
    instructions = "Health data of the users of a wearhouse deployment: wearables, phones and health apps. Find the user first (find_users), see what they have (data_coverage), then read summaries for days and nights, sessions for workouts and sleep detail, timeseries for the samples themselves. Dates are YYYY-MM-DD; days are the user's local days. Answers are bounded: when one says truncated, follow its hint."
)]
impl ServerHandler for Tools {}
