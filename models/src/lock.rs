//! §2 Distributed lock (004, "Блокировка"): `add` with an expiry, `delete` to unlock.
//!
//! # Published
//! ```text
//! try_lock(): add("lock" + name, 1, expire = lock_timeout)    # stored => locked
//! unlock():   delete("lock" + name)
//! callers:    while not lock.try_lock(): pass ; body ; unlock()
//! ```
//! `lock_timeout` is [`LOCK_TIMEOUT_SECS`] (the article gives no value). The body here is
//! a read-modify-write of a protected number (`get`, the work of the section
//! ([`Kv::work`]: no time unless a scenario gives it some), add 1, `set`), so a broken
//! mutual exclusion also shows as a lost increment.
//!
//! What the article intends: a named lock usable from any process that dies by itself when
//! its holder crashes; correctness rests on `add` letting exactly one process create the
//! key. What that leaves open: the key can disappear while its holder is still inside
//! (expiry while the holder is slow, eviction, a restart), and `unlock` deletes whatever
//! lock is there, even one a later holder took after this one's expired.
//!
//! # Property
//! Mutual exclusion (no two critical sections, marked `enter`/`exit`, overlap; a crashed
//! holder's section ends at its crash), then linearizability of the protected number
//! against [`FetchIncrement`] (each increment returns the value after it). Operations
//! answering [`Ret::Lost`] are judged as having had no effect.
//!
//! # The article's defects
//! The article's code block under "Блокировка" is a copy of the counter's (no lock code
//! at all); its text gives the design transcribed above, whose defects are these.
//! - **compare-and-delete** (`retrying-client`): "разблокировать (unlock)" — unlock is
//!   a `delete` of the key, which frees whatever lock is there: C0's `delete` is applied
//!   and its reply lost, C1 takes the lock, the client library sends C0's `delete` again
//!   and it deletes C1's lock; the next client enters beside C1 (21 steps)
//! - **expire-plus-one** (`slow-work`): "expire = lock_timeout" — memcached expires items
//!   at whole seconds of its clock, as the article itself says of the visitor counter, so a lock_timeout of 2 s lasts 1 to 2 s: work of 0.8-1.6 s, no
//!   fault, outlives the lock and a second client enters (`expire = lock_timeout + 1`
//!   removes it)
//! - **none:holder-outlives-lease** (`slow-holder`): "имеет автоматическое «умирание»" — the
//!   expiry that frees a crashed holder's lock frees a slow one's too: a holder paused
//!   past its lease is still inside when the next `add` succeeds (also `expire`, a jump
//!   of time); no lease lock can tell a slow holder from a dead one
//! - **none:evicted-lock-is-free** (`evict`): "Корректность работы блокировки основывается на операции `add`" —
//!   `add` lets exactly one process create the key only while the key exists: the key
//!   evicted while held (or pushed out, `lru`) is a free lock, and a second client enters
//! - **none:restart-forgets-holder** (`restart`): "процесс memcached аварийно завершился (сервер «упал»)" —
//!   a restarted memcached has forgotten every lock: the next `add` succeeds while the
//!   holder is inside
//! - **none:late-write-unfenced** (`delay`): "используется для исключения одновременного доступа к некоторым ключам" —
//!   a write the holder sent under the lock that lands late (after its client timed out
//!   and released) overwrites the next holder's count: the lock has no fencing token the
//!   protected keys could check, and no repair of the lock changes that
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! Each mutual-exclusion finding names its cause where the history tells it: a lock that
//! expired under its holder (held longer than its TTL's shortest life), an unlock still
//! in flight when the next holder took the lock, or a key that vanished.
//! - `retrying-client` (`lose` with a library that sends a timed-out command again): a
//!   resent `delete` frees the next holder's lock
//!   (`lock_published_resent_unlock_deletes_the_next_holders_lock`); repair
//!   `compare-and-delete` (the value a token unique to the holder, unlock `gets` then
//!   `md lock C<unique>`, memcached 1.6.18's compare-and-delete) removes it.
//! - `pause`: a holder stalled past `lock_timeout` is still inside when the key expires
//!   and the next client's `add` succeeds: two clients in the critical section
//!   (`lock_published_lets_a_second_holder_in_when_the_first_is_slow`); an `expire` jump
//!   of time does the same. The fixed variant fails the same way
//!   (`lock_fixed_cannot_survive_a_holder_outliving_its_lease_either`): no lease can.
//! - `evict`: the key evicted while held looks free
//!   (`lock_published_lets_a_second_holder_in_when_the_lock_is_evicted`); `restart` the
//!   same.
//! - `slow-work`, no fault at all: critical sections of 0.8-1.6 s, each shorter than the
//!   2 s `lock_timeout`, still overlap: memcached expires items at whole seconds of its
//!   clock, so a 2 s TTL set at 0.986 s ends at 2.000 s, 1.014 s later
//!   (`lock_published_lease_is_a_second_shorter_than_its_ttl`); repair `expire-plus-one`
//!   removes it.
//! - `delay`: the body's `set`, landing after its holder timed out and released,
//!   overwrites the next holder's count
//!   (`lock_published_loses_an_increment_to_a_write_that_lands_late`), with every repair
//!   on too.
//! - `lru`: the neighbour's writes push the protected number out and the body re-creates
//!   it from zero (the body's, not the lock's, defect: every rung but the fixed one).
//! - `crash`, `lose` and `slow-timeouts` pass: the expiry frees a dead holder's lock, and
//!   a lost reply only delays the others (the published code gives up at its first error
//!   and leaves the lock to expire).
//!
//! # Fixed
//! A lease with an owner token: `add(lock, token, lease)` with a fresh random token; the
//! lease is [`FIXED_LEASE_SECS`], one second more than the longest critical section it
//! covers ([`FIXED_HOLD_SECS`]), since a TTL of `n` seconds lasts `n - 1` to `n`;
//! a timed-out `add` is resolved by reading the key back (ours or not); the body writes
//! the number with `cas` on the unique it read, resolving timeouts by reading it back, so
//! a write that lands late (`delay`: after the lock changed hands) changes nothing (the
//! first version retried a `set`, and `kvsim check lock --scenario delay` found the late
//! write overwriting the next holder's count);
//! unlock is `gets` then `cas(lock, unique, "", -1)` (a `cas` with a negative expiry
//! deletes only if the lock is still this holder's), so a late unlock never frees
//! someone else's lock; waiting clients sleep [`RETRY_MS`] between attempts. The protected
//! number is created by `setup` and never re-created: a miss means it was lost, and the
//! operation answers [`Ret::Lost`] without writing.
//!
//! Tolerates, by scenario: no faults (`no-faults`); `crash` (`crash`: the lease expires
//! by the server's clock and the others go on); `lose` with the default timeout (`lose`:
//! every timeout is resolved or retried); `skew` (`skew`: only the server's clock
//! matters); `retrying-client` (a resent `add` that finds the holder's own lock reads the
//! key back; a resent `cas` of the unlock or the body finds a newer unique); `delay` with
//! 200 ms timeouts (`delay`: a late write or unlock is a `cas` on a
//! unique that has moved on; a late `add` of the lock is a lease nobody holds, which
//! expires); work that takes 0.8-1.6 s (`slow-work`); two 1 s timeouts inside the
//! critical section (`slow-timeouts`: the holder resolves them and goes on, within its
//! 3 s bound); `lru` (`lru`: the neighbour's writes push the protected number out and the
//! operation answers `Lost`, where the published lock re-creates it from zero; a held lock
//! pushed out would break it as `evict` below does). Untested: `shard-fail`.
//!
//! What no lease lock on this store can fix: a holder that outlives its lease (scenarios
//! `slow-holder`: `pause`, and `expire`: a jump of time) is still inside when the next
//! holder enters, since the store cannot stop a client it has given up on (fencing tokens
//! would protect a resource that checks them, not the critical section); and `evict`
//! (`evict`), `restart` (`restart`) and `shard-fail` (untested) delete the key while it is
//! held, which looks exactly like a free lock. A lock without a lease avoids the first and
//! cannot recover from a crashed holder (see [`crate::spinlock`]'s fixed variant).
//!
//! Probes: `lock busy` (an `add` of the lock found it held, and the client tries again),
//! `lock gone at release` (the release found the lock key missing, or, fixed, someone
//! else's: it expired or was lost while held), `missing key` (fixed: the protected number
//! is gone and the operation answers `Lost`), `cas lost` (fixed: the `cas` of the lock's
//! release or of the number answered `EXISTS`: the key changed since this client's `gets`),
//! `timeout resolved` (fixed: a timed-out command resolved by reading the key back, or a
//! read sent again).

use crate::counter::{fenced_increment, parse_number};
use crate::expect::{Expect, Variant};
use crate::lincheck;
use kvsim::command::{MetaCommand, MetaFlag, MetaStatus};
use kvsim::{
    CheckerLimits, FaultKind, History, JsonlFormat, JsonlOp, Kv, KvError, Model, Repair, Scenario,
    SequentialSpec, SimRng, StoreOutcome, Verdict, Violation, SIMULATED_LIMITS,
};
use serde_json::json;

/// The published lock's expiry, in seconds (the article leaves it to the caller).
pub const LOCK_TIMEOUT_SECS: i64 = 2;

/// The longest critical section the fixed lock covers, in seconds.
pub const FIXED_HOLD_SECS: i64 = 3;

/// The fixed lock's lease, in seconds: memcached expires items at whole seconds of its
/// own clock, so a TTL of `n` lasts between `n - 1` and `n` seconds; a lease that must
/// outlast a [`FIXED_HOLD_SECS`] critical section is one second longer.
pub const FIXED_LEASE_SECS: i64 = FIXED_HOLD_SECS + 1;

/// How long the fixed lock's waiters sleep between attempts, in milliseconds.
pub const RETRY_MS: u64 = 50;

/// The repairs of the published lock ([`Model::repairs`]), each the fix of one defect.
pub const REPAIRS: &[Repair] = &[
    Repair {
        name: "compare-and-delete",
        fixes: "unlock deletes the lock whoever holds it: a delete sent again or landing late frees the next holder's lock",
    },
    Repair {
        name: "expire-plus-one",
        fixes: "the lock's expiry counts the server's whole seconds, so a lock_timeout of n seconds lasts n - 1 to n: work shorter than lock_timeout outlives the lock",
    },
];

/// The lock's key, `"lock" + name` (without the formatting machinery: it is made at every
/// attempt).
fn lock_key(name: &str) -> Vec<u8> {
    [b"lock", name.as_bytes()].concat()
}

/// The published `try_lock` of §2: `add("lock" + name, 1, lock_timeout)`.
pub async fn published_try_lock<K: Kv>(kv: &K, name: &str) -> Result<bool, KvError> {
    let key = lock_key(name);
    let stored = kv.add(&key[..], b"1", LOCK_TIMEOUT_SECS).await? == StoreOutcome::Stored;
    if !stored {
        kv.probe("lock busy");
    }
    Ok(stored)
}

/// The published `unlock` of §2: `delete("lock" + name)`.
pub async fn published_unlock<K: Kv>(kv: &K, name: &str) -> Result<(), KvError> {
    let key = lock_key(name);
    if !kv.delete(&key[..]).await? {
        kv.probe("lock gone at release");
    }
    Ok(())
}

/// Repair `compare-and-delete`'s `try_lock`: `add("lock" + name, token, expire)`, the
/// value a token unique to this holder.
async fn token_try_lock<K: Kv>(
    kv: &K,
    name: &str,
    token: &str,
    expire: i64,
) -> Result<bool, KvError> {
    let key = lock_key(name);
    let stored = kv.add(&key[..], token.as_bytes(), expire).await? == StoreOutcome::Stored;
    if !stored {
        kv.probe("lock busy");
    }
    Ok(stored)
}

/// Repair `compare-and-delete`'s `unlock`: `gets("lock" + name)`, and only if it still
/// holds this holder's token, memcached 1.6.18's meta delete `md lock C<unique>`, which
/// deletes only the item this `gets` read: a delete sent again, or landing late, finds a
/// newer unique (another holder's lock) and deletes nothing.
async fn compare_and_delete<K: Kv>(kv: &K, name: &str, token: &str) -> Result<(), KvError> {
    let key = lock_key(name);
    match kv.gets(&key[..]).await? {
        Some(v) if v.data == token.as_bytes() => {
            let command = MetaCommand::delete(&key[..], vec![MetaFlag::CompareCas(v.cas)]);
            if kv.meta(command).await?.status != MetaStatus::Hd {
                kv.probe("lock gone at release");
            }
        }
        _ => kv.probe("lock gone at release"),
    }
    Ok(())
}

/// The fixed lease lock: acquires `"lock" + name` with a fresh owner token, waiting as long
/// as it takes; returns the token.
pub async fn fixed_acquire<K: Kv>(kv: &K, name: &str) -> Result<String, KvError> {
    let key = lock_key(name);
    let token = kv.random_string(12);
    loop {
        match kv.add(&key[..], token.as_bytes(), FIXED_LEASE_SECS).await {
            Ok(StoreOutcome::Stored) => return Ok(token),
            Ok(_) => {
                // A client library that sends a timed-out `add` again turns our own
                // stored lock into NOT_STORED: the key says whose lock it is.
                kv.probe("lock busy");
                if let Ok(Some(v)) = kv.get(&key[..]).await {
                    if v == token.as_bytes() {
                        kv.probe("timeout resolved");
                        return Ok(token);
                    }
                }
            }
            Err(e) if e.is_indeterminate() => {
                // The add may have been applied: the key says whose lock it is.
                kv.probe("timeout resolved");
                if let Ok(Some(v)) = kv.get(&key[..]).await {
                    if v == token.as_bytes() {
                        return Ok(token);
                    }
                }
            }
            Err(e) => return Err(e),
        }
        kv.sleep_ms(RETRY_MS).await;
    }
}

/// The fixed unlock: frees `"lock" + name` only if it still holds `token`.
pub async fn fixed_release<K: Kv>(kv: &K, name: &str, token: &str) -> Result<(), KvError> {
    let key = lock_key(name);
    loop {
        let current = match kv.gets(&key[..]).await {
            Ok(c) => c,
            Err(e) if e.is_indeterminate() => {
                kv.probe("timeout resolved");
                continue;
            }
            Err(e) => return Err(e),
        };
        match current {
            Some(v) if v.data == token.as_bytes() => {
                match kv.cas(&key[..], v.cas, b"", -1).await {
                    Ok(StoreOutcome::Stored) => return Ok(()),
                    // Changed since the gets (expired and re-taken): not ours any more.
                    Ok(_) => {
                        kv.probe("cas lost");
                        continue;
                    }
                    Err(e) if e.is_indeterminate() => {
                        kv.probe("timeout resolved");
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            // Gone or someone else's: nothing of ours to free.
            _ => {
                kv.probe("lock gone at release");
                return Ok(());
            }
        }
    }
}

/// The published lock's probes ([`Kv::probe`]): [`published_try_lock`] and
/// [`published_unlock`] (also the published array's and table's lock).
const PUBLISHED_PROBES: &[&str] = &["lock busy", "lock gone at release"];

/// The fixed lock's probes: [`fixed_acquire`], [`fixed_release`], and the body's
/// [`fenced_increment`] (with its `gets_retrying`).
const FIXED_PROBES: &[&str] = &[
    "lock busy",
    "lock gone at release",
    "missing key",
    "cas lost",
    "timeout resolved",
];

/// A lock operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Take the lock, add 1 to the protected number, release.
    Increment,
}

/// What an operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// The protected number after this increment.
    Value(u64),
    /// The fixed variant found the protected number gone and wrote nothing.
    Lost,
}

/// The lock of §2 guarding a read-modify-write, in one of its variants.
#[derive(Clone, Debug)]
pub struct Lock {
    variant: Variant,
    name: String,
    protected: Vec<u8>,
}

/// The published lock.
pub fn published() -> Lock {
    Lock::new(Variant::Published)
}

/// The fixed lock.
pub fn fixed() -> Lock {
    Lock::new(Variant::Fixed)
}

impl Lock {
    /// The lock named `res` (key `lockres`) guarding the number at `protectedres`.
    pub fn new(variant: Variant) -> Lock {
        Lock {
            variant,
            name: "res".to_string(),
            protected: b"protectedres".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The published lock's expiry: `lock_timeout`, a second more with repair
    /// `expire-plus-one`.
    fn expire(&self) -> i64 {
        if self.variant.repaired("expire-plus-one") {
            LOCK_TIMEOUT_SECS + 1
        } else {
            LOCK_TIMEOUT_SECS
        }
    }

    async fn published_increment<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        // Repair `compare-and-delete`: the lock's value is this holder's token.
        let token = self
            .variant
            .repaired("compare-and-delete")
            .then(|| kv.random_string(12));
        match &token {
            Some(t) => while !token_try_lock(kv, &self.name, t, self.expire()).await? {},
            None if self.variant.repaired("expire-plus-one") => {
                while !token_try_lock(kv, &self.name, "1", self.expire()).await? {}
            }
            None => while !published_try_lock(kv, &self.name).await? {},
        }
        kv.mark("enter");
        let body = async {
            let n = match kv.get(&self.protected).await? {
                Some(d) => parse_number(&d),
                None => 0,
            };
            kv.work().await;
            kv.set(&self.protected, (n + 1).to_string().as_bytes(), 0)
                .await?;
            Ok(Ret::Value(n + 1))
        }
        .await;
        kv.mark("exit");
        match &token {
            Some(t) => compare_and_delete(kv, &self.name, t).await?,
            None => published_unlock(kv, &self.name).await?,
        }
        body
    }

    async fn fixed_increment<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        let token = fixed_acquire(kv, &self.name).await?;
        kv.mark("enter");
        kv.work().await;
        let body = fixed_body(kv, &self.protected).await;
        kv.mark("exit");
        fixed_release(kv, &self.name, &token).await?;
        body
    }
}

/// The fixed critical section: [`fenced_increment`] (a write that lands late changes
/// nothing). A missing number was lost: nothing is written.
async fn fixed_body<K: Kv>(kv: &K, key: &[u8]) -> Result<Ret, KvError> {
    Ok(match fenced_increment(kv, key).await? {
        Some(n) => Ret::Value(n),
        None => Ret::Lost,
    })
}

/// An operation's fields in a history file (read by `kvsim check-history --spec counter`).
fn jsonl_op(_op: &Op, ret: Option<&Ret>) -> JsonlOp {
    match ret {
        Some(Ret::Value(n)) => JsonlOp::new("incr", json!(1), json!(n), false),
        Some(Ret::Lost) => JsonlOp::new("incr", json!(1), json!(null), true),
        None => JsonlOp::new("incr", json!(1), json!(null), false),
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "the lock is the key lockres: present means held, absent free; try_lock is \
     add(lockres, \"1\", expiry 2 s), and the key dies by itself 2 s after the start \
     of the whole second it was set in (memcached's clock counts whole seconds): the \
     lock lasts 1 to 2 s from the moment it is taken, whatever the holder is doing \
     (work, a pause); unlock deletes lockres, \
     whoever set it. The critical section reads protectedres (the protected number), \
     works, and sets it to one more: two holders at once show as a lost increment";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "the lock is the key lockres: absent means free, present means held by the client \
     whose random token is its value; try_lock is add(lockres, token, expiry 4 s), \
     one second more than the longest critical section it covers, since memcached's \
     whole-second clock makes a TTL of n s last n-1 to n s; unlock is gets then \
     cas(lockres, unique, \"\", -1), which deletes the key only if it still holds this \
     holder's token. protectedres holds the protected number, made by setup and \
     written with cas on the unique the holder read; a missing one means it was lost \
     (Lost)";

impl Model for Lock {
    fn representation(&self) -> Option<&'static str> {
        Some(match self.variant {
            Variant::Fixed => REPRESENTATION_FIXED,
            _ => REPRESENTATION,
        })
    }

    type Op = Op;
    type Ret = Ret;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        if self.variant == Variant::Fixed {
            kv.add(&self.protected, b"0", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Increment) => {
                self.published_increment(kv).await
            }
            (Variant::Fixed, Op::Increment) => self.fixed_increment(kv).await,
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn repairs(&self) -> &'static [Repair] {
        REPAIRS
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) -> Op {
        Op::Increment
    }

    fn history_format(&self) -> Option<JsonlFormat<Op, Ret>> {
        Some(JsonlFormat {
            spec: "counter",
            args: Vec::new(),
            describe: jsonl_op,
        })
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        match kvsim::mutual_exclusion(history) {
            Verdict::Ok => {}
            Verdict::Violation(v) => return Verdict::Violation(self.explain_overlap(history, v)),
            other => return other,
        }
        lincheck::check(&FetchIncrement, history, limits, |r| *r == Ret::Lost)
    }

    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        self.check_with(history, limits)
    }
}

impl Lock {
    /// The lock's TTL in seconds, as this variant sets it.
    fn ttl_secs(&self) -> i64 {
        match self.variant {
            Variant::Fixed => FIXED_LEASE_SECS,
            _ => self.expire(),
        }
    }

    /// A mutual-exclusion violation with its cause in the lock's words, where the history
    /// tells it: the first holder had held the lock past the earliest moment its TTL can
    /// end (it expired under it); or another client's unconditional unlock was still in
    /// flight when the first holder took the lock (a delete sent again after a timeout,
    /// or landing late, freed it); or else the key vanished while held.
    fn explain_overlap(&self, history: &History<Op, Ret>, mut v: Violation) -> Violation {
        let [a, b] = v.ops[..] else { return v };
        let enter = |i: usize| {
            history.ops[i]
                .marks
                .iter()
                .find(|m| m.label == "enter")
                .map(|m| (m.seq, m.time_ms))
        };
        let (Some(ea), Some(eb)) = (enter(a), enter(b)) else {
            return v;
        };
        let (ca, cb) = (history.ops[a].client, history.ops[b].client);
        let ttl = self.ttl_secs();
        let held = eb.1.saturating_sub(ea.1);
        let unconditional =
            self.variant != Variant::Fixed && !self.variant.repaired("compare-and-delete");
        let unlocking = history.ops.iter().enumerate().find(|(i, o)| {
            *i != a
                && o.client != ca
                && o.marks.iter().any(|m| m.label == "exit" && m.seq < ea.0)
                && o.ret.is_none_or(|r| r > ea.0)
        });
        let cause = if held + 1000 >= ttl as u64 * 1000 {
            expired_under(ca, ea.1, cb, eb.1, ttl)
        } else if let (true, Some((_, x))) = (unconditional, unlocking) {
            format!(
                ": C{}'s unlock was still in flight when C{ca} took the lock at {} ms, and its \
                 delete (sent again after a timeout, or landing late) deleted C{ca}'s lock",
                x.client, ea.1
            )
        } else {
            format!(
                ": C{ca}'s lock key vanished while it was inside (evicted, or lost in a restart)"
            )
        };
        v.reason.push_str(&cause);
        v
    }
}

/// Why a lock expired under its holder, on memcached's whole-second clock: `ca` entered at
/// `entered_ms` (just after its `add` stored the lock with a TTL of `ttl` s), `cb` entered
/// at `next_ms`. memcached counts time in whole seconds, so a TTL of `ttl` s set during
/// second `s` ends at second `s + ttl`: as little as `ttl - 1` s later. When the history
/// pins that end (the `add` and the `enter` fall in the same second), the reason names it.
fn expired_under(ca: usize, entered_ms: u64, cb: usize, next_ms: u64, ttl: i64) -> String {
    let held = next_ms.saturating_sub(entered_ms);
    let ttl_ms = ttl.max(0) as u64 * 1000;
    let ends = (entered_ms / 1000) * 1000 + ttl_ms;
    let secs = |ms: u64| format!("{}.{:03} s", ms / 1000, ms % 1000);
    if ends <= next_ms && ends > entered_ms {
        format!(
            ": C{ca}'s lock expired under it: memcached's clock counts whole seconds, so the \
             TTL of {ttl} s that C{ca} set when it took the lock at {} ended at {}, {} ms \
             later, with C{ca} still inside; C{cb} took the lock at {}",
            secs(entered_ms),
            secs(ends),
            ends - entered_ms,
            secs(next_ms)
        )
    } else {
        format!(
            ": C{ca}'s lock expired under it (held {held} ms when C{cb} took it; a TTL of \
             {ttl} s on memcached's whole-second clock lasts {} to {ttl} s)",
            ttl - 1
        )
    }
}

/// The protected number as a sequential object: each increment returns the new value.
#[derive(Clone, Copy, Debug, Default)]
pub struct FetchIncrement;

impl SequentialSpec for FetchIncrement {
    type State = u64;
    type Op = Op;
    type Ret = Ret;

    fn name(&self) -> &'static str {
        "increment-and-get"
    }

    fn init(&self) -> u64 {
        0
    }

    fn step(&self, state: &u64, _op: &Op) -> (u64, Ret) {
        (state + 1, Ret::Value(state + 1))
    }

    fn explain(&self, state: &u64, _op: &Op, expected: &Ret, found: &Ret) -> String {
        format!(
            "an increment returned {found:?} after {state} increments, expected {expected:?}: an increment was lost"
        )
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 3)
                .about("three clients increment under the lock")
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("crash", 3, 3)
                .about("a client may crash, also while holding the lock")
                .faults(&[FaultKind::Crash])
                .fault_budget(1)
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("lose", 3, 3)
                .about("requests and replies get lost; clients time out")
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("slow-holder", 3, 3)
                .about("clients may stall for longer than the lock's expiry")
                .faults(&[FaultKind::Pause])
                .fault_budget(2)
                .runs(500),
            Expect::impossible("a holder paused past its lease is, to the store, a crashed one: a lock that frees a crashed holder's lock lets the next client into the section while the paused one is still inside (a fencing token protects a resource that checks it, not the section)"),
        ),
        (
            Scenario::new("evict", 3, 3)
                .about("keys may be evicted at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::impossible("an evicted lock key reads exactly as a free lock, and memcached evicts any key: no lock whose only record is a key of a store that may drop it survives"),
        ),
        (
            Scenario::new("lru", 3, 3)
                .about("a shared cache under memory pressure: a neighbour's writes push the structure's least recently used keys out")
                .faults(&[FaultKind::Lru])
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            // The lease is the server's (a relative exptime): the clients' clocks never
            // enter, so clock offsets, drift and jumps change nothing.
            Scenario::new("skew", 3, 3)
                .about("client clocks are offset, drift and jump; the lease runs on the server's")
                .faults(&[FaultKind::Skew])
                .fault_budget(2)
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("restart", 3, 3)
                .about("the server restarts and forgets who holds the lock")
                .faults(&[FaultKind::Restart])
                .fault_budget(1)
                .runs(500),
            Expect::impossible("a volatile restart forgets every key: a lock whose only record is a key in the store's memory reads as free afterwards"),
        ),
        (
            Scenario::new("expire", 3, 3)
                .about("time jumps to the lease's expiry while its holder is inside")
                .faults(&[FaultKind::Expire])
                .fault_budget(1)
                .runs(500),
            Expect::impossible("a jump of the server's clock ends the lease while its holder is inside, as a pause ends it: a lock that frees a crashed holder's lock lets the next client in"),
        ),
        (
            Scenario::new("delay", 3, 3)
                .about("requests land late, after their client's 200 ms timeout")
                .sometimes(&["timeout resolved"])
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .timeout_ms(200)
                .runs(2000),
            // The body's `set` that lands after the lock changed hands overwrites the next
            // holder's count: a lock without a fencing token cannot stop a write its
            // holder sent, and no repair of the lock changes that; the fixed body's `cas`
            // on the unique it read can.
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("slow-timeouts", 3, 3)
                .about("lost requests and replies, each costing its client a 1 s timeout")
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .timeout_ms(1_000)
                .runs(2000),
            // The published lock gives up at its first error and leaves the lock to
            // expire: safe here, at the price of an operation whose outcome is unknown. The
            // fixed holder resolves its timeouts and goes on: two of them (2 s and a few ms
            // of calls) fit its critical-section bound, inside its lease.
            Expect::BOTH_PASS,
        ),
        (
            // No fault: every critical section ends well inside the nominal 2 s lease, but
            // memcached expires items at whole seconds of its clock, so a 2 s TTL set at
            // x.7 s lasts 1.3 s.
            Scenario::new("slow-work", 3, 2)
                .about("no faults; each critical section takes 0.8-1.6 s of work, less than the 2 s lock_timeout")
                .work_ms(800, 1_600)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["expire-plus-one"]),
        ),
        (
            // Found in 21 steps: C0's `delete` is applied, its reply lost; C1 takes the
            // lock; the library sends C0's `delete` again and it deletes C1's lock.
            Scenario::new("retrying-client", 3, 3)
                .about("lost requests and replies; the client library sends a timed-out command again, as most do")
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1)
                .runs(500),
            Expect::BROKEN_FIXED.shows(&["compare-and-delete"]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::expired_under;

    #[test]
    fn an_expired_lock_is_explained_by_memcached_s_whole_second_clock() {
        // slow-work: C1 takes the lock at 0.986 s with a TTL of 2 s; it ends at 2.000 s.
        assert_eq!(
            expired_under(1, 986, 0, 2000, 2),
            ": C1's lock expired under it: memcached's clock counts whole seconds, so the TTL \
             of 2 s that C1 set when it took the lock at 0.986 s ended at 2.000 s, 1014 ms \
             later, with C1 still inside; C0 took the lock at 2.000 s"
        );
        // Where the history does not pin the end (the next holder entered before the end
        // the entry's second gives: the `add` fell in the second before), the range.
        assert_eq!(
            expired_under(1, 1000, 0, 2500, 2),
            ": C1's lock expired under it (held 1500 ms when C0 took it; a TTL of 2 s on \
             memcached's whole-second clock lasts 1 to 2 s)"
        );
    }
}
