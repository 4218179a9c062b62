//! Differential test of the meta protocol: the same requests against a real memcached
//! 1.6.18 and against `kvsim serve`, replies compared byte for byte, with cas uniques
//! renamed in order of first appearance (`VALUE … <cas>`, `c<cas>` return flags and
//! `me`'s `cas=`), as `memcached_differential.rs` does for the classic commands.
//!
//! Two parts: hand-written cases for every flag 1.6.18's `protocol.txt` lists for `mg`,
//! `ms`, `md`, `ma`, `me` and `mn` (and the error texts), then random request streams that
//! mix meta commands (well-formed and malformed, single and pipelined in quiet mode behind
//! an `mn`) with classic ones.
//!
//! Nothing depends on timing: relative TTLs are at least 1000 s (recache thresholds sit
//! far from every TTL used), expired items come from negative or past absolute times, and
//! only immediate `flush_all`s are sent. The numbers that report time (`t`, `l`, `me`'s
//! `exp` and `la`) are compared with a tolerance of 2 s, since the two servers' clocks
//! tick on different second boundaries. Every exchange ends with `version`, whose reply
//! marks the end of its replies. Within one pipeline no `ma`/`incr`/`decr` follows an
//! `mg` of the same key: memcached keeps an `mg` hit referenced until its reply is
//! written, which makes a following in-place increment allocate a new item instead (see
//! the report of known differences in `src/store/meta.rs`'s callers).

mod differential_support;

use differential_support::{rename_lines, seed, Gen, Pair, Part, Replies, Uniques};
use kvsim::command::meta::base64_encode;

/// The most two servers' time reports may differ by (their seconds tick apart).
const TIME_TOLERANCE: i64 = 2;

/// A server's replies to one exchange: the bytes with uniques renamed and time reports
/// blanked, and the time reports.
#[derive(Debug, PartialEq)]
struct MetaReplies {
    bytes: Vec<u8>,
    times: Vec<i64>,
}

impl Replies for MetaReplies {
    // A case sends a value of 2 MB: the history keeps less of it.
    const SHOWN_PART: usize = 300;
    const SHOWN_LINE: usize = 2000;

    /// Renames uniques and sets time reports aside.
    fn read(out: &[u8], uniques: &mut Uniques) -> MetaReplies {
        rename(out, uniques)
    }

    fn agrees(&self, other: &MetaReplies) -> bool {
        self.bytes == other.bytes
            && self.times.len() == other.times.len()
            && self
                .times
                .iter()
                .zip(&other.times)
                .all(|(a, b)| (a - b).abs() <= TIME_TOLERANCE)
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn show(&self) -> String {
        format!(
            "{} {:?}",
            kvsim::command::show_bytes(&self.bytes),
            self.times
        )
    }
}

fn number(s: &[u8]) -> Option<i64> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Whether a line is a meta reply line with flags (`HD …`, `EN …`, …; `VA` apart).
fn is_meta_line(line: &[u8]) -> bool {
    line.len() >= 2
        && [&b"HD"[..], b"EN", b"NF", b"NS", b"EX"].contains(&&line[..2])
        && (line.len() == 2 || line[2] == b' ')
}

/// Rewrites a meta line's flags: `c<cas>` as `c#<symbol>`, `t<n>`/`l<n>` as `t~`/`l~`
/// with the number kept aside (`t-1` stays).
fn rename_flags(tokens: &[&[u8]], uniques: &mut Uniques, times: &mut Vec<i64>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        let num = number(&t[1..]);
        match (t.first(), num) {
            (Some(b'c'), Some(n)) => {
                out.extend_from_slice(format!("c#{}", uniques.symbol(n as u64)).as_bytes())
            }
            (Some(b't'), Some(n)) if n != -1 => {
                out.extend_from_slice(b"t~");
                times.push(n);
            }
            (Some(b'l'), Some(n)) => {
                out.extend_from_slice(b"l~");
                times.push(n);
            }
            _ => out.extend_from_slice(t),
        }
    }
    out
}

/// Renames uniques and sets time reports aside, line by line (data blocks copied).
fn rename(out: &[u8], uniques: &mut Uniques) -> MetaReplies {
    let mut times = Vec::new();
    let bytes = rename_lines(out, uniques, |line, uniques, res| {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        if fields[0] == b"VA" && fields.len() >= 2 {
            res.extend_from_slice(b"VA ");
            res.extend_from_slice(&rename_flags(&fields[1..], uniques, &mut times));
            return number(fields[1]).map(|len| len as usize);
        }
        if is_meta_line(line) {
            res.extend_from_slice(&rename_flags(&fields, uniques, &mut times));
        } else if fields[0] == b"ME" && fields.len() >= 8 {
            // The key may hold spaces (a binary key written raw): the fields are the last
            // six words.
            let key_end = fields.len() - 6;
            res.extend_from_slice(&fields[..key_end].join(&b' '));
            for f in &fields[key_end..] {
                res.push(b' ');
                if let Some(n) = f.strip_prefix(b"cas=").and_then(number) {
                    res.extend_from_slice(format!("cas=#{}", uniques.symbol(n as u64)).as_bytes());
                } else if let Some(n) = f.strip_prefix(b"exp=").and_then(number) {
                    res.extend_from_slice(if n == -1 { b"exp=-1" } else { b"exp=~" });
                    if n != -1 {
                        times.push(n);
                    }
                } else if let Some(n) = f.strip_prefix(b"la=").and_then(number) {
                    res.extend_from_slice(b"la=~");
                    times.push(n);
                } else {
                    res.extend_from_slice(f);
                }
            }
        } else {
            res.extend_from_slice(line);
        }
        None
    });
    MetaReplies { bytes, times }
}

/// Hand-written exchanges: every flag of `mg`, `ms`, `md`, `ma`, `me`, `mn` in 1.6.18's
/// `protocol.txt`, the modes, the win/stale/recache protocol, base64 keys, quiet mode and
/// the error texts. `<cas>` stands for the last unique either server reported.
const CASES: &[&str] = &[
    // mn, and mg's return flags on a hit and a miss.
    "mn\r\n",
    "mn with words\r\n",
    "set a 5 0 2\r\nxy\r\nmg a v c f s t k O123 h l\r\n",
    "mg a\r\n",
    "mg a h\r\n",
    "mg a u h\r\nmg a h\r\n",
    "mg missing\r\n",
    "mg missing v c t k Oab s\r\n",
    "mg missing q\r\nmg a q\r\nmg a v q\r\nmn\r\n",
    "mg missing q k Oxyz\r\nmn\r\n",
    "mg a Pproxy Lpath v\r\n",
    "mg a vjunk cc kk\r\n",
    // T, N, R and W/X/Z.
    "mg a t T1000\r\nmg a T2000 t\r\nmg a t\r\n",
    "mg a T0 t\r\n",
    "mg a T-1 v\r\nmg a v\r\n",
    "mg viv N1000 v c t\r\nmg viv N1000 v c t\r\nmg viv v t h\r\n",
    "mg viv2 t N1000 v\r\nmg viv5 N1000 t\r\nmg viv5 t v k\r\n",
    "mg viv3 N0 s t u h\r\nmg viv3 h\r\n",
    "mg viv4 N-1 v\r\nmg viv4 v\r\n",
    "set r 0 1000 1\r\nr\r\nmg r R30 v\r\nmg r R50000 v\r\nmg r R50000 v\r\n",
    "set r2 0 0 1\r\nr\r\nmg r2 R50000 v\r\n",
    "set r3 0 100000 1\r\nr\r\nmg r3 R50000 v\r\nmg r3 R2592000 v\r\n",
    "set s 0 0 1\r\nv\r\nmd s I\r\nmg s v c\r\nmg s v c\r\nmg s c\r\n",
    "md s I T1000\r\nmg s t v\r\nmd s q\r\nmg s v\r\n",
    // ms: modes, flags, cas, invalidation.
    "ms m 2\r\nhi\r\n",
    "ms m 2 c k Oq T1000 F77\r\nhi\r\nmg m f t v\r\n",
    "ms m 2 q\r\nhi\r\nmn\r\n",
    "ms m 0\r\n\r\nmg m v s\r\n",
    "ms m 2 MS\r\nab\r\nms m 2 ME\r\ncd\r\nms new 2 ME c\r\nef\r\n",
    "ms m 2 MA\r\ngh\r\nms m 2 MP\r\nij\r\nmg m v\r\n",
    "ms none 2 MA\r\ngh\r\nms none 2 MP\r\nij\r\nms none 2 MR\r\nkl\r\n",
    "ms m 2 MR T1000\r\nxy\r\nmg m v t\r\n",
    "ms m 1 C0\r\nx\r\nms gone 1 C5\r\nx\r\nms gone 1 C5 MR\r\nx\r\n",
    "ms m 1 c\r\nx\r\n",
    "ms m 1 C<cas> c\r\ny\r\nms m 1 C<cas> c\r\nz\r\n",
    "ms m 1 MA C<cas> c\r\nz\r\nmg m v\r\n",
    "ms m 1 c\r\nx\r\nms m 1 C1 I c\r\nw\r\nmg m v c\r\nmg m v c\r\n",
    "ms m 1 C999999999 I c\r\nw\r\n",
    "ms m 1 c T1000\r\nx\r\nmd m I\r\nms m 1 C1 I\r\nz\r\nmg m v t\r\n",
    "ms m 1 MA C1\r\nq\r\nms m 1 MA C0\r\nq\r\nms m 1 ME C1\r\nq\r\nmg m v\r\n",
    "ms m 1 F4294967296\r\nx\r\nmg m f\r\nms m 1 F4294967295\r\nx\r\nmg m f s\r\n",
    "ms m 1 T-1\r\nx\r\nmg m v\r\n",
    "ms m 1 T2592001\r\nx\r\nmg m v\r\n",
    "ms m 1 I\r\nx\r\nms m 1 MP I\r\ny\r\nmg m v\r\n",
    // md
    "set d 0 0 1\r\nx\r\nmd d\r\nmd d\r\nmd d q\r\nmn\r\n",
    "set d 0 0 1\r\nx\r\nmd d q\r\nmn\r\nmg d v\r\n",
    "set d 0 0 1\r\nx\r\nmd d C1 k Oo\r\nmd d C0\r\n",
    "set d 0 0 1\r\nx\r\nmg d c\r\n",
    "md d C<cas> k\r\nmg d v\r\n",
    "set d 0 0 1\r\nx\r\nmg d c\r\n",
    "md d C<cas> I T1000 q\r\nmg d v c t\r\n",
    "set d 0 0 1\r\nx\r\nmd d I T-1\r\nmg d v\r\n",
    "set d 0 0 1\r\nx\r\nmd d T1000\r\nmg d t\r\n",
    "set d 0 0 1\r\nx\r\nmd d I q\r\nmd d I C1\r\nmn\r\n",
    // ma
    "ma cnt\r\nma cnt q\r\nma cnt N0\r\nma cnt\r\nma cnt v\r\n",
    "ma c2 N0 J10 v\r\nma c2 v D5\r\nma c2 v MD D3\r\nma c2 v M- D100\r\nma c2 v M+\r\nma c2 MI v\r\n",
    "ma c3 N1000 J7 v t c k Oop\r\nma c3 v t c T0\r\nma c3 t\r\n",
    "ma c4 q N0 J5 v\r\nma c4 q v\r\nma c4 q\r\nmn\r\nma c4 v\r\n",
    "ma c5 N0 J9 v\r\nma c5 v T1000 t\r\nma c5 t\r\n",
    "ma c6 N0 J99 v\r\nma c6 v T1000 t\r\nma c6 t\r\n",
    "ma c7 N0 J18446744073709551615 v\r\nma c7 v\r\nma c7 v MD D5\r\n",
    "set c8 0 0 2\r\n10\r\nma c8 MD v\r\nget c8\r\nma c8 D91 v\r\nget c8\r\n",
    "set c9 0 0 1\r\nx\r\nma c9\r\nset c9 0 0 0\r\n\r\nma c9\r\n",
    "set c10 0 0 1\r\n5\r\nma c10 C1 v\r\nmg c10 c\r\n",
    "ma c10 C<cas> v c\r\nma c10 C0 v c\r\n",
    "ma nope k Oa b\r\nma bm9wZQ== b k N0 v\r\n",
    "ma c11 N0 J1 MX\r\nma c11 Mxy\r\nma c11 Dx\r\nma c11 Jx\r\n",
    // me
    "set e 3 1000 4\r\nabcd\r\nme e\r\nmg e v\r\nme e x y\r\n",
    "me e b\r\nme ZQ== b\r\nme ZQ== b junk\r\nme ZQ== junk b\r\n",
    "me\r\nme nothing\r\n",
    "set big",
    // base64 keys
    "ms YWJj 1 b k c\r\nx\r\nmg abc k v\r\nme abc\r\nmg YWJj b k v\r\nmd YWJj b k\r\n",
    "ms AAH/ 2 b k\r\n\x00\x01\r\nmg AAH/ b k v s\r\nme AAH/ b\r\nma AAH/ b\r\n",
    "set abc 0 0 1\r\ny\r\nmg YWJj b k v\r\nmg YWJj Y2Jh b k\r\n",
    "mg Y2Jh b N0 k v\r\nmg cba k\r\n",
    "mg a b\r\nmg @@@@ b\r\nmd a b\r\nma a b\r\nms a 1 b\r\nx\r\n",
    "mg YQ b v\r\nmg Y\tQ== b v\r\nmg YQ==YWJj b k v\r\n",
    // errors
    "mg\r\nms\r\nmd\r\nma\r\nmx a\r\nmgg a\r\n",
    "mg a v v\r\nmg a 5\r\nmg a E5\r\nmg a Nx\r\nmg a Tx v\r\nmg a Rx\r\nmg a Cx\r\nmg a Fx\r\nmg a M\r\nmg a Jx\r\nmg a Dx\r\n",
    "mg a Nx Jx\r\nmg a Jx Nx\r\nmg a Nx v v\r\nmg a \u{ff}\r\nmg a \u{7f}\r\n",
    "md a v v\r\nmd a x\r\nma a v v\r\nma a x\r\nma a Nx\r\n",
    "ms a x\r\nms a -1\r\nms a 2147483646\r\nms a\r\n",
    "ms a 1 Zx\r\nx\r\nms a 1 v v\r\nx\r\nms a 1 Me\r\nx\r\nms a 1 M\r\nx\r\nms a 1 Mxx Fx\r\nx\r\n",
    "ms a 1 Fx\r\nx\r\nms a 1 Cx\r\nx\r\nms a 1 Tx\r\nx\r\n",
    "ms a 2\r\nabcd\r\n",
    "ms a 2 q\r\nabcd\r\nmn\r\n",
    "ms a 1 O123456789012345678901234567890123\r\nx\r\n",
    "ms a 1 O1234567890123456789012345678901 k\r\nx\r\n",
    "mg a O12345678901234567890123456789012\r\nmg a O1234567890123456789012345678901\r\n",
    "mg nope O12345678901234567890123456789012 q\r\nmn\r\n",
    "mg ttlerr T1000 O12345678901234567890123456789012\r\nmg ttlerr t\r\n",
    "set ttlerr 0 0 1\r\nx\r\nmg ttlerr T1000 O12345678901234567890123456789012\r\nmg ttlerr t\r\n",
    "md a O123456789012345678901234567890123 q\r\nmn\r\n",
    "set ar 0 0 1\r\n1\r\nma ar O123456789012345678901234567890123 v\r\nget ar\r\n",
    "mg a b c d e f g h i j k l m n o p q r s\r\nmg a v c f s t k h l u q O1 Pa Lb N0 R0 T0\r\nmg a v c f s t k h l u q O1 Pa Lb N0 R0\r\n",
    "ms a 1 c f s t k h l u q O1 Pa Lb N0 R0 T0\r\nx\r\nms a 1 c f s t k h l u O1 Pa Lb N0 R0\r\nx\r\n",
    "md a c f s t k h l u q O1 Pa Lb N0 R0 T0 I\r\nma a c f s t k h l u q O1 Pa Lb N0 R0 T0 v\r\n",
    // classic and meta on the same items
    "set mix 7 1000 3\r\nabc\r\nmg mix v f t c\r\ngets mix\r\nms mix 2 c\r\nde\r\ngets mix\r\n",
    "append mix 0 0 1\r\nZ\r\nmg mix v f\r\nincr mix 1\r\nmd mix\r\nget mix\r\n",
    "set mix 0 0 2\r\n41\r\nma mix v\r\nincr mix 1\r\nmg mix v c\r\ntouch mix 1000\r\nmg mix t h\r\n",
    "flush_all\r\nmg mix v\r\nma mix\r\nme mix\r\n",
];

#[test]
fn kvsim_serve_answers_every_meta_flag_as_memcached() {
    let Some(mut pair) = Pair::<MetaReplies>::start("memcached_meta") else {
        return;
    };
    for (i, case) in CASES.iter().enumerate() {
        // `<cas>` is the last unique reported so far (by symbol).
        let mut parts = Vec::new();
        for (j, piece) in case.split("<cas>").enumerate() {
            if j > 0 {
                parts.push(Part::Unique(pair.symbols().saturating_sub(1)));
            }
            parts.push(Part::Bytes(piece.as_bytes().to_vec()));
        }
        let mut bytes: Vec<Part> = Vec::new();
        for p in parts {
            match p {
                // The cases are written as text; `\xff` stands for the byte.
                Part::Bytes(b) => bytes.push(Part::Bytes(
                    String::from_utf8(b)
                        .unwrap()
                        .chars()
                        .map(|c| c as u32 as u8)
                        .collect(),
                )),
                other => bytes.push(other),
            }
        }
        if case.starts_with("set big") {
            // A value over 512 KiB (chunked) and `me` on it, then too large for `ms`.
            let mut block = format!("set big 0 0 {}\r\n", 600_000).into_bytes();
            block.extend(std::iter::repeat_n(b'x', 600_000));
            block.extend_from_slice(b"\r\nme big\r\nma big\r\nmg big s\r\n");
            block.extend_from_slice(b"ms big 2000000 T0\r\n");
            block.extend(std::iter::repeat_n(b'y', 2_000_002));
            block.extend_from_slice(b"mg big s\r\n");
            pair.exchange(&format!("case {i}"), &[Part::Bytes(block)]);
            continue;
        }
        pair.exchange(&format!("case {i}"), &bytes);
    }
}

/// The grammar of meta (and classic) requests.
impl Gen {
    fn plain_key(&mut self) -> Vec<u8> {
        self.pick(&["a", "b", "n", "m", "k\x01"])
            .as_bytes()
            .to_vec()
    }

    /// A key as sent, and whether it goes with the `b` flag.
    fn meta_key(&mut self) -> (Vec<u8>, bool) {
        match self.rng.below(100) {
            0..=71 => (self.plain_key(), false),
            72..=83 => {
                let key = if self.chance(0.8) {
                    self.plain_key()
                } else {
                    b"\x00 \xff".to_vec()
                };
                (base64_encode(&key), true)
            }
            84..=87 => (self.pick(&["a", "@@@@", "YQ", "Y\tQ=="]).into(), true),
            88..=94 => (vec![b'K'; 250], false),
            95..=96 => (vec![b'L'; 251], false),
            _ => (base64_encode(&[b'B'; 187]), true),
        }
    }

    /// A value: never all whitespace, never a `-` (see the classic differential test:
    /// memcached's incr would read past the value).
    fn value(&mut self) -> Vec<u8> {
        let v: Vec<u8> = match self.rng.below(10) {
            0..=4 => self
                .pick(&[
                    "0",
                    "9",
                    "10",
                    "99",
                    "007",
                    " 5",
                    "5 x",
                    "+4",
                    "1.5",
                    "12abc",
                    "18446744073709551615",
                    "",
                ])
                .as_bytes()
                .to_vec(),
            _ => {
                let len = self.rng.below(10) as usize;
                (0..len)
                    .map(|_| b"abcxyz0123\r\n\t"[self.rng.index(13)])
                    .collect()
            }
        };
        if !v.is_empty() && v.iter().all(|&b| kvsim::wire::is_c_space(b)) {
            return b"x".to_vec();
        }
        v
    }

    fn ttl(&mut self) -> &'static str {
        self.pick(&[
            "0",
            "1000",
            "100000",
            "2000000000",
            "-1",
            "2592001",
            "0",
            "1000",
        ])
    }

    fn opaque(&mut self) -> String {
        match self.rng.below(10) {
            0 => "O".into(),
            1 => format!("O{}", "o".repeat(31)),
            2 => format!("O{}", "o".repeat(32)),
            _ => format!("O{}", self.rng.below(1000)),
        }
    }

    /// A cas token: a symbol of a unique seen so far, or a literal.
    fn cas(&mut self, letter: &str) -> Vec<Part> {
        if let Some(unique) = self.recent_unique() {
            vec![
                Part::Bytes(letter.as_bytes().to_vec()),
                Part::Unique(unique),
            ]
        } else {
            let lit = self.pick(&["0", "1", "999999999", "x", "18446744073709551616"]);
            vec![Part::Bytes(format!("{letter}{lit}").into_bytes())]
        }
    }

    /// Flags for `verb`, from its pool and a few malformed ones.
    fn flags(&mut self, verb: u8, base64: bool, quiet: bool) -> Vec<Part> {
        let mut out: Vec<Part> = Vec::new();
        let mut tokens: Vec<Vec<Part>> = Vec::new();
        if base64 {
            tokens.push(vec![Part::Bytes(b"b".to_vec())]);
        }
        let n = if self.chance(0.03) {
            20
        } else {
            self.rng.below(5) as usize
        };
        let mut used = std::collections::BTreeSet::new();
        if quiet {
            used.insert(b'q');
        }
        for _ in 0..n {
            let token: Vec<Part> = match verb {
                b'g' => match self.rng.below(18) {
                    0..=2 => vec![Part::Bytes(b"v".to_vec())],
                    3 => vec![Part::Bytes(b"c".to_vec())],
                    4 => vec![Part::Bytes(b"f".to_vec())],
                    5 => vec![Part::Bytes(b"h".to_vec())],
                    6 => vec![Part::Bytes(b"k".to_vec())],
                    7 => vec![Part::Bytes(b"l".to_vec())],
                    8 => vec![Part::Bytes(self.opaque().into_bytes())],
                    9 => vec![Part::Bytes(b"q".to_vec())],
                    10 => vec![Part::Bytes(b"s".to_vec())],
                    11 => vec![Part::Bytes(b"t".to_vec())],
                    12 => vec![Part::Bytes(b"u".to_vec())],
                    13 => vec![Part::Bytes(format!("N{}", self.ttl()).into_bytes())],
                    14 => {
                        let r = self.pick(&["0", "30", "50000", "2592000"]);
                        vec![Part::Bytes(format!("R{r}").into_bytes())]
                    }
                    15 => vec![Part::Bytes(format!("T{}", self.ttl()).into_bytes())],
                    16 => vec![Part::Bytes(
                        self.pick(&["Pa/b", "L1", "Nx", "Tx", "E5", "x", "7"])
                            .into(),
                    )],
                    _ => vec![Part::Bytes(b"v".to_vec())],
                },
                b's' => match self.rng.below(14) {
                    0..=1 => vec![Part::Bytes(b"c".to_vec())],
                    2 => vec![Part::Bytes(b"k".to_vec())],
                    3 => vec![Part::Bytes(self.opaque().into_bytes())],
                    4..=5 => vec![Part::Bytes(b"q".to_vec())],
                    6 => vec![Part::Bytes(format!("T{}", self.ttl()).into_bytes())],
                    7 => {
                        let f = self.pick(&["0", "5", "4294967296", "x"]);
                        vec![Part::Bytes(format!("F{f}").into_bytes())]
                    }
                    8..=9 => self.cas("C"),
                    10 => vec![Part::Bytes(b"I".to_vec())],
                    11..=12 => {
                        let m = self.pick(&["MS", "ME", "MA", "MP", "MR", "MR", "ME", "Me", "M"]);
                        vec![Part::Bytes(m.into())]
                    }
                    _ => vec![Part::Bytes(self.pick(&["v", "x", "N0", "Jx"]).into())],
                },
                b'd' => match self.rng.below(9) {
                    0..=1 => vec![Part::Bytes(b"q".to_vec())],
                    2..=3 => self.cas("C"),
                    4..=5 => vec![Part::Bytes(b"I".to_vec())],
                    6 => vec![Part::Bytes(format!("T{}", self.ttl()).into_bytes())],
                    7 => vec![Part::Bytes(b"k".to_vec())],
                    _ => vec![Part::Bytes(self.opaque().into_bytes())],
                },
                _ => match self.rng.below(14) {
                    0 => vec![Part::Bytes(format!("N{}", self.ttl()).into_bytes())],
                    1 => {
                        let j = self.pick(&["0", "7", "99", "18446744073709551615", "x"]);
                        vec![Part::Bytes(format!("J{j}").into_bytes())]
                    }
                    2..=3 => {
                        let d = self.pick(&["0", "1", "5", "100", "18446744073709551615"]);
                        vec![Part::Bytes(format!("D{d}").into_bytes())]
                    }
                    4 => vec![Part::Bytes(format!("T{}", self.ttl()).into_bytes())],
                    5 => {
                        let m = self.pick(&["MI", "M+", "MD", "M-", "Mx"]);
                        vec![Part::Bytes(m.into())]
                    }
                    6 => vec![Part::Bytes(b"q".to_vec())],
                    7 => vec![Part::Bytes(b"t".to_vec())],
                    8 => vec![Part::Bytes(b"c".to_vec())],
                    9..=10 => vec![Part::Bytes(b"v".to_vec())],
                    11 => self.cas("C"),
                    12 => vec![Part::Bytes(b"k".to_vec())],
                    _ => vec![Part::Bytes(self.opaque().into_bytes())],
                },
            };
            // Mostly distinct letters; a duplicate now and then.
            let letter = match &token[0] {
                Part::Bytes(b) => b.first().copied().unwrap_or(0),
                Part::Unique(_) => 0,
            };
            if !used.insert(letter) && (letter == b'q' && quiet || self.chance(0.9)) {
                continue;
            }
            tokens.push(token);
        }
        for token in tokens {
            out.push(Part::Bytes(b" ".to_vec()));
            out.extend(token);
        }
        out
    }

    /// One meta command; its key (as the store sees it, roughly) and whether it is an
    /// arithmetic one, for the pipeline rule.
    fn meta(&mut self, quiet: bool) -> (Vec<Part>, Vec<u8>, u8) {
        let verb = *b"ggggsssddaaen".get(self.rng.index(13)).unwrap();
        let (key, base64) = self.meta_key();
        if verb == b'n' {
            return (vec![Part::Bytes(b"mn\r\n".to_vec())], key, verb);
        }
        let mut parts = vec![Part::Bytes(format!("m{} ", verb as char).into_bytes())];
        parts.push(Part::Bytes(key.clone()));
        if verb == b'e' {
            let tail = if base64 {
                " b"
            } else {
                self.pick(&["", "", " x"])
            };
            parts.push(Part::Bytes(format!("{tail}\r\n").into_bytes()));
            return (parts, key, verb);
        }
        let data = self.value();
        if verb == b's' {
            let len = if self.chance(0.95) {
                data.len().to_string()
            } else {
                self.pick(&["x", "-1", "2147483647"]).to_string()
            };
            parts.push(Part::Bytes(format!(" {len}").into_bytes()));
        }
        parts.extend(self.flags(verb, base64, quiet));
        if quiet {
            parts.push(Part::Bytes(b" q".to_vec()));
        }
        parts.push(Part::Bytes(b"\r\n".to_vec()));
        if verb == b's' {
            let mut block = data;
            block.extend_from_slice(if self.chance(0.97) {
                b"\r\n"
            } else {
                b"XY\r\n"
            });
            parts.push(Part::Bytes(block));
        }
        (parts, key, verb)
    }

    /// A classic command on the same keys.
    fn classic(&mut self) -> Vec<Part> {
        let key = self.plain_key();
        let mut line = Vec::new();
        match self.rng.below(10) {
            0..=3 => {
                let verb = self.pick(&["set", "add", "replace", "append", "prepend", "cas"]);
                let data = self.value();
                line.extend_from_slice(format!("{verb} ").as_bytes());
                line.extend_from_slice(&key);
                let flags = self.pick(&["0", "3"]);
                let exptime = self.pick(&["0", "1000", "-1"]);
                line.extend_from_slice(format!(" {flags} {exptime} {}", data.len()).as_bytes());
                let mut parts = vec![Part::Bytes(line)];
                if verb == "cas" {
                    parts.push(Part::Bytes(b" ".to_vec()));
                    let mut cas = self.cas("");
                    parts.append(&mut cas);
                }
                let mut block = b"\r\n".to_vec();
                block.extend_from_slice(&data);
                block.extend_from_slice(b"\r\n");
                parts.push(Part::Bytes(block));
                return parts;
            }
            4..=5 => {
                let verb = self.pick(&["get", "gets", "gat 1000", "gats 0"]);
                line.extend_from_slice(format!("{verb} ").as_bytes());
                line.extend_from_slice(&key);
            }
            6 => {
                let verb = self.pick(&["incr", "decr"]);
                line.extend_from_slice(format!("{verb} ").as_bytes());
                line.extend_from_slice(&key);
                line.extend_from_slice(format!(" {}", self.pick(&["1", "10", "0"])).as_bytes());
            }
            7 => {
                line.extend_from_slice(b"delete ");
                line.extend_from_slice(&key);
            }
            8 => {
                line.extend_from_slice(b"touch ");
                line.extend_from_slice(&key);
                line.extend_from_slice(format!(" {}", self.pick(&["0", "1000"])).as_bytes());
            }
            _ => line.extend_from_slice(if self.chance(0.3) {
                b"flush_all"
            } else {
                b"mn"
            }),
        }
        line.extend_from_slice(b"\r\n");
        vec![Part::Bytes(line)]
    }

    /// One exchange: a classic command, a meta command, or a pipeline of meta commands
    /// (mostly quiet) ended by `mn`.
    fn request(&mut self) -> Vec<Part> {
        match self.rng.below(10) {
            0..=2 => self.classic(),
            3..=7 => self.meta(false).0,
            _ => {
                let mut parts = Vec::new();
                let mut fetched: Vec<Vec<u8>> = Vec::new();
                for _ in 0..2 + self.rng.below(4) {
                    let quiet = self.chance(0.7);
                    let (cmd, key, verb) = self.meta(quiet);
                    // The item the key names (a base64 key decoded).
                    let key = kvsim::command::meta::base64_decode(&key).unwrap_or(key);
                    if verb == b'a' && fetched.contains(&key) {
                        continue;
                    }
                    if verb == b'g' {
                        fetched.push(key);
                    }
                    parts.extend(cmd);
                }
                parts.push(Part::Bytes(b"mn\r\n".to_vec()));
                parts
            }
        }
    }
}

#[test]
fn kvsim_serve_answers_random_meta_streams_as_memcached() {
    // Three streams of 10,000 exchanges, each against a fresh pair of servers (about a
    // second each in release mode). `KVSIM_DIFF_SEED` picks the first stream's seed,
    // `KVSIM_META_REQUESTS` the exchanges per stream.
    let seed = seed(0x3e7a);
    let total: usize = std::env::var("KVSIM_META_REQUESTS")
        .map_or(10_000, |s| s.parse().expect("a number of requests"));
    for stream in 0..3 {
        let Some(mut pair) = Pair::<MetaReplies>::start("memcached_meta") else {
            return;
        };
        let seed = seed + stream;
        let mut gen = Gen::new(seed);
        for i in 0..total {
            let parts = gen.request();
            pair.exchange(&format!("request {i} (seed {seed})"), &parts);
            gen.symbols = pair.symbols();
        }
    }
}
