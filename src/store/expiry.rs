//! The server clock and expiration times, as memcached 1.6.18 computes them.
//!
//! memcached keeps `current_time`, whole seconds since `process_started`, where
//! `process_started` is the start time minus 62 s (`memcached.c:206`), and updates it once
//! a second from a timer. kvsim derives it from the virtual clock: with `now_s =
//! now_ms / 1000` (whole unix seconds), `current_time = now_s - process_started`. Second
//! boundaries therefore fall on whole virtual unix seconds (memcached's fall on whole
//! seconds of its monotonic clock; the difference is a constant phase, which a simulated
//! run cannot observe).
//!
//! Internally every time is kept as unix seconds (`process_started + rel_time`), so items
//! of a persistent store survive a restart (which moves `process_started`) unchanged. An
//! item with expiration `e != 0` is dead once `e <= now_s` (`items.c:1031`): a relative
//! TTL of `n` set at `x.999 s` dies at `x+n`, i.e. after between `n-1` and `n` seconds,
//! and a TTL of 1 may die 1 ms later ("a TTL of 1 will sometimes immediately expire").

/// Relative expiration times go up to 30 days (`REALTIME_MAXDELTA`); larger ones are
/// absolute unix times.
pub const REALTIME_MAXDELTA: i64 = 60 * 60 * 24 * 30;

/// How far `process_started` is set back from the real start (`ITEM_UPDATE_INTERVAL + 2`).
pub const PROCESS_STARTED_OFFSET: i64 = 62;

/// Whole unix seconds of a virtual millisecond time.
pub fn now_secs(now_ms: u64) -> i64 {
    (now_ms / 1000) as i64
}

/// The server's notion of time: when the process started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessClock {
    /// `process_started`, in unix seconds (the start minus 62 s).
    pub started: i64,
}

impl ProcessClock {
    /// A clock for a process started at virtual time `now_ms`.
    pub fn start(now_ms: u64) -> ProcessClock {
        ProcessClock {
            started: now_secs(now_ms) - PROCESS_STARTED_OFFSET,
        }
    }

    /// memcached's `current_time` (seconds since `process_started`).
    #[cfg(test)]
    pub fn current_time(&self, now_ms: u64) -> i64 {
        now_secs(now_ms) - self.started
    }

    /// Converts a command's exptime into an absolute expiration (unix seconds, `0` =
    /// never), as `process_update_command` + `realtime()` do (`memcached.c:177-195`):
    /// `0` never expires; negative becomes `REALTIME_MAXDELTA + 1` (a 1970 absolute time,
    /// so already expired); `1..=2592000` is relative to now; larger is an absolute unix
    /// time, and one at or before `process_started` becomes `process_started + 1`
    /// (memcached's rel time `1`), which is already in the past.
    ///
    /// The exptime is taken as memcached holds it after its own 32-bit truncation of the
    /// wire token; the wire codec (`src/wire/`) applies that truncation, not the store.
    pub fn realtime(&self, now_ms: u64, exptime: i64) -> i64 {
        let exptime = if exptime < 0 {
            REALTIME_MAXDELTA + 1
        } else {
            exptime
        };
        if exptime == 0 {
            0
        } else if exptime > REALTIME_MAXDELTA {
            if exptime <= self.started {
                self.started + 1
            } else {
                exptime
            }
        } else {
            now_secs(now_ms) + exptime
        }
    }
}

/// Whether an item with absolute expiration `exptime` (0 = never) is dead at `now_s`.
pub fn is_expired(exptime: i64, now_s: i64) -> bool {
    exptime != 0 && exptime <= now_s
}

/// The state `flush_all` leaves behind (`settings.oldest_live`, `settings.oldest_cas`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flush {
    /// `oldest_live` in unix seconds; `None` is memcached's `0` (no flush).
    pub oldest_live: Option<i64>,
    /// `oldest_cas`: items with a smaller unique are flushed once `oldest_live` is reached
    /// (`0` = none).
    pub oldest_cas: u64,
}

impl Flush {
    /// `item_is_flushed` (`items.c`): once `oldest_live <= current_time`, an item is
    /// flushed if its last update is at or before `oldest_live`, or its unique is older
    /// than `oldest_cas`.
    pub fn is_flushed(&self, item_time: i64, item_cas: u64, now_s: i64) -> bool {
        match self.oldest_live {
            None => false,
            Some(ol) if ol > now_s => false,
            Some(ol) => {
                item_time <= ol
                    || (self.oldest_cas != 0 && item_cas != 0 && item_cas < self.oldest_cas)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000_000;

    #[test]
    fn realtime_follows_memcached() {
        let c = ProcessClock::start(T0);
        let now_s = now_secs(T0);
        assert_eq!(c.started, now_s - 62);
        assert_eq!(c.current_time(T0), 62);
        assert_eq!(c.realtime(T0, 0), 0);
        assert_eq!(c.realtime(T0, 10), now_s + 10);
        assert_eq!(c.realtime(T0, REALTIME_MAXDELTA), now_s + REALTIME_MAXDELTA);
        assert_eq!(c.realtime(T0, REALTIME_MAXDELTA + 1), c.started + 1);
        assert_eq!(c.realtime(T0, -1), c.started + 1);
        assert_eq!(c.realtime(T0, now_s + 5), now_s + 5);
        assert!(is_expired(c.realtime(T0, -1), now_s));
        assert!(!is_expired(0, now_s));
    }

    #[test]
    fn flush_applies_from_oldest_live() {
        let f = Flush {
            oldest_live: Some(100),
            oldest_cas: 5,
        };
        assert!(!f.is_flushed(50, 1, 99));
        assert!(f.is_flushed(100, 9, 100));
        assert!(!f.is_flushed(101, 9, 101));
        assert!(f.is_flushed(101, 4, 101));
    }
}
