//! A set of operations as the linearizability memo keeps it: a bitset cut down to the
//! words where the sets of one search differ.
//!
//! The search's sets are far from random. Operations are numbered in call order, and
//! every operation that returned before the search's position in the history must be
//! linearized, so the set of linearized operations is a full prefix followed by a short
//! window as wide as the history's concurrency. The set of unknown-outcome operations used
//! up is empty, or a few bits. Storing whole bitsets would cost history length times
//! configurations (quadratic for a sequential history: 1e5 operations took 1.7 GB);
//! storing the [`Window`], the words between the leading run of `lead` words (full for
//! linearized sets, empty for the used-up ones) and the trailing zeros, costs what the
//! concurrency costs. The window is a function of the set, so equal sets have equal
//! windows and the memo compares windows.

/// A set of operation numbers below a fixed size, with its [`Window`] kept up to date.
#[derive(Clone, Debug)]
pub(super) struct OpSet {
    words: Vec<u64>,
    /// Whether the trimmed leading words are full (else empty).
    lead_full: bool,
    /// The valid bits of the last word.
    last_mask: u64,
    /// The first word that is not a leading word (`words.len()` if none).
    low: usize,
    /// One past the last non-zero word (0 if none).
    high: usize,
    /// Members.
    count: usize,
}

/// The words of an [`OpSet`] from its first word that is not a leading word to its last
/// non-zero word; the words before are all leading words, the words after all zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Window<'a> {
    /// The index of the first word.
    pub low: u32,
    /// The words themselves.
    pub words: &'a [u64],
}

impl OpSet {
    /// The empty set of numbers below `size`; its leading words are full words if
    /// `lead_full`, else empty ones.
    pub fn new(size: usize, lead_full: bool) -> Self {
        let n = size.div_ceil(64);
        let last_mask = match size % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        };
        OpSet {
            words: vec![0; n],
            lead_full,
            last_mask,
            low: if lead_full { 0 } else { n },
            high: 0,
            count: 0,
        }
    }

    /// Whether word `w` is a leading word.
    #[inline]
    fn is_lead(&self, w: usize) -> bool {
        let word = self.words[w];
        match self.lead_full {
            true if w + 1 == self.words.len() => word == self.last_mask,
            true => word == !0,
            false => word == 0,
        }
    }

    /// Moves `low` up past leading words.
    #[inline]
    fn skip_lead(&mut self) {
        while self.low < self.words.len() && self.is_lead(self.low) {
            self.low += 1;
        }
    }

    /// Adds `i`, which is not a member.
    #[inline]
    pub fn insert(&mut self, i: usize) {
        let w = i / 64;
        debug_assert_eq!(self.words[w] & (1 << (i % 64)), 0);
        self.words[w] |= 1 << (i % 64);
        self.count += 1;
        self.high = self.high.max(w + 1);
        if self.lead_full {
            if w == self.low {
                self.skip_lead();
            }
        } else if w < self.low {
            self.low = w;
        }
    }

    /// Removes `i`, a member.
    #[inline]
    pub fn remove(&mut self, i: usize) {
        let w = i / 64;
        debug_assert_ne!(self.words[w] & (1 << (i % 64)), 0);
        self.words[w] &= !(1 << (i % 64));
        self.count -= 1;
        if self.count == 0 {
            self.low = if self.lead_full { 0 } else { self.words.len() };
            self.high = 0;
            return;
        }
        if self.lead_full {
            self.low = self.low.min(w);
        } else if w == self.low {
            // A member is left, so this stops at its word.
            self.skip_lead();
        }
        if w + 1 == self.high {
            // Likewise.
            while self.words[self.high - 1] == 0 {
                self.high -= 1;
            }
        }
    }

    /// The set as the memo keeps it.
    #[inline]
    pub fn window(&self) -> Window<'_> {
        Window {
            low: self.low as u32,
            words: &self.words[self.low..self.high.max(self.low)],
        }
    }
}

impl Window<'_> {
    /// Whether every member of `self` is in `other`, both windows of sets with empty
    /// leading words.
    pub fn subset_of(&self, other: &Window<'_>) -> bool {
        let (lo, hi) = (other.low as usize, other.low as usize + other.words.len());
        self.words.iter().enumerate().all(|(k, &x)| {
            let w = self.low as usize + k;
            let y = if (lo..hi).contains(&w) {
                other.words[w - lo]
            } else {
                0
            };
            x & !y == 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;
    use std::collections::BTreeSet;

    /// The window computed from scratch: what `OpSet` must keep up to date.
    fn expected(members: &BTreeSet<usize>, size: usize, lead_full: bool) -> (u32, Vec<u64>) {
        let mut words = vec![0u64; size.div_ceil(64)];
        for &i in members {
            words[i / 64] |= 1 << (i % 64);
        }
        let lead = |w: usize| {
            let full = if w + 1 == words.len() && !size.is_multiple_of(64) {
                (1u64 << (size % 64)) - 1
            } else {
                !0
            };
            if lead_full {
                words[w] == full
            } else {
                words[w] == 0
            }
        };
        let low = (0..words.len()).find(|&w| !lead(w)).unwrap_or(words.len());
        let high = (0..words.len())
            .rev()
            .find(|&w| words[w] != 0)
            .map_or(0, |w| w + 1);
        (low as u32, words[low..high.max(low)].to_vec())
    }

    #[test]
    fn the_window_follows_random_inserts_and_removes() {
        let mut rng = SimRng::new(3);
        for round in 0..300 {
            let size = 1 + rng.index(300);
            let lead_full = round % 2 == 0;
            let mut set = OpSet::new(size, lead_full);
            let mut members = BTreeSet::new();
            for _ in 0..400 {
                // Mostly fill from the bottom, as the search does, sometimes anywhere.
                let i = if rng.chance(0.5) {
                    (0..size).find(|i| !members.contains(i)).unwrap_or(0)
                } else {
                    rng.index(size)
                };
                if members.remove(&i) {
                    set.remove(i);
                } else {
                    members.insert(i);
                    set.insert(i);
                }
                let w = set.window();
                assert_eq!(
                    (w.low, w.words.to_vec()),
                    expected(&members, size, lead_full),
                    "size {size}, members {members:?}"
                );
            }
        }
    }

    #[test]
    fn a_full_prefix_costs_one_word_at_most() {
        let mut set = OpSet::new(100_000, true);
        for i in 0..70_000 {
            set.insert(i);
            assert!(set.window().words.len() <= 1);
        }
        assert_eq!(set.window().low, 70_000 / 64);
    }

    #[test]
    fn subset_reads_missing_words_as_empty() {
        let mut a = OpSet::new(500, false);
        let mut b = OpSet::new(500, false);
        a.insert(70);
        b.insert(70);
        b.insert(400);
        assert!(a.window().subset_of(&b.window()));
        assert!(!b.window().subset_of(&a.window()));
        a.insert(3);
        assert!(!a.window().subset_of(&b.window()));
        let empty = OpSet::new(500, false);
        assert!(empty.window().subset_of(&a.window()));
        assert!(!a.window().subset_of(&empty.window()));
    }
}
