//! `wearhouse reprocess --user <id> [--since <date>]`: re-derive a user's data from the batches
//! they sent and the vendor pages their pulls kept, after a mapping or unit fix, without the
//! client or the vendor sending anything again.

use anyhow::Context;
use chrono::{DateTime, Utc};
use indicatif::{ProgressBar, ProgressStyle};
use schema::ids::UserId;

use crate::app;
use crate::config::Settings;

pub async fn run(
    settings: &Settings,
    user: UserId,
    since: Option<DateTime<Utc>>,
) -> anyhow::Result<()> {
    app::migrate(settings).await?;
    let db = app::connect_db(settings).await?;
    anyhow::ensure!(schema::users::exists(&db, user).await?, "no user with id {user}");
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template(
            "{spinner} reprocessing {pos}/{len} batches [{elapsed_precise}] {wide_bar} {eta}",
        )
        .context("progress template")?,
    );
    let done = ingest::reprocess::reprocess_user(&db, user, since, |n, total| {
        bar.set_length(total as u64);
        bar.set_position(n as u64);
    })
    .await
    .context("reprocessing")?;
    bar.finish_and_clear();
    println!(
        "reprocessed {} batch(es) of user {user} ({} failed); replaced {} sample(s) and {} workout(s)",
        done.batches, done.failed, done.samples_deleted, done.workouts_deleted
    );
    // The cloud vendors' pulls, from the pages they kept; then the rollups once more.
    let pulled =
        vendors::pulls::reprocess_user(&db, user, since).await.context("reprocessing pulls")?;
    if pulled.pulls > 0 {
        schema::samples::rebuild_rollups(&db, user).await.context("rebuilding the rollups")?;
        println!(
            "reprocessed {} vendor pull(s) of user {user}; replaced {} sample(s) and {} workout(s)",
            pulled.pulls, pulled.samples_deleted, pulled.workouts_deleted
        );
    }
    Ok(())
}
