//! The state space as kvsim's Explorer page browses it (`kvsim explore TARGET --serve`):
//! a state is named by its path from the initial state (the index of the action taken at
//! each step, `0.2.1`), and shown with its description, the checker's word on it and its
//! successors, each action labelled with what it does in the words of `kvsim check`'s
//! report (`C0: gets fifohead → "n1" #2`, `fault: evict fifohead`).
//!
//! The states are the search's own: the same [`Bridge`] in the same [`Scope`] (symmetry,
//! time shift, fairness), so a path here is a path the search took or skipped as a
//! duplicate, and a counterexample's replay choices name a path ([`Browse::follow`]).

use super::bridge::{Action, Bridge};
use super::explorer::Explorer;
use super::guard::Guard;
use super::scope::Scope;
use super::state::State;
use super::Explorable;
use crate::sim::{Event, Fault, Sink};
use serde::Serialize;
use std::sync::Arc;

/// Most steps a path may take (longer paths are refused: 400).
pub const MAX_PATH_STEPS: usize = 4096;
/// Most successors a view lists (the rest are counted in [`StateView::more_successors`]).
pub const MAX_SUCCESSORS: usize = 256;
/// Most lines of a state's description a view holds.
pub const MAX_LINES: usize = 400;
/// Most characters of one label or line (longer ones end in `…`).
pub const MAX_LINE_CHARS: usize = 600;

/// One state as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateView {
    /// The path from the initial state: the index of the action taken at each step.
    pub path: Vec<usize>,
    /// The label of each step of the path.
    pub steps: Vec<String>,
    /// The state: time, each server's live items, each client's operation and position,
    /// the history so far (one line each).
    pub state: Vec<String>,
    /// Each client inside an operation: the request it waits on.
    pub pending: Vec<String>,
    /// What the checker says of this state (`violation: …`, `ok: …`, `cut: …`, `not
    /// judged yet: …`).
    pub checker: String,
    /// The actions from this state, in the search's order.
    pub successors: Vec<Successor>,
    /// Successors past [`MAX_SUCCESSORS`], not listed.
    pub more_successors: usize,
}

/// An action from a state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Successor {
    /// Its index: the path to the state it leads to is the state's path and this.
    pub step: usize,
    /// What it does, in the words of `kvsim check`'s report.
    pub label: String,
    /// Whether it is a fault.
    pub fault: bool,
}

/// A state space to browse, its model's types erased.
pub trait Browse: Send + Sync {
    /// The state at the end of `path` (action indices from the initial state); an error
    /// naming the first step that is no action of its state.
    fn view(&self, path: &[usize]) -> Result<StateView, String>;

    /// The path a run's replay choices take (client `i` < clients, faults after them, as
    /// [`crate::harness::records::RunReport::choices`]), with its workload's choice values
    /// (`SimConfig::workload`); an error naming the first choice that is no action.
    fn follow(
        &self,
        choices: &[u32],
        workload: Option<&[Vec<Vec<u64>>]>,
    ) -> Result<Vec<usize>, String>;
}

/// The state space of `model` in `scope` as the search sees it (keep `scope.time_shift`
/// as the search ended with: off when a time-free search depended on the time).
pub fn browser<M: Explorable>(model: Arc<M>, scope: &Scope) -> Result<Arc<dyn Browse>, String> {
    let guard = Arc::new(Guard::new(usize::MAX, u64::MAX));
    let bridge = Bridge::new(model, scope, guard)?;
    Ok(Arc::new(Browser {
        explorer: Explorer::new(bridge),
    }))
}

/// Parses a path as the API takes it: action indices separated by dots (`0.2.1`); empty
/// for the initial state.
pub fn parse_path(text: &str) -> Result<Vec<usize>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() > MAX_PATH_STEPS {
        return Err(format!(
            "bad path: expected at most {MAX_PATH_STEPS} steps, found {}",
            parts.len()
        ));
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.is_empty() || p.len() > 6 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "bad path step {i}: expected a step number (0 to 999999, steps separated \
                     by dots, e.g. 0.2.1), found {:?}",
                    clip(p, 40)
                ));
            }
            p.parse::<usize>()
                .map_err(|e| format!("bad path step {i}: expected a step number, found {p:?}: {e}"))
        })
        .collect()
}

/// `text`, at most `max` characters (then ending in `…`).
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The events one action tells (the simulator's trace events).
#[derive(Default)]
struct Told(Vec<(Option<usize>, Event)>);

impl Sink for Told {
    fn on(&self) -> bool {
        true
    }

    fn event(&mut self, _now: u64, client: Option<usize>, event: Event) {
        self.0.push((client, event));
    }

    fn evicted(&mut self, _now: u64, shard: usize, items: Vec<crate::store::geometry::Eviction>) {
        for e in items {
            let fault = Fault::LruEvict {
                shard,
                key: e.key,
                class: e.class.id,
                chunk: e.class.chunk,
            };
            self.0.push((None, Event::Fault(fault)));
        }
    }
}

/// The label of an action from what it told: who did what, in the report's words, runs of
/// one actor's events joined with ` · ` (`C0: gets k → "v" #2 · ◀ Dequeued(None)`).
fn label_of(told: &[(Option<usize>, Event)]) -> Option<String> {
    let mut parts: Vec<(String, Vec<String>)> = Vec::new();
    for (client, event) in told {
        let who = match (client, event) {
            (_, Event::Fault(_)) => "fault".to_string(),
            (Some(c), _) => format!("C{c}"),
            (None, _) => "server".to_string(),
        };
        let what = crate::report::describe(event);
        match parts.last_mut() {
            Some((w, list)) if *w == who => list.push(what),
            _ => parts.push((who, vec![what])),
        }
    }
    if parts.is_empty() {
        return None;
    }
    let text = parts
        .iter()
        .map(|(who, list)| format!("{who}: {}", list.join(" · ")))
        .collect::<Vec<_>>()
        .join(" · ");
    Some(clip(&text, MAX_LINE_CHARS))
}

struct Browser<M: Explorable> {
    explorer: Explorer<M>,
}

type St<M> = State<<M as crate::model::Model>::Op, <M as crate::model::Model>::Ret>;

impl<M: Explorable> Browser<M> {
    fn bridge(&self) -> &Bridge<M> {
        &self.explorer.bridge
    }

    fn init(&self) -> St<M> {
        use stateright::Model as _;
        self.bridge().init_states().remove(0)
    }

    fn actions(&self, s: &St<M>) -> Vec<Action> {
        use stateright::Model as _;
        let mut actions = Vec::new();
        self.bridge().actions(s, &mut actions);
        actions
    }

    /// The state `action` leads to and its label.
    fn take(&self, s: &St<M>, action: &Action) -> (St<M>, String) {
        let mut told = Told::default();
        let next = self.bridge().traced_next(s, action.clone(), &mut told);
        let label = label_of(&told.0).unwrap_or_else(|| {
            let what = self.explorer.label(s, action);
            match action {
                Action::Fault(_) => format!("fault: {what}"),
                _ => what,
            }
        });
        (next, label)
    }
}

impl<M: Explorable> Browse for Browser<M> {
    fn view(&self, path: &[usize]) -> Result<StateView, String> {
        if path.len() > MAX_PATH_STEPS {
            return Err(format!(
                "bad path: expected at most {MAX_PATH_STEPS} steps, found {}",
                path.len()
            ));
        }
        let mut s = self.init();
        let mut steps = Vec::with_capacity(path.len());
        for (i, &k) in path.iter().enumerate() {
            let actions = self.actions(&s);
            let Some(action) = actions.get(k) else {
                return Err(format!(
                    "bad path step {i}: expected one of the {} actions of the state before it \
                     (0 to {}), found {k}",
                    actions.len(),
                    actions.len() as isize - 1
                ));
            };
            let (next, label) = self.take(&s, action);
            steps.push(label);
            s = next;
        }
        let actions = self.actions(&s);
        let successors = actions
            .iter()
            .take(MAX_SUCCESSORS)
            .enumerate()
            .map(|(step, a)| Successor {
                step,
                label: self.take(&s, a).1,
                fault: matches!(a, Action::Fault(_)),
            })
            .collect();
        let shown = self.explorer.show(s);
        let described = format!("{:?}", shown.state);
        let mut state: Vec<String> = described
            .lines()
            .take(MAX_LINES)
            .map(|l| clip(l, MAX_LINE_CHARS))
            .collect();
        let lines = described.lines().count();
        if lines > MAX_LINES {
            state.push(format!("… {} more lines", lines - MAX_LINES));
        }
        Ok(StateView {
            path: path.to_vec(),
            steps,
            state,
            pending: shown
                .pending
                .iter()
                .map(|p| clip(p, MAX_LINE_CHARS))
                .collect(),
            checker: clip(&shown.checker, MAX_LINE_CHARS * 4),
            successors,
            more_successors: actions.len().saturating_sub(MAX_SUCCESSORS),
        })
    }

    fn follow(
        &self,
        choices: &[u32],
        workload: Option<&[Vec<Vec<u64>>]>,
    ) -> Result<Vec<usize>, String> {
        let n = self.bridge().cfg.clients;
        let mut s = self.init();
        let mut path = Vec::with_capacity(choices.len());
        for (i, &choice) in choices.iter().enumerate() {
            let actions = self.actions(&s);
            let want = if (choice as usize) < n {
                let c = choice as usize;
                let cl = &s.clients[c];
                let alt = if cl.phase == crate::sim::Phase::Idle {
                    let values = workload
                        .and_then(|w| w.get(c))
                        .and_then(|per_op| per_op.get(cl.op_index as usize));
                    match values {
                        Some(v) => self.bridge().alt_with(c, cl.op_index, v),
                        None => Some(0),
                    }
                } else {
                    None
                };
                actions.iter().position(|a| match a {
                    Action::Start(x, _, k) => *x == c && Some(*k) == alt,
                    Action::Step(x) => *x == c,
                    Action::Fault(_) => false,
                })
            } else {
                let mut faults = Vec::new();
                self.bridge().all_faults(&s, &mut faults);
                faults
                    .get(choice as usize - n)
                    .and_then(|f| actions.iter().position(|a| *a == Action::Fault(f.clone())))
            };
            let Some(k) = want else {
                return Err(format!(
                    "choice {i} ({choice}) is no action of the state it reaches: the \
                     counterexample cannot be followed in this state space"
                ));
            };
            s = self.take(&s, &actions[k]).0;
            path.push(k);
        }
        Ok(path)
    }
}

#[cfg(test)]
#[path = "browse_tests.rs"]
pub(crate) mod tests;
