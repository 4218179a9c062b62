//! The noisy neighbour: another tenant of the cache who sets one item after each command a
//! client delivers ([`SimConfig::neighbour_bytes`]), so that a memory limit evicts the
//! structure's keys as a shared memcached would.
//!
//! memcached evicts per slab class: an item is evicted only to make room for another of
//! its own class (see [`crate::store::geometry`]). So the neighbour's value sizes decide
//! which of the structure's keys it can push out. Its sizes range from
//! [`SimConfig::neighbour_bytes`] to [`SimConfig::neighbour_max_bytes`]; it writes one size
//! per slab class that range reaches (the largest value of the range that stays in the
//! class), taking the classes in turn, and rotates over just enough keys per class to fill
//! the memory limit with that class alone.

use super::config::SimConfig;
#[cfg(test)]
use crate::command::Command;
use crate::command::StoreVerb;
use crate::store::geometry::{class_index, SlabClass};
use crate::store::item::item_size;
use crate::store::Store;

/// The noisy neighbour's keys begin with this (no structure's key does).
pub(crate) const NEIGHBOUR_PREFIX: &[u8] = b"kvsim:neighbour:";

/// The length of the neighbour's keys: the prefix and three digits.
const KEY_LEN: usize = NEIGHBOUR_PREFIX.len() + 3;

/// The most keys the neighbour rotates over (three digits).
const MAX_KEYS: usize = 1000;

/// The slab classes the neighbour of `cfg` presses, smallest first, each with the value
/// size it writes there (empty without a neighbour).
pub fn neighbour_classes(cfg: &SimConfig) -> Vec<(SlabClass, usize)> {
    let lo = cfg.neighbour_bytes;
    if lo == 0 {
        return Vec::new();
    }
    let hi = cfg.neighbour_max_bytes.max(lo);
    // Listed once: this runs at every delivery.
    let classes = cfg.geometry.classes();
    let first = class_index(&classes, item_size(KEY_LEN, 0, lo));
    let last = class_index(&classes, item_size(KEY_LEN, 0, hi));
    let overhead = item_size(KEY_LEN, 0, 0);
    classes[first..=last]
        .iter()
        .map(|&c| (c, c.chunk.saturating_sub(overhead).clamp(lo, hi)))
        .collect()
}

/// The neighbour's classes for people: `slab class 2 (120-byte chunks)` or `slab classes
/// 1–3 (96- to 152-byte chunks)`.
pub fn describe_classes(classes: &[(SlabClass, usize)]) -> String {
    match classes {
        [] => "no slab class".to_string(),
        [(c, _)] => format!("slab class {} ({}-byte chunks)", c.id, c.chunk),
        [(a, _), .., (b, _)] => format!(
            "slab classes {}–{} ({}- to {}-byte chunks)",
            a.id, b.id, a.chunk, b.chunk
        ),
    }
}

/// The command [`neighbour_apply`] applies to `store` (for tests).
#[cfg(test)]
pub(crate) fn neighbour_write(
    store: &Store,
    cfg: &SimConfig,
    classes: &[(SlabClass, usize)],
) -> Option<Command> {
    let (key, size) = neighbour_key(store, cfg, classes)?;
    Some(Command::Store {
        verb: StoreVerb::Set,
        key: key.to_vec(),
        flags: 0,
        exptime: 0,
        data: vec![b'n'; size],
        noreply: true,
    })
}

/// The neighbour's values: a value of `n` bytes is the first `n` of these (larger ones
/// are made).
static FILL: [u8; 4096] = [b'n'; 4096];

/// Applies the neighbour's next write to `store` at `now_ms`: a `set` (noreply) to one of
/// its keys, key `n` in the class `n mod k` of its `k` classes (`classes`,
/// [`neighbour_classes`] of `cfg`, listed once per run: this runs at every delivery), with
/// that class's value size; `false` (and nothing applied) without a neighbour. The key is
/// picked by the store's cas counter, so that the neighbour needs no state of its own (the
/// world's state, and the explorer's hash of it, stay what they were).
///
/// The store applies it as [`Store::apply`] would apply the command, but no command is
/// built: the profile (message-queue/fixed, scenario lru) showed building one (a key grown
/// in two steps, a value filled, both dropped) at a fifteenth of the run.
#[inline]
pub(crate) fn neighbour_apply(
    store: &mut Store,
    now_ms: u64,
    cfg: &SimConfig,
    classes: &[(SlabClass, usize)],
) -> bool {
    // No neighbour: no class to press.
    if classes.is_empty() {
        return false;
    }
    let Some((key, size)) = neighbour_key(store, cfg, classes) else {
        return false;
    };
    let made;
    let data = match FILL.get(..size) {
        Some(data) => data,
        None => {
            made = vec![b'n'; size];
            &made[..]
        }
    };
    store.apply_store(now_ms, StoreVerb::Set, &key, 0, 0, data);
    true
}

/// The key and the value size of the neighbour's next write ([`neighbour_apply`]), when
/// there is a neighbour.
fn neighbour_key(
    store: &Store,
    cfg: &SimConfig,
    classes: &[(SlabClass, usize)],
) -> Option<([u8; KEY_LEN], usize)> {
    let k = classes.len();
    let per_class = classes
        .iter()
        .map(|(c, _)| match cfg.memory_limit {
            Some(limit) => (limit / c.chunk.max(1)).max(c.per_page) + 1,
            None => 8,
        })
        .max()?
        .clamp(1, MAX_KEYS / k);
    // Below `MAX_KEYS`: three digits.
    let n = (store.last_cas() % (per_class * k) as u64) as usize;
    debug_assert!(n < MAX_KEYS);
    let mut key = [0u8; KEY_LEN];
    key[..NEIGHBOUR_PREFIX.len()].copy_from_slice(NEIGHBOUR_PREFIX);
    let mut rest = n;
    for d in key[NEIGHBOUR_PREFIX.len()..].iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    Some((key, classes[n % k].1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::lru_geometry;

    fn cfg(lo: usize, hi: usize) -> SimConfig {
        let mut c = SimConfig::new(1, 1);
        c.geometry = lru_geometry();
        c.memory_limit = Some(2048);
        c.neighbour_bytes = lo;
        c.neighbour_max_bytes = hi;
        c
    }

    #[test]
    fn the_range_presses_every_class_it_reaches_and_no_other() {
        let got: Vec<(usize, usize, usize)> = neighbour_classes(&cfg(10, 60))
            .into_iter()
            .map(|(c, v)| (c.id, c.chunk, v))
            .collect();
        // 19-byte keys: 59 + 19 + value bytes; 96 holds values of 18, 120 of 42.
        assert_eq!(got, vec![(1, 96, 18), (2, 120, 42), (3, 152, 60)]);
        let one: Vec<usize> = neighbour_classes(&cfg(40, 0))
            .iter()
            .map(|(c, _)| c.id)
            .collect();
        assert_eq!(one, vec![2]);
        assert!(neighbour_classes(&cfg(0, 60)).is_empty());
        assert_eq!(
            describe_classes(&neighbour_classes(&cfg(10, 60))),
            "slab classes 1–3 (96- to 152-byte chunks)"
        );
    }

    #[test]
    fn every_write_lands_in_a_pressed_class_and_all_are_written() {
        let c = cfg(10, 60);
        let mut store = Store::new(
            crate::store::StoreConfig {
                geometry: c.geometry.clone(),
                ..Default::default()
            },
            crate::sim::EPOCH_MS,
        );
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let cmd = neighbour_write(&store, &c, &neighbour_classes(&c)).expect("a neighbour");
            let Command::Store { key, data, .. } = &cmd else {
                panic!("{cmd:?}")
            };
            assert_eq!(key.len(), KEY_LEN);
            seen.insert(c.geometry.class_of(item_size(key.len(), 0, data.len())).id);
            store.apply(crate::sim::EPOCH_MS, &cmd);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn applying_the_write_is_applying_its_command() {
        let mut c = cfg(10, 5000);
        c.memory_limit = Some(64 * 1024);
        let config = crate::store::StoreConfig {
            geometry: c.geometry.clone(),
            memory_limit: c.memory_limit,
            ..Default::default()
        };
        let classes = neighbour_classes(&c);
        let mut by_command = Store::new(config.clone(), crate::sim::EPOCH_MS);
        let mut applied = Store::new(config, crate::sim::EPOCH_MS);
        for i in 0..3000 {
            let now = crate::sim::EPOCH_MS + i * 10;
            let cmd = neighbour_write(&by_command, &c, &classes).expect("a neighbour");
            by_command.apply(now, &cmd);
            assert!(neighbour_apply(&mut applied, now, &c, &classes));
            assert_eq!(applied, by_command);
            assert_eq!(applied.take_evicted(), by_command.take_evicted());
        }
        assert!(!neighbour_apply(&mut applied, 0, &cfg(0, 0), &[]));
    }
}
