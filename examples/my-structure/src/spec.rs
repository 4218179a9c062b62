//! What a correct ticket dispenser does, one operation at a time: kvsim's
//! linearizability checker judges every run's history against it.

use kvsim_cli::kvsim::SequentialSpec;

/// An operation of the dispenser.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `take()`: hand out the next ticket.
    Take,
    /// `peek()`: which ticket the next `take()` hands out, without taking it.
    Peek,
}

/// What an operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `take()` handed out this ticket.
    Ticket(u64),
    /// `peek()`: the next ticket is this one.
    Next(u64),
    /// The fixed dispenser found its counter gone (evicted, lost in a restart) and did
    /// nothing: no ticket rather than one handed out twice.
    Lost,
}

/// The dispenser as a sequential object: tickets 1, 2, 3, … each handed out once, in
/// order.
#[derive(Clone, Copy, Debug, Default)]
pub struct DispenserSpec;

impl SequentialSpec for DispenserSpec {
    /// The next ticket to hand out.
    type State = u64;
    type Op = Op;
    type Ret = Ret;

    fn name(&self) -> &'static str {
        "ticket-dispenser"
    }

    fn init(&self) -> u64 {
        1
    }

    fn step(&self, next: &u64, op: &Op) -> (u64, Ret) {
        match op {
            Op::Take => (next + 1, Ret::Ticket(*next)),
            Op::Peek => (*next, Ret::Next(*next)),
        }
    }

    /// `Lost` is always allowed and changes nothing (the dispenser refused to guess);
    /// anything else must be what [`DispenserSpec::step`] returns.
    fn accepts(&self, next: &u64, op: &Op, found: &Ret) -> Option<u64> {
        if *found == Ret::Lost {
            return Some(*next);
        }
        let (after, expected) = self.step(next, op);
        (expected == *found).then_some(after)
    }

    fn read_only(&self, op: &Op, ret: &Ret) -> bool {
        *op == Op::Peek || *ret == Ret::Lost
    }

    fn explain(&self, next: &u64, op: &Op, expected: &Ret, found: &Ret) -> String {
        match (op, found) {
            (Op::Take, Ret::Ticket(t)) if t < next => format!(
                "take() handed out ticket {t} again: tickets up to {} were handed out \
                 already, the next is {next}",
                next - 1
            ),
            (Op::Take, Ret::Ticket(t)) => {
                format!("take() handed out ticket {t}, but the next ticket is {next}")
            }
            _ => format!("{op:?} returned {found:?}, but the dispenser gives {expected:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_handed_out_once_in_order_and_lost_changes_nothing() {
        let spec = DispenserSpec;
        assert_eq!(spec.step(&1, &Op::Take), (2, Ret::Ticket(1)));
        assert_eq!(spec.step(&2, &Op::Peek), (2, Ret::Next(2)));
        assert_eq!(spec.accepts(&2, &Op::Take, &Ret::Ticket(1)), None);
        assert_eq!(spec.accepts(&2, &Op::Take, &Ret::Lost), Some(2));
        assert_eq!(
            spec.explain(&3, &Op::Take, &Ret::Ticket(3), &Ret::Ticket(2)),
            "take() handed out ticket 2 again: tickets up to 2 were handed out already, \
             the next is 3"
        );
    }
}
