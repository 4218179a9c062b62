//! `kvsim serve`'s memory flags in memcached's own form and units: `-m MB`, `-n BYTES`,
//! `-f FACTOR`, `-I SIZE`, `-o no_lru_maintainer,slab_automove=N`, validated as memcached
//! 1.6.18 validates them (`memcached.c`), each failure saying what was expected.

use clap::Args;
use kvsim::store::geometry::{Factor, Geometry};

/// memcached's smallest item size limit (`ITEM_SIZE_MAX_LOWER_LIMIT`).
const ITEM_SIZE_MIN: usize = 1024;

/// memcached's largest item size limit (`ITEM_SIZE_MAX_UPPER_LIMIT`, a gigabyte).
const ITEM_SIZE_MAX: usize = 1024 * 1024 * 1024;

/// The largest `-m` kvsim accepts (1 TiB in megabytes).
const MEGABYTES_MAX: usize = 1 << 20;

/// The largest `-f` kvsim accepts (memcached only asks for more than 1).
const FACTOR_MAX: f64 = 64.0;

/// memcached's memory flags.
#[derive(Args, Debug, Default)]
pub struct MemoryArgs {
    /// memcached's -m: memory for items in megabytes (64 unless told; 0 for no limit).
    /// Overrides --memory-limit.
    #[arg(short = 'm', long = "memory-mb", value_name = "MB", value_parser = parse_megabytes)]
    pub megabytes: Option<usize>,
    /// memcached's -n: minimum space for key, value and flags in the smallest chunk
    /// (bytes, 48 unless told).
    #[arg(short = 'n', long = "chunk-size", value_name = "BYTES", value_parser = parse_chunk_size)]
    pub chunk_size: Option<usize>,
    /// memcached's -f: the growth factor between slab classes' chunk sizes (1.25 unless
    /// told).
    #[arg(short = 'f', long = "growth-factor", value_name = "FACTOR", value_parser = parse_factor)]
    pub factor: Option<f64>,
    /// memcached's -I: the largest item (bytes, or with suffix k or m; 1m unless told).
    #[arg(short = 'I', long = "max-item-size", value_name = "SIZE", value_parser = parse_item_size)]
    pub item_size: Option<usize>,
    /// memcached's -o: comma-separated options; kvsim knows no_lru_maintainer,
    /// lru_maintainer and slab_automove[=0|1|2].
    #[arg(short = 'o', value_name = "OPTIONS", value_parser = parse_options)]
    pub options: Vec<Options>,
}

/// What `-o` set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `no_lru_maintainer` (false) or `lru_maintainer` (true).
    pub lru_maintainer: Option<bool>,
    /// `slab_automove=N`.
    pub slab_automove: Option<u8>,
}

/// `-m`: whole megabytes.
fn parse_megabytes(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n <= MEGABYTES_MAX => Ok(n),
        _ => Err(format!(
            "expected megabytes from 0 to {MEGABYTES_MAX}, found {s:?}"
        )),
    }
}

/// `-n`: a positive byte count (memcached: "Chunk size must be greater than 0").
fn parse_chunk_size(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=ITEM_SIZE_MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a chunk size from 1 to {ITEM_SIZE_MAX} bytes, found {s:?}"
        )),
    }
}

/// `-f`: more than 1 (memcached: "Factor must be greater than 1").
fn parse_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 1.0 && f <= FACTOR_MAX => Ok(f),
        _ => Err(format!(
            "expected a growth factor greater than 1 and at most {FACTOR_MAX}, found {s:?}"
        )),
    }
}

/// `-I`: bytes, or a number with suffix k/K or m/M, from 1024 bytes to a gigabyte.
fn parse_item_size(s: &str) -> Result<usize, String> {
    let bad = || {
        format!(
            "expected an item size from {ITEM_SIZE_MIN} bytes to 1g (bytes, or with suffix k or m), found {s:?}"
        )
    };
    let (digits, factor) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1024),
        Some('m' | 'M') => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    let n: usize = digits.parse().map_err(|_| bad())?;
    match n.checked_mul(factor) {
        Some(size) if (ITEM_SIZE_MIN..=ITEM_SIZE_MAX).contains(&size) => Ok(size),
        _ => Err(bad()),
    }
}

/// `-o`: a comma-separated list.
fn parse_options(s: &str) -> Result<Options, String> {
    let mut out = Options::default();
    for opt in s.split(',').filter(|o| !o.is_empty()) {
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (opt, None),
        };
        match (name, value) {
            ("no_lru_maintainer", None) => out.lru_maintainer = Some(false),
            ("lru_maintainer", None) => out.lru_maintainer = Some(true),
            ("slab_automove", None) => out.slab_automove = Some(1),
            ("slab_automove", Some(v)) => match v.parse::<u8>() {
                Ok(n) if n <= 2 => out.slab_automove = Some(n),
                _ => {
                    return Err(format!(
                        "expected slab_automove between 0 and 2, found {v:?}"
                    ))
                }
            },
            _ => {
                return Err(format!(
                    "expected no_lru_maintainer, lru_maintainer or slab_automove=N, found {opt:?}"
                ))
            }
        }
    }
    Ok(out)
}

impl MemoryArgs {
    /// The memory limit (bytes; `None` for none), the item size limit and the geometry
    /// these flags give, `memory_limit` being `--memory-limit`'s bytes (0 for none).
    /// Checks what memcached checks at start: `-I` at most half of `-m` (when either is
    /// given), and the largest chunk dividing `-I` evenly.
    pub fn resolve(&self, memory_limit: usize) -> Result<(Option<usize>, usize, Geometry), String> {
        let limit = match self.megabytes {
            Some(mb) => mb << 20,
            None => memory_limit,
        };
        let mut geometry = Geometry::default();
        if let Some(n) = self.chunk_size {
            geometry.chunk_size = n;
        }
        if let Some(f) = self.factor {
            geometry.factor = Factor(f);
        }
        for o in &self.options {
            if let Some(on) = o.lru_maintainer {
                geometry.lru_maintainer = on;
            }
            if let Some(n) = o.slab_automove {
                geometry.slab_automove = n;
            }
        }
        let item_size = self.item_size.unwrap_or(1024 * 1024);
        // memcached checks -I against -m; a byte count from --memory-limit is kvsim's own
        // (a store of a few kilobytes keeps the default -I).
        let explicit = self.megabytes.is_some() || self.item_size.is_some();
        if explicit && limit > 0 && item_size > limit / 2 {
            return Err(format!(
                "expected -I at most half of the memory ({} bytes), found {item_size}",
                limit / 2
            ));
        }
        if geometry.slab_chunk_max > item_size {
            return Err(format!(
                "expected -I at least the largest chunk ({} bytes), found {item_size}",
                geometry.slab_chunk_max
            ));
        }
        if !item_size.is_multiple_of(geometry.slab_chunk_max) {
            return Err(format!(
                "expected -I a multiple of the largest chunk ({} bytes), found {item_size}",
                geometry.slab_chunk_max
            ));
        }
        if geometry.chunk_size + 48 >= geometry.slab_chunk_max {
            return Err(format!(
                "expected -n below the largest chunk ({} bytes) less the item header, found {}",
                geometry.slab_chunk_max, geometry.chunk_size
            ));
        }
        Ok(((limit > 0).then_some(limit), item_size, geometry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_as_memcached_reads_them() {
        assert_eq!(parse_item_size("2m"), Ok(2 << 20));
        assert_eq!(parse_item_size("512K"), Ok(512 << 10));
        assert!(parse_item_size("1000")
            .unwrap_err()
            .contains("found \"1000\""));
        assert!(parse_factor("1").is_err());
        assert_eq!(parse_factor("1.08"), Ok(1.08));
        assert!(parse_chunk_size("0").is_err());
        let o = parse_options("no_lru_maintainer,slab_automove=0").unwrap();
        assert_eq!(
            o,
            Options {
                lru_maintainer: Some(false),
                slab_automove: Some(0)
            }
        );
        assert!(parse_options("slab_automove=3")
            .unwrap_err()
            .contains("between 0 and 2"));
        assert!(parse_options("modern")
            .unwrap_err()
            .contains("found \"modern\""));
    }

    #[test]
    fn flags_resolve_as_memcached_checks_them() {
        let args = MemoryArgs {
            megabytes: Some(4),
            factor: Some(1.5),
            options: vec![parse_options("no_lru_maintainer").unwrap()],
            ..MemoryArgs::default()
        };
        let (limit, item, g) = args.resolve(64 << 20).unwrap();
        assert_eq!((limit, item), (Some(4 << 20), 1 << 20));
        assert!(!g.lru_maintainer && g.factor == Factor(1.5));
        let (limit, _, _) = MemoryArgs::default().resolve(1000 << 20).unwrap();
        assert_eq!(limit, Some(1000 << 20), "--memory-limit keeps its meaning");
        let too_big = MemoryArgs {
            megabytes: Some(1),
            ..MemoryArgs::default()
        };
        assert!(too_big
            .resolve(0)
            .unwrap_err()
            .contains("half of the memory"));
        let uneven = MemoryArgs {
            item_size: Some(3000 << 10),
            ..MemoryArgs::default()
        };
        assert!(uneven
            .resolve(0)
            .unwrap_err()
            .contains("multiple of the largest chunk"));
    }
}
