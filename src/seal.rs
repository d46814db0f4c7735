//! `wearhouse seal [--now]`: seals the days of samples that are due (past SEAL_AFTER_HOURS and
//! quiet for SEAL_QUIET_MINUTES; with `--now`, every day before today) into blocks until none
//! is left, with progress. The worker does the same in the background; this is for a deployment
//! that wants its existing samples sealed at once (after upgrading) or a benchmark.

use std::time::{Duration, Instant};

use anyhow::Context;
use ingest::sealer::SealConfig;
use schema::blocks::Sealing;
use tokio_util::sync::CancellationToken;

use crate::app;
use crate::config::Settings;

/// Seals until nothing is due, or until `stop` (Ctrl-C, SIGTERM) between two rounds: what was
/// sealed stays, and running it again goes on. `SEAL_JOBS` sealers share the users.
pub async fn run(settings: &Settings, now: bool, stop: CancellationToken) -> anyhow::Result<()> {
    app::migrate(settings).await?;
    let db = app::connect_db(settings).await?;
    let config = if now {
        SealConfig {
            after: Duration::ZERO,
            quiet: Duration::ZERO,
            jobs: settings.seal_jobs,
            ..SealConfig::default()
        }
    } else {
        let Some(config) = settings.seal() else {
            println!("sealing is off (SEAL_AFTER_HOURS=0): nothing sealed; --now seals anyway");
            return Ok(());
        };
        config
    };
    let started = Instant::now();
    // SEAL_JOBS sealers, each on its share of the users, report each round here.
    let (rounds, mut sealed) = tokio::sync::mpsc::unbounded_channel::<Sealing>();
    let mut sealers = tokio::task::JoinSet::new();
    for share in config.shares() {
        let (db, rounds, stop) = (db.clone(), rounds.clone(), stop.clone());
        sealers.spawn(async move {
            while !stop.is_cancelled() {
                let done = ingest::sealer::seal_due(&db, &share).await?;
                if !done.progressed() || rounds.send(done).is_err() {
                    break;
                }
            }
            Ok::<(), schema::Error>(())
        });
    }
    drop(rounds);
    let mut total = Sealing::default();
    while let Some(done) = sealed.recv().await {
        total += done;
        let Sealing { days, samples, bytes, sessions } = total;
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        eprintln!(
            "sealed {days} day(s), {samples} sample(s) into {bytes} bytes ({:.0} samples/s), {sessions} session(s)",
            samples as f64 / secs
        );
    }
    while let Some(sealer) = sealers.join_next().await {
        sealer.context("a sealer stopped")?.context("sealing")?;
    }
    if stop.is_cancelled() {
        let Sealing { days, samples, .. } = total;
        println!("stopped: sealed {days} day(s), {samples} sample(s); run it again to go on");
        return Ok(());
    }
    // Caught up: the disk sealing emptied is given back now, not once autovacuum has counted.
    let before = config.first_unsealed_day(chrono::Utc::now());
    let chunks = schema::blocks::compact::compact_sealed_chunks(&db, before, true)
        .await
        .context("compacting chunks")?;
    let mut packed = 0;
    // A round moves a bounded number of users; the rest, and what landed behind the cut, move
    // next (bounded: rows landing behind the cut for ever would not keep it going).
    for _ in 0..1000 {
        let round = schema::blocks::compact::pack_local_days(&db).await.context("packing")?;
        packed += round.freed;
        if !round.progressed() {
            break;
        }
    }
    let indexes = schema::blocks::compact::compact_emptied_indexes(&db, true)
        .await
        .context("compacting indexes")?;
    if chunks + packed + indexes > 0 {
        eprintln!(
            "gave back the disk sealing emptied: {chunks} bytes of chunks, {packed} of local day \
             rollups, {indexes} of indexes"
        );
    }
    let Sealing { days, samples, bytes, sessions } = total;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "sealed {days} day(s): {samples} sample(s) into {bytes} bytes of blocks ({:.2} bytes a sample), {sessions} session(s), in {secs:.1} s ({:.0} samples/s)",
        bytes as f64 / (samples.max(1)) as f64,
        samples as f64 / secs.max(1e-3)
    );
    Ok(())
}
