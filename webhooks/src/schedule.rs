//! When to try a delivery again: the Svix schedule (immediately, then 5 s, 5 min, 30 min, 2 h,
//! 5 h, 10 h, 10 h), each delay with ±20 % jitter so that many failed messages do not return
//! at the same instant, and never earlier than a receiver's `Retry-After`. The schedule is
//! configurable so that tests can run it in seconds.

use std::time::Duration;

/// Delays after a failed attempt: `delays[n]` follows the (n+1)-th failure. The first attempt
/// is immediate and not part of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub delays: Vec<Duration>,
}

impl Default for Schedule {
    fn default() -> Schedule {
        let s = Duration::from_secs;
        Schedule { delays: vec![s(5), s(300), s(1800), s(7200), s(18000), s(36000), s(36000)] }
    }
}

impl Schedule {
    /// From comma-separated seconds (`WEBHOOK_RETRY_SCHEDULE=1,1,2`).
    pub fn parse(list: &str) -> Option<Schedule> {
        let delays = list
            .split(',')
            .map(|s| s.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0))
            .map(|v| v.map(Duration::from_secs_f64))
            .collect::<Option<Vec<_>>>()?;
        Some(Schedule { delays })
    }

    /// Attempts in all: the first, then one per delay.
    pub fn attempts(&self) -> usize {
        self.delays.len() + 1
    }

    /// The wait after `failures` failed attempts, or `None` when the message has failed for
    /// good. `jitter` in [-1, 1] scales the ±20 %; `retry_after` is the receiver's wish.
    pub fn next(
        &self,
        failures: usize,
        jitter: f64,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let base = *self.delays.get(failures.checked_sub(1)?)?;
        let jittered = base.mul_f64(1.0 + 0.2 * jitter.clamp(-1.0, 1.0));
        Some(retry_after.map_or(jittered, |r| r.max(jittered)))
    }

    /// `next` with random jitter.
    pub(crate) fn next_random(
        &self,
        failures: usize,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        self.next(failures, rand::random::<f64>() * 2.0 - 1.0, retry_after)
    }
}

/// A `Retry-After` header: delay-seconds (the HTTP-date form is rare for webhooks and read as
/// absent), capped at a day.
pub fn retry_after(value: &str) -> Option<Duration> {
    let secs: u64 = value.trim().parse().ok()?;
    Some(Duration::from_secs(secs.min(86_400)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svix_schedule_with_jitter_and_retry_after() {
        let s = Schedule::default();
        assert_eq!(s.attempts(), 8);
        assert_eq!(s.next(0, 0.0, None), None, "the first attempt has no delay before it");
        assert_eq!(s.next(1, 0.0, None), Some(Duration::from_secs(5)));
        assert_eq!(s.next(2, 1.0, None), Some(Duration::from_secs(360)));
        assert_eq!(s.next(2, -1.0, None), Some(Duration::from_secs(240)));
        assert_eq!(s.next(7, 0.0, None), Some(Duration::from_secs(36000)));
        assert_eq!(s.next(8, 0.0, None), None, "after the last failure: failed");
        // Retry-After only ever delays.
        assert_eq!(s.next(1, 0.0, Some(Duration::from_secs(60))), Some(Duration::from_secs(60)));
        assert_eq!(s.next(3, 0.0, Some(Duration::from_secs(1))), Some(Duration::from_secs(1800)));
        for _ in 0..100 {
            let d = s.next_random(3, None).unwrap_or_default().as_secs_f64();
            assert!((1440.0..=2160.0).contains(&d), "{d}");
        }
    }

    #[test]
    fn configured_schedules_and_headers() {
        let s = Schedule::parse("0.1, 0.2,1").unwrap_or_default();
        assert_eq!(s.attempts(), 4);
        assert_eq!(s.next(1, 0.0, None), Some(Duration::from_millis(100)));
        assert_eq!(Schedule::parse("1,x"), None);
        assert_eq!(Schedule::parse("-1"), None);
        assert_eq!(retry_after(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(retry_after("999999"), Some(Duration::from_secs(86_400)));
        assert_eq!(retry_after("Wed, 21 Oct 2026 07:28:00 GMT"), None);
    }
}
