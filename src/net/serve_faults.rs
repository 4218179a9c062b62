//! The faults `kvsim serve` injects on the wire: what each does, which connection it
//! waits for, and the seeded draws of `--faults LIST --fault-rate P`.
//!
//! The names are the simulator's ([`FaultKind`]): `evict`, `expire` (the server clock
//! jumps forward), `restart`, `lose` (a request or a reply), `delay` (a reply held past
//! the client's timeout) and `pause` (a connection stalls before its next request is
//! applied). `crash`, `skew`, `lru` and `shard-fail` are not the server's to inject: a
//! client crashes or skews its own clock, and `--memory-limit` is the LRU.

pub use crate::fault::{WireFault, SERVE_FAULTS};
use crate::rng::SimRng;
use crate::scenario::FaultKind;

/// Seeded faults: before each request, with probability `rate`, one of `kinds`.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultPlan {
    /// The kinds drawn from (each one of [`SERVE_FAULTS`]).
    pub kinds: Vec<FaultKind>,
    /// The probability per request (0.0 ..= 1.0).
    pub rate: f64,
    /// How long a `delay` holds a reply and a `pause` stalls a connection (ms).
    pub hold_ms: u64,
    /// How far an `expire` moves the server clock (s).
    pub jump_secs: u64,
}

impl Default for FaultPlan {
    fn default() -> Self {
        FaultPlan {
            kinds: Vec::new(),
            rate: 0.0,
            hold_ms: 2_000,
            jump_secs: 2,
        }
    }
}

impl FaultPlan {
    /// Checks that every kind is one the server injects.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(k) = self.kinds.iter().find(|k| !SERVE_FAULTS.contains(k)) {
            return Err(format!(
                "kvsim serve cannot inject {:?}: expected some of {} ({})",
                k.name(),
                SERVE_FAULTS.map(|k| k.name()).join(", "),
                "a client crashes and skews its clock itself; --memory-limit is the LRU"
            ));
        }
        if self.hold_ms > 3_600_000 || self.jump_secs > 31_536_000 {
            return Err(format!(
                "bad fault durations {} ms and {} s: expected at most an hour's hold and a year's clock jump",
                self.hold_ms, self.jump_secs
            ));
        }
        if !(0.0..=1.0).contains(&self.rate) {
            return Err(format!(
                "bad fault rate {}: expected a probability from 0 to 1",
                self.rate
            ));
        }
        Ok(())
    }

    /// The fault to inject before a request that names `keys`, if the draw says so.
    pub fn draw(&self, rng: &mut SimRng, keys: &[&[u8]]) -> Option<WireFault> {
        if self.kinds.is_empty() || self.rate <= 0.0 || !rng.chance(self.rate) {
            return None;
        }
        let kind = self.kinds[rng.below(self.kinds.len() as u64) as usize];
        kind.on_the_wire(self.hold_ms, self.jump_secs, rng, keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_the_server_cannot_inject_are_refused_by_name() {
        let plan = FaultPlan {
            kinds: vec![FaultKind::Evict, FaultKind::Crash],
            rate: 0.1,
            ..FaultPlan::default()
        };
        let err = plan.validate().unwrap_err();
        assert!(err.contains("cannot inject \"crash\""), "{err}");
        assert!(
            err.contains("evict, expire, restart, lose, delay, pause"),
            "{err}"
        );
    }

    #[test]
    fn draws_follow_the_seed_and_the_rate() {
        let plan = FaultPlan {
            kinds: SERVE_FAULTS.to_vec(),
            rate: 0.5,
            ..FaultPlan::default()
        };
        let draws = |seed| {
            let mut rng = SimRng::new(seed);
            (0..200)
                .map(|_| plan.draw(&mut rng, &[b"k".as_slice()]))
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        let n = draws(7).iter().filter(|d| d.is_some()).count();
        assert!(
            (60..140).contains(&n),
            "{n} faults in 200 draws at rate 0.5"
        );
        let none = FaultPlan::default();
        let mut rng = SimRng::new(1);
        assert!((0..100).all(|_| none.draw(&mut rng, &[]).is_none()));
    }
}
