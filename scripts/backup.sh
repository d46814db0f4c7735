#!/usr/bin/env bash
# Backups and point-in-time recovery (PITR) of wearhouse's PostgreSQL with pgBackRest.
#
#   scripts/backup.sh setup                 write the pgBackRest config, turn on WAL archiving
#                                           (restarting PostgreSQL only if archive_mode or
#                                           wal_level had to change), stanza-create, check.
#                                           Safe to run again and again.
#   scripts/backup.sh full | diff | incr    take a backup (an incr or diff with no full before
#                                           it becomes a full)
#   scripts/backup.sh info [ARGS]           list backups and the WAL archive (ARGS go to
#                                           `pgbackrest info`, e.g. --output=json)
#   scripts/backup.sh check                 check that archiving and the repository work
#   scripts/backup.sh expire                drop backups and WAL beyond the retention
#                                           (every backup also does this when it ends)
#   scripts/backup.sh restore [--to 'YYYY-MM-DD HH:MM:SS[.ffffff]+ZZ'] [-- PGBACKREST-ARGS]
#                                           stop the cluster; restore it (with --delta, which
#                                           rewrites only what changed, over an existing cluster;
#                                           an emptied or missing data directory is filled anew)
#                                           to the moment given, or to the end of the archived
#                                           WAL without --to; start it and wait until it accepts
#                                           connections and is out of recovery (promoted). The
#                                           time must carry its zone: paste what `select now()`
#                                           printed (ISO 8601 with T and Z is accepted too).
#                                           PGBACKREST-ARGS go to `pgbackrest restore`, e.g.
#                                           --set=LABEL to restore from a given backup.
#
# After a restore to a time, take a backup (full, or at least incr): the backups taken after T
# lie on the abandoned timeline, and until a new one exists a plain `restore` picks one of them
# and PostgreSQL refuses it ("not a child of this server's history"); the script then says to
# pass -- --set=LABEL with a backup from before T.
#
# What a restore to T loses: every transaction committed after T (recovery stops just before
# the first commit later than T and promotes, starting a new timeline). When the primary's
# disk is lost, also everything after the last WAL segment that reached the repository:
# PostgreSQL archives a segment when it fills (16 MB) or, on a quiet database, after
# archive_timeout; setup sets archive_timeout = 60, so at most about a minute of commits
# (plus whatever archive-push had not yet copied if the repository was failing) is at risk.
# A restore without --to replays all archived WAL and so loses only that tail; a cluster that
# was stopped cleanly loses nothing, as PostgreSQL switches to a new segment at shutdown and
# archives the last one.
#
# Environment (defaults are for Debian's main cluster of PostgreSQL 15 on this box):
#   BACKUP_PGBIN           PostgreSQL's programs              /usr/lib/postgresql/15/bin
#   BACKUP_PGVERSION       major version                      taken from BACKUP_PGBIN (15)
#   BACKUP_PGDATA          data directory                     /var/lib/postgresql/15/main
#   BACKUP_PGPORT          port                               5432
#   BACKUP_PGSOCKET        unix socket directory              /var/run/postgresql
#   BACKUP_PGUSER          database superuser                 postgres
#   BACKUP_STANZA          pgBackRest stanza name             wearhouse
#   BACKUP_STATE_DIR       one directory for the config, posix repository, logs and locks,
#                          used when set and for every cluster started with pg_ctl (not a
#                          Debian cluster), there by default  "$BACKUP_PGDATA.pgbackrest"
#                          (a sibling of the data directory, so emptying that keeps them)
#   BACKUP_CONF            pgBackRest config file             /etc/pgbackrest/$BACKUP_STANZA.conf
#                                                             (else $BACKUP_STATE_DIR/pgbackrest.conf)
#   BACKUP_REPO_TYPE       posix or s3                        posix
#   BACKUP_REPO_PATH       repository path (posix: a directory; s3: a path in the bucket)
#                                                             posix: /var/lib/pgbackrest
#                                                             (else $BACKUP_STATE_DIR/repo);
#                                                             s3: /pgbackrest
#   BACKUP_LOG_PATH        pgBackRest's log files             /var/log/pgbackrest (else $BACKUP_STATE_DIR/log)
#   BACKUP_LOCK_PATH       pgBackRest's lock files            /var/spool/pgbackrest/lock (else $BACKUP_STATE_DIR/lock)
#   BACKUP_RETENTION_FULL  full backups kept                  2
#   BACKUP_RETENTION_DIFF  differential backups kept          (unset: pgBackRest's default)
#   BACKUP_COMPRESS_TYPE   gz, lz4, zst, bz2 or none          zst
#   BACKUP_PROCESS_MAX     parallel processes for backup/restore  1
#   BACKUP_CIPHER_PASS     when set, the repository is encrypted (aes-256-cbc) with it
#   BACKUP_WAIT_TIMEOUT    seconds to wait for a restored cluster to finish recovery  3600
#   BACKUP_PGCTL           how to start/stop: auto, debian (pg_ctlcluster) or pg_ctl   auto
#                          (auto: pg_ctlcluster for /var/lib/postgresql/<v>/<cluster>, else
#                          pg_ctl -D "$BACKUP_PGDATA" -l "$BACKUP_PGDATA/log" -w)
#   BACKUP_PGCLUSTER       the Debian cluster's name, for pg_ctlcluster        main
#   S3 repository (BACKUP_REPO_TYPE=s3):
#   BACKUP_S3_ENDPOINT     host or host:port (https:// is stripped)
#   BACKUP_S3_BUCKET, BACKUP_S3_REGION, BACKUP_S3_KEY, BACKUP_S3_KEY_SECRET
#   BACKUP_S3_URI_STYLE    path or host                       path
#   BACKUP_S3_VERIFY_TLS   y, or n for a self-signed certificate   y
#   BACKUP_S3_CA_FILE      a CA bundle for the endpoint's certificate (optional)
#   pgBackRest 2.45 (Debian 12's) cannot speak plain HTTP to S3: `man pgbackrest` and
#   `pgbackrest help backup repo-s3-endpoint` list no scheme or TLS on/off option, only
#   repo-storage-port (default 443), repo-storage-ca-file/-ca-path and repo-storage-verify-tls,
#   which turns the certificate check off but still connects with TLS. Tried with 2.45: an
#   http:// endpoint fails with "expected protocol 'https' in URL", and a plain-HTTP server
#   with "TLS error [1:167772427] wrong version number". So an http:// endpoint is refused
#   here, and a plain-HTTP server such as the Garage that scripts/stack.sh runs on
#   127.0.0.1:3900 needs a TLS front (stunnel, haproxy) before pgBackRest can use it.
#
# PostgreSQL and pgBackRest run as the postgres user (through runuser when this runs as root,
# sudo -u postgres otherwise); the config, repository, log and lock directories belong to it.
# A restore keeps archive_mode on, so a restored cluster archives its new timeline into the
# same repository: restoring a copy elsewhere, pass `-- --archive-mode=off`.
set -euo pipefail

log() { printf '[backup] %s\n' "$*" >&2; }
die() { printf '[backup] error: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
as_root() { "${SUDO[@]}" "$@"; }
# Run as postgres from / (its cwd may be a directory postgres cannot read).
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@")
  elif [ "$(id -un)" = postgres ]; then (cd / && "$@")
  else (cd / && sudo -u postgres "$@"); fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# ---------------------------------------------------------------- settings
PGBIN="${BACKUP_PGBIN:-/usr/lib/postgresql/15/bin}"
PGV="${BACKUP_PGVERSION:-$(basename "$(dirname "$PGBIN")")}"
PGCLUSTER="${BACKUP_PGCLUSTER:-main}"
MAIN_PGDATA="/var/lib/postgresql/$PGV/$PGCLUSTER"
PGDATA=$(realpath -ms "${BACKUP_PGDATA:-$MAIN_PGDATA}")
PGPORT="${BACKUP_PGPORT:-5432}"
PGSOCKET="${BACKUP_PGSOCKET:-/var/run/postgresql}"
PGUSER_="${BACKUP_PGUSER:-postgres}"
STANZA="${BACKUP_STANZA:-wearhouse}"
REPO_TYPE="${BACKUP_REPO_TYPE:-posix}"
PGCTL_MODE="${BACKUP_PGCTL:-auto}"
if [ "$PGCTL_MODE" = auto ]; then
  if [ "$PGDATA" = "$MAIN_PGDATA" ] && [ -d "/etc/postgresql/$PGV/$PGCLUSTER" ] && command -v pg_ctlcluster >/dev/null; then
    PGCTL_MODE=debian
  else
    PGCTL_MODE=pg_ctl
  fi
fi
case $PGCTL_MODE in debian|pg_ctl) ;; *) die "BACKUP_PGCTL must be auto, debian or pg_ctl (not '$PGCTL_MODE')" ;; esac

if [ -n "${BACKUP_STATE_DIR:-}" ] || [ "$PGCTL_MODE" = pg_ctl ]; then
  STATE_DIR=$(realpath -ms "${BACKUP_STATE_DIR:-$PGDATA.pgbackrest}")
  CONF="${BACKUP_CONF:-$STATE_DIR/pgbackrest.conf}"
  POSIX_REPO="$STATE_DIR/repo"
  LOG_PATH="${BACKUP_LOG_PATH:-$STATE_DIR/log}"
  LOCK_PATH="${BACKUP_LOCK_PATH:-$STATE_DIR/lock}"
else
  CONF="${BACKUP_CONF:-/etc/pgbackrest/$STANZA.conf}"
  POSIX_REPO=/var/lib/pgbackrest
  LOG_PATH="${BACKUP_LOG_PATH:-/var/log/pgbackrest}"
  LOCK_PATH="${BACKUP_LOCK_PATH:-/var/spool/pgbackrest/lock}"
fi
if [ "$PGCTL_MODE" = debian ]; then PG_LOGFILE="/var/log/postgresql/postgresql-$PGV-$PGCLUSTER.log"
else PG_LOGFILE="$PGDATA/log"; fi
case $REPO_TYPE in
  posix) REPO_PATH="${BACKUP_REPO_PATH:-$POSIX_REPO}" ;;
  s3) REPO_PATH="${BACKUP_REPO_PATH:-/pgbackrest}" ;;
  *) die "BACKUP_REPO_TYPE must be posix or s3 (not '$REPO_TYPE')" ;;
esac

[[ "$STANZA" =~ ^[A-Za-z0-9_-]+$ ]] || die "BACKUP_STANZA may hold only letters, digits, - and _"
[[ "$PGPORT" =~ ^[0-9]+$ ]] || die "BACKUP_PGPORT must be a number"
# The config path goes into archive_command unquoted: keep it simple.
[[ "$CONF" =~ ^/[A-Za-z0-9_./+-]+$ ]] || die "BACKUP_CONF must be an absolute path without spaces or quotes: $CONF"

# ---------------------------------------------------------------- helpers
ensure_pgbackrest() {
  if ! command -v pgbackrest >/dev/null; then
    log "installing pgBackRest"
    apt_install pgbackrest
  fi
}

pgbr() { as_postgres pgbackrest --config="$CONF" --stanza="$STANZA" "$@"; }

need_conf() {
  ensure_pgbackrest
  as_postgres test -r "$CONF" || die "no pgBackRest config at $CONF (readable by postgres): run '$0 setup' first"
}

# psql as the superuser over the cluster's socket.
sql() { as_postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -At -h "$PGSOCKET" -p "$PGPORT" -U "$PGUSER_" -d postgres -c "$1"; }

# A directory owned by postgres (made as postgres where it can, else as root and handed over).
ensure_dir() {
  local d=$1
  if ! as_postgres test -d "$d"; then
    as_postgres mkdir -p -m 750 "$d" 2>/dev/null || as_root mkdir -p -m 750 "$d"
  fi
  as_postgres test -w "$d" || as_root chown postgres:postgres "$d"
  as_postgres test -w "$d" || die "$d is not writable by postgres"
}

running() { as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }

pg_start() {
  if [ "$PGCTL_MODE" = debian ]; then
    as_root pg_ctlcluster --skip-systemctl-redirect "$PGV" "$PGCLUSTER" start
  else
    # A long recovery must not make pg_ctl give up: wait_ready does the waiting.
    as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PG_LOGFILE" -w -t "${BACKUP_WAIT_TIMEOUT:-3600}" start >/dev/null
  fi
}

pg_stop() {
  running || return 0
  log "stopping PostgreSQL ($PGDATA)"
  if [ "$PGCTL_MODE" = debian ]; then
    as_root pg_ctlcluster --skip-systemctl-redirect -m fast "$PGV" "$PGCLUSTER" stop
  else
    as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
}

pg_restart() {
  if [ "$PGCTL_MODE" = debian ]; then
    as_root pg_ctlcluster --skip-systemctl-redirect -m fast "$PGV" "$PGCLUSTER" restart
  else
    as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PG_LOGFILE" -m fast -w restart >/dev/null
  fi
}

# Wait until the cluster accepts connections; with "promoted", also until it is out of recovery.
# A server still replaying WAL says "rejecting connections" (pg_isready exit 1) and may do so
# for a long time; one that died (e.g. its recovery target lay beyond the archived WAL) is not
# running any more, and then there is nothing to wait for.
wait_ready() {
  local want=${1:-} deadline=$((SECONDS + ${BACKUP_WAIT_TIMEOUT:-3600})) rc
  while :; do
    rc=0; as_postgres "$PGBIN/pg_isready" -q -h "$PGSOCKET" -p "$PGPORT" || rc=$?
    if [ "$rc" -eq 0 ]; then
      [ "$want" = promoted ] || return 0
      [ "$(sql 'select pg_is_in_recovery()' 2>/dev/null || true)" = f ] && return 0
    elif ! running; then
      die "PostgreSQL is not running: see the end of $PG_LOGFILE$(recovery_hint)"
    fi
    [ "$SECONDS" -lt "$deadline" ] || die "PostgreSQL did not become ready in ${BACKUP_WAIT_TIMEOUT:-3600}s (see $PG_LOGFILE)"
    sleep 0.5
  done
}

# Why a restored cluster gave up, in words an operator can act on.
recovery_hint() {
  local tail; tail=$(as_postgres tail -n 40 "$PG_LOGFILE" 2>/dev/null || as_root tail -n 40 "$PG_LOGFILE" 2>/dev/null || true)
  case $tail in
    *"not a child of this server's history"*|*"forked off from that timeline"*)
      printf '\n  the backup restored lies on a timeline that an earlier point-in-time restore left behind\n  (no backup was taken since): restore again with -- --set=LABEL, LABEL a backup from before\n  that restore'"'"'s target (see %s info), and take a backup after every point-in-time restore' "$0" ;;
    *"recovery ended before configured recovery target was reached"*)
      printf '\n  the archived WAL ends before the target time (a time still to come, or WAL that never reached\n  the repository): restore without --to to replay all there is' ;;
    *"before consistent recovery point"*)
      printf '\n  the target time lies before the end of the backup restored: pick an older one with -- --set=LABEL' ;;
  esac
}

ensure_running() {
  if ! running; then
    log "starting PostgreSQL ($PGDATA)"
    pg_start || true
  fi
  wait_ready
}

# ---------------------------------------------------------------- config
conf_text() {
  cat <<CONF
# Written by wearhouse's scripts/backup.sh setup; rewritten when its settings change.
[global]
repo1-type=$REPO_TYPE
repo1-path=$REPO_PATH
repo1-retention-full=${BACKUP_RETENTION_FULL:-2}
CONF
  [ -z "${BACKUP_RETENTION_DIFF:-}" ] || echo "repo1-retention-diff=$BACKUP_RETENTION_DIFF"
  if [ -n "${BACKUP_CIPHER_PASS:-}" ]; then
    echo "repo1-cipher-type=aes-256-cbc"
    echo "repo1-cipher-pass=$BACKUP_CIPHER_PASS"
  fi
  if [ "$REPO_TYPE" = s3 ]; then
    local ep=${BACKUP_S3_ENDPOINT:-} port=""
    case $ep in
      http://*) die "BACKUP_S3_ENDPOINT is plain HTTP ($ep): pgBackRest only speaks HTTPS to S3; put a TLS proxy in front" ;;
      https://*) ep=${ep#https://} ;;
    esac
    ep=${ep%%/*}
    if [[ "$ep" =~ ^(.+):([0-9]+)$ ]]; then ep=${BASH_REMATCH[1]}; port=${BASH_REMATCH[2]}; fi
    local v
    for v in BACKUP_S3_BUCKET BACKUP_S3_REGION BACKUP_S3_KEY BACKUP_S3_KEY_SECRET; do
      [ -n "${!v:-}" ] || die "$v must be set for an S3 repository"
    done
    [ -n "$ep" ] || die "BACKUP_S3_ENDPOINT must be set for an S3 repository"
    echo "repo1-s3-endpoint=$ep"
    [ -z "$port" ] || echo "repo1-storage-port=$port"
    echo "repo1-s3-bucket=$BACKUP_S3_BUCKET"
    echo "repo1-s3-region=$BACKUP_S3_REGION"
    echo "repo1-s3-key=$BACKUP_S3_KEY"
    echo "repo1-s3-key-secret=$BACKUP_S3_KEY_SECRET"
    echo "repo1-s3-uri-style=${BACKUP_S3_URI_STYLE:-path}"
    echo "repo1-storage-verify-tls=${BACKUP_S3_VERIFY_TLS:-y}"
    [ -z "${BACKUP_S3_CA_FILE:-}" ] || echo "repo1-storage-ca-file=$BACKUP_S3_CA_FILE"
  fi
  cat <<CONF
compress-type=${BACKUP_COMPRESS_TYPE:-zst}
process-max=${BACKUP_PROCESS_MAX:-1}
# Checkpoint at once when a backup starts instead of waiting for the next scheduled one.
start-fast=y
log-path=$LOG_PATH
lock-path=$LOCK_PATH
log-level-console=info
log-level-file=info

# archive-push and archive-get run from PostgreSQL: keep its log quiet.
[global:archive-push]
log-level-console=warn

[global:archive-get]
log-level-console=warn

[$STANZA]
pg1-path=$PGDATA
pg1-port=$PGPORT
pg1-socket-path=$PGSOCKET
pg1-user=$PGUSER_
CONF
  # A socket in the data directory comes with a lock file naming the postmaster's PID: restored,
  # it can stop the restored cluster from starting. Leave both out of backups.
  if [ "$(realpath -ms "$PGSOCKET")" = "$PGDATA" ]; then
    printf '\n[%s:backup]\nexclude=.s.PGSQL.%s\nexclude=.s.PGSQL.%s.lock\n' "$STANZA" "$PGPORT" "$PGPORT"
  fi
}

write_conf() {
  local want; want=$(conf_text)
  ensure_dir "$LOG_PATH"
  ensure_dir "$LOCK_PATH"
  [ "$REPO_TYPE" != posix ] || ensure_dir "$REPO_PATH"
  local dir; dir=$(dirname "$CONF")
  if [ ! -d "$dir" ]; then as_root mkdir -p -m 755 "$dir"; fi
  if [ "$(as_root cat "$CONF" 2>/dev/null)" != "$want" ]; then
    log "writing $CONF"
    # It may hold S3 keys or the cipher passphrase: postgres only.
    printf '%s\n' "$want" | as_root tee "$CONF" >/dev/null
  fi
  as_root chown postgres:postgres "$CONF"
  as_root chmod 640 "$CONF"
}

# ---------------------------------------------------------------- WAL archiving
ensure_archiving() {
  local cmd="pgbackrest --config=$CONF --stanza=$STANZA archive-push %p"
  local mode level acmd timeout restart=0 reload=0
  mode=$(sql 'show archive_mode'); level=$(sql 'show wal_level')
  acmd=$(sql 'show archive_command'); timeout=$(sql 'show archive_timeout')
  if [ "$mode" != on ] && [ "$mode" != always ]; then
    log "archive_mode: $mode -> on (needs a restart)"
    sql "alter system set archive_mode = 'on'"; restart=1
  fi
  if [ "$level" != replica ] && [ "$level" != logical ]; then
    log "wal_level: $level -> replica (needs a restart)"
    sql "alter system set wal_level = 'replica'"; restart=1
  fi
  if [ "$acmd" != "$cmd" ]; then
    log "archive_command: '$acmd' -> '$cmd'"
    sql "alter system set archive_command = '$cmd'"; reload=1
  fi
  if [ "$timeout" != 1min ]; then
    log "archive_timeout: $timeout -> 60s"
    sql "alter system set archive_timeout = 60"; reload=1
  fi
  if [ "$restart" -eq 1 ]; then
    log "restarting PostgreSQL to turn on WAL archiving"
    pg_restart || true
    wait_ready
  elif [ "$reload" -eq 1 ]; then
    sql 'select pg_reload_conf()' >/dev/null
  fi
}

# ---------------------------------------------------------------- commands
cmd_setup() {
  ensure_pgbackrest
  write_conf
  ensure_running
  ensure_archiving
  log "stanza-create ($STANZA)"
  pgbr stanza-create
  log "check (forces a WAL switch and waits up to 60s for it to be archived)"
  pgbr check
  log "ready: stanza $STANZA, config $CONF, $REPO_TYPE repository $REPO_PATH"
}

cmd_backup() {
  need_conf
  pgbr backup --type="$1" "${@:2}"
}

# pgBackRest picks the backup set for a time target itself, but only from a time of the shape
# YYYY-MM-DD HH:MM:SS[.fff][+-HH[[:]MM]]; anything else and it warns and restores the latest set,
# which may end after T (then recovery fails). ISO 8601 (T and Z) is turned into that shape; a
# time without a zone is refused, as pgBackRest would read it as this machine's local time.
normalise_time() {
  local t=$1
  if [[ "$t" =~ ^([0-9]{4}-[0-9]{2}-[0-9]{2})T(.*)$ ]]; then t="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"; fi
  case $t in *Z) t="${t%Z}+00" ;; *' UTC') t="${t% UTC}+00" ;; esac
  [[ "$t" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?[+-][0-9]{2}(:?[0-9]{2})?$ ]] \
    || die "restore --to wants 'YYYY-MM-DD HH:MM:SS[.ffffff]+ZZ' with its zone (what select now() prints), not '$1'"
  printf '%s\n' "$t"
}

# pgBackRest 2.45 picks the backup set for a time target as the newest one whose stop time, in
# whole seconds, is before the target's whole second, and fails when there is none — as when
# the target lies in the same second as the end of the only backup before it (a quick drill).
# Then name that backup with --set: it ended in T's second, and its WAL replays up to T if it
# ended before T (else nothing in the repository reaches back to T and recovery says so).
# Prints nothing when pgBackRest's own choice works.
tie_set() {
  local tsec=$1
  pgbr info --output=json | grep -oE '"label":"[^"]+"|"stop":[0-9]+' | awk -F'[:"]+' -v t="$tsec" '
    $2 == "label" { label = $3; next }
    $2 == "stop" { if ($3 + 0 < t + 0) before = 1; else if ($3 + 0 == t + 0 && tie == "") tie = label }
    END { if (before) exit 0; if (tie != "") { print tie; exit 0 }; exit 3 }'
}

cmd_restore() {
  local to="" extra=()
  while [ $# -gt 0 ]; do
    case $1 in
      --to) [ $# -ge 2 ] || die "--to needs a timestamp"; to=$(normalise_time "$2"); shift 2 ;;
      --to=*) to=$(normalise_time "${1#--to=}"); shift ;;
      --) shift; extra=("$@"); break ;;
      *) die "restore: unknown argument '$1' (restore [--to TIMESTAMP] [-- PGBACKREST-ARGS])" ;;
    esac
  done
  need_conf
  local args=(--process-max="${BACKUP_PROCESS_MAX:-1}")
  # --delta rewrites only the files that differ; it needs a cluster to compare with. An empty
  # data directory is restored into as it is (a non-empty one that is no cluster is refused).
  if as_postgres test -f "$PGDATA/PG_VERSION"; then args+=(--delta); fi
  if [ -n "$to" ]; then
    args+=(--type=time "--target=$to" --target-action=promote)
    if [[ " ${extra[*]} " != *" --set"* ]]; then
      local tsec label rc=0
      tsec=$(date -d "$to" +%s) || die "cannot read the time '$to'"
      label=$(tie_set "$tsec") || rc=$?
      [ "$rc" -ne 3 ] || die "no backup in the repository ended before $to: see '$0 info'"
      [ "$rc" -eq 0 ] || die "could not list the backups (pgbackrest info failed)"
      [ -z "$label" ] || args+=("--set=$label")
    fi
    log "restoring $PGDATA to $to"
  else
    args+=(--type=default)
    log "restoring $PGDATA to the end of the archived WAL"
  fi
  pg_stop
  # pgBackRest wants the data directory present (empty, or a cluster for --delta).
  ensure_dir "$PGDATA"
  as_postgres chmod 700 "$PGDATA"
  pgbr restore "${args[@]}" "${extra[@]}"
  # The cluster is stopped: a socket or socket lock file in the data directory (restored from a
  # backup taken before they were excluded) is stale.
  as_postgres find "$PGDATA" -maxdepth 1 -name '.s.PGSQL.*' -delete
  log "starting PostgreSQL; it replays WAL from the repository, then promotes"
  pg_start || true
  wait_ready promoted
  log "restored: PostgreSQL on port $PGPORT is up and out of recovery${to:+ (at $to, on a new timeline)}"
  [ -z "$to" ] || log "take a backup now ($0 full): the ones after $to lie on the abandoned timeline"
}

usage() {
  sed -n '2,/^set -euo pipefail/{/^set /d;s/^# \{0,1\}//;p}' "$0" >&2
  exit "${1:-2}"
}

main() {
  [ $# -ge 1 ] || usage
  local cmd=$1; shift
  case $cmd in
    setup) cmd_setup ;;
    full|diff|incr) cmd_backup "$cmd" "$@" ;;
    info) need_conf; pgbr info "$@" ;;
    check) need_conf; pgbr check ;;
    expire) need_conf; pgbr expire "$@" ;;
    restore) cmd_restore "$@" ;;
    -h|--help|help) usage 0 ;;
    *) log "unknown command '$cmd'"; usage ;;
  esac
}

main "$@"
