//! The event log's properties (time window, polling), judged on a history.

use super::{Op, Ret, Window};
use kvsim::{History, Outcome, Verdict, Violation};
use std::collections::BTreeSet;

/// Checks the time-window and polling properties of the module docs for a window of
/// `window_ms`.
pub fn check_window(window_ms: u64, history: &History<Op, Ret>) -> Verdict {
    let judge = Judge::new(window_ms, history);
    for (i, o) in history.ops.iter().enumerate() {
        let (Outcome::Ok(ret), Some(fr)) = (&o.outcome, o.ret_ms) else {
            continue;
        };
        let fc = o.call_ms;
        let found = match ret {
            Ret::Events(events) => judge.fetch("fetch()", fc, fr, events, None, &BTreeSet::new()),
            Ret::Range(w) => judge.fetch(
                "fetch(first, last)",
                fc,
                fr,
                &w.events,
                Some(w),
                &BTreeSet::new(),
            ),
            Ret::Polled(rounds) => {
                let starts = o.marks.iter().filter(|m| m.label == "poll");
                judge.poll(starts.map(|m| m.time_ms).collect(), fc, fr, rounds)
            }
            Ret::Put | Ret::Slept => None,
        };
        if let Some(reason) = found {
            let property = match ret {
                Ret::Polled(_) => "polling (event log)",
                _ => "time window (event log)",
            };
            return Verdict::Violation(Violation::new(property, reason, vec![i]));
        }
    }
    Verdict::Ok
}

/// A time in a reason: seconds since the run began.
fn at(ms: u64) -> String {
    format!("{:.3} s", ms as f64 / 1000.0)
}

/// One `put` of a history: id, call, return if it completed, and whether it may have
/// happened (completed or unknown).
struct Put {
    id: u32,
    call: u64,
    ret: Option<u64>,
    maybe: bool,
}

/// The properties' judge: the window and every `put` of the history.
struct Judge {
    window_ms: u64,
    puts: Vec<Put>,
}

impl Judge {
    fn new(window_ms: u64, history: &History<Op, Ret>) -> Judge {
        let puts = history
            .ops
            .iter()
            .filter_map(|o| {
                let Op::Put(id) = o.op else { return None };
                let (ret, maybe) = match o.outcome {
                    Outcome::Ok(_) => (o.ret_ms, true),
                    Outcome::Unknown => (None, true),
                    Outcome::Failed => (None, false),
                };
                Some(Put {
                    id,
                    call: o.call_ms,
                    ret,
                    maybe,
                })
            })
            .collect();
        Judge { window_ms, puts }
    }

    /// Whether the put completed at `pr` (called at `pc`) is still inside the window for
    /// a fetch returning at `fr` (with a second for `when()`'s granularity).
    fn inside_capacity(&self, pc: u64, fr: u64) -> bool {
        pc + self.window_ms > fr + 1000
    }

    /// What is wrong with a fetch (`what`, as the reason names it) called at `fc`,
    /// returning at `fr`, that returned `events` (of the window `window`, if it was asked
    /// one), `earlier` counting as returned already (a poll's earlier rounds).
    fn fetch(
        &self,
        what: &str,
        fc: u64,
        fr: u64,
        events: &[u32],
        window: Option<&Window>,
        earlier: &BTreeSet<u32>,
    ) -> Option<String> {
        let w_s = self.window_ms / 1000;
        // The window in true time, from the clock reading somewhere in [fc, fr]: it
        // begins at or after `fc - back` and by `fr - back`, ends at or after
        // `fc - back + span` and by `fr - back + span` (a second of slack each side).
        let bounds = window.map(|w| {
            let back = w.back as i64 * 1000;
            let span = w.span as i64 * 1000;
            (fc as i64 - back, fr as i64 - back, span)
        });
        let mut seen = BTreeSet::new();
        for &id in events {
            if !seen.insert(id) || earlier.contains(&id) {
                return Some(format!("{what} at {} returned event {id} twice", at(fc)));
            }
            let Some(p) = self.puts.iter().find(|p| p.id == id && p.maybe) else {
                return Some(format!(
                    "{what} at {} returned event {id}, which was never put",
                    at(fc)
                ));
            };
            if p.call > fr {
                return Some(format!(
                    "{what} at {} returned event {id}, put only at {}",
                    at(fc),
                    at(p.call)
                ));
            }
            // A window asked for may reach past the capacity (`fetch` corrects only one
            // too long): then older events are the caller's to have.
            // The event happened somewhere in its put's span (a put stalled before it
            // stamps the event stamps it late): too old only if the whole span is.
            let stamped_by = p.ret.unwrap_or(u64::MAX);
            if window.is_none() && stamped_by.saturating_add(self.window_ms + 1000) < fc {
                return Some(format!(
                    "{what} at {} returned event {id}, put at {} (returned at {}): older than \
                     the window of {w_s} s",
                    at(fc),
                    at(p.call),
                    at(stamped_by)
                ));
            }
            if let (Some((first_lo, _, _)), Some(pr)) = (bounds, p.ret) {
                if (pr as i64) + 2000 < first_lo {
                    return Some(format!(
                        "{what} at {} returned event {id}, put by {}: before the window it asked for",
                        at(fc),
                        at(pr)
                    ));
                }
            }
            if let Some((_, first_hi, span)) = bounds {
                if p.call as i64 - 2000 > first_hi + span {
                    return Some(format!(
                        "{what} at {} returned event {id}, put at {}: after the window it asked for",
                        at(fc),
                        at(p.call)
                    ));
                }
            }
        }
        for p in &self.puts {
            let Some(pr) = p.ret else { continue };
            let asked = match bounds {
                None => true,
                Some((first_lo, first_hi, span)) => {
                    p.call as i64 >= first_hi + 1000 && pr as i64 + 1000 <= first_lo + span
                }
            };
            if pr < fc
                && asked
                && self.inside_capacity(p.call, fr)
                && !seen.contains(&p.id)
                && !earlier.contains(&p.id)
            {
                let which = if window.is_some() {
                    "the window it asked for"
                } else {
                    "the window"
                };
                return Some(format!(
                    "{what} at {} missed event {}, put at {} (inside {which} of {w_s} s)",
                    at(fc),
                    p.id,
                    at(p.call)
                ));
            }
        }
        None
    }

    /// What is wrong with a poll called at `fc` and returning at `fr` whose rounds
    /// began at `starts` (its `poll` marks) and returned `rounds`. A round whose start
    /// was not marked (a history from elsewhere) is taken to span the whole poll, which
    /// only asks less of it.
    fn poll(&self, starts: Vec<u64>, fc: u64, fr: u64, rounds: &[Window]) -> Option<String> {
        let mut returned = BTreeSet::new();
        let marked = starts.len() == rounds.len();
        let start_of = |k: usize| if marked { starts[k] } else { fc };
        for (k, round) in rounds.iter().enumerate() {
            let start = start_of(k);
            let end = if marked && k + 1 < rounds.len() {
                starts[k + 1]
            } else {
                fr
            };
            let what = format!("round {} of the poll", k + 1);
            let found = self.fetch(&what, start, end, &round.events, Some(round), &returned);
            if found.is_some() {
                return found;
            }
            returned.extend(round.events.iter().copied());
        }
        let last = start_of(rounds.len().checked_sub(1)?);
        for p in &self.puts {
            let Some(pr) = p.ret else { continue };
            if pr < last && self.inside_capacity(p.call, fr) && !returned.contains(&p.id) {
                return Some(format!(
                    "the poll lost event {}: put at {}, it returned at {}, before the poll's \
                     round {} began at {}, and no round returned it",
                    p.id,
                    at(p.call),
                    at(pr),
                    rounds.len(),
                    at(last)
                ));
            }
        }
        None
    }
}
