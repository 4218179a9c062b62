//! memcached 1.6.18's number parsing, reproduced: `safe_strtoul`, `safe_strtol` and
//! `safe_strtoull` (`util.c`) over glibc's `strtoul`/`strtol`/`strtoull` on a 64-bit
//! platform.
//!
//! The quirks that show on the wire all come from here: leading C whitespace and a `+` are
//! accepted; anything after a whitespace byte that follows the digits is ignored (`5\tx`
//! is 5); a `-` anywhere in the token is accepted unless the unsigned result has its top
//! bit set (`-0` is 0, but `-1` is refused, and `-18446744073709551615` is 1); and the 64-bit result is then
//! stored in a 32-bit variable, so `4294967297` reads as 1 for flags and `<bytes>`, and
//! `2147483648` reads as `-2147483648` for exptime.

/// The C string `s` holds: up to its first NUL byte (memcached's tokens and items are C
/// strings to `strto*` and `strchr`).
fn c_str(s: &[u8]) -> &[u8] {
    s.split(|&b| b == 0).next().unwrap_or_default()
}

/// `isspace` in the C locale: space, `\t`, `\n`, `\v`, `\f`, `\r`.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// What `strto*` computed: the value, where the digits ended (0 when there were none, as
/// `endptr == str`), whether it overflowed (`ERANGE`) and whether a `-` was read.
struct Scan {
    magnitude: u64,
    end: usize,
    overflow: bool,
    negative: bool,
}

/// The shared scan of glibc's `strtoul`/`strtol`, base 10: whitespace, a sign, digits.
fn scan(s: &[u8]) -> Scan {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let mut negative = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        negative = s[i] == b'-';
        i += 1;
    }
    let digits_start = i;
    let mut magnitude: u64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        let d = u64::from(s[i] - b'0');
        match magnitude.checked_mul(10).and_then(|m| m.checked_add(d)) {
            Some(m) => magnitude = m,
            None => overflow = true,
        }
        i += 1;
    }
    let end = if i == digits_start { 0 } else { i };
    Scan {
        magnitude,
        end,
        overflow,
        negative,
    }
}

/// Whether `*endptr` is acceptable to `safe_strto*`: end of token or a whitespace byte.
fn ends_well(s: &[u8], end: usize) -> bool {
    end > 0 && (end == s.len() || is_c_space(s[end]))
}

/// glibc `strtoull` (= `strtoul` on LP64), base 10: `(value, end, erange)`.
fn strtoull(s: &[u8]) -> (u64, usize, bool) {
    let sc = scan(s);
    if sc.overflow {
        return (u64::MAX, sc.end, true);
    }
    let v = if sc.negative {
        sc.magnitude.wrapping_neg()
    } else {
        sc.magnitude
    };
    (v, sc.end, false)
}

/// glibc `strtol` on LP64, base 10: `(value, end, erange)`.
fn strtol(s: &[u8]) -> (i64, usize, bool) {
    let sc = scan(s);
    let limit: u64 = if sc.negative {
        i64::MIN.unsigned_abs()
    } else {
        i64::MAX as u64
    };
    if sc.overflow || sc.magnitude > limit {
        let v = if sc.negative { i64::MIN } else { i64::MAX };
        return (v, sc.end, true);
    }
    let v = if sc.negative {
        (sc.magnitude as i64).wrapping_neg()
    } else {
        sc.magnitude as i64
    };
    (v, sc.end, false)
}

/// memcached's `safe_strtoull`: a 64-bit unsigned number (cas uniques, incr/decr deltas,
/// and the value an `incr`/`decr` finds in an item). A NUL byte ends the string; so does
/// the end of the slice (for an item's data it stands for the trailing `\r\n`, which is
/// whitespace). One quirk is kept as the C does it: `-9223372036854775809` negates (mod
/// 2^64) to `2^63-1`, which is not `>= 2^63`, so it is accepted.
pub fn safe_strtoull(s: &[u8]) -> Option<u64> {
    let s = c_str(s);
    let (v, end, erange) = strtoull(s);
    if erange || !ends_well(s, end) {
        return None;
    }
    // memcached looks for the sign with `strchr(str, '-')`: anywhere in the token, even
    // after the digits (`18446744073709551615\t-` is refused).
    if (v as i64) < 0 && s.contains(&b'-') {
        return None;
    }
    Some(v)
}

/// memcached's `safe_strtoul`: `strtoul` into a 64-bit `unsigned long`, checked, then
/// stored in a `uint32_t` (flags, verbosity level): truncated modulo 2^32.
pub fn safe_strtoul(s: &[u8]) -> Option<u32> {
    safe_strtoull(s).map(|v| v as u32)
}

/// memcached's `safe_strtol`: `strtol` into a 64-bit `long`, checked, then stored in an
/// `int32_t` (exptime, `<bytes>`): truncated modulo 2^32 and reinterpreted as signed.
pub fn safe_strtol(s: &[u8]) -> Option<i32> {
    let s = c_str(s);
    let (v, end, erange) = strtol(s);
    if erange || !ends_well(s, end) {
        return None;
    }
    Some(v as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases the store's copy was tested with (an item's value read by `incr`).
    #[test]
    fn strtoull_rules_of_an_item_s_value() {
        assert_eq!(safe_strtoull(b" 5"), Some(5));
        assert_eq!(safe_strtoull(b"5 x"), Some(5));
        // A `-` anywhere rejects a value of 2^63 or more (strchr over the whole string),
        // as memcached 1.6.18 answers; smaller values do not care.
        assert_eq!(safe_strtoull(b"18446744073709551615\ty3c3-0"), None);
        assert_eq!(safe_strtoull(b"9223372036854775808 -"), None);
        assert_eq!(
            safe_strtoull(b"9223372036854775807 -"),
            Some(i64::MAX as u64)
        );
        assert_eq!(safe_strtoull(b"0x10"), None);
        assert_eq!(safe_strtoull(b"   "), None);
        assert_eq!(safe_strtoull(b"+"), None);
        assert_eq!(safe_strtoull(b"000000000000000000000001"), Some(1));
        assert_eq!(
            safe_strtoull(b"-9223372036854775809"),
            Some(i64::MAX as u64)
        );
        assert_eq!(safe_strtoull(b"-9223372036854775808"), None);
    }

    /// A NUL byte ends the C string: what follows it is not read, by `strtoull` or by
    /// `strchr` (the two copies this one replaced disagreed here).
    #[test]
    fn a_nul_byte_ends_the_number() {
        assert_eq!(safe_strtoull(b"5\0x"), Some(5));
        assert_eq!(safe_strtoull(b"9223372036854775808\0-"), Some(1 << 63));
        assert_eq!(safe_strtoull(b"\x005"), None);
        assert_eq!(safe_strtol(b"7\0x"), Some(7));
    }

    #[test]
    fn unsigned_parsing_follows_strtoul() {
        assert_eq!(safe_strtoull(b"0"), Some(0));
        assert_eq!(safe_strtoull(b"+2"), Some(2));
        assert_eq!(safe_strtoull(b"\t7"), Some(7));
        assert_eq!(safe_strtoull(b"5\tjunk"), Some(5));
        assert_eq!(safe_strtoull(b"5\r"), Some(5));
        assert_eq!(safe_strtoull(b"-0"), Some(0));
        assert_eq!(safe_strtoull(b"-1"), None);
        assert_eq!(safe_strtoull(b"-18446744073709551615"), Some(1));
        assert_eq!(safe_strtoull(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(safe_strtoull(b"18446744073709551616"), None);
        assert_eq!(safe_strtoull(b"18446744073709551615\t-"), None);
        assert_eq!(safe_strtoull(b"9\t-"), Some(9));
        assert_eq!(safe_strtoull(b"12abc"), None);
        assert_eq!(safe_strtoull(b"1.5"), None);
        assert_eq!(safe_strtoull(b"0x10"), None);
        assert_eq!(safe_strtoull(b""), None);
        assert_eq!(safe_strtoull(b"+"), None);
        assert_eq!(safe_strtoull(b"-"), None);
        assert_eq!(safe_strtoull(b"abc"), None);
    }

    #[test]
    fn thirty_two_bit_truncation() {
        assert_eq!(safe_strtoul(b"4294967295"), Some(u32::MAX));
        assert_eq!(safe_strtoul(b"4294967296"), Some(0));
        assert_eq!(safe_strtoul(b"4294967297"), Some(1));
        assert_eq!(safe_strtol(b"4294967297"), Some(1));
        assert_eq!(safe_strtol(b"4294967295"), Some(-1));
        assert_eq!(safe_strtol(b"2147483647"), Some(i32::MAX));
        assert_eq!(safe_strtol(b"2147483648"), Some(i32::MIN));
        assert_eq!(safe_strtol(b"-1"), Some(-1));
        assert_eq!(safe_strtol(b"9223372036854775807"), Some(-1));
        assert_eq!(safe_strtol(b"9223372036854775808"), None);
        assert_eq!(safe_strtol(b"-9223372036854775808"), Some(0));
        assert_eq!(safe_strtol(b"-9223372036854775809"), None);
        assert_eq!(safe_strtol(b"x"), None);
    }
}
