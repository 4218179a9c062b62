//! incr/decr arithmetic: memcached's `safe_strtoull` (`util.c:49-76`) and `do_add_delta`.
//!
//! `safe_strtoull` runs C's `strtoull(str, &end, 10)` and then accepts the result only if
//! at least one digit was read, there was no overflow (`ERANGE`), the character after the
//! digits is whitespace or the end of the string, and — only when the result is `>= 2^63`
//! — the string holds no `-` anywhere (C's `strchr`, so even after the number). So leading whitespace and `+` are accepted,
//! `-0` is 0, `-1` is rejected, anything after a space is ignored (`"5 x"` is 5), and
//! `"12abc"`, `"0x10"`, `"1.5"`, `""` and numbers above `2^64-1` are rejected. One quirk
//! is kept as the C does it: `-9223372036854775809` negates (mod 2^64) to `2^63-1`, which
//! is not `>= 2^63`, so it is accepted.

/// C's `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// memcached's `safe_strtoull` over `bytes`, where the end of the slice (or a NUL byte)
/// is the end of the C string.
///
/// For an item's data the end of the slice stands for the item's trailing `\r\n`, which
/// is whitespace, so the same rule applies. (A value of only whitespace makes memcached's
/// `strtoull` skip the `\r\n` and read on into whatever memory follows the item; kvsim
/// treats it as non-numeric, which is what that memory almost always gives.)
pub fn safe_strtoull(bytes: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < bytes.len() && is_c_space(bytes[i]) {
        i += 1;
    }
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let digits_start = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        let d = u64::from(bytes[i] - b'0');
        match value.checked_mul(10).and_then(|v| v.checked_add(d)) {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == digits_start || overflow {
        // No conversion (endptr == str) or ERANGE.
        return None;
    }
    let terminated = i == bytes.len() || bytes[i] == 0 || is_c_space(bytes[i]);
    if !terminated {
        return None;
    }
    let value = if negative {
        value.wrapping_neg()
    } else {
        value
    };
    // `if ((long long) ull < 0) { if (strchr(str, '-') != NULL) return false; }`: the
    // search runs over the whole C string, so a `-` anywhere in the item (even after the
    // number and a space) rejects a value of 2^63 or more.
    let c_string = bytes.split(|&b| b == 0).next().unwrap_or_default();
    if (value as i64) < 0 && (negative || c_string.contains(&b'-')) {
        return None;
    }
    Some(value)
}

/// `incr`: adds, wrapping at 2^64.
pub fn incr(value: u64, delta: u64) -> u64 {
    value.wrapping_add(delta)
}

/// `decr`: subtracts, clamping at 0.
pub fn decr(value: u64, delta: u64) -> u64 {
    value.saturating_sub(delta)
}

/// A `u64` in decimal, written without allocating.
#[derive(Clone, Copy, Debug)]
pub struct Decimal {
    buf: [u8; 20],
    start: usize,
}

impl Decimal {
    /// The decimal digits of `n`.
    pub fn new(mut n: u64) -> Decimal {
        let mut buf = [0u8; 20];
        let mut start = 20;
        loop {
            start -= 1;
            buf[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Decimal { buf, start }
    }

    /// The digits.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Writes the new value into an item's data as `do_add_delta` does
/// (`memcached.c:2302-2326`): if the digits fit in the old length they are written in
/// place and right-padded with spaces to the old length (`"10"` decr 1 → `"9 "`) and
/// `true` is returned; otherwise `false` (the caller allocates a new item of exact length).
pub fn rewrite_in_place(data: &mut [u8], digits: &[u8]) -> bool {
    if digits.len() > data.len() {
        return false;
    }
    data[..digits.len()].copy_from_slice(digits);
    data[digits.len()..].fill(b' ');
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoull_rules_of_the_reference() {
        assert_eq!(safe_strtoull(b"5"), Some(5));
        assert_eq!(safe_strtoull(b" 5"), Some(5));
        assert_eq!(safe_strtoull(b"\t5"), Some(5));
        assert_eq!(safe_strtoull(b"5 x"), Some(5));
        assert_eq!(safe_strtoull(b"5 "), Some(5));
        assert_eq!(safe_strtoull(b"+2"), Some(2));
        assert_eq!(safe_strtoull(b"-0"), Some(0));
        assert_eq!(safe_strtoull(b"-1"), None);
        // A `-` anywhere rejects a value of 2^63 or more (strchr over the whole string),
        // as memcached 1.6.18 answers; smaller values do not care.
        assert_eq!(safe_strtoull(b"18446744073709551615\ty3c3-0"), None);
        assert_eq!(safe_strtoull(b"9223372036854775808 -"), None);
        assert_eq!(
            safe_strtoull(b"9223372036854775807 -"),
            Some(9223372036854775807)
        );
        assert_eq!(safe_strtoull(b"12abc"), None);
        assert_eq!(safe_strtoull(b"0x10"), None);
        assert_eq!(safe_strtoull(b"1.5"), None);
        assert_eq!(safe_strtoull(b"abc"), None);
        assert_eq!(safe_strtoull(b""), None);
        assert_eq!(safe_strtoull(b"   "), None);
        assert_eq!(safe_strtoull(b"+"), None);
        assert_eq!(safe_strtoull(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(safe_strtoull(b"18446744073709551616"), None);
        assert_eq!(safe_strtoull(b"000000000000000000000001"), Some(1));
        assert_eq!(safe_strtoull(b"5\0x"), Some(5));
        assert_eq!(
            safe_strtoull(b"-9223372036854775809"),
            Some(9_223_372_036_854_775_807)
        );
        assert_eq!(safe_strtoull(b"-9223372036854775808"), None);
    }

    #[test]
    fn arithmetic_wraps_and_clamps() {
        assert_eq!(incr(u64::MAX, 1), 0);
        assert_eq!(incr(2, u64::MAX), 1);
        assert_eq!(decr(5, 9), 0);
        assert_eq!(decr(10, 1), 9);
    }

    #[test]
    fn decimal_and_padding() {
        assert_eq!(Decimal::new(0).as_bytes(), b"0");
        assert_eq!(Decimal::new(u64::MAX).as_bytes(), b"18446744073709551615");
        let mut d = b"10".to_vec();
        assert!(rewrite_in_place(&mut d, Decimal::new(9).as_bytes()));
        assert_eq!(d, b"9 ");
        let mut d = b"99".to_vec();
        assert!(!rewrite_in_place(&mut d, Decimal::new(100).as_bytes()));
    }
}
