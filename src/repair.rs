//! Repairs: switches in a published structure's code, each the fix of one defect.
//!
//! A structure transcribed from an article keeps the article's defects, and the cheapest
//! of them tends to fire in nearly every run: the shrinker keeps it, and every defect
//! behind it goes unseen. A [`Repair`] names the fix of one defect (named after the
//! defect, `[a-z0-9-]+`); a model lists its repairs in [`crate::Model::repairs`] and
//! reads the ones switched on from a [`Repairs`] set (one bit each) in its own code.
//! Turning a repair on undoes the masking of its defect: what the published code does
//! *besides* that defect becomes a finding of its own.
//!
//! ```
//! use kvsim::{Repair, Repairs};
//!
//! const REPAIRS: &[Repair] = &[
//!     Repair { name: "unlock-by-owner", fixes: "a resent delete frees another holder's lock" },
//!     Repair { name: "dequeue-next", fixes: "dequeue returns the unlinked node's data" },
//! ];
//! let on = Repairs::parse(REPAIRS, &["unlock-by-owner", "dequeue-next"]).unwrap();
//! assert!(on.on("dequeue-next"));
//! // One canonical (sorted) order wherever a target is written.
//! assert_eq!(on.suffix(), "+dequeue-next+unlock-by-owner");
//! let err = Repairs::parse(REPAIRS, &["evict"]).unwrap_err();
//! assert!(err.starts_with("unknown repair \"evict\": expected one of dequeue-next, unlock-by-owner"));
//! ```

use std::fmt;

/// The most repairs one model may list (each is one bit of a [`Repairs`] set, and every
/// combination is a target of its own).
pub const MAX_REPAIRS: usize = 8;

/// The fix of one defect of a published structure, switched on by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Repair {
    /// Named after the defect it fixes, `[a-z0-9-]+` (never a fault's or a scenario's
    /// name), e.g. `dequeue-next`.
    pub name: &'static str,
    /// The defect it fixes, in one line for people (`kvsim list`).
    pub fixes: &'static str,
}

/// Which of a model's repairs are on: a set over the model's [`Repair`] list.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Repairs {
    list: &'static [Repair],
    bits: u32,
}

impl Repairs {
    /// None of `list` on.
    pub const fn none(list: &'static [Repair]) -> Repairs {
        Repairs { list, bits: 0 }
    }

    /// Every repair of `list` on.
    pub fn all(list: &'static [Repair]) -> Repairs {
        Repairs {
            list,
            bits: ((1u64 << list.len()) - 1) as u32,
        }
    }

    /// The repairs of `list` whose positions are the set bits of `bits` (bits beyond the
    /// list are dropped).
    pub fn from_bits(list: &'static [Repair], bits: u32) -> Repairs {
        Repairs {
            list,
            bits: bits & Repairs::all(list).bits,
        }
    }

    /// The set of `names` from `list`: an error naming the valid ones for an unknown name,
    /// and for a name given twice.
    pub fn parse(list: &'static [Repair], names: &[&str]) -> Result<Repairs, String> {
        let mut set = Repairs::none(list);
        for name in names {
            let Some(i) = list.iter().position(|r| r.name == *name) else {
                let mut valid: Vec<&str> = list.iter().map(|r| r.name).collect();
                valid.sort_unstable();
                return Err(if valid.is_empty() {
                    format!("unknown repair {name:?}: this model has no repairs")
                } else {
                    format!(
                        "unknown repair {name:?}: expected one of {}",
                        valid.join(", ")
                    )
                });
            };
            if set.bits & (1 << i) != 0 {
                return Err(format!(
                    "repair {name:?} is given twice: expected each repair at most once"
                ));
            }
            set.bits |= 1 << i;
        }
        Ok(set)
    }

    /// Whether the repair `name` is on. Panics when the model lists no repair of that
    /// name (a typo in the model's code, caught by its first run).
    pub fn on(self, name: &str) -> bool {
        let i = self
            .list
            .iter()
            .position(|r| r.name == name)
            .unwrap_or_else(|| panic!("the model lists no repair named {name:?}"));
        self.bits & (1 << i) != 0
    }

    /// Whether no repair is on.
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// How many repairs are on.
    pub fn len(self) -> usize {
        self.bits.count_ones() as usize
    }

    /// The set as bits over the model's list (bit `i`: the `i`-th repair).
    pub fn bits(self) -> u32 {
        self.bits
    }

    /// The model's whole list of repairs.
    pub fn list(self) -> &'static [Repair] {
        self.list
    }

    /// The repairs that are on, in canonical (name) order.
    pub fn repairs(self) -> Vec<Repair> {
        let mut on: Vec<Repair> = (0..self.list.len())
            .filter(|i| self.bits & (1 << i) != 0)
            .map(|i| self.list[i])
            .collect();
        on.sort_unstable_by_key(|r| r.name);
        on
    }

    /// The names of the repairs that are on, in canonical (name) order.
    pub fn names(self) -> Vec<&'static str> {
        self.repairs().into_iter().map(|r| r.name).collect()
    }

    /// `+NAME` for each repair that is on, in canonical order: what follows `published`
    /// in a target's name (`fifo/published+dequeue-next`); empty for none.
    pub fn suffix(self) -> String {
        self.names().iter().map(|n| format!("+{n}")).collect()
    }

    /// Every set of repairs from `list`, the empty one first, then by how many are on.
    pub fn every(list: &'static [Repair]) -> Vec<Repairs> {
        let mut sets: Vec<Repairs> = (0..1u32 << list.len())
            .map(|bits| Repairs { list, bits })
            .collect();
        sets.sort_by_key(|r| (r.len(), r.names()));
        sets
    }
}

/// Checks a model's list of repairs: names `[a-z0-9-]+`, none twice, none a name in
/// `reserved` (faults and scenarios), at most [`MAX_REPAIRS`]. The error says which.
pub fn check_list(list: &[Repair], reserved: &[&str]) -> Result<(), String> {
    if list.len() > MAX_REPAIRS {
        return Err(format!(
            "{} repairs: expected at most {MAX_REPAIRS}",
            list.len()
        ));
    }
    for (i, r) in list.iter().enumerate() {
        let well_formed = !r.name.is_empty()
            && r.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !well_formed {
            return Err(format!("repair name {:?}: expected [a-z0-9-]+", r.name));
        }
        if list[..i].iter().any(|o| o.name == r.name) {
            return Err(format!("repair {:?} is listed twice", r.name));
        }
        if reserved.contains(&r.name) {
            return Err(format!(
                "repair {:?} is named like a fault or scenario: expected the defect's name",
                r.name
            ));
        }
        if r.fixes.trim().is_empty() {
            return Err(format!("repair {:?} says nothing of what it fixes", r.name));
        }
    }
    Ok(())
}

impl fmt::Debug for Repairs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl fmt::Display for Repairs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &[Repair] = &[
        Repair {
            name: "b-two",
            fixes: "the second",
        },
        Repair {
            name: "a-one",
            fixes: "the first",
        },
        Repair {
            name: "c-three",
            fixes: "the third",
        },
    ];

    #[test]
    fn names_come_out_sorted_whatever_order_they_went_in() {
        let r = Repairs::parse(LIST, &["c-three", "b-two"]).unwrap();
        assert_eq!(r.suffix(), "+b-two+c-three");
        assert_eq!(r, Repairs::parse(LIST, &["b-two", "c-three"]).unwrap());
        assert!(r.on("b-two") && r.on("c-three") && !r.on("a-one"));
        assert_eq!(Repairs::none(LIST).suffix(), "");
        assert_eq!(Repairs::all(LIST).len(), 3);
    }

    #[test]
    fn unknown_and_repeated_names_are_refused_with_the_valid_ones() {
        assert_eq!(
            Repairs::parse(LIST, &["evict"]).unwrap_err(),
            "unknown repair \"evict\": expected one of a-one, b-two, c-three"
        );
        assert_eq!(
            Repairs::parse(LIST, &["a-one", "a-one"]).unwrap_err(),
            "repair \"a-one\" is given twice: expected each repair at most once"
        );
        assert_eq!(
            Repairs::parse(&[], &["x"]).unwrap_err(),
            "unknown repair \"x\": this model has no repairs"
        );
    }

    #[test]
    fn every_set_starts_empty_and_grows() {
        let all = Repairs::every(LIST);
        assert_eq!(all.len(), 8);
        assert!(all[0].is_empty());
        assert_eq!(all[1].names(), ["a-one"]);
        assert_eq!(all[7].len(), 3);
    }

    #[test]
    fn lists_are_checked() {
        assert_eq!(check_list(LIST, &["evict"]), Ok(()));
        let bad = [Repair {
            name: "Evict",
            fixes: "x",
        }];
        assert!(check_list(&bad, &[]).unwrap_err().contains("[a-z0-9-]+"));
        let reserved = [Repair {
            name: "evict",
            fixes: "x",
        }];
        assert!(check_list(&reserved, &["evict"])
            .unwrap_err()
            .contains("named like a fault"));
    }
}
