//! A PostgreSQL server of a test's own (with TimescaleDB preloaded, in a temporary directory),
//! for the tests that stop, restart, replicate, back up or destroy it while the shared server
//! stays up for the tests beside them.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port()
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

/// A PostgreSQL tool, as the `postgres` user when the tests run as root (the server refuses
/// to run as root).
pub fn pg_tool(tool: &str) -> Command {
    let path = format!("{PG_BIN}/{tool}");
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", &path]);
        c
    } else {
        Command::new(path)
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd
}

pub async fn run(mut cmd: Command, what: &str) {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = cmd.output().await.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A PostgreSQL server of the test's own, with TimescaleDB preloaded, in a temporary directory.
pub struct OwnPostgres {
    pub dir: PathBuf,
    pub port: u16,
}

impl OwnPostgres {
    pub async fn start() -> OwnPostgres {
        let dir = own_dir().await;
        let mut init = pg_tool("initdb");
        init.arg("-D").arg(&dir).args([
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        ]);
        run(init, "initdb").await;
        let port = free_port();
        let conf = format!(
            "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             shared_preload_libraries = 'timescaledb'\nfsync = off\nmax_connections = 60\n\
             timescaledb.telemetry_level = off\n",
            dir.display()
        );
        append_conf(&dir, &conf);
        let pg = OwnPostgres { dir, port };
        pg.ctl(&["start", "-w", "-l"]).await;
        let admin = crate::util::connect(&pg.url("postgres")).await;
        admin.batch_execute("create database wearhouse").await.expect("create database");
        pg
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    pub async fn ctl(&self, args: &[&str]) {
        let mut cmd = pg_tool("pg_ctl");
        cmd.arg("-D").arg(&self.dir).args(args);
        if args.last() == Some(&"-l") {
            cmd.arg(self.dir.join("log"));
        }
        // Not `run`: the server started inherits pg_ctl's output, and would hold a pipe open.
        let status = cmd.status().await.expect("pg_ctl");
        if !status.success() {
            let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            panic!("pg_ctl {args:?}: {status}; its log, last lines first:\n{}", tail.join("\n"));
        }
    }

    /// A streaming replica of this server (`pg_basebackup -R`), started, on a port of its own.
    pub async fn replica(&self) -> OwnPostgres {
        let dir = own_dir().await;
        let mut backup = pg_tool("pg_basebackup");
        backup.arg("-D").arg(&dir).args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-R",
            "-X",
            "stream",
        ]);
        // A fast checkpoint: the default spreads it over minutes.
        backup.args(["--no-sync", "-c", "fast", "-p", &self.port.to_string()]);
        run(backup, "pg_basebackup").await;
        let port = free_port();
        // Later lines win: the copied settings named the primary's port and socket.
        append_conf(
            &dir,
            &format!("port = {port}\nunix_socket_directories = '{}'\n", dir.display()),
        );
        let _ = std::fs::remove_file(dir.join("log"));
        let replica = OwnPostgres { dir, port };
        replica.ctl(&["start", "-w", "-l"]).await;
        replica
    }

    /// Runs `sql` in database `db`.
    pub async fn execute(&self, db: &str, sql: &str) {
        let client = crate::util::connect(&self.url(db)).await;
        client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Stopped at once, as a crash would.
    pub async fn kill(&self) {
        self.ctl(&["-m", "immediate", "stop"]).await;
    }

    /// A fast restart: every connection is cut, in-flight transactions roll back.
    pub async fn restart(&self) {
        self.ctl(&["restart", "-w", "-m", "fast", "-l"]).await;
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let path = format!("{PG_BIN}/pg_ctl");
        let mut stop = if is_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--", &path]);
            c
        } else {
            std::process::Command::new(&path)
        };
        stop.arg("-D").arg(&self.dir).args(["-m", "immediate", "stop"]);
        let _ = stop.stdout(Stdio::null()).stderr(Stdio::null()).status();
        let _ = std::fs::remove_dir_all(&self.dir);
        // scripts/backup.sh keeps its repository beside the data directory.
        let _ = std::fs::remove_dir_all(self.dir.with_extension("pgbackrest"));
    }
}

/// An empty temporary directory the server's user owns.
async fn own_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wearhouse_pg_{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("data directory");
    // The server refuses a data directory others may read.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod data directory");
    if is_root() {
        let mut chown = Command::new("chown");
        chown.arg("postgres").arg(&dir);
        run(chown, "chown").await;
    }
    dir
}

fn append_conf(dir: &Path, conf: &str) {
    let path = dir.join("postgresql.conf");
    let mut all = std::fs::read_to_string(&path).expect("read postgresql.conf");
    all.push_str(conf);
    std::fs::write(&path, all).expect("write postgresql.conf");
}
