//! `kvsim serve`: the simulated memcached over TCP, with fault knobs.

use crate::error::CliError;
use clap::Args;
use kvsim::net::{
    FaultPlan, LockstepConfig, ServeConfig, Server, DEFAULT_LISTEN, DEFAULT_MAX_CONNECTIONS,
};
use kvsim::store::StoreConfig;
use kvsim::FaultKind;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;

/// The flags of `kvsim serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; loopback unless you name another.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// Total item bytes the store may hold (suffix k, m or g for KiB, MiB, GiB), as
    /// memcached's -m: 64m unless told, 0 for no limit. Memory is laid out in slab
    /// classes as memcached lays it out; past the limit a class evicts from its own LRU,
    /// unless --no-evict or --persistent.
    #[arg(long, value_parser = parse_bytes, default_value = "64m")]
    pub memory_limit: usize,
    /// memcached's memory flags: -m, -n, -f, -I, -o.
    #[command(flatten)]
    pub memory: crate::serve_memory::MemoryArgs,
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
    /// Faults to inject, drawn before each request with --fault-rate: evict (a key the
    /// request names), expire (the server clock jumps --clock-jump-secs forward), restart
    /// (volatile data lost, connections closed), lose (the request or its reply lost: the
    /// connection closes), delay (the reply held --fault-hold-ms), pause (the connection
    /// stalls --fault-hold-ms before the request is applied).
    #[arg(long, value_delimiter = ',', value_parser = parse_serve_fault)]
    pub faults: Vec<FaultKind>,
    /// Probability, per request, of one of --faults.
    #[arg(long, default_value_t = 0.0, value_parser = parse_probability)]
    pub fault_rate: f64,
    /// How long a drawn delay holds a reply, and a drawn pause stalls a connection (ms).
    #[arg(long, default_value_t = 2_000,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub fault_hold_ms: u64,
    /// How far a drawn expire moves the server clock (seconds).
    #[arg(long, default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(0..=31_536_000))]
    pub clock_jump_secs: u64,
    /// Listen for control commands on this address (loopback unless you name another): a
    /// line protocol for test drivers (`evict KEY`, `restart`, `clock +SECS`,
    /// `drop-request CONN`, `drop-reply CONN`, `delay-reply CONN MS`, `pause CONN MS`,
    /// `conns`, `stats`, `help`), never reachable through the memcached port.
    #[arg(long, value_name = "ADDR")]
    pub control: Option<String>,
    /// Write every connection, command, reply and fault to FILE as JSON lines (`kvsim
    /// trace FILE` prints it as a table).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,
    /// Stop writing the trace at this size (suffix k, m or g).
    #[arg(long, value_parser = parse_bytes, default_value = "1g")]
    pub trace_max_bytes: usize,
    /// Serve requests one at a time: wait until N connections each have a request
    /// waiting (or --lockstep-quantum-ms passes with fewer), then serve one the seed
    /// picks. Clients deterministic between their calls then replay the same
    /// interleaving from the same --seed (see README for its limits).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub lockstep: Option<u64>,
    /// How long --lockstep waits for N requests before picking among fewer (ms).
    #[arg(long, default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub lockstep_quantum_ms: u64,
}

/// A fault `kvsim serve` injects.
fn parse_serve_fault(s: &str) -> Result<FaultKind, String> {
    let kind = FaultKind::parse(s)?;
    FaultPlan {
        kinds: vec![kind],
        ..FaultPlan::default()
    }
    .validate()?;
    Ok(kind)
}

fn resolve_control(addr: &str) -> Result<SocketAddr, CliError> {
    resolve(addr).map_err(|e| CliError::of("serve", e.replace("--listen", "--control")))
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
    let (memory_limit, item_size_max, geometry) = args
        .memory
        .resolve(args.memory_limit)
        .map_err(|e| CliError::of("serve", e))?;
    let config = ServeConfig {
        listen,
        store: StoreConfig {
            memory_limit,
            item_size_max,
            geometry,
            evict: !args.no_evict,
            persistent: args.persistent,
        },
        evict_probability: args.evict_probability,
        delay_ms: args.delay_ms,
        clock_offset_secs: args.clock_offset,
        seed: args.seed,
        max_connections: args.max_connections as usize,
        faults: FaultPlan {
            kinds: args.faults.clone(),
            rate: args.fault_rate,
            hold_ms: args.fault_hold_ms,
            jump_secs: args.clock_jump_secs,
        },
        control: args.control.as_deref().map(resolve_control).transpose()?,
        trace: args.trace.clone(),
        trace_max_bytes: args.trace_max_bytes as u64,
        lockstep: args.lockstep.map(|n| LockstepConfig {
            clients: n as usize,
            quantum: std::time::Duration::from_millis(args.lockstep_quantum_ms),
        }),
    };
    let server = Server::start(config).map_err(|e| CliError::of("serve", e.to_string()))?;
    eprintln!(
        "kvsim serve: listening on {} (memcached 1.6.18 text protocol, seed {})",
        server.local_addr(),
        args.seed
    );
    if let Some(addr) = server.control_addr() {
        eprintln!("kvsim serve: control on {addr}");
    }
    server
        .wait()
        .map_err(|e| CliError::of("serve", e.to_string()))?;
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
        // memcached's own memory flags, in its units.
        let args = Cli::parse_from([
            "kvsim",
            "-m",
            "4",
            "-n",
            "32",
            "-f",
            "1.5",
            "-I",
            "2m",
            "-o",
            "no_lru_maintainer,slab_automove=0",
        ])
        .serve;
        let (limit, item, geometry) = args.memory.resolve(args.memory_limit).unwrap();
        assert_eq!((limit, item), (Some(4 << 20), 2 << 20));
        assert_eq!((geometry.chunk_size, geometry.slab_automove), (32, 0));
        assert!(!geometry.lru_maintainer);
        assert!(Cli::try_parse_from(["kvsim", "-f", "0.9"]).is_err());
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
