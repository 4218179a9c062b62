//! Consistent hashing across several servers, as libmemcached's ketama does it (the
//! libketama-compatible, weighted mode: `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED`, MD5).
//!
//! Each server gets `floor(weight/total * 160/4 * servers) * 4` points on a 32-bit circle
//! (160 for equal weights, computed in single precision as libmemcached does): for
//! `i` in `0..points/4`, the MD5 of `host:port-i` (`host-i` when the port is 11211) gives
//! four points, one per 4-byte little-endian quarter of the digest. A key's hash is the
//! first quarter of its own MD5; it belongs to the server of the first point at or after
//! it, wrapping around. Points are sorted by value, then server index.

use md5::{Digest, Md5};

/// Points per server with equal weights (`MEMCACHED_POINTS_PER_SERVER_KETAMA`).
pub const POINTS_PER_SERVER: u32 = 160;

/// The memcached default port: libmemcached leaves it out of the point names.
pub const DEFAULT_PORT: u16 = 11211;

/// A ketama continuum over servers `0..n`.
#[derive(Clone, Debug)]
pub struct Ketama {
    /// (point, server index), sorted.
    points: Vec<(u32, usize)>,
    servers: usize,
}

fn md5(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

/// The `alignment`-th little-endian quarter of a digest (`ketama_server_hash`).
fn quarter(digest: &[u8; 16], alignment: usize) -> u32 {
    let q = &digest[alignment * 4..alignment * 4 + 4];
    u32::from_le_bytes([q[0], q[1], q[2], q[3]])
}

/// The hash of a key on the continuum (`hashkit_md5`).
pub fn key_hash(key: &[u8]) -> u32 {
    quarter(&md5(key), 0)
}

/// The name libmemcached hashes for a server: `host` for port 11211, else `host:port`.
pub fn point_name(host: &str, port: u16) -> String {
    if port == DEFAULT_PORT {
        host.to_string()
    } else {
        format!("{host}:{port}")
    }
}

impl Ketama {
    /// A continuum for servers given as `(host, port, weight)`, in this order (their
    /// indices are what [`Ketama::server_for`] returns). A weight of 0 counts as 1.
    pub fn new(servers: &[(&str, u16, u32)]) -> Self {
        let weights: Vec<u32> = servers.iter().map(|s| s.2.max(1)).collect();
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let live = servers.len() as f32;
        let mut points = Vec::new();
        for (index, (&(host, port, _), &weight)) in servers.iter().zip(&weights).enumerate() {
            // libmemcached computes this in float; keep the same rounding.
            let pct = weight as f32 / total as f32;
            let per_server = ((pct * POINTS_PER_SERVER as f32 / 4.0 * live + 0.000_000_000_1_f32)
                .floor()
                * 4.0) as u32;
            let name = point_name(host, port);
            for i in 0..per_server / 4 {
                let digest = md5(format!("{name}-{i}").as_bytes());
                for alignment in 0..4 {
                    points.push((quarter(&digest, alignment), index));
                }
            }
        }
        points.sort_unstable();
        Ketama {
            points,
            servers: servers.len(),
        }
    }

    /// The number of servers.
    pub fn len(&self) -> usize {
        self.servers
    }

    /// Whether there are no servers.
    pub fn is_empty(&self) -> bool {
        self.servers == 0
    }

    /// The index of the server that holds `key` (0 when there is a single server).
    pub fn server_for(&self, key: &[u8]) -> usize {
        if self.points.is_empty() {
            return 0;
        }
        let hash = key_hash(key);
        let i = self.points.partition_point(|&(p, _)| p < hash);
        self.points[if i == self.points.len() { 0 } else { i }].1
    }

    /// The continuum's points, sorted (for inspection and tests).
    pub fn points(&self) -> &[(u32, usize)] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_weights_give_160_points_each() {
        for n in 1..=12 {
            let hosts: Vec<(String, u16)> =
                (0..n).map(|i| (format!("10.0.0.{i}"), 11211)).collect();
            let servers: Vec<(&str, u16, u32)> =
                hosts.iter().map(|(h, p)| (h.as_str(), *p, 1)).collect();
            let k = Ketama::new(&servers);
            assert_eq!(k.points().len(), 160 * n, "{n} servers");
        }
    }

    #[test]
    fn point_names_and_hashes_follow_libketama() {
        assert_eq!(point_name("127.0.0.1", 11211), "127.0.0.1");
        assert_eq!(point_name("127.0.0.1", 11212), "127.0.0.1:11212");
        // MD5("") = d41d8cd98f00b204e9800998ecf8427e; first quarter little-endian.
        assert_eq!(key_hash(b""), 0xd98c_1dd4);
    }

    #[test]
    fn keys_spread_and_adding_a_server_moves_few() {
        let two = Ketama::new(&[("a", 1, 1), ("b", 1, 1)]);
        let three = Ketama::new(&[("a", 1, 1), ("b", 1, 1), ("c", 1, 1)]);
        let mut counts = [0usize; 3];
        let mut moved_between_old = 0;
        for i in 0..3000 {
            let key = format!("key{i}");
            let s2 = two.server_for(key.as_bytes());
            let s3 = three.server_for(key.as_bytes());
            counts[s3] += 1;
            if s3 != 2 && s3 != s2 {
                moved_between_old += 1;
            }
        }
        assert!(counts.iter().all(|&c| c > 600), "{counts:?}");
        assert_eq!(moved_between_old, 0, "keys only move to the new server");
    }
}
