//! `wearhouse import --user <id> <export.xml|export.zip>`: imports an Apple Health export from
//! disk, with a progress bar (bytes, records per second, time left).

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ingest::import::{ImportTarget, finish_run, run_import};
use schema::ids::UserId;
use uuid::Uuid;

use crate::app;
use crate::config::Settings;

pub async fn run(settings: &Settings, user: UserId, path: &Path) -> anyhow::Result<()> {
    app::migrate(settings).await?;
    let db = app::connect_db(settings).await?;
    anyhow::ensure!(schema::users::exists(&db, user).await?, "no user with id {user}");
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let bar = ProgressBar::new(size).with_style(
        ProgressStyle::with_template(
            "{spinner} {bytes}/{total_bytes} ({bytes_per_sec}) {wide_bar} {msg} eta {eta}",
        )
        .context("progress template")?,
    );
    let started = Instant::now();
    let run_id = Uuid::now_v7();
    let target = ImportTarget { user_id: user, run_id, outbox: settings.outgoing_webhooks_enabled };
    // The API's reads, on the primary and its replicas, that the import yields to.
    let api = app::connect_reads(settings, &db, 1, schema::Role::Tool)?;
    let done = run_import(&db, &api, target, Box::new(file), |p| {
        bar.set_position(p.bytes);
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        bar.set_message(format!("{:.0} records/s", p.records as f64 / secs));
    })
    .await;
    bar.finish_and_clear();
    finish_run(&db, target, &done).await.context("recording the import's outcome")?;
    let secs = started.elapsed().as_secs_f64();
    let w = &done.written;
    println!(
        "import {run_id}: {} records in {secs:.1} s ({:.1} MB/s, {} chunks); samples: {} new, {} changed, {} unchanged; \
         workouts: {} new, {} given a route; sleep sessions: {} saved; menstrual cycles: {} new; \
         dropped: {}",
        done.progress.records,
        done.progress.bytes as f64 / 1e6 / secs.max(1e-3),
        done.chunks,
        w.samples.inserted,
        w.samples.updated,
        w.samples.unchanged,
        w.workouts_saved,
        done.routes_saved,
        w.sleep_saved,
        done.cycles_saved,
        done.report.dropped_count()
    );
    match done.error {
        Some(e) => Err(anyhow::anyhow!(e).context("the import failed")),
        None => Ok(()),
    }
}
