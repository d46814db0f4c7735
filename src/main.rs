//! `wearhouse`: the command line. `serve` (HTTP API), `worker` (background jobs), `all` (both
//! in one process, the default) and `migrate`; and, for operators, `import`, `reprocess`, `seal`
//! and `resubscribe`.

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;
use wearhouse::app;
use wearhouse::config::{LogFormat, Settings};

// glibc's allocator spent 5-8 % of a read's CPU in malloc and free across the runtime's
// threads; mimalloc's per-thread heaps take most of that back (benches/README, "mimalloc").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "wearhouse", version, about = "Self-hosted health-data aggregation service")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    settings: Settings,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP API.
    Serve,
    /// Run the background worker.
    Worker,
    /// Run the API and the worker in one process (the default).
    All,
    /// Apply database migrations and exit.
    Migrate,
    /// Import an Apple Health export (export.xml or export.zip) from disk.
    Import {
        /// The user's id.
        #[arg(long)]
        user: uuid::Uuid,
        /// The export file.
        file: std::path::PathBuf,
    },
    /// Re-derive a user's data from the SDK batches they sent and the vendor pages their pulls
    /// kept (after a mapping or unit fix).
    Reprocess {
        /// The user's id.
        #[arg(long)]
        user: uuid::Uuid,
        /// Only batches received since this date (ISO 8601 date or date-time).
        #[arg(long, value_parser = parse_since)]
        since: Option<chrono::DateTime<chrono::Utc>>,
    },
    /// Seal the days of samples that are due into compressed blocks, until none is left.
    Seal {
        /// Every day before today, however recent or busy.
        #[arg(long)]
        now: bool,
    },
    /// Make every active connection's notification subscriptions at a vendor again, with the
    /// notification URL of now (after setting or changing `<VENDOR>_WEBHOOK_TOKEN`).
    Resubscribe {
        /// The vendor (e.g. `withings`).
        #[arg(long)]
        provider: String,
    },
}

fn parse_since(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    api::dates::parse(s).map(|t| t.at).ok_or_else(|| api::dates::invalid_message(s))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing(cli.settings.log_format);
    let settings = cli.settings;
    let shutdown = CancellationToken::new();
    // The long-running commands stop cleanly on a signal; the others (migrate, import,
    // reprocess, resubscribe) keep the default, dying at once: each of their transactions
    // rolls back whole.
    if matches!(
        cli.command,
        None | Some(Command::All | Command::Serve | Command::Worker | Command::Seal { .. })
    ) {
        tokio::spawn(stop_on_signal(shutdown.clone()));
    }
    match cli.command {
        Some(Command::Migrate) => app::migrate(&settings).await,
        Some(Command::Import { user, file }) => {
            wearhouse::import::run(&settings, user.into(), &file).await
        }
        Some(Command::Reprocess { user, since }) => {
            wearhouse::reprocess::run(&settings, user.into(), since).await
        }
        Some(Command::Seal { now }) => wearhouse::seal::run(&settings, now, shutdown).await,
        Some(Command::Resubscribe { provider }) => {
            wearhouse::resubscribe::run(&settings, &provider).await
        }
        Some(Command::Worker) => app::work(&settings, shutdown).await,
        Some(Command::Serve) => app::serve(&settings, bind(&settings).await?, shutdown).await,
        Some(Command::All) | None => app::all(&settings, bind(&settings).await?, shutdown).await,
    }
}

async fn bind(settings: &Settings) -> anyhow::Result<TcpListener> {
    TcpListener::bind(settings.bind)
        .await
        .with_context(|| format!("listening on {}", settings.bind))
}

fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        // Driver notices ("relation already exists, skipping") are not news.
        .unwrap_or_else(|_| EnvFilter::new("info,tokio_postgres=warn,refinery_core=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// Cancels `shutdown` on Ctrl-C or SIGTERM, so in-flight requests and jobs finish cleanly.
async fn stop_on_signal(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
    shutdown.cancel();
}
