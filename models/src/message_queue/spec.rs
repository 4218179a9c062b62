//! The log's specification and its checker.
//!
//! The workload's operations are writer *turns* (open, write a few messages, close),
//! reader *sessions* (make a reader, read until a read times out) and removals. A history
//! of them is correct when:
//! 1. **no phantom**: every message a reader returns was written, with the timestamp its
//!    write stored, and at or above the reader's `min_timestamp`;
//! 2. **exactly once**: no reader returns a message twice;
//! 3. **write order**: no reader returns `b` before `a` when `a` was written before `b`
//!    (same turn, or `a`'s turn completed before `b`'s began), and any two readers return
//!    their common messages in the same order;
//! 4. **monotone timestamps**: the timestamps a reader returns never decrease, and a turn
//!    that began after another completed stored no timestamp below the other's;
//! 5. **completeness**: a reader returns every message `m` that is in the log with a
//!    timestamp at or above its `min_timestamp`, if `m` precedes (in write order) a message
//!    the reader returned, or if `m`'s turn completed before the session began and the
//!    session ended by waiting in vain (a timeout) or by giving up (`not found`);
//! 6. **removal**: the only excuse for a missing message is a `remove_old_files` invoked
//!    before the session ended whose threshold is above the message's timestamp (removal
//!    may take only what is older than its threshold);
//! 7. **no reader stopped for good**: a session that ended with "not found" (Tkrzw's
//!    reader then says "not found" on every later read) must have returned every message
//!    of the log at or above its `min_timestamp` that no removal excuses, whenever it was
//!    written: it will never return one it has not.
//!
//! A message is *in the log* if its write returned, if a reader returned it, or if a later
//! write of the same turn is in the log. Writes whose outcome is unknown and that nobody
//! saw are not required.

use kvsim::{History, Operation, Outcome, Verdict, Violation};
use std::collections::BTreeMap;

/// One operation of the message-queue workload.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MqOp {
    /// A writer's turn: open the queue, write these `(timestamp, message)` pairs in order,
    /// close it.
    Turn {
        /// The writes.
        writes: Vec<(i64, String)>,
    },
    /// A reader's session: `make_reader(min_timestamp)`, then `read(timeout_ms)` until a
    /// read returns anything but a message, or `max` messages were read.
    Read {
        /// The reader's `min_timestamp`.
        min_timestamp: i64,
        /// Each read's timeout.
        timeout_ms: i64,
        /// The most messages to read.
        max: usize,
    },
    /// `remove_old_files(threshold, exclude_latest)`.
    Remove {
        /// Files whose records are all older than this may go.
        threshold: i64,
        /// Keep the newest file.
        exclude_latest: bool,
    },
}

/// What a reader session saw, read by read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A message.
    Message {
        /// Its stored timestamp.
        timestamp: i64,
        /// Its body.
        message: String,
    },
    /// A gap the reader reported (segments `from..to` were gone).
    Gap {
        /// First missing segment.
        from: u64,
        /// Where reading resumed.
        to: u64,
    },
}

/// How a reader session ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// A read timed out: the reader had caught up.
    Timeout,
    /// The readers were cancelled.
    Canceled,
    /// The reader gave up: a segment it needed was not found (published).
    NotFound(u64),
    /// It read as many messages as it was asked to.
    Limit,
}

/// What an operation of the workload returned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MqRet {
    /// The timestamps the turn's writes stored.
    Turn(Vec<i64>),
    /// A reader session's reads and how it ended.
    Read(Vec<Event>, End),
    /// The ids of the removed segments.
    Remove(Vec<u64>),
    /// The operation completed with an error of the queue (broken data, a second writer).
    Failed(String),
}

#[derive(Clone, Copy, Debug)]
struct Write {
    op: usize,
    pos: usize,
    /// The stored timestamp, if known (returned by the write or seen by a reader).
    ts: Option<i64>,
    in_log: bool,
}

type Op = Operation<MqOp, MqRet>;

/// A completed reader session: its index, `min_timestamp`, messages and end.
type Session<'h> = (usize, i64, Vec<(i64, &'h str)>, &'h End);

fn violation(reason: String, ops: Vec<usize>) -> Verdict {
    Verdict::Violation(Violation::new("message log", reason, ops))
}

fn who(op: &Op) -> String {
    format!("C{}", op.client)
}

/// Checks a history of the message-queue workload against the log's specification.
pub fn check_log(history: &History<MqOp, MqRet>) -> Verdict {
    match judge(&history.ops) {
        Ok(()) => Verdict::Ok,
        Err(violation) => violation,
    }
}

/// The properties in the order they are checked; the first one broken is the verdict.
fn judge(ops: &[Op]) -> Result<(), Verdict> {
    let sessions = sessions(ops);
    failed_readers(ops)?;
    let mut log = Log {
        ops,
        writes: writes(ops),
    };
    log.learn_from(&sessions)?;
    log.close_turns();
    turn_timestamps(ops)?;
    for session in &sessions {
        let (seen, returned) = log.order(session)?;
        log.complete(session, &seen, &returned)?;
    }
    agreement(ops, &sessions)
}

/// Every write, by message, with what its turn returned.
fn writes(ops: &[Op]) -> BTreeMap<&str, Write> {
    let mut writes: BTreeMap<&str, Write> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        if let MqOp::Turn { writes: w } = &op.op {
            let stored = match &op.outcome {
                Outcome::Ok(MqRet::Turn(s)) => Some(s),
                _ => None,
            };
            for (pos, (_, msg)) in w.iter().enumerate() {
                let ts = stored.and_then(|s| s.get(pos).copied());
                writes.entry(msg.as_str()).or_insert(Write {
                    op: i,
                    pos,
                    ts,
                    in_log: ts.is_some(),
                });
            }
        }
    }
    writes
}

/// The reader sessions that completed.
fn sessions(ops: &[Op]) -> Vec<Session<'_>> {
    ops.iter()
        .enumerate()
        .filter_map(|(i, op)| match (&op.op, &op.outcome) {
            (MqOp::Read { min_timestamp, .. }, Outcome::Ok(MqRet::Read(events, end))) => {
                let msgs = events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Message { timestamp, message } => {
                            Some((*timestamp, message.as_str()))
                        }
                        Event::Gap { .. } => None,
                    })
                    .collect();
                Some((i, *min_timestamp, msgs, end))
            }
            _ => None,
        })
        .collect()
}

/// A reader that failed with an error of the queue.
fn failed_readers(ops: &[Op]) -> Result<(), Verdict> {
    for (i, op) in ops.iter().enumerate() {
        if let (MqOp::Read { .. }, Outcome::Ok(MqRet::Failed(why))) = (&op.op, &op.outcome) {
            return Err(violation(
                format!("reader {} failed: {why}", who(op)),
                vec![i],
            ));
        }
    }
    Ok(())
}

/// 4. Turns store non-decreasing timestamps.
fn turn_timestamps(ops: &[Op]) -> Result<(), Verdict> {
    let turns: Vec<(usize, i64, i64)> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| match &op.outcome {
            Outcome::Ok(MqRet::Turn(s)) => Some((i, *s.iter().min()?, *s.iter().max()?)),
            _ => None,
        })
        .collect();
    for &(a, _, a_max) in &turns {
        for &(b, b_min, _) in &turns {
            if ops[a].precedes(&ops[b]) && b_min < a_max {
                return Err(violation(
                    format!(
                        "timestamps decrease in storage: {}'s turn stored {a_max}, and {}'s later turn stored {b_min}",
                        who(&ops[a]),
                        who(&ops[b])
                    ),
                    vec![b, a],
                ));
            }
        }
    }
    Ok(())
}

/// 3. Readers agree on the order of their common messages.
fn agreement(ops: &[Op], sessions: &[Session<'_>]) -> Result<(), Verdict> {
    for (i, (s1, _, m1, _)) in sessions.iter().enumerate() {
        for (s2, _, m2, _) in &sessions[i + 1..] {
            let pos2: BTreeMap<&str, usize> =
                m2.iter().enumerate().map(|(k, (_, m))| (*m, k)).collect();
            let mut prev: Option<(&str, usize)> = None;
            for (_, m) in m1 {
                if let Some(&p) = pos2.get(m) {
                    if let Some((pm, pp)) = prev {
                        if p < pp {
                            return Err(violation(
                                format!(
                                    "readers {} and {} disagree on the order of {pm:?} and {m:?}",
                                    who(&ops[*s1]),
                                    who(&ops[*s2])
                                ),
                                vec![*s1, *s2],
                            ));
                        }
                    }
                    prev = Some((m, p));
                }
            }
        }
    }
    Ok(())
}

/// The history's writes, as the checks learn about them.
struct Log<'h> {
    ops: &'h [Op],
    writes: BTreeMap<&'h str, Write>,
}

impl<'h> Log<'h> {
    /// `a` was written before `b`: earlier in the same turn, or in a turn that completed
    /// before `b`'s began.
    fn before(&self, a: &Write, b: &Write) -> bool {
        (a.op == b.op && a.pos < b.pos)
            || (a.op != b.op && self.ops[a.op].precedes(&self.ops[b.op]))
    }

    /// 1. No phantom; learns timestamps and membership from what readers saw.
    fn learn_from(&mut self, sessions: &[Session<'h>]) -> Result<(), Verdict> {
        for (s, min, msgs, _) in sessions {
            let reader = who(&self.ops[*s]);
            for &(ts, msg) in msgs {
                let Some(w) = self.writes.get_mut(msg) else {
                    return Err(violation(
                        format!("reader {reader} returned {msg:?}, which no writer wrote"),
                        vec![*s],
                    ));
                };
                if let Some(stored) = w.ts {
                    if stored != ts {
                        return Err(violation(
                            format!(
                                "reader {reader} returned {msg:?} with timestamp {ts}, but its write stored {stored}"
                            ),
                            vec![*s, w.op],
                        ));
                    }
                }
                if ts < *min {
                    return Err(violation(
                        format!(
                            "reader {reader} with min_timestamp {min} returned {msg:?} with timestamp {ts}"
                        ),
                        vec![*s, w.op],
                    ));
                }
                w.ts = Some(ts);
                w.in_log = true;
            }
        }
        Ok(())
    }

    /// A write before one in the log (same turn) is in the log too.
    fn close_turns(&mut self) {
        let mut last_in_log: BTreeMap<usize, usize> = BTreeMap::new();
        for w in self.writes.values().filter(|w| w.in_log) {
            let e = last_in_log.entry(w.op).or_insert(w.pos);
            *e = (*e).max(w.pos);
        }
        for w in self.writes.values_mut() {
            if last_in_log.get(&w.op).is_some_and(|&p| w.pos <= p) {
                w.in_log = true;
            }
        }
    }

    /// 2, 3 and 4 within one session: its messages, each once, in write order, with
    /// timestamps that never decrease. Gives where each message was returned, and the
    /// returned messages' writes in the order returned.
    #[allow(clippy::type_complexity)] // the two views `complete` reads
    fn order(
        &self,
        (s, _, msgs, _): &Session<'h>,
    ) -> Result<(BTreeMap<&'h str, usize>, Vec<(&'h str, Write)>), Verdict> {
        let session = &self.ops[*s];
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        // The writes of the messages returned so far, in order: looked up once each (the
        // profile showed the write-order test's two map lookups per pair of messages).
        let mut returned: Vec<(&str, Write)> = Vec::with_capacity(msgs.len());
        for (k, &(ts, msg)) in msgs.iter().enumerate() {
            // 2. Exactly once.
            if let Some(first) = seen.insert(msg, k) {
                return Err(violation(
                    format!(
                        "reader {} returned {msg:?} twice (reads #{} and #{})",
                        who(session),
                        first + 1,
                        k + 1
                    ),
                    vec![*s],
                ));
            }
            if k > 0 {
                let (pts, pmsg) = msgs[k - 1];
                // 4. Monotone timestamps.
                if ts < pts {
                    return Err(violation(
                        format!(
                            "timestamps decrease in storage: reader {} returned {pmsg:?} at {pts} and then {msg:?} at {ts}",
                            who(session)
                        ),
                        vec![*s],
                    ));
                }
            }
            // 3. Write order.
            let w = self.writes[msg];
            for &(earlier, e) in &returned {
                if self.before(&w, &e) {
                    return Err(violation(
                        format!(
                            "reader {} returned {earlier:?} before {msg:?}, but {msg:?} was written first",
                            who(session)
                        ),
                        vec![*s, w.op, e.op],
                    ));
                }
            }
            returned.push((msg, w));
        }
        Ok((seen, returned))
    }

    /// " (C4's removal took segments 1, 2)": what the removal with threshold `t` took,
    /// where it returned.
    fn removed_by(&self, t: i64) -> String {
        self.ops
            .iter()
            .find_map(|op| match (&op.op, &op.outcome) {
                (MqOp::Remove { threshold, .. }, Outcome::Ok(MqRet::Remove(ids)))
                    if *threshold == t && !ids.is_empty() =>
                {
                    let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
                    let noun = if ids.len() == 1 {
                        "segment"
                    } else {
                        "segments"
                    };
                    Some(format!(
                        " ({}'s removal took {noun} {})",
                        who(op),
                        ids.join(", ")
                    ))
                }
                _ => None,
            })
            .unwrap_or_default()
    }

    /// 5, 6 and 7. Completeness, with removal as the only excuse; `seen` holds the
    /// messages the session returned, `returned` their writes in the order returned.
    fn complete(
        &self,
        (s, min, _, end): &Session<'h>,
        seen: &BTreeMap<&str, usize>,
        returned: &[(&'h str, Write)],
    ) -> Result<(), Verdict> {
        let session = &self.ops[*s];
        let excuse = self
            .ops
            .iter()
            .filter_map(|op| match op.op {
                MqOp::Remove { threshold, .. } if session.ret.is_some_and(|r| op.call < r) => {
                    Some(threshold)
                }
                _ => None,
            })
            .max();
        let caught_up = matches!(end, End::Timeout | End::NotFound(_));
        for (msg, w) in &self.writes {
            let Some(ts) = w.ts else { continue };
            if !w.in_log || ts < *min || seen.contains_key(msg) {
                continue;
            }
            if excuse.is_some_and(|t| ts < t) {
                continue;
            }
            let later_seen = returned
                .iter()
                .find(|(_, e)| self.before(w, e))
                .map(|(m, _)| *m);
            let why = if let Some(later) = later_seen {
                format!("but returned {later:?}, written after it")
            } else if caught_up && self.ops[w.op].precedes(session) {
                match end {
                    End::NotFound(seg) => format!(
                        "and gave up with 'not found' for segment {seg}, though the write had completed before the reader started"
                    ),
                    _ => "and timed out waiting, though the write had completed before the reader started".to_string(),
                }
            } else if let End::NotFound(seg) = end {
                // 7. A reader is never stopped for good: Tkrzw's reader says "not found"
                // on every read after, so it never returns what follows.
                format!(
                    "and never will: it stopped for good with 'not found' for segment {seg} (every later read says the same)"
                )
            } else {
                continue;
            };
            let excuse = match excuse {
                Some(t) => format!(
                    "the largest removal threshold before the reader ended is {t}{}",
                    self.removed_by(t)
                ),
                None => "no removal ran before the reader ended".to_string(),
            };
            return Err(violation(
                format!(
                    "reader {} (min_timestamp {min}) never returned {msg:?} (timestamp {ts}) {why}; {excuse}",
                    who(session)
                ),
                vec![*s, w.op],
            ));
        }
        Ok(())
    }
}
