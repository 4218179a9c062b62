//! The bytes of a replay token: its numbers (unsigned LEB128), its bounds and its error.
//! Both the token's codec ([`super::Token`]) and the knob table ([`super::super::knobs`])
//! write and read through these; this file names neither.

use crate::scenario::{FaultKind, FaultSet, Strategy};
use crate::store::geometry::{Factor, Geometry};

/// The bounds of what a token may name ([`super::Token`] shows each as an associated
/// constant of the same name).
/// Most clients a token may name.
pub const MAX_CLIENTS: u64 = 256;
/// Most operations per client a token may name.
pub const MAX_OPS: u64 = 10_000;
/// Most operations over all clients (clients × ops) a token may name.
pub const MAX_OPERATIONS: u64 = 100_000;
/// Most servers a token may name.
pub const MAX_SHARDS: u64 = 64;
/// Largest fault budget a token may name.
pub const MAX_FAULT_BUDGET: u64 = 100_000;
/// Most choice values one operation of a chosen workload may carry.
pub const MAX_CHOICES_PER_OP: u64 = 1 << 16;
/// Largest `pct` depth a token may name.
pub const MAX_PCT_DEPTH: u64 = 1_000;
/// Largest value the noisy neighbour may write (bytes): memcached's item size limit.
pub const MAX_NEIGHBOUR_BYTES: u64 = 1 << 20;

/// Largest slab page a token may name (bytes): memcached's largest `-I`, 1 GiB.
pub const MAX_PAGE_SIZE: u64 = 1 << 30;
/// Smallest slab page a token may name (bytes): memcached's smallest `-I`, 1 KiB.
pub const MIN_PAGE_SIZE: u64 = 1 << 10;
/// Largest growth factor (`-f`) a token may name.
pub const MAX_FACTOR: f64 = 100.0;

/// Most retries of a timed-out command a token may name.
pub const MAX_RETRIES: u64 = 100;
/// Largest memory limit (bytes) a token may name: 1 TiB.
pub const MAX_MEMORY: u64 = 1 << 40;
/// Longest duration (ms) a token may name: one day.
pub const MAX_MS: u64 = 86_400_000;
/// Largest clock drift (parts per million) a token may name.
pub const MAX_DRIFT_PPM: u64 = 1_000_000;
/// Largest step bound (`max_steps`, `max_steps_per_op`) a token may name: 2.5 times the
/// default run's (a replay records the whole trace: about 4 KB a step).
pub const MAX_STEPS: u64 = 1_000_000;

/// A token that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad replay token: {0}")]
pub struct TokenError(pub(super) String);

impl TokenError {
    /// An error saying `what` (after `bad replay token: `).
    pub(crate) fn new(what: String) -> TokenError {
        TokenError(what)
    }
}

/// The payload being written.
pub(crate) struct Writer(pub(super) Vec<u8>);

impl Writer {
    /// An unsigned LEB128 number.
    pub(crate) fn num(&mut self, mut x: u64) {
        loop {
            let byte = (x & 0x7f) as u8;
            x >>= 7;
            if x == 0 {
                self.0.push(byte);
                return;
            }
            self.0.push(byte | 0x80);
        }
    }

    /// `0` for none, else the number of lists + 1 and each list (length, indices).
    pub(crate) fn client_ops(&mut self, per_client: &Option<Vec<Vec<usize>>>) {
        match per_client {
            None => self.num(0),
            Some(lists) => {
                self.num(lists.len() as u64 + 1);
                for list in lists {
                    self.num(list.len() as u64);
                    for &i in list {
                        self.num(i as u64);
                    }
                }
            }
        }
    }

    /// `0` for none, else the number of clients + 1 and, per client, its operations, per
    /// operation its choice values (count, values).
    pub(crate) fn workload(&mut self, workload: &Option<Vec<Vec<Vec<u64>>>>) {
        match workload {
            None => self.num(0),
            Some(clients) => {
                self.num(clients.len() as u64 + 1);
                for ops in clients {
                    self.num(ops.len() as u64);
                    for values in ops {
                        self.num(values.len() as u64);
                        for &v in values {
                            self.num(v);
                        }
                    }
                }
            }
        }
    }

    /// A bit mask over [`FaultKind::ALL`].
    pub(crate) fn faults(&mut self, faults: &FaultSet) {
        let mask = FaultKind::ALL
            .iter()
            .enumerate()
            .filter(|(_, k)| faults.has(**k))
            .fold(0u64, |m, (i, _)| m | 1 << i);
        self.num(mask);
    }

    /// The bits of `p`, 8 bytes little-endian.
    pub(crate) fn probability(&mut self, p: f64) {
        self.0.extend_from_slice(&p.to_bits().to_le_bytes());
    }

    /// A slab geometry: page size, `-n`, `-f` (8 little-endian bytes), largest chunk, then
    /// one number for the LRU maintainer (bit 0) and `slab_automove` (from bit 1).
    pub(crate) fn geometry(&mut self, g: &Geometry) {
        self.num(g.page_size as u64);
        self.num(g.chunk_size as u64);
        self.0
            .extend_from_slice(&g.factor.0.to_bits().to_le_bytes());
        self.num(g.slab_chunk_max as u64);
        self.num(g.lru_maintainer as u64 | (g.slab_automove as u64) << 1);
    }

    /// `0` random, `1` swarm, `2 + depth` pct.
    pub(crate) fn strategy(&mut self, s: Strategy) {
        match s {
            Strategy::Random => self.num(0),
            Strategy::Swarm => self.num(1),
            Strategy::Pct { depth } => self.num(2 + depth as u64),
        }
    }
}

/// The payload being read.
pub(crate) struct Reader<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, TokenError> {
        let x = *self
            .b
            .get(self.pos)
            .ok_or_else(|| TokenError("payload ends early".into()))?;
        self.pos += 1;
        Ok(x)
    }

    /// An unsigned LEB128 number that fits in 64 bits.
    pub(super) fn num(&mut self) -> Result<u64, TokenError> {
        let mut x = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            let bits = (byte & 0x7f) as u64;
            if shift == 63 && bits > 1 {
                break;
            }
            x |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(TokenError("a number in the payload is too long".into()))
    }

    /// A number at most `max`.
    pub(crate) fn bounded(&mut self, what: &str, max: u64) -> Result<u64, TokenError> {
        let x = self.num()?;
        if x > max {
            return Err(TokenError(format!(
                "{what}: expected at most {max}, found {x}"
            )));
        }
        Ok(x)
    }

    /// `n` items of at least one byte each, checked against the bytes left.
    pub(super) fn fits(&self, what: &str, n: u64) -> Result<usize, TokenError> {
        let left = self.b.len() - self.pos;
        if n > left as u64 {
            return Err(TokenError(format!(
                "{what}: expected at most {left} (the payload's bytes left), found {n}"
            )));
        }
        Ok(n as usize)
    }

    pub(crate) fn client_ops(&mut self) -> Result<Option<Vec<Vec<usize>>>, TokenError> {
        let n = match self.bounded("operation lists", MAX_CLIENTS + 1)? {
            0 => return Ok(None),
            n => self.fits("operation lists", n - 1)?,
        };
        let mut lists = Vec::with_capacity(n);
        for _ in 0..n {
            let len = self.bounded("operations in a list", MAX_OPS)?;
            let len = self.fits("operations in a list", len)?;
            let mut list = Vec::with_capacity(len);
            for _ in 0..len {
                list.push(self.bounded("an operation index", MAX_OPS - 1)? as usize);
            }
            lists.push(list);
        }
        Ok(Some(lists))
    }

    /// A chosen workload (see [`Writer::workload`]), every count checked before allocating.
    #[allow(clippy::type_complexity)]
    pub(crate) fn workload(&mut self) -> Result<Option<Vec<Vec<Vec<u64>>>>, TokenError> {
        let n = match self.bounded("workload clients", MAX_CLIENTS + 1)? {
            0 => return Ok(None),
            n => self.fits("workload clients", n - 1)?,
        };
        let mut clients = Vec::with_capacity(n);
        for _ in 0..n {
            let ops = self.bounded("workload operations", MAX_OPS)?;
            let ops = self.fits("workload operations", ops)?;
            let mut per_op = Vec::with_capacity(ops);
            for _ in 0..ops {
                let len = self.bounded("choices of an operation", MAX_CHOICES_PER_OP)?;
                let len = self.fits("choices of an operation", len)?;
                let mut values = Vec::with_capacity(len);
                for _ in 0..len {
                    values.push(self.num()?);
                }
                per_op.push(values);
            }
            clients.push(per_op);
        }
        Ok(Some(clients))
    }

    pub(crate) fn faults(&mut self) -> Result<FaultSet, TokenError> {
        let all = FaultKind::ALL.len();
        let mask = self.bounded("fault mask", (1u64 << all) - 1)?;
        let kinds: Vec<FaultKind> = FaultKind::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, k)| *k)
            .collect();
        Ok(FaultSet::of(&kinds))
    }

    /// A slab geometry as [`Writer::geometry`] writes it, every number within memcached's
    /// own bounds: pages of [`MIN_PAGE_SIZE`] to [`MAX_PAGE_SIZE`], `-n` and the largest
    /// chunk from 1 to the page, `-f` above 1 and at most [`MAX_FACTOR`], `slab_automove`
    /// 0 to 2.
    pub(crate) fn geometry(&mut self) -> Result<Geometry, TokenError> {
        let page_size = self.bounded("slab page size", MAX_PAGE_SIZE)?;
        if page_size < MIN_PAGE_SIZE {
            return Err(TokenError(format!(
                "slab page size: expected at least {MIN_PAGE_SIZE}, found {page_size}"
            )));
        }
        let chunk_size = positive(
            self.bounded("slab chunk size (-n)", page_size)?,
            "slab chunk size (-n)",
        )?;
        let mut bits = [0u8; 8];
        for b in &mut bits {
            *b = self.byte()?;
        }
        let factor = f64::from_bits(u64::from_le_bytes(bits));
        if !(factor > 1.0 && factor <= MAX_FACTOR) {
            return Err(TokenError(format!(
                "slab growth factor (-f): expected above 1 and at most {MAX_FACTOR}, found {factor}"
            )));
        }
        let slab_chunk_max = positive(
            self.bounded("largest slab chunk", page_size)?,
            "largest slab chunk",
        )?;
        let flags = self.bounded("lru maintainer and slab_automove (0 to 5)", 5)?;
        Ok(Geometry {
            page_size: page_size as usize,
            chunk_size: chunk_size as usize,
            factor: Factor(factor),
            slab_chunk_max: slab_chunk_max as usize,
            lru_maintainer: flags & 1 == 1,
            slab_automove: (flags >> 1) as u8,
        })
    }

    pub(crate) fn probability(&mut self) -> Result<f64, TokenError> {
        let mut bits = [0u8; 8];
        for b in &mut bits {
            *b = self.byte()?;
        }
        let p = f64::from_bits(u64::from_le_bytes(bits));
        if !(0.0..=1.0).contains(&p) {
            return Err(TokenError(format!(
                "fault probability: expected 0 to 1, found {p}"
            )));
        }
        Ok(p)
    }

    pub(crate) fn strategy(&mut self) -> Result<Strategy, TokenError> {
        Ok(match self.bounded("strategy", 2 + MAX_PCT_DEPTH)? {
            0 => Strategy::Random,
            1 => Strategy::Swarm,
            d => Strategy::Pct {
                depth: (d - 2) as u32,
            },
        })
    }
}

/// `n`, or an error naming `what` when it is 0.
fn positive(n: u64, what: &str) -> Result<u64, TokenError> {
    if n == 0 {
        return Err(TokenError(format!("{what}: expected at least 1, found 0")));
    }
    Ok(n)
}
