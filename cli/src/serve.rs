//! `kvsim serve`: the simulated memcached over TCP, with fault knobs.

use crate::error::CliError;
use clap::Args;
use kvsim::net::{ServeConfig, Server, DEFAULT_LISTEN, DEFAULT_MAX_CONNECTIONS};
use kvsim::store::StoreConfig;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;

/// The flags of `kvsim serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; loopback unless you name another.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// Total item bytes the store may hold (suffix k, m or g for KiB, MiB, GiB), as
    /// memcached's -m: 64m unless told, 0 for no limit. Past it the least recently used
    /// items are evicted (expired ones first), unless --no-evict or --persistent.
    #[arg(long, value_parser = parse_bytes, default_value = "64m")]
    pub memory_limit: usize,
    /// When memory is full, refuse stores (memcached -M) instead of evicting.
    #[arg(long)]
    pub no_evict: bool,
    /// Never evict (MemcacheDB, kumofs, Flare).
    #[arg(long)]
    pub persistent: bool,
    /// Probability that each key a command names is evicted just before it.
    #[arg(long, default_value_t = 0.0, value_parser = parse_probability)]
    pub evict_probability: f64,
    /// Delay every command uniformly by LO..HI milliseconds (or exactly N); a multi-get
    /// is delayed at each key, as memcached looks its keys up one by one.
    #[arg(long, value_parser = parse_range)]
    pub delay_ms: Option<(u64, u64)>,
    /// Shift the server clock by this many seconds (negative: behind).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub clock_offset: i64,
    /// Seed of the fault draws.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Most connections open at once (memcached's -c); more are answered `ERROR Too many
    /// open connections` and closed.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub max_connections: u64,
}

/// `1048576`, `64m`, `512k`, `1g`.
fn parse_bytes(s: &str) -> Result<usize, String> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], c.to_ascii_lowercase()),
        _ => (s, 'b'),
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("expected a byte count like 1048576 or 64m, found {s:?}"))?;
    let factor = match unit {
        'b' => 1,
        'k' => 1 << 10,
        'm' => 1 << 20,
        'g' => 1 << 30,
        _ => return Err(format!("expected a suffix k, m or g, found {s:?}")),
    };
    n.checked_mul(factor)
        .ok_or_else(|| format!("expected a byte count that fits in memory, found {s:?}"))
}

fn parse_probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("expected a probability from 0 to 1, found {s:?}")),
    }
}

/// `LO..HI` or `N`.
fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("expected milliseconds as LO..HI or N, found {s:?}");
    let (lo, hi) = match s.split_once("..") {
        Some((lo, hi)) => (
            lo.parse().map_err(|_| bad())?,
            hi.trim_start_matches('=').parse().map_err(|_| bad())?,
        ),
        None => {
            let n = s.parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    if lo > hi {
        return Err(format!("expected LO <= HI, found {s:?}"));
    }
    Ok((lo, hi))
}

fn resolve(listen: &str) -> Result<SocketAddr, String> {
    listen
        .to_socket_addrs()
        .map_err(|e| format!("bad --listen {listen:?}: expected host:port ({e})"))?
        .next()
        .ok_or_else(|| format!("bad --listen {listen:?}: it resolves to no address"))
}

/// Runs the server until the process is stopped; returns the exit code on failure.
pub fn main(args: ServeArgs) -> Result<ExitCode, CliError> {
    let listen = resolve(&args.listen).map_err(|e| CliError::of("serve", e))?;
    let config = ServeConfig {
        listen,
        store: StoreConfig {
            memory_limit: (args.memory_limit > 0).then_some(args.memory_limit),
            evict: !args.no_evict,
            persistent: args.persistent,
            ..StoreConfig::default()
        },
        evict_probability: args.evict_probability,
        delay_ms: args.delay_ms,
        clock_offset_secs: args.clock_offset,
        seed: args.seed,
        max_connections: args.max_connections as usize,
    };
    let server = Server::start(config)
        .map_err(|e| CliError::of("serve", format!("cannot listen on {listen}: {e}")))?;
    eprintln!(
        "kvsim serve: listening on {} (memcached 1.6.18 text protocol, seed {})",
        server.local_addr(),
        args.seed
    );
    server.wait();
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unless told, the store is bounded as memcached's is (`-m 64`, `-c 1024`).
    #[test]
    fn the_defaults_are_memcacheds() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let args = Cli::parse_from(["kvsim"]).serve;
        assert_eq!((args.memory_limit, args.max_connections), (64 << 20, 1024));
        let args = Cli::parse_from(["kvsim", "--memory-limit", "0"]).serve;
        assert_eq!(args.memory_limit, 0);
    }

    #[test]
    fn flag_values_parse() {
        assert_eq!(parse_bytes("64m"), Ok(64 << 20));
        assert_eq!(parse_bytes("1048576"), Ok(1_048_576));
        assert!(parse_bytes("64x").is_err());
        assert_eq!(parse_range("5..20"), Ok((5, 20)));
        assert_eq!(parse_range("7"), Ok((7, 7)));
        assert_eq!(
            parse_range("9..2"),
            Err("expected LO <= HI, found \"9..2\"".to_string())
        );
        assert!(parse_probability("1.5").is_err());
    }
}
