//! The KV trait structures are written against, and its typed methods.
//!
//! A backend implements one required method, [`Kv::execute`], plus the client's clock,
//! `sleep` and random numbers; the typed methods ([`Kv::get`], [`Kv::gets`], [`Kv::add`],
//! [`Kv::cas`], [`Kv::incr`], …) are provided on top of it. Keys and values are checked
//! before anything is sent ([`Command::validate`]): a bad key is an error, never a panic and
//! never a partial write.
//!
//! A structure must take *everything* nondeterministic from its handle: time from
//! [`Kv::now_ms`], waiting from [`Kv::sleep_ms`], randomness from [`Kv::random_u64`].
//! A structure that reads `std::time` or `rand` directly cannot be simulated or replayed.

use crate::command::{
    validate_data, validate_key, ArithVerb, Command, CommandError, MetaCommand, MetaFlag,
    MetaReply, MetaRet, MetaStatus, Reply, StoreVerb, Value,
};
use std::future::Future;

/// Everything that can go wrong with one KV call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    /// The command was refused before sending (bad key, value too large).
    #[error(transparent)]
    Invalid(#[from] CommandError),
    /// No reply arrived in time: the command may or may not have taken effect.
    #[error("timeout: no reply to `{command}` (it may or may not have taken effect)")]
    Timeout {
        /// The command, rendered.
        command: String,
    },
    /// The server went away mid-command: the command may or may not have taken effect.
    #[error("server {server} went away during `{command}`: {detail}")]
    ServerGone {
        /// The server's address or name.
        server: String,
        /// The command, rendered.
        command: String,
        /// What the connection reported.
        detail: String,
    },
    /// The server answered with an error reply (`ERROR`, `CLIENT_ERROR …`, `SERVER_ERROR …`).
    #[error("`{command}` failed: {reply}")]
    Server {
        /// The command, rendered.
        command: String,
        /// The error reply.
        reply: Reply,
    },
    /// The server answered something this command never gets.
    #[error("unexpected reply to `{command}`: expected {expected}, found {found}")]
    Protocol {
        /// The command, rendered.
        command: String,
        /// What a correct server sends.
        expected: &'static str,
        /// What came.
        found: String,
    },
    /// The command was not sent: the client was told to stop (a run's deadline passed, or
    /// a server is known to be down). Not indeterminate: the command certainly had no
    /// effect, so a structure that retries indeterminate errors gives up at once (the
    /// operation it was part of may still have taken effect through earlier commands).
    #[error("`{command}` not sent: {reason}")]
    Stopped {
        /// The command, rendered.
        command: String,
        /// Why the client stopped.
        reason: String,
    },
}

impl KvError {
    /// Whether the command may have taken effect (timeout, lost connection): the
    /// operation's outcome is unknown.
    pub fn is_indeterminate(&self) -> bool {
        matches!(self, KvError::Timeout { .. } | KvError::ServerGone { .. })
    }

    /// Whether the structure's own command was at fault, whatever the faults did: the
    /// client refused to send it (a bad key, a value too large), or the server answered
    /// it `ERROR` or `CLIENT_ERROR` (`incr` of a value that is not a number). A correct
    /// structure never sends one, so a run in which one is sent has a defect (the
    /// `valid commands` property).
    pub fn is_refusal(&self) -> bool {
        self.refusal().is_some()
    }

    /// What was refused, for a refusal ([`KvError::is_refusal`]): the client's reason
    /// (keys quoted), or the server's reply to the command's verb. Keys never appear
    /// unquoted, so one defect met with many keys is one finding.
    pub fn refusal(&self) -> Option<String> {
        match self {
            KvError::Invalid(e) => Some(e.to_string()),
            KvError::Server {
                command,
                reply: reply @ (Reply::Error | Reply::ClientError(_)),
            } => {
                let verb = command.split(' ').next().unwrap_or_default();
                Some(format!("the server answered `{verb}` with {reply}"))
            }
            _ => None,
        }
    }
}

/// The outcome of `set`, `add`, `replace`, `append`, `prepend` and `cas`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreOutcome {
    /// `STORED`
    Stored,
    /// `NOT_STORED`: the condition of add/replace/append/prepend failed.
    NotStored,
    /// `EXISTS`: cas lost to another writer.
    Exists,
    /// `NOT_FOUND`: cas on a missing key.
    NotFound,
}

impl StoreOutcome {
    /// Whether the value was stored.
    pub fn is_stored(self) -> bool {
        self == StoreOutcome::Stored
    }
}

/// An item read with `gets`: its data and cas unique.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Versioned {
    /// The data.
    pub data: Vec<u8>,
    /// The item's flags.
    pub flags: u32,
    /// The cas unique to pass to [`Kv::cas`].
    pub cas: u64,
}

/// What [`Kv::get_with_lease`] found: memcached's meta protocol's answer to a cache
/// stampede (many clients missing the same key at once and all recomputing it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Lease {
    /// A valid value.
    Hit(Vec<u8>),
    /// This client won the right, and the duty, to recompute the value (`W`): it should
    /// store it with [`Kv::set_invalidate`] and this `cas`. `stale` is the old value when
    /// the item was only marked stale ([`Kv::invalidate`]), to serve meanwhile; `None`
    /// when there was no value (the store made an empty placeholder that lives for the
    /// lease's TTL, so that a winner that dies hands the duty on when it expires).
    /// `cas` is 0 when the store could not even make the placeholder (out of memory).
    Win {
        /// The unique to store the new value with.
        cas: u64,
        /// The stale value, if there was one.
        stale: Option<Vec<u8>>,
    },
    /// The value is stale and another client is recomputing it (`X` and `Z`): serve it.
    Stale(Vec<u8>),
    /// Another client is computing the value and there is none yet (an empty placeholder
    /// with `Z`): wait and ask again.
    Wait,
}

/// [`keyed`] of a command already validated (by its parts, before it was built): the
/// command goes straight into [`Kv::execute`]'s future, not through a local of the
/// caller's first (the profile showed each such move of a just-built command stall).
macro_rules! sent {
    ($kv:expr, $verb:expr, $command:expr, $key:expr) => {{
        checked_reply($verb, $key, $kv.execute($command).await?)?
    }};
}

/// [`call_keyed`]'s steps written out in the calling method's own future: one future
/// fewer deep (the profile showed each nested future's polls and moved results at every
/// KV call).
macro_rules! keyed {
    ($kv:expr, $command:expr, $key:expr) => {{
        let command: Command = $command;
        command.validate()?;
        let verb = command.verb();
        sent!($kv, verb, command, $key)
    }};
}

/// `get`/`gets` of one key (validated first, then sent): its value, or `None` on a miss.
macro_rules! get_one {
    ($kv:expr, $verb:expr, $with_cas:expr, $key:expr) => {{
        validate_key($key)?;
        let reply = sent!(
            $kv,
            $verb,
            Command::Get {
                with_cas: $with_cas,
                keys: vec![$key.to_vec()],
            },
            $key
        );
        single_value($verb, $key, reply)?
    }};
}

/// A storage command with flags 0 (key and data validated first, then sent): its outcome.
macro_rules! stored {
    ($kv:expr, $verb:expr, $key:expr, $data:expr, $exptime:expr) => {{
        validate_key($key)?;
        validate_data($data)?;
        let verb: StoreVerb = $verb;
        let reply = sent!(
            $kv,
            verb.as_str(),
            store_command(verb, $key, $data, $exptime),
            $key
        );
        store_outcome(verb.as_str(), $key, reply)
    }};
}

/// `incr`/`decr` (the key validated first, then sent): the new value, `None` on a miss.
macro_rules! delta {
    ($kv:expr, $verb:expr, $key:expr, $delta:expr) => {{
        validate_key($key)?;
        let verb: ArithVerb = $verb;
        let reply = sent!($kv, verb.as_str(), arith_command(verb, $key, $delta), $key);
        arith_outcome(verb.as_str(), $key, reply)
    }};
}

/// A memcached-style store, as one client sees it.
///
/// Implement [`execute`](Kv::execute), [`now_ms`](Kv::now_ms),
/// [`sleep_ms`](Kv::sleep_ms) and [`random_u64`](Kv::random_u64); everything else is
/// provided. Methods are `async` so that the simulator can switch clients at every KV call
/// without threads; static dispatch, no `Send` bound (the simulator is single-threaded).
#[allow(async_fn_in_trait)] // callers are generic over `K: Kv`; no `Send` bound is wanted.
pub trait Kv {
    /// Sends one command and waits for its reply. Error replies (`ERROR`,
    /// `CLIENT_ERROR`, `SERVER_ERROR`) are `Ok(reply)` here; the typed methods turn them
    /// into [`KvError::Server`].
    async fn execute(&self, command: Command) -> Result<Reply, KvError>;

    /// This client's clock, in milliseconds since the unix epoch (simulated clocks can be
    /// offset, drift and jump; they never read the host's clock).
    fn now_ms(&self) -> u64;

    /// Waits this long by the client's clock.
    async fn sleep_ms(&self, ms: u64);

    /// Waits up to `ms` by the client's clock, or less if the store may have changed
    /// (a hint for pollers such as a blocking reader; spurious early returns are allowed).
    /// Default: [`Kv::sleep_ms`].
    async fn wait_for_change_ms(&self, ms: u64) {
        self.sleep_ms(ms).await
    }

    /// A random number. Deterministic in the simulator (a function of the seed, the
    /// client and how many it drew before).
    fn random_u64(&self) -> u64;

    /// Notes an event of the structure in the trace (e.g. `"enter"` and `"exit"` of a
    /// critical section, which the mutual-exclusion checker reads). No effect by default.
    fn mark(&self, label: &'static str) {
        let _ = label;
    }

    /// How long the structure's next piece of its own work takes, in ms (see
    /// [`Kv::work`]). Default: 0, work takes no time. The simulator draws it from the
    /// scenario's `work_ms` range.
    fn work_ms(&self) -> u64 {
        0
    }

    /// Spends the time the structure's own work takes: call it where the code computes
    /// between store calls (a critical section's body, rendering a value to cache), so that
    /// a scenario can make that work slow ([`crate::scenario::Scenario::work_ms`]) and
    /// leases and expiries run out meanwhile. Takes no time, and is no step, when
    /// [`Kv::work_ms`] is 0.
    async fn work(&self) {
        let ms = self.work_ms();
        if ms > 0 {
            self.sleep_ms(ms).await;
        }
    }

    /// Names an interesting moment the structure reached (a `cas` lost to another
    /// writer, a lease found expired, a key gone before it was read, a retry): a check
    /// counts how often each probe was hit over its runs, so a gate shows whether its runs
    /// reached the places worth testing, and a scenario can require some
    /// ([`crate::scenario::Scenario::sometimes`]): one that no run hits makes the check
    /// `unknown`. Declare every name in [`crate::model::Model::probes`]. No effect by
    /// default.
    fn probe(&self, name: &'static str) {
        let _ = name;
    }

    /// This client's clock in whole seconds.
    fn now_secs(&self) -> u64 {
        self.now_ms() / 1000
    }

    /// A random lowercase alphanumeric string of `len` characters (for unique key suffixes).
    fn random_string(&self, len: usize) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut s = String::with_capacity(len);
        let mut bits = self.random_u64();
        let mut left = 10;
        for _ in 0..len {
            if left == 0 {
                bits = self.random_u64();
                left = 10;
            }
            s.push(ALPHABET[(bits % 36) as usize] as char);
            bits /= 36;
            left -= 1;
        }
        s
    }

    /// Validates, sends, and turns an error reply into [`KvError::Server`].
    async fn call(&self, command: Command) -> Result<Reply, KvError> {
        let key = command.first_key().map(<[u8]>::to_vec);
        call_keyed(self, command, key.as_deref().unwrap_or_default()).await
    }

    /// `get key`: the data, or `None` on a miss.
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        match get_one!(self, "get", false, key) {
            Some(v) => Ok(Some(v.data)),
            None => Ok(None),
        }
    }

    /// `gets key`: the data and cas unique, or `None` on a miss.
    async fn gets(&self, key: &[u8]) -> Result<Option<Versioned>, KvError> {
        match get_one!(self, "gets", true, key) {
            Some(v) => Ok(Some(Versioned {
                data: v.data,
                flags: v.flags,
                cas: v.cas.unwrap_or(0),
            })),
            None => Ok(None),
        }
    }

    /// A storage command with flags 0.
    async fn store(
        &self,
        verb: StoreVerb,
        key: &[u8],
        data: &[u8],
        exptime: i64,
    ) -> Result<StoreOutcome, KvError> {
        stored!(self, verb, key, data, exptime)
    }

    /// `set key 0 exptime`: always stores (unless too large or out of memory).
    async fn set(&self, key: &[u8], data: &[u8], exptime: i64) -> Result<StoreOutcome, KvError> {
        // As `store` does, one future fewer deep (this runs at every set).
        stored!(self, StoreVerb::Set, key, data, exptime)
    }

    /// `add key 0 exptime`: stores only if the key is absent.
    async fn add(&self, key: &[u8], data: &[u8], exptime: i64) -> Result<StoreOutcome, KvError> {
        stored!(self, StoreVerb::Add, key, data, exptime)
    }

    /// `replace key 0 exptime`: stores only if the key is present.
    async fn replace(
        &self,
        key: &[u8],
        data: &[u8],
        exptime: i64,
    ) -> Result<StoreOutcome, KvError> {
        self.store(StoreVerb::Replace, key, data, exptime).await
    }

    /// `append key`: adds `data` after the value; `NotStored` if the key is absent.
    async fn append(&self, key: &[u8], data: &[u8]) -> Result<StoreOutcome, KvError> {
        stored!(self, StoreVerb::Append, key, data, 0)
    }

    /// `prepend key`: adds `data` before the value; `NotStored` if the key is absent.
    async fn prepend(&self, key: &[u8], data: &[u8]) -> Result<StoreOutcome, KvError> {
        self.store(StoreVerb::Prepend, key, data, 0).await
    }

    /// `cas key 0 exptime unique`: stores only if the item's unique is still `unique`.
    async fn cas(
        &self,
        key: &[u8],
        unique: u64,
        data: &[u8],
        exptime: i64,
    ) -> Result<StoreOutcome, KvError> {
        validate_key(key)?;
        validate_data(data)?;
        let reply = sent!(
            self,
            "cas",
            Command::Cas {
                key: key.to_vec(),
                flags: 0,
                exptime,
                data: data.to_vec(),
                unique,
                noreply: false,
            },
            key
        );
        store_outcome("cas", key, reply)
    }

    /// `incr key delta`: the new value, or `None` if the key is missing.
    async fn incr(&self, key: &[u8], delta: u64) -> Result<Option<u64>, KvError> {
        // As `arith` does, one future fewer deep (this runs at every incr).
        delta!(self, ArithVerb::Incr, key, delta)
    }

    /// `decr key delta`: the new value (clamped at 0), or `None` if the key is missing.
    async fn decr(&self, key: &[u8], delta: u64) -> Result<Option<u64>, KvError> {
        delta!(self, ArithVerb::Decr, key, delta)
    }

    /// `incr` or `decr`.
    async fn arith(&self, verb: ArithVerb, key: &[u8], delta: u64) -> Result<Option<u64>, KvError> {
        delta!(self, verb, key, delta)
    }

    /// `delete key`: whether an item was deleted.
    async fn delete(&self, key: &[u8]) -> Result<bool, KvError> {
        validate_key(key)?;
        let verb = "delete";
        let reply = sent!(
            self,
            verb,
            Command::Delete {
                key: key.to_vec(),
                noreply: false,
            },
            key
        );
        match reply {
            Reply::Deleted => Ok(true),
            Reply::NotFound => Ok(false),
            other => Err(unexpected(verb, Some(key), "DELETED or NOT_FOUND", &other)),
        }
    }

    /// `touch key exptime`: whether the item exists (its expiry was changed).
    async fn touch(&self, key: &[u8], exptime: i64) -> Result<bool, KvError> {
        let command = Command::Touch {
            key: key.to_vec(),
            exptime,
            noreply: false,
        };
        let verb = command.verb();
        match keyed!(self, command, key) {
            Reply::Touched => Ok(true),
            Reply::NotFound => Ok(false),
            other => Err(unexpected(verb, Some(key), "TOUCHED or NOT_FOUND", &other)),
        }
    }

    /// `gat exptime key`: the data (its expiry changed), or `None` on a miss.
    async fn gat(&self, key: &[u8], exptime: i64) -> Result<Option<Vec<u8>>, KvError> {
        let command = Command::Gat {
            with_cas: false,
            exptime,
            keys: vec![key.to_vec()],
        };
        match single_value(command.verb(), key, keyed!(self, command, key))? {
            Some(v) => Ok(Some(v.data)),
            None => Ok(None),
        }
    }

    /// Sends one meta command ([`Command::Meta`]) and returns its reply; error replies
    /// are [`KvError::Server`], a reply that is not a meta one [`KvError::Protocol`].
    /// The typed meta methods below are built on it.
    async fn meta(&self, command: MetaCommand) -> Result<MetaReply, KvError> {
        let key = command.key.clone();
        let verb = command.verb.as_str();
        match call_keyed(self, Command::Meta(command), &key).await? {
            Reply::Meta(reply) => Ok(reply),
            other => Err(unexpected(verb, Some(&key), "a meta reply", &other)),
        }
    }

    /// `ma key N<ttl> J<initial> D<delta> v`: increments the counter under `key` by
    /// `delta` and returns its new value; a missing counter is created with the value
    /// `initial` (and the TTL `ttl`), and then `initial` is returned: as memcached does,
    /// the delta is not applied to a counter this call created.
    async fn incr_or_create(
        &self,
        key: &[u8],
        delta: u64,
        initial: u64,
        ttl: i64,
    ) -> Result<u64, KvError> {
        let command = MetaCommand::arith(
            key,
            vec![
                MetaFlag::Vivify(ttl),
                MetaFlag::Initial(initial),
                MetaFlag::Delta(delta),
                MetaFlag::ReturnValue,
            ],
        );
        let reply = self.meta(command).await?;
        let digits = match (&reply.status, &reply.value) {
            (MetaStatus::Va, Some(v)) => v,
            _ => return Err(unexpected_meta("ma", key, "VA and the number", &reply)),
        };
        crate::wire::cnum::safe_strtoull(digits)
            .ok_or_else(|| unexpected_meta("ma", key, "VA and the number", &reply))
    }

    /// `mg key v c N<lease_ttl>`: the value, or a lease on recomputing it (see
    /// [`Lease`]). The stampede-free read ("serve stale while one client recomputes"):
    ///
    /// ```text
    /// loop {
    ///     match kv.get_with_lease(key, 30).await? {
    ///         Lease::Hit(v) | Lease::Stale(v) => return Ok(v),
    ///         Lease::Win { cas, .. } => {
    ///             let v = compute().await;
    ///             kv.set_invalidate(key, &v, ttl, cas).await?;
    ///             return Ok(v);
    ///         }
    ///         Lease::Wait => kv.sleep_ms(50).await,
    ///     }
    /// }
    /// ```
    ///
    /// and a writer that changes the source marks the cached value stale with
    /// [`Kv::invalidate`] instead of deleting it, so that readers keep being served while
    /// one of them recomputes.
    async fn get_with_lease(&self, key: &[u8], lease_ttl: i64) -> Result<Lease, KvError> {
        let command = MetaCommand::get(
            key,
            vec![
                MetaFlag::ReturnValue,
                MetaFlag::ReturnCas,
                MetaFlag::Vivify(lease_ttl),
            ],
        );
        let reply = self.meta(command).await?;
        let value = match (reply.status, &reply.value) {
            (MetaStatus::Va, Some(v)) => v.clone(),
            // No placeholder could be made: compute, and store without a unique.
            (MetaStatus::En, _) => {
                return Ok(Lease::Win {
                    cas: 0,
                    stale: None,
                })
            }
            _ => return Err(unexpected_meta("mg", key, "VA or EN", &reply)),
        };
        let stale = reply.has(&MetaRet::Stale);
        Ok(if reply.has(&MetaRet::Win) {
            Lease::Win {
                cas: reply.cas().unwrap_or(0),
                stale: stale.then_some(value),
            }
        } else if stale {
            Lease::Stale(value)
        } else if reply.has(&MetaRet::AlreadyWon) && value.is_empty() {
            Lease::Wait
        } else {
            Lease::Hit(value)
        })
    }

    /// `ms key <len> T<ttl> C<cas> I`: stores `data` if the item's unique is still `cas`
    /// (`Stored`); if the item changed since (its unique is newer, e.g. it was
    /// invalidated again), the value is stored all the same but marked stale, so that
    /// the next reader recomputes it (also `Stored`); `Exists` if `cas` is newer than the
    /// item's, `NotFound` if the item is gone. With `cas` 0, a plain `ms key <len>
    /// T<ttl>` (a set).
    async fn set_invalidate(
        &self,
        key: &[u8],
        data: &[u8],
        ttl: i64,
        cas: u64,
    ) -> Result<StoreOutcome, KvError> {
        let mut flags = vec![MetaFlag::Ttl(ttl)];
        if cas != 0 {
            flags.extend([MetaFlag::CompareCas(cas), MetaFlag::Invalidate]);
        }
        let reply = self.meta(MetaCommand::set(key, data, flags)).await?;
        match reply.status {
            MetaStatus::Hd => Ok(StoreOutcome::Stored),
            MetaStatus::Ns => Ok(StoreOutcome::NotStored),
            MetaStatus::Ex => Ok(StoreOutcome::Exists),
            MetaStatus::Nf => Ok(StoreOutcome::NotFound),
            _ => Err(unexpected_meta("ms", key, "HD, NS, EX or NF", &reply)),
        }
    }

    /// `md key I T<stale_ttl>`: marks the item stale (readers of
    /// [`Kv::get_with_lease`] get it as [`Lease::Stale`], and the first of them the duty
    /// to recompute it) and gives it `stale_ttl` seconds to live (0: no expiry); whether
    /// there was an item.
    async fn invalidate(&self, key: &[u8], stale_ttl: i64) -> Result<bool, KvError> {
        let command =
            MetaCommand::delete(key, vec![MetaFlag::Invalidate, MetaFlag::Ttl(stale_ttl)]);
        let reply = self.meta(command).await?;
        match reply.status {
            MetaStatus::Hd => Ok(true),
            MetaStatus::Nf => Ok(false),
            _ => Err(unexpected_meta("md", key, "HD or NF", &reply)),
        }
    }

    /// `flush_all [delay]`.
    async fn flush_all(&self, delay: Option<i64>) -> Result<(), KvError> {
        let command = Command::FlushAll {
            delay,
            noreply: false,
        };
        let verb = command.verb();
        match call_keyed(self, command, b"").await? {
            Reply::Ok => Ok(()),
            other => Err(unexpected(verb, None, "OK", &other)),
        }
    }
}

/// [`Kv::call`] for the methods that know the key without copying it: validates, sends,
/// and turns an error reply into [`KvError::Server`] (the steps of `keyed!`, which the
/// typed methods write into their own futures).
async fn call_keyed<K: Kv + ?Sized>(
    kv: &K,
    command: Command,
    key: &[u8],
) -> Result<Reply, KvError> {
    Ok(keyed!(kv, command, key))
}

/// What [`call_keyed`] makes of a reply: an error reply is [`KvError::Server`].
#[inline]
pub(crate) fn checked_reply(verb: &str, key: &[u8], reply: Reply) -> Result<Reply, KvError> {
    if reply.is_error() {
        return Err(KvError::Server {
            command: describe(verb, Some(key).filter(|k| !k.is_empty())),
            reply,
        });
    }
    Ok(reply)
}

fn describe(verb: &str, key: Option<&[u8]>) -> String {
    match key {
        Some(key) => format!("{verb} {}", crate::command::show_bytes(key)),
        None => verb.to_string(),
    }
}

fn unexpected(verb: &str, key: Option<&[u8]>, expected: &'static str, found: &Reply) -> KvError {
    KvError::Protocol {
        command: describe(verb, key),
        expected,
        found: found.to_string(),
    }
}

fn unexpected_meta(verb: &str, key: &[u8], expected: &'static str, found: &MetaReply) -> KvError {
    KvError::Protocol {
        command: describe(verb, Some(key)),
        expected,
        found: found.to_string(),
    }
}

#[inline]
pub(crate) fn single_value(verb: &str, key: &[u8], reply: Reply) -> Result<Option<Value>, KvError> {
    match reply {
        Reply::Values(mut values) if values.len() <= 1 => Ok(values.pop()),
        other => Err(unexpected(
            verb,
            Some(key),
            "at most one VALUE then END",
            &other,
        )),
    }
}

/// A storage command with flags 0 (what the typed storage methods send).
#[inline]
fn store_command(verb: StoreVerb, key: &[u8], data: &[u8], exptime: i64) -> Command {
    Command::Store {
        verb,
        key: key.to_vec(),
        flags: 0,
        exptime,
        data: data.to_vec(),
        noreply: false,
    }
}

/// `incr`/`decr` as the typed methods send it.
#[inline]
fn arith_command(verb: ArithVerb, key: &[u8], delta: u64) -> Command {
    Command::Arith {
        verb,
        key: key.to_vec(),
        delta,
        noreply: false,
    }
}

/// What `incr`/`decr` answered: the new value, `None` if the key is missing.
#[inline]
fn arith_outcome(verb: &str, key: &[u8], reply: Reply) -> Result<Option<u64>, KvError> {
    match reply {
        Reply::Number(n) => Ok(Some(n)),
        Reply::NotFound => Ok(None),
        other => Err(unexpected(verb, Some(key), "a number or NOT_FOUND", &other)),
    }
}

#[inline]
pub(crate) fn store_outcome(verb: &str, key: &[u8], reply: Reply) -> Result<StoreOutcome, KvError> {
    match reply {
        Reply::Stored => Ok(StoreOutcome::Stored),
        Reply::NotStored => Ok(StoreOutcome::NotStored),
        Reply::Exists => Ok(StoreOutcome::Exists),
        Reply::NotFound => Ok(StoreOutcome::NotFound),
        other => Err(unexpected(
            verb,
            Some(key),
            "STORED, NOT_STORED, EXISTS or NOT_FOUND",
            &other,
        )),
    }
}

/// Runs a future that never waits on anything outside itself to completion (e.g. a
/// structure's operation against [`crate::store::memstore::MemStore`]'s synchronous handle).
///
/// Panics if the future returns `Pending` without having been woken; use it only for
/// futures whose every await completes at once.
// Inlined, the caller builds the future where it is polled: out of line it was copied in
// first (344 bytes for the message queue's `write`) and its state read back at once, a
// store-forwarding stall: a sixth of `kvsim bench mq`'s writer.
#[inline]
pub fn block_on_ready<F: Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A store that records what it is sent and answers what a miss or a store gets.
    #[derive(Default)]
    struct Recording {
        sent: RefCell<Vec<Command>>,
    }

    impl Kv for Recording {
        async fn execute(&self, command: Command) -> Result<Reply, KvError> {
            let reply = match &command {
                Command::Get { .. } | Command::Gat { .. } => Reply::Values(Vec::new()),
                Command::Arith { .. } | Command::Delete { .. } | Command::Touch { .. } => {
                    Reply::NotFound
                }
                _ => Reply::Stored,
            };
            self.sent.borrow_mut().push(command);
            Ok(reply)
        }
        fn now_ms(&self) -> u64 {
            0
        }
        async fn sleep_ms(&self, _ms: u64) {}
        fn random_u64(&self) -> u64 {
            0
        }
    }

    /// Each typed method checks its key and data before it builds its command: a bad one
    /// is refused with the error the command's own [`Command::validate`] gives, and
    /// nothing is sent; a good one is sent as that command.
    #[test]
    fn typed_methods_refuse_what_the_command_would_and_send_nothing() {
        let long = vec![b'k'; crate::command::KEY_MAX_LEN + 1];
        let big = vec![b'x'; crate::command::VALUE_MAX_LEN + 1];
        let keys: [&[u8]; 4] = [b"", b"bad key", &long, b"good"];
        for key in keys {
            for data in [&b"v"[..], &big] {
                let kv = Recording::default();
                let calls: Vec<(Result<(), KvError>, Command)> = vec![
                    (
                        block_on_ready(kv.get(key)).map(drop),
                        Command::Get {
                            with_cas: false,
                            keys: vec![key.to_vec()],
                        },
                    ),
                    (
                        block_on_ready(kv.gets(key)).map(drop),
                        Command::Get {
                            with_cas: true,
                            keys: vec![key.to_vec()],
                        },
                    ),
                    (
                        block_on_ready(kv.set(key, data, 5)).map(drop),
                        store_command(StoreVerb::Set, key, data, 5),
                    ),
                    (
                        block_on_ready(kv.add(key, data, 5)).map(drop),
                        store_command(StoreVerb::Add, key, data, 5),
                    ),
                    (
                        block_on_ready(kv.replace(key, data, 5)).map(drop),
                        store_command(StoreVerb::Replace, key, data, 5),
                    ),
                    (
                        block_on_ready(kv.append(key, data)).map(drop),
                        store_command(StoreVerb::Append, key, data, 0),
                    ),
                    (
                        block_on_ready(kv.cas(key, 9, data, 5)).map(drop),
                        Command::Cas {
                            key: key.to_vec(),
                            flags: 0,
                            exptime: 5,
                            data: data.to_vec(),
                            unique: 9,
                            noreply: false,
                        },
                    ),
                    (
                        block_on_ready(kv.incr(key, 2)).map(drop),
                        arith_command(ArithVerb::Incr, key, 2),
                    ),
                    (
                        block_on_ready(kv.decr(key, 2)).map(drop),
                        arith_command(ArithVerb::Decr, key, 2),
                    ),
                    (
                        block_on_ready(kv.delete(key)).map(drop),
                        Command::Delete {
                            key: key.to_vec(),
                            noreply: false,
                        },
                    ),
                ];
                let mut expected_sent = Vec::new();
                for (i, (got, command)) in calls.into_iter().enumerate() {
                    match command.validate() {
                        Err(e) => assert_eq!(
                            format!("{got:?}"),
                            format!("{:?}", Err::<(), _>(KvError::Invalid(e))),
                            "call {i} of key {key:?}"
                        ),
                        Ok(()) => {
                            assert!(got.is_ok(), "call {i} of key {key:?}: {got:?}");
                            expected_sent.push(command);
                        }
                    }
                }
                assert_eq!(*kv.sent.borrow(), expected_sent, "key {key:?}");
                if key == b"good" && data == b"v" {
                    assert_eq!(expected_sent.len(), 10);
                }
            }
        }
    }
}
