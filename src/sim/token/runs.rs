//! Version 4's choices, run-length encoded: a shrunk run's choices repeat (long stretches
//! of `0`, the first runnable client or no fault), and version 3 wrote each as a number.

use super::{Reader, TokenError, Writer};

/// Writes `choices` as runs: a value `v` once is the number `2v`; `v` repeated `k >= 2`
/// times is `2v + 1` then `k - 2`. A choice below 64 alone is one byte, a run of it
/// up to 129 long two.
pub(crate) fn write(w: &mut Writer, choices: &[u32]) {
    let mut i = 0;
    while i < choices.len() {
        let v = choices[i];
        let k = choices[i..].iter().take_while(|&&x| x == v).count();
        if k == 1 {
            w.num(2 * v as u64);
        } else {
            w.num(2 * v as u64 + 1);
            w.num(k as u64 - 2);
        }
        i += k;
    }
}

/// Reads `n` choices [`write`] wrote (`n` already checked against the run's `max_steps`):
/// runs that add up to more than `n`, or a value above `u32::MAX`, are errors; nothing
/// is allocated beyond `n` choices.
pub(crate) fn read(r: &mut Reader, n: usize) -> Result<Vec<u32>, TokenError> {
    let mut v = Vec::new();
    while v.len() < n {
        let x = r.bounded("a choice", 2 * u32::MAX as u64 + 1)?;
        let value = (x / 2) as u32;
        let k = if x % 2 == 0 {
            1
        } else {
            r.num()?.saturating_add(2)
        };
        let left = (n - v.len()) as u64;
        if k > left {
            return Err(TokenError(format!(
                "choices: expected a run of at most {left} (the choices left of {n}), found {k}"
            )));
        }
        v.resize(v.len() + k as usize, value);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encoded(choices: &[u32]) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        write(&mut w, choices);
        w.0
    }

    fn decoded(bytes: &[u8], n: usize) -> Result<Vec<u32>, TokenError> {
        let mut r = Reader { b: bytes, pos: 0 };
        let v = read(&mut r, n)?;
        assert_eq!(r.pos, bytes.len(), "every byte read");
        Ok(v)
    }

    #[test]
    fn runs_are_two_numbers_and_single_choices_one() {
        assert_eq!(encoded(&[]), Vec::<u8>::new());
        assert_eq!(encoded(&[0]), [0]);
        assert_eq!(encoded(&[0, 0]), [1, 0]);
        assert_eq!(encoded(&[0; 100]), [1, 98]);
        assert_eq!(encoded(&[1, 1, 1, 3, 0]), [3, 1, 6, 0]);
        assert_eq!(encoded(&[64]), [128, 1]);
        assert_eq!(decoded(&[3, 1, 6, 0], 5).unwrap(), [1, 1, 1, 3, 0]);
    }

    #[test]
    fn runs_past_the_count_and_missing_bytes_are_errors() {
        assert_eq!(
            decoded(&[1, 98], 50).unwrap_err().0,
            "choices: expected a run of at most 50 (the choices left of 50), found 100"
        );
        assert_eq!(decoded(&[1], 5).unwrap_err().0, "payload ends early");
        // A huge run claimed by a short token allocates nothing beyond the count.
        let mut w = Writer(Vec::new());
        w.num(1);
        w.num(u64::MAX);
        assert!(decoded(&w.0, 10).is_err());
    }

    proptest! {
        #[test]
        fn choices_round_trip(choices in proptest::collection::vec(
            prop_oneof![Just(0u32), Just(1u32), 0u32..8, any::<u32>()], 0..300)) {
            let bytes = encoded(&choices);
            prop_assert_eq!(decoded(&bytes, choices.len()).unwrap(), choices.clone());
            // Never longer than version 3's one number a choice when every choice is
            // below 64 (a kvsim choice picks among clients and faults); at most a byte a
            // choice longer otherwise (the bit each number gives up).
            let mut plain = Writer(Vec::new());
            for &c in &choices {
                plain.num(c as u64);
            }
            if choices.iter().all(|&c| c < 64) {
                prop_assert!(bytes.len() <= plain.0.len());
            }
            prop_assert!(bytes.len() <= plain.0.len() + choices.len());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..50),
                                       n in 0usize..1000) {
            let mut r = Reader { b: &bytes, pos: 0 };
            if let Ok(v) = read(&mut r, n) {
                prop_assert_eq!(v.len(), n);
            }
        }
    }
}
