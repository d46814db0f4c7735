//! The service's short-lived entries in Redis, each behind a function of what it is for: the
//! OAuth flows in progress and the completion codes handed back, the vendor notifications seen
//! within the replay window, the actions counted on a connect link and the failures counted
//! against logins and codes. Callers hold a [`Guards`], never a connection, and build no
//! command: the Redis side of each rule is written once, here. None of these is a record
//! (PostgreSQL is); each expires on its own.
//!
//! Values are JSON of the caller's types; a value that no longer decodes (written by another
//! version) reads as absent, as an expired one would.

use std::fmt::Display;
use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Result;
use crate::keys::{Counted, Flow, Keys, Party};

/// The guards of one deployment. Cheap to clone.
#[derive(Clone)]
pub struct Guards {
    conn: ConnectionManager,
    keys: Keys,
}

/// Whole seconds of `d`, at least one (Redis refuses an expiry of zero).
fn seconds(d: Duration) -> u64 {
    d.as_secs().max(1)
}

fn decoded<T: DeserializeOwned>(stored: Option<String>) -> Option<T> {
    stored.and_then(|s| serde_json::from_str(&s).ok())
}

impl Guards {
    pub fn new(conn: ConnectionManager, keys: Keys) -> Guards {
        Guards { conn, keys }
    }

    /// Whether Redis answers (within two seconds).
    pub async fn ping(&self) -> bool {
        crate::ping(&self.conn).await
    }

    /// Keeps a new OAuth flow under its `state` for `ttl`, in the list of its `user`'s flows;
    /// the user's flows past the newest `per_user` are forgotten, the oldest first.
    pub async fn keep_flow<T: Serialize>(
        &self,
        state: &str,
        user: impl Display,
        flow: &T,
        ttl: Duration,
        per_user: usize,
    ) -> Result<()> {
        let value = serde_json::to_string(flow)?;
        // Scored by when each expires, in microseconds: flows started in the same second still
        // come in order (exact in an f64 for thousands of years).
        let now = now_micros();
        let expires = now + i64::try_from(ttl.as_micros()).unwrap_or(i64::MAX / 2);
        let mine = self.keys.oauth(Flow::User, user);
        let newest = isize::try_from(per_user).unwrap_or(isize::MAX - 1);
        let mut conn = self.conn.clone();
        let (_, _, _, _, evicted): ((), (), (), (), Vec<String>) = redis::pipe()
            .set_ex(self.keys.oauth(Flow::State, state), value, seconds(ttl))
            .zrembyscore(&mine, "-inf", now)
            .zadd(&mine, state, expires)
            .expire(&mine, seconds(ttl) as i64)
            // Every flow but the newest `per_user`, oldest first.
            .zrange(&mine, 0, -(newest + 1))
            .query_async(&mut conn)
            .await?;
        if !evicted.is_empty() {
            let mut pipe = redis::pipe();
            pipe.zrem(&mine, &evicted).ignore();
            for old in &evicted {
                pipe.del(self.keys.oauth(Flow::State, old))
                    .ignore()
                    .del(self.keys.oauth(Flow::Browser, old))
                    .ignore();
            }
            let () = pipe.query_async(&mut conn).await?;
        }
        Ok(())
    }

    /// The flow kept under `state`, left in place.
    pub async fn flow<T: DeserializeOwned>(&self, state: &str) -> Result<Option<T>> {
        let mut conn = self.conn.clone();
        Ok(decoded(conn.get(self.keys.oauth(Flow::State, state)).await?))
    }

    /// Binds the flow under `state` to the browser whose cookie hashes to `cookie_hash`, for
    /// `ttl`: false when it is bound already (its link was opened before).
    pub async fn bind_flow(&self, state: &str, cookie_hash: &str, ttl: Duration) -> Result<bool> {
        let mut conn = self.conn.clone();
        Ok(set_new(&mut conn, &self.keys.oauth(Flow::Browser, state), cookie_hash, ttl).await?)
    }

    /// Takes the flow under `state` out (it works once), with the cookie hash it is bound to,
    /// if any; `user_of` names the flow's user, whose list then forgets it.
    pub async fn take_flow<T: DeserializeOwned, U: Display>(
        &self,
        state: &str,
        user_of: impl FnOnce(&T) -> U,
    ) -> Result<(Option<T>, Option<String>)> {
        let mut conn = self.conn.clone();
        let (stored, bound): (Option<String>, Option<String>) = redis::pipe()
            .cmd("GETDEL")
            .arg(self.keys.oauth(Flow::State, state))
            .cmd("GETDEL")
            .arg(self.keys.oauth(Flow::Browser, state))
            .query_async(&mut conn)
            .await?;
        let flow: Option<T> = decoded(stored);
        if let Some(f) = &flow {
            // The list expires with its newest flow anyway.
            let _: redis::RedisResult<()> =
                conn.zrem(self.keys.oauth(Flow::User, user_of(f)), state).await;
        }
        Ok((flow, bound))
    }

    /// Keeps what a finished flow hands back, under the hash of the code that redeems it.
    pub async fn hand_over<T: Serialize>(
        &self,
        code_hash: &str,
        handed: &T,
        ttl: Duration,
    ) -> Result<()> {
        let value = serde_json::to_string(handed)?;
        let mut conn = self.conn.clone();
        let () = conn.set_ex(self.keys.oauth(Flow::Handed, code_hash), value, seconds(ttl)).await?;
        Ok(())
    }

    /// Takes what was handed over under `code_hash` (it works once).
    pub async fn take_handed<T: DeserializeOwned>(&self, code_hash: &str) -> Result<Option<T>> {
        let mut conn = self.conn.clone();
        let stored: Option<String> = redis::cmd("GETDEL")
            .arg(self.keys.oauth(Flow::Handed, code_hash))
            .query_async(&mut conn)
            .await?;
        Ok(decoded(stored))
    }

    /// Marks `vendor`'s notification with body digest `digest` as seen for `window`: false when
    /// it was seen within the window already (a replay).
    pub async fn first_sight(&self, vendor: &str, digest: &str, window: Duration) -> Result<bool> {
        let mut conn = self.conn.clone();
        Ok(set_new(&mut conn, &self.keys.vendor_notice(vendor, digest), "1", window).await?)
    }

    /// Forgets a notification seen, so that the vendor's retry is taken.
    pub async fn forget_sight(&self, vendor: &str, digest: &str) -> Result<()> {
        let mut conn = self.conn.clone();
        let () = conn.del(self.keys.vendor_notice(vendor, digest)).await?;
        Ok(())
    }

    /// Counts one more action on connect link `link`, in a window of `window` from its first:
    /// the count so far and the seconds left of the window.
    pub async fn count_action(&self, link: impl Display, window: Duration) -> Result<(i64, i64)> {
        let key = self.keys.connect_actions(link);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.incr(&key, 1);
        expire_new(&mut pipe, &key, window);
        Ok(pipe.ttl(&key).query_async(&mut conn).await?)
    }

    /// The failures of `what` counted against each party, with the seconds left of each one's
    /// window (negative when none is counted).
    pub async fn failures(
        &self,
        what: Counted,
        parties: impl IntoIterator<Item = &Party>,
    ) -> Result<Vec<(Option<u32>, i64)>> {
        let mut pipe = redis::pipe();
        for p in parties {
            let key = self.keys.failures(what, p);
            pipe.get(&key).ttl(&key);
        }
        let mut conn = self.conn.clone();
        Ok(pipe.query_async(&mut conn).await?)
    }

    /// Counts a failure of `what` against each party; each one's window of `window` starts at
    /// its first failure.
    pub async fn fail(
        &self,
        what: Counted,
        parties: impl IntoIterator<Item = &Party>,
        window: Duration,
    ) -> Result<()> {
        let mut pipe = redis::pipe();
        for p in parties {
            let key = self.keys.failures(what, p);
            pipe.incr(&key, 1).ignore();
            expire_new(&mut pipe, &key, window);
        }
        let mut conn = self.conn.clone();
        Ok(pipe.query_async::<()>(&mut conn).await?)
    }

    /// Clears the failures of `what` counted against `party`.
    pub async fn clear_failures(&self, what: Counted, party: &Party) -> Result<()> {
        let mut conn = self.conn.clone();
        let () = conn.del(self.keys.failures(what, party)).await?;
        Ok(())
    }
}

/// Sets `key` to `value` for `ttl` unless it is set: whether it was not.
async fn set_new(
    conn: &mut ConnectionManager,
    key: &str,
    value: &str,
    ttl: Duration,
) -> redis::RedisResult<bool> {
    let set: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(value)
        .arg("NX")
        .arg("EX")
        .arg(seconds(ttl))
        .query_async(conn)
        .await?;
    Ok(set.is_some())
}

/// Gives `key` an expiry of `window` unless it has one: a window that starts at the first count.
fn expire_new(pipe: &mut redis::Pipeline, key: &str, window: Duration) {
    pipe.cmd("EXPIRE").arg(key).arg(seconds(window)).arg("NX").ignore();
}

fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX / 2))
}

#[cfg(test)]
mod tests {
    //! Against the real Redis (`TEST_REDIS_URL`), each test under a prefix of its own.

    use super::*;

    async fn guards() -> Guards {
        let url =
            std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
        let client = redis::Client::open(url).expect("redis url");
        let conn = ConnectionManager::new(client).await.expect("redis");
        Guards::new(conn, Keys::new(&format!("guards_test_{}", uuid::Uuid::new_v4().simple())))
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn a_flow_is_bound_once_taken_once_and_the_oldest_past_the_limit_forgotten() {
        let g = guards().await;
        for n in 0..4 {
            g.keep_flow(&format!("s{n}"), "alice", &n, MINUTE, 3).await.expect("keep");
        }
        // The oldest of four, past three a user may have, is gone; the others are there.
        assert_eq!(g.flow::<i32>("s0").await.expect("flow"), None);
        assert_eq!(g.flow::<i32>("s1").await.expect("flow"), Some(1));
        assert!(g.bind_flow("s3", "cookie", MINUTE).await.expect("bind"));
        assert!(!g.bind_flow("s3", "other", MINUTE).await.expect("bind"), "bound once");
        let taken = g.take_flow::<i32, _>("s3", |_| "alice").await.expect("take");
        assert_eq!(taken, (Some(3), Some("cookie".to_string())));
        assert_eq!(g.take_flow::<i32, _>("s3", |_| "alice").await.expect("take"), (None, None));
        // A value of another shape reads as absent.
        assert_eq!(g.flow::<Vec<String>>("s1").await.expect("flow"), None);
        // Taken flows leave the user's list: two more fit before s1 is forgotten.
        g.keep_flow("s4", "alice", &4, MINUTE, 3).await.expect("keep");
        assert_eq!(g.flow::<i32>("s1").await.expect("flow"), Some(1));
    }

    #[tokio::test]
    async fn a_handed_grant_and_a_sight_work_once() {
        let g = guards().await;
        g.hand_over("h", &"grant", MINUTE).await.expect("hand");
        assert_eq!(g.take_handed::<String>("h").await.expect("take"), Some("grant".into()));
        assert_eq!(g.take_handed::<String>("h").await.expect("take"), None);
        assert!(g.first_sight("polar", "d", MINUTE).await.expect("sight"));
        assert!(!g.first_sight("polar", "d", MINUTE).await.expect("sight"), "a replay");
        assert!(g.first_sight("fitbit", "d", MINUTE).await.expect("sight"), "another vendor's");
        g.forget_sight("polar", "d").await.expect("forget");
        assert!(g.first_sight("polar", "d", MINUTE).await.expect("sight"), "forgotten");
    }

    #[tokio::test]
    async fn counts_run_in_a_window_from_the_first() {
        let g = guards().await;
        assert_eq!(g.count_action("l", MINUTE).await.expect("count").0, 1);
        let (count, left) = g.count_action("l", MINUTE).await.expect("count");
        assert_eq!(count, 2);
        assert!((1..=60).contains(&left), "{left}");
        let (a, b) = (Party::Account("x".into()), Party::Address([10, 0, 0, 1].into()));
        let none = g.failures(Counted::Login, [&a, &b]).await.expect("failures");
        assert_eq!(none.iter().map(|c| c.0).collect::<Vec<_>>(), [None, None]);
        g.fail(Counted::Login, [&a, &b], MINUTE).await.expect("fail");
        g.fail(Counted::Login, [&b], MINUTE).await.expect("fail");
        let counts = g.failures(Counted::Login, [&a, &b]).await.expect("failures");
        assert_eq!(counts.iter().map(|c| c.0).collect::<Vec<_>>(), [Some(1), Some(2)]);
        assert!(counts.iter().all(|c| (1..=60).contains(&c.1)), "{counts:?}");
        // Counted apart from another kind, and cleared per party.
        let other = g.failures(Counted::InvitationCode, [&a]).await.expect("failures");
        assert_eq!(other[0].0, None);
        g.clear_failures(Counted::Login, &a).await.expect("clear");
        let counts = g.failures(Counted::Login, [&a, &b]).await.expect("failures");
        assert_eq!(counts.iter().map(|c| c.0).collect::<Vec<_>>(), [None, Some(2)]);
    }
}
