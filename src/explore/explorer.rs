//! The Explorer's view of the bridge (`kvsim explore TARGET --serve ADDR`): the same
//! states, actions and properties, with each action labelled with what it does
//! (`C0: cas fifotail #3 "…"`, `evict fifohead`, `pause C1 for 2 s`), and each state
//! showing the requests its clients wait on and what the checker says of it.
//!
//! Only the Explorer uses this view; the checker searches the bare [`Bridge`], whose
//! actions carry no text.

use super::bridge::{Action, Bridge};
use super::guard::Cut;
use super::state::{Phase, State};
use super::Explorable;
use crate::sim::{self, Fault, Request, Wait};
use crate::verdict::Verdict;
use stateright::{Model, Property};
use std::fmt;
use std::hash::{Hash, Hasher};

/// The bridge, as the Explorer shows it.
pub(crate) struct Explorer<M: Explorable> {
    pub(crate) bridge: Bridge<M>,
    /// The bridge's properties; the view's property `K` is the bridge's `K`.
    props: Vec<Property<Bridge<M>>>,
}

/// An action with its label.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Labelled {
    pub(crate) action: Action,
    pub(crate) label: String,
}

/// The label alone: the Explorer prints the path it is checking with `{:?}`.
impl fmt::Debug for Labelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// A state with what the Explorer shows beside it. Its identity (hash, equality) is the
/// bridge's state alone.
#[derive(Clone)]
pub(crate) struct Shown<Op, Ret> {
    pub(crate) state: State<Op, Ret>,
    /// One line per client inside an operation: the request it waits on.
    pub(crate) pending: Vec<String>,
    /// What the checker says of this state.
    pub(crate) checker: String,
}

impl<Op: PartialEq, Ret: PartialEq> PartialEq for Shown<Op, Ret> {
    fn eq(&self, other: &Self) -> bool {
        self.state == other.state
    }
}

impl<Op: Hash, Ret: Hash> Hash for Shown<Op, Ret> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.state.hash(h)
    }
}

impl<Op: fmt::Debug, Ret: fmt::Debug> fmt::Debug for Shown<Op, Ret> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.state)?;
        if self.pending.is_empty() {
            writeln!(f, "pending: none")?;
        } else {
            writeln!(f, "pending:")?;
            for p in &self.pending {
                writeln!(f, "  {p}")?;
            }
        }
        writeln!(f, "checker: {}", self.checker)
    }
}

/// Property `K` of the view: the bridge's property `K` on the bridge's state.
fn condition<M: Explorable, const K: usize>(e: &Explorer<M>, s: &Shown<M::Op, M::Ret>) -> bool {
    (e.props[K].condition)(&e.bridge, &s.state)
}

type Condition<M> = fn(
    &Explorer<M>,
    &Shown<<M as crate::model::Model>::Op, <M as crate::model::Model>::Ret>,
) -> bool;

/// Most properties the view carries over from the bridge.
const MAX_PROPS: usize = 8;

fn conditions<M: Explorable>() -> [Condition<M>; MAX_PROPS] {
    [
        condition::<M, 0>,
        condition::<M, 1>,
        condition::<M, 2>,
        condition::<M, 3>,
        condition::<M, 4>,
        condition::<M, 5>,
        condition::<M, 6>,
        condition::<M, 7>,
    ]
}

impl<M: Explorable> Explorer<M> {
    pub(crate) fn new(bridge: Bridge<M>) -> Explorer<M> {
        let props = bridge.properties();
        assert!(
            props.len() <= MAX_PROPS,
            "the Explorer shows at most {MAX_PROPS} properties"
        );
        Explorer { bridge, props }
    }

    /// What client `c`'s next step does in `s`, as the Explorer labels it.
    fn request(&self, s: &State<M::Op, M::Ret>, c: usize) -> String {
        match self.bridge.pending(s, c) {
            Some(Request::Command(cmd)) => cmd.to_string(),
            Some(Request::Sleep(ms, Wait::Sleep)) => format!("wakes (slept {})", sim::ms(ms)),
            Some(Request::Sleep(ms, Wait::Work)) => format!("ends its work ({})", sim::ms(ms)),
            None => "steps".to_string(),
        }
    }

    /// The label of `action` taken in `s`: what it does.
    pub(crate) fn label(&self, s: &State<M::Op, M::Ret>, action: &Action) -> String {
        match action {
            Action::Start(c, i, alt) => format!(
                "C{c}: start {:?} (operation {i})",
                self.bridge.op_of(*c, *i, *alt)
            ),
            Action::Step(c) => format!("C{c}: {}", self.request(s, *c)),
            // Time jumps to where the step lands once the world has settled.
            Action::Fault(Fault::AdvanceTime { .. }) => {
                match self.bridge.next_state(s, action.clone()) {
                    Some(next) => Fault::<crate::command::Command>::AdvanceTime {
                        by_ms: next.now - s.now,
                    }
                    .to_string(),
                    None => "time jumps to the next expiry".to_string(),
                }
            }
            Action::Fault(f) => f.label(|c| self.request(s, c)),
        }
    }

    /// `state` with the requests its clients wait on and the checker's word on it.
    pub(crate) fn show(&self, state: State<M::Op, M::Ret>) -> Shown<M::Op, M::Ret> {
        let pending = (0..state.clients.len())
            .filter_map(|c| {
                let cl = &state.clients[c];
                let what = match cl.phase {
                    Phase::Calling => format!("waits for the reply to {}", self.request(&state, c)),
                    Phase::Sleeping(_) => format!("asleep: {}", self.request(&state, c)),
                    Phase::TimingOut(t) => format!(
                        "waits out its timeout (until {}) for {}",
                        sim::ms(t - sim::EPOCH_MS),
                        self.request(&state, c)
                    ),
                    _ => return None,
                };
                Some(format!(
                    "C{c} (operation {}, step {}): {what}",
                    cl.op_index,
                    cl.rec.polls.len()
                ))
            })
            .collect();
        let checker = if state.is_final() {
            match self.bridge.verdict(&state) {
                Verdict::Ok => "ok: this path passes the model's check".to_string(),
                Verdict::Violation(v) => format!("violation: {}: {}", v.property, v.reason),
                Verdict::Unknown(why) => format!("unknown: {why}"),
            }
        } else {
            match self.bridge.cut(&state) {
                Some(Cut::Horizon) => format!(
                    "cut: past the time horizon of {} (not expanded, not judged; the \
                     verdict is unknown)",
                    sim::ms(self.bridge.horizon_ms())
                ),
                Some(Cut::Steps) => format!(
                    "cut: an operation took more than {} steps (not expanded, not judged; \
                     the verdict is unknown)",
                    self.bridge.max_op_steps()
                ),
                None => "not judged yet: the path goes on".to_string(),
            }
        };
        Shown {
            state,
            pending,
            checker,
        }
    }
}

impl<M: Explorable> Model for Explorer<M> {
    type State = Shown<M::Op, M::Ret>;
    type Action = Labelled;

    fn init_states(&self) -> Vec<Self::State> {
        self.bridge
            .init_states()
            .into_iter()
            .map(|s| self.show(s))
            .collect()
    }

    fn actions(&self, s: &Self::State, actions: &mut Vec<Labelled>) {
        let mut raw = Vec::new();
        self.bridge.actions(&s.state, &mut raw);
        actions.extend(raw.into_iter().map(|action| Labelled {
            label: self.label(&s.state, &action),
            action,
        }));
    }

    fn next_state(&self, s: &Self::State, action: Labelled) -> Option<Self::State> {
        self.bridge
            .next_state(&s.state, action.action)
            .map(|next| self.show(next))
    }

    fn format_action(&self, action: &Labelled) -> String {
        action.label.clone()
    }

    fn format_step(&self, last: &Self::State, action: Labelled) -> Option<String> {
        let label = action.label.clone();
        self.next_state(last, action)
            .map(|next| format!("{label}\n\n{next:?}"))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.props
            .iter()
            .zip(conditions::<M>())
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: p.name,
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, s: &Self::State) -> bool {
        self.bridge.within_boundary(&s.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::browse::tests::CasCounter;
    use crate::explore::guard::Guard;
    use crate::explore::Scope;
    use crate::scenario::FaultKind;
    use std::sync::Arc;

    fn explorer(faults: Vec<(FaultKind, u32)>) -> Explorer<CasCounter> {
        let mut scope = Scope::new(2, 1);
        scope.faults = faults;
        let guard = Arc::new(Guard::new(usize::MAX, u64::MAX));
        Explorer::new(Bridge::new(Arc::new(CasCounter), &scope, guard).expect("a bridge"))
    }

    fn labels(e: &Explorer<CasCounter>, s: &Shown<(), bool>) -> Vec<String> {
        let mut actions = Vec::new();
        e.actions(s, &mut actions);
        actions.into_iter().map(|a| a.label).collect()
    }

    fn take(e: &Explorer<CasCounter>, s: &Shown<(), bool>, label: &str) -> Shown<(), bool> {
        let mut actions = Vec::new();
        e.actions(s, &mut actions);
        let a = actions
            .into_iter()
            .find(|a| a.label == label)
            .unwrap_or_else(|| panic!("no action {label:?} in {:?}", labels(e, s)));
        e.next_state(s, a).expect("a next state")
    }

    #[test]
    fn actions_are_labelled_with_what_they_do() {
        let e = explorer(vec![(FaultKind::Evict, 1), (FaultKind::Pause, 1)]);
        let init = e.init_states().remove(0);
        assert_eq!(
            labels(&e, &init),
            [
                "C0: start () (operation 0)",
                "C1: start () (operation 0)",
                "evict count"
            ]
        );
        let s = take(&e, &init, "C0: start () (operation 0)");
        assert_eq!(
            labels(&e, &s),
            [
                "C0: gets count",
                "C1: start () (operation 0)",
                "evict count",
                "pause C0 for 1.500 s",
                "pause C0 for 4 s"
            ]
        );
        let s = take(&e, &s, "C0: gets count");
        assert_eq!(labels(&e, &s)[0], "C0: cas count #1 \"1\"");
        let mut actions = Vec::new();
        e.actions(&s, &mut actions);
        assert_eq!(format!("{:?}", actions[0]), "C0: cas count #1 \"1\"");
        // The state view shows the pending request and the checker's word.
        let shown = format!("{s:?}");
        assert!(
            shown.ends_with(
                "pending:\n  C0 (operation 0, step 2): waits for the reply to cas count #1 \"1\"\n\
                 checker: not judged yet: the path goes on\n"
            ),
            "{shown}"
        );
    }

    #[test]
    fn a_lost_request_or_reply_is_labelled_with_its_command() {
        let e = explorer(vec![(FaultKind::Lose, 1)]);
        let init = e.init_states().remove(0);
        let s = take(&e, &init, "C1: start () (operation 0)");
        assert_eq!(
            labels(&e, &s),
            [
                "C0: start () (operation 0)",
                "C1: gets count",
                "C1: gets count ✗ request lost (timeout)",
                "C1: gets count ✗ reply lost (applied; timeout)"
            ]
        );
    }

    #[test]
    fn a_final_state_shows_the_checkers_reason() {
        let e = explorer(Vec::new());
        let mut s = e.init_states().remove(0);
        for step in [
            "C0: start () (operation 0)",
            "C1: start () (operation 0)",
            "C0: gets count",
            "C1: gets count",
            "C0: cas count #1 \"1\"",
            "C1: cas count #1 \"1\"",
        ] {
            s = take(&e, &s, step);
        }
        assert_eq!(
            s.checker,
            "violation: every cas stores: C1's cas did not store"
        );
        assert!(s.pending.is_empty());
        assert!(format!("{s:?}").ends_with(
            "pending: none\nchecker: violation: every cas stores: C1's cas did not store\n"
        ));
        // The Explorer's properties are the bridge's, on the same states.
        let names: Vec<_> = e.properties().iter().map(|p| p.name).collect();
        let bridge: Vec<_> = e.bridge.properties().iter().map(|p| p.name).collect();
        assert_eq!(names, bridge);
        let check = &e.properties()[0];
        assert!(!(check.condition)(&e, &s), "the model's check fails here");
    }
}
