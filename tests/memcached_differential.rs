//! Differential test: the same random request sequences against a real memcached 1.6.18
//! and against `kvsim serve`, replies compared byte for byte with cas uniques renamed in
//! order of first appearance.
//!
//! Requests are drawn from a grammar that mixes well-formed commands with the malformed
//! kinds the reference lists (bad numbers, 32-bit overflow, wrong arity, long keys, bad
//! data chunks, data blocks read as commands, noreply errors, long multi-gets). Nothing
//! depends on timing: relative TTLs are at least 1000 s, expired items come from negative
//! or past absolute times, and only immediate `flush_all`s are sent. Every request is
//! followed by `version`, whose reply marks the end of the request's replies.

mod differential_support;

use differential_support::{rename_lines, seed, Gen, Pair, Part, Replies, Uniques};

/// The replies to classic commands: uniques renamed, compared byte for byte.
struct Classic(Vec<u8>);

impl Replies for Classic {
    fn read(out: &[u8], uniques: &mut Uniques) -> Classic {
        Classic(rename_lines(out, uniques, |line, _, res| {
            res.extend_from_slice(line);
            None
        }))
    }

    fn agrees(&self, other: &Classic) -> bool {
        self.0 == other.0
    }

    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The grammar of classic requests.
impl Gen {
    fn key(&mut self) -> Vec<u8> {
        match self.rng.below(100) {
            0..=79 => self.pick(&["a", "b", "c", "n", "m"]).as_bytes().to_vec(),
            80..=89 => b"k\x01\xff".to_vec(),
            90..=96 => vec![b'K'; 250],
            _ => vec![b'L'; 251],
        }
    }

    /// A value. memcached's incr parses the item's data as a C string, but item data is
    /// not NUL-terminated: `strtoull` skips whitespace past the data's own `\r\n` into
    /// whatever stale bytes follow it in the slab chunk, and for a result of 2^63 or more
    /// `strchr(data, '-')` scans on past the data until some NUL. Those answers depend on
    /// memory, not on the protocol, so values are never all whitespace and never contain
    /// a '-' anywhere (so that no stale byte is a '-' either). Zero-length values and
    /// `-0`/`-1` as values are covered by the raw cases.
    fn value(&mut self) -> Vec<u8> {
        let v = self.value_any();
        if v.iter().all(|&b| kvsim::wire::is_c_space(b)) {
            let mut x = b"x".to_vec();
            x.extend_from_slice(&v);
            return x;
        }
        v
    }

    fn value_any(&mut self) -> Vec<u8> {
        match self.rng.below(10) {
            0..=3 => self
                .pick(&[
                    "0",
                    "9",
                    "10",
                    "99",
                    "007",
                    " 5",
                    "5 x",
                    "+4",
                    "+0",
                    "1.5",
                    "12abc",
                    "18446744073709551615",
                    "18446744073709551616",
                    "",
                ])
                .as_bytes()
                .to_vec(),
            4 => self
                .pick(&[
                    "get a b",
                    "delete a",
                    "incr n 1",
                    "gets n a",
                    "touch a 1000",
                    "x",
                ])
                .as_bytes()
                .to_vec(),
            _ => {
                let len = self.rng.below(12) as usize;
                (0..len)
                    .map(|_| b"abcxyz0123\r\n\t"[self.rng.index(13)])
                    .collect()
            }
        }
    }

    fn flags(&mut self) -> &'static str {
        if self.chance(0.8) {
            self.pick(&["0", "1", "65535"])
        } else {
            self.pick(&[
                "4294967295",
                "4294967296",
                "4294967297",
                "+5",
                "-0",
                "x",
                "-1",
                "5\tz",
            ])
        }
    }

    fn exptime(&mut self) -> &'static str {
        if self.chance(0.7) {
            self.pick(&["0", "1000", "100000"])
        } else {
            self.pick(&[
                "-1",
                "2592000",
                "2592001",
                "4294967296",
                "2147483648",
                "+1000",
                "abc",
                "-0",
                "2000000000",
            ])
        }
    }

    fn noreply(&mut self) -> &'static str {
        match self.rng.below(10) {
            0 => " noreply",
            1 => " norepl",
            _ => "",
        }
    }

    fn eol(&mut self) -> &'static str {
        if self.chance(0.95) {
            "\r\n"
        } else {
            "\n"
        }
    }

    fn storage(&mut self) -> Vec<Part> {
        let verb = self.pick(&[
            "set", "add", "replace", "append", "prepend", "cas", "set", "cas",
        ]);
        let key = self.key();
        let data = self.value();
        let mut line = format!("{verb} ").into_bytes();
        line.extend_from_slice(&key);
        let flags = self.flags();
        let exptime = self.exptime();
        let len = if self.chance(0.95) {
            data.len().to_string()
        } else {
            self.pick(&["x", "-1", "4294967295"]).to_string()
        };
        line.extend_from_slice(format!(" {flags} {exptime} {len}").as_bytes());
        let mut parts = vec![Part::Bytes(line)];
        if verb == "cas" && self.chance(0.95) {
            if let Some(unique) = self.recent_unique() {
                parts.push(Part::Bytes(b" ".to_vec()));
                parts.push(Part::Unique(unique));
            } else {
                let lit = self.pick(&["0", "999999999", "x", "-1", "18446744073709551616"]);
                parts.push(Part::Bytes(format!(" {lit}").into_bytes()));
            }
        }
        let mut tail = self.noreply().to_string();
        if self.chance(0.03) {
            tail.push_str(" extra");
        }
        tail.push_str(self.eol());
        tail = tail.clone();
        let mut block = data.clone();
        match self.rng.below(20) {
            0 => block.extend_from_slice(b"XY\r\n"),
            1 => block.extend_from_slice(b"zzz\r\n"),
            _ => block.extend_from_slice(b"\r\n"),
        }
        // A data block that contains a line break is only safe as a command when the
        // whole block ends with one (it does, above).
        parts.push(Part::Bytes(tail.into_bytes()));
        parts.push(Part::Bytes(block));
        parts
    }

    fn keys_line(&mut self, n: usize) -> Vec<u8> {
        let mut line = Vec::new();
        for _ in 0..n {
            line.push(b' ');
            line.extend_from_slice(&self.key());
        }
        line
    }

    fn request(&mut self) -> Vec<Part> {
        let eol = self.eol();
        let bytes = match self.rng.below(100) {
            0..=39 => return self.storage(),
            40..=59 => {
                let verb = self.pick(&["get", "gets", "gets", "gat", "gats", "bget"]);
                let n = if self.chance(0.9) {
                    1 + self.rng.below(3) as usize
                } else {
                    20 + self.rng.below(15) as usize
                };
                let mut line = verb.as_bytes().to_vec();
                if verb.starts_with("gat") {
                    line.extend_from_slice(format!(" {}", self.exptime()).as_bytes());
                }
                line.extend_from_slice(&self.keys_line(n));
                line.extend_from_slice(eol.as_bytes());
                line
            }
            60..=74 => {
                let verb = self.pick(&["incr", "decr"]);
                let delta = if self.chance(0.8) {
                    self.pick(&["1", "5", "0", "100", "18446744073709551615"])
                } else {
                    self.pick(&["18446744073709551616", "-1", "+3", "x", "2\tq", "-0"])
                };
                let mut line = format!("{verb} ").into_bytes();
                line.extend_from_slice(&self.key());
                line.extend_from_slice(format!(" {delta}").as_bytes());
                if self.chance(0.05) {
                    line.extend_from_slice(b" bogus");
                }
                line.extend_from_slice(self.noreply().as_bytes());
                line.extend_from_slice(eol.as_bytes());
                line
            }
            75..=84 => {
                let mut line = b"delete ".to_vec();
                line.extend_from_slice(&self.key());
                let extra = self.pick(&["", "", "", " 0", " 10", " 0 noreply", " x y z"]);
                line.extend_from_slice(extra.as_bytes());
                if extra.is_empty() {
                    line.extend_from_slice(self.noreply().as_bytes());
                }
                line.extend_from_slice(eol.as_bytes());
                line
            }
            85..=91 => {
                let mut line = b"touch ".to_vec();
                line.extend_from_slice(&self.key());
                line.extend_from_slice(format!(" {}", self.exptime()).as_bytes());
                line.extend_from_slice(self.noreply().as_bytes());
                line.extend_from_slice(eol.as_bytes());
                line
            }
            92 => format!(
                "flush_all{}{}{eol}",
                self.pick(&["", " 0", " -1", " x", " 0 0 0"]),
                self.noreply()
            )
            .into_bytes(),
            93 => format!(
                "verbosity{}{}{eol}",
                self.pick(&["", " 1", " x", " 1 2"]),
                self.noreply()
            )
            .into_bytes(),
            _ => {
                let junk = self.pick(&[
                    "",
                    "g",
                    "GET a",
                    "gett a",
                    "get\ta",
                    "set",
                    "cas a 0 0 1",
                    "incr",
                    "touch a",
                    "delete",
                    "mx",
                    "stuff HTTP/1.1",
                    " ",
                    "get a\0zz",
                    "\r",
                ]);
                format!("{junk}{eol}").into_bytes()
            }
        };
        vec![Part::Bytes(bytes)]
    }
}

#[test]
fn kvsim_serve_replies_as_memcached_over_random_requests() {
    let Some(mut pair) = Pair::<Classic>::start("memcached_differential") else {
        return;
    };
    let mut gen = Gen::new(seed(0x5eed));
    let total = 12_000;
    for i in 0..total {
        let parts = gen.request();
        pair.exchange(&format!("request {i}"), &parts);
        gen.symbols = pair.symbols();
    }
}
