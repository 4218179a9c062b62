//! incr/decr arithmetic: memcached's `do_add_delta`. The item's value is read with
//! memcached's `safe_strtoull` ([`crate::wire::cnum::safe_strtoull`], `util.c:49-76`), the
//! same function that reads numbers on the wire.
//!
//! `safe_strtoull` runs C's `strtoull(str, &end, 10)` and then accepts the result only if
//! at least one digit was read, there was no overflow (`ERANGE`), the character after the
//! digits is whitespace or the end of the string, and — only when the result is `>= 2^63`
//! — the string holds no `-` anywhere (C's `strchr`, so even after the number). So leading whitespace and `+` are accepted,
//! `-0` is 0, `-1` is rejected, anything after a space is ignored (`"5 x"` is 5), and
//! `"12abc"`, `"0x10"`, `"1.5"`, `""` and numbers above `2^64-1` are rejected. One quirk
//! is kept as the C does it: `-9223372036854775809` negates (mod 2^64) to `2^63-1`, which
//! is not `>= 2^63`, so it is accepted.

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
    if data.len() <= 20 {
        // A counter's few bytes, without calls to copy and fill.
        for (i, b) in data.iter_mut().enumerate() {
            *b = digits.get(i).copied().unwrap_or(b' ');
        }
        return true;
    }
    data[..digits.len()].copy_from_slice(digits);
    data[digits.len()..].fill(b' ');
    true
}

#[cfg(test)]
mod tests {
    use super::*;

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
