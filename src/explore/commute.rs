//! Which steps of an explored world commute: the independence relation behind the
//! depth-first search's sleep sets (see `dfs`), judged from what each step was seen to
//! do.
//!
//! A sleep set (Godefroid's partial-order reduction) keeps, with a state, the steps
//! already explored from an ancestor that commute with every step taken since: taking
//! one of them here would reach a state reached the other way round as well, so it is
//! not taken. The search still visits every reachable state (only transitions are left
//! out), so every property of a state is checked on the same states; it generates fewer
//! repeats.
//!
//! Two steps commute at a state when both orders reach the same state *as the search
//! identifies states* (`canon`), and neither disables the other. This module decides it
//! without taking either order, from each step's [`Effect`]: what the step was seen to
//! touch when it was taken from the state (or from an ancestor, for a step asleep: the
//! steps taken since touched nothing it reads, so it would do the same here). The rules,
//! each conservative (a pair they reject is explored as before):
//! - Only client steps of two different clients: faults never commute, nor does a step
//!   that halts the world or whose path is cut at the step bound (it disables the other).
//! - The history: at most one of the two records events, or both record exactly one
//!   invocation (a run of adjacent invocations is kept sorted by client, so either order
//!   gives one history; not when random numbers go by operation start, which numbers the
//!   two starts by their order) or exactly one return (likewise). Marks are ordered.
//! - The stores: different servers, or keys disjoint, or both only read their keys: a
//!   plain `get`/`gets`, or a command that failed for its key's item or its absence
//!   (`NOT_STORED`, `EXISTS`, `NOT_FOUND`, and meta's `NS`, `EX`, `NF`), which changes
//!   nothing a time-free store's identity holds. A command without a key, or with
//!   more than two, conflicts with every command on its server. Only in a time-free search
//!   without a noisy neighbour: every store is then [time-free](crate::store::Store::time_free)
//!   (no memory limit, no expiry, no flush), and its identity is its items, uniques
//!   renamed: a command's reply and effect depend on its keys' items alone.
//! - Time: a delivered command moves true time by `step_ms`. When either step does, no
//!   late request may be on its way and no server down (what time brings would land
//!   between the two steps in one order only); a step whose client is left waiting for a
//!   time (a sleep, a timeout) or with since when it is runnable (the fairness rule's
//!   clock) must not come before the other's time move in one order only: both record
//!   times relative to when they happened. The clock of a client runnable since earlier
//!   must leave room for both moves (nobody may become starved between the two, which
//!   would disable the other step); a state with a starved client commutes nothing.
//!
//! What it assumes beyond `canon`'s assumptions: a client's step depends only on its own
//! state and the replies to its commands (the explorer's replay already relies on it), and
//! a key's 32-bit hash (two keys with one hash are taken as the same key: only less
//! commutes).

use super::bridge::{Bridge, NEVER_STARVED};
use super::state::{Phase, State};
use super::Explorable;
use crate::command::{Command, MetaStatus, Reply};
use crate::sim::{Sink, Tail};
use std::hash::Hasher;

/// Most clients a search reduces with sleep sets (a sleep set is kept beside a
/// fingerprint as one bit per client).
pub(crate) const MAX_CLIENTS: usize = 8;

/// What a client's step was seen to do from the state it was taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Effect {
    client: u8,
    /// [`TIME`], [`DEADLINE`], [`READY`].
    flags: u8,
    events: Events,
    access: Access,
    shard: u16,
    /// The keys of the command applied (32-bit hashes; `access` says how many count).
    keys: [u32; 2],
}

/// The step moved true time.
const TIME: u8 = 1;
/// The step left its client waiting for a time (asleep, or timing out).
const DEADLINE: u8 = 2;
/// The step left its client with a time since when it is runnable (the fairness rule's).
const READY: u8 = 4;

/// What a step recorded in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Events {
    None,
    /// Exactly one invocation.
    Call,
    /// Exactly one return.
    Return,
    /// Marks, or more than one event.
    Other,
}

/// How a step's command used its server's store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    None,
    /// Plain retrieval of one or two keys.
    Read(u8),
    /// Anything else on one or two keys.
    Write(u8),
    /// A command without a key or with more than two: the whole store.
    All,
}

impl Effect {
    /// The client whose step this is.
    pub(crate) fn client(&self) -> usize {
        self.client as usize
    }

    fn keys(&self) -> &[u32] {
        match self.access {
            Access::Read(n) | Access::Write(n) => &self.keys[..n as usize],
            Access::None | Access::All => &[],
        }
    }
}

/// What the state a pair of steps is judged at allows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Allowance {
    /// Whether a step may move time (no late request on its way, no server down).
    time_moves: bool,
    /// How far true time may move with no runnable client becoming starved.
    margin: u64,
}

/// What a step applied to the stores, as the world tells it ([`Sink::applied`]).
#[derive(Default)]
pub(crate) struct Touched {
    applied: u32,
    shard: usize,
    access: Option<Access>,
    keys: [u32; 2],
}

impl Sink for Touched {
    fn applied(&mut self, shard: usize, command: &Command, reply: &Reply) {
        self.applied += 1;
        self.shard = shard;
        let mut n = 0u8;
        let mut key = |k: &[u8]| {
            if (n as usize) < self.keys.len() {
                let mut h = rustc_hash::FxHasher::default();
                h.write(k);
                self.keys[n as usize] = h.finish() as u32;
            }
            n = n.saturating_add(1);
        };
        // A command that failed for its key's item (or its absence) changed nothing: it
        // read the item.
        let failed = match reply {
            Reply::NotStored | Reply::Exists | Reply::NotFound => true,
            Reply::Meta(m) => {
                matches!(m.status, MetaStatus::Nf | MetaStatus::Ns | MetaStatus::Ex)
            }
            _ => false,
        };
        let read = match command {
            Command::Get { keys, .. } => {
                keys.iter().for_each(|k| key(k));
                true
            }
            other => {
                if let Some(k) = other.first_key() {
                    key(k);
                }
                failed
            }
        };
        let key_less = matches!(command, Command::FlushAll { .. }) || n == 0 || n > 2;
        self.access = Some(match () {
            _ if key_less => Access::All,
            _ if read => Access::Read(n),
            _ => Access::Write(n),
        });
    }
}

impl<M: Explorable> Bridge<M> {
    /// Whether this search can reduce with sleep sets at all: a time-free search (see the
    /// module's text), no noisy neighbour, at most [`MAX_CLIENTS`] clients.
    pub(crate) fn can_reduce(&self) -> bool {
        self.time_free() && self.neighbour.is_empty() && self.cfg.clients <= MAX_CLIENTS
    }

    /// The effect of the client step `client` took from a state whose time was `now` and
    /// whose history had `seq` events, reaching `next` and applying `touched`; `None` for
    /// a step that commutes with nothing.
    pub(crate) fn effect(
        &self,
        client: usize,
        (now, seq): (u64, u64),
        next: &State<M::Op, M::Ret>,
        touched: &Touched,
    ) -> Option<Effect> {
        // A halt, or a cut at the step bound (the other clients' steps are as in the
        // state taken from, which was not cut), disables every other step.
        let cut = next.clients[client].rec.polls.len() as u32 > self.max_op_steps();
        if next.halt.is_some() || cut || touched.applied > 1 {
            return None;
        }
        let events = match (next.seq - seq, next.tail) {
            (0, _) => Events::None,
            (1, Tail::Calls) => Events::Call,
            (1, Tail::Returns) => Events::Return,
            _ => Events::Other,
        };
        let cl = &next.clients[client];
        let mut flags = 0;
        if next.now != now {
            flags |= TIME;
        }
        if matches!(cl.phase, Phase::Sleeping(_) | Phase::TimingOut(_)) {
            flags |= DEADLINE;
        }
        if cl.ready_since.is_some_and(|t| t != NEVER_STARVED) {
            flags |= READY;
        }
        Some(Effect {
            client: client as u8,
            flags,
            events,
            access: touched.access.unwrap_or(Access::None),
            shard: touched.shard as u16,
            keys: touched.keys,
        })
    }

    /// What state `s` allows pairs of steps ([`Allowance`]); `None` when nothing commutes
    /// there (a client is starved: only its step is enabled).
    pub(crate) fn context(&self, s: &State<M::Op, M::Ret>) -> Option<Allowance> {
        let mut margin = u64::MAX;
        for (c, cl) in s.clients.iter().enumerate() {
            match cl.ready_since {
                Some(t) if t != NEVER_STARVED && s.runnable(c) => {
                    let end = t.saturating_add(self.cfg.starve_ms);
                    if s.now > end {
                        return None;
                    }
                    margin = margin.min(end - s.now);
                }
                _ => {}
            }
        }
        Some(Allowance {
            time_moves: s.in_flight.is_empty() && s.servers.iter().all(|v| v.down_until.is_none()),
            margin,
        })
    }

    /// Whether steps `a` and `b` commute at a state that allows `at` (see the module's
    /// text).
    pub(crate) fn commute(&self, at: &Allowance, a: &Effect, b: &Effect) -> bool {
        self.why_not(at, a, b).is_none()
    }

    /// Why steps `a` and `b` do not commute at a state that allows `at` (`None`: they do).
    pub(crate) fn why_not(&self, at: &Allowance, a: &Effect, b: &Effect) -> Option<&'static str> {
        if a.client == b.client {
            return Some("one client");
        }
        let events = match (a.events, b.events) {
            (Events::None, _) | (_, Events::None) | (Events::Return, Events::Return) => true,
            (Events::Call, Events::Call) => !self.cfg.rng_by_start,
            _ => false,
        };
        if !events {
            return Some("history");
        }
        let stores = match (a.access, b.access) {
            (Access::None, _) | (_, Access::None) => true,
            _ if a.shard != b.shard => true,
            (Access::All, _) | (_, Access::All) => false,
            (Access::Read(_), Access::Read(_)) => true,
            _ => a.keys().iter().all(|k| !b.keys().contains(k)),
        };
        if !stores {
            return Some("store");
        }
        let moves = u64::from(a.flags & TIME != 0) + u64::from(b.flags & TIME != 0);
        if moves == 0 {
            return None;
        }
        if !at.time_moves {
            return Some("time moves");
        }
        let deadline = |x: &Effect, y: &Effect| y.flags & TIME != 0 && x.flags & DEADLINE != 0;
        if deadline(a, b) || deadline(b, a) {
            return Some("deadline");
        }
        let ready = |x: &Effect, y: &Effect| y.flags & TIME != 0 && x.flags & READY != 0;
        if ready(a, b) || ready(b, a) {
            return Some("ready");
        }
        if moves.saturating_mul(self.cfg.step_ms) > at.margin {
            return Some("margin");
        }
        None
    }
}

#[cfg(test)]
impl<M: Explorable> Bridge<M> {
    /// Every pair of steps of two clients enabled at `s`, each with why it does not
    /// commute (`None`: the relation says it does) and whether both orders reach one
    /// fingerprint: the relation checked against the states themselves (a pair it
    /// accepts must reach one state both ways).
    pub(crate) fn audit(&self, s: &State<M::Op, M::Ret>) -> Vec<(Option<&'static str>, bool)> {
        use stateright::Model;
        let mut actions = Vec::new();
        self.actions(s, &mut actions);
        let Some(at) = self.context(s) else {
            return Vec::new();
        };
        let steps: Vec<_> = actions
            .iter()
            .map(|a| super::dfs::Successors::step(self, s, a.clone()))
            .collect();
        let mut out = Vec::new();
        for i in 0..actions.len() {
            for j in i + 1..actions.len() {
                let (Some(si), Some(ei)) = (&steps[i].0, &steps[i].1) else {
                    continue;
                };
                let (Some(sj), Some(ej)) = (&steps[j].0, &steps[j].1) else {
                    continue;
                };
                if ei.client == ej.client {
                    continue;
                }
                let ij = self.next_state(si, actions[j].clone());
                let ji = self.next_state(sj, actions[i].clone());
                let same = match (ij, ji) {
                    (Some(x), Some(y)) => {
                        super::dfs::fingerprint(&x) == super::dfs::fingerprint(&y)
                    }
                    _ => false,
                };
                out.push((self.why_not(&at, ei, ej), same));
            }
        }
        out
    }
}
