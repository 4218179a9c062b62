//! The queue's storage layout, shared by both variants: key names, the record frame and the
//! queue's error type.
//!
//! A "file" of the article is a *segment*: the key `{prefix}.0000000001` (and up) holds the
//! segment's records, concatenated; `{prefix}.0000000001.head` holds the segment's newest
//! timestamp in decimal (the article's file header). `{prefix}.last` holds the id of the
//! newest segment and `{prefix}.first` (fixed variant only) a lower bound of the oldest one.
//!
//! A record is framed as in Tkrzw: `0xFF`, a 6-byte big-endian timestamp, a 4-byte
//! big-endian body length, the body, and a 1-byte checksum. A segment only ever grows by
//! `append` of whole records, and memcached applies an `append` atomically, so a segment's
//! value is always a concatenation of whole records: no torn record can exist in the store.

use kvsim::{KvError, VALUE_MAX_LEN};

/// The largest timestamp a record can carry (exclusive): 6 bytes, as in Tkrzw.
pub const TIMESTAMP_LIMIT: i64 = (1 << 48) - 1;

/// Bytes a record takes besides its body.
pub const RECORD_OVERHEAD: usize = 12;

const RECORD_MAGIC: u8 = 0xFF;

/// Everything that can go wrong with a queue operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// The store call failed (timeout, lost server, error reply).
    #[error(transparent)]
    Kv(#[from] KvError),
    /// The timestamp does not fit the record frame.
    #[error("timestamp out of range: expected below 2^48-1, found {found}")]
    TimestampOutOfRange {
        /// The timestamp given.
        found: i64,
    },
    /// The message does not fit one store value.
    #[error("message too large: expected at most {limit} bytes, found {found}")]
    MessageTooLarge {
        /// The largest body that fits.
        limit: usize,
        /// The body's length.
        found: usize,
    },
    /// A segment's bytes are not a sequence of records.
    #[error("broken segment {segment} at byte {offset}: {detail}")]
    Broken {
        /// The segment id.
        segment: u64,
        /// Where the bad record starts.
        offset: usize,
        /// What was wrong.
        detail: String,
    },
    /// A header or counter key does not hold a decimal number.
    #[error("bad value in {key}: expected a decimal number, found {found:?}")]
    BadNumber {
        /// The key.
        key: String,
        /// What it held.
        found: String,
    },
    /// Another writer created the segment this writer was about to create (fixed variant:
    /// the queue admits one writer at a time).
    #[error("segment {segment} was created by another writer: expected one writer at a time")]
    ConcurrentWriter {
        /// The segment id.
        segment: u64,
    },
}

/// `{prefix}.{id:010}{suffix}` (`id` zero-padded to at least 10 digits), built without
/// `format!`: the queue builds a key for nearly every command it sends, and padded
/// formatting was a tenth of a message-queue check's time.
fn segment_key_with(prefix: &str, id: u64, suffix: &str) -> Vec<u8> {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(id).as_bytes();
    let zeros = 10usize.saturating_sub(digits.len());
    let mut key = Vec::with_capacity(prefix.len() + 1 + zeros + digits.len() + suffix.len());
    key.extend_from_slice(prefix.as_bytes());
    key.push(b'.');
    key.resize(key.len() + zeros, b'0');
    key.extend_from_slice(digits);
    key.extend_from_slice(suffix.as_bytes());
    key
}

/// `{prefix}.{name}`.
fn named_key(prefix: &str, name: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + 1 + name.len());
    key.extend_from_slice(prefix.as_bytes());
    key.push(b'.');
    key.extend_from_slice(name.as_bytes());
    key
}

/// The key of segment `id`'s records: `{prefix}.0000000001`.
pub fn segment_key(prefix: &str, id: u64) -> Vec<u8> {
    segment_key_with(prefix, id, "")
}

/// The key of segment `id`'s header (its newest timestamp): `{prefix}.0000000001.head`.
pub fn header_key(prefix: &str, id: u64) -> Vec<u8> {
    segment_key_with(prefix, id, ".head")
}

/// The key holding the newest segment's id.
pub fn last_key(prefix: &str) -> Vec<u8> {
    named_key(prefix, "last")
}

/// The key holding a lower bound of the oldest segment's id (fixed variant).
pub fn first_key(prefix: &str) -> Vec<u8> {
    named_key(prefix, "first")
}

/// Parses a decimal number stored in `key`.
pub fn parse_number(key: &[u8], data: &[u8]) -> Result<i64, QueueError> {
    std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| QueueError::BadNumber {
            key: String::from_utf8_lossy(key).into_owned(),
            found: String::from_utf8_lossy(data).into_owned(),
        })
}

/// Checks a timestamp and a body before they are framed; a negative timestamp means
/// `now()` (the clock is read only then).
pub fn check_write(
    timestamp: i64,
    now: impl FnOnce() -> i64,
    body: &[u8],
) -> Result<i64, QueueError> {
    let timestamp = if timestamp < 0 { now() } else { timestamp };
    if timestamp >= TIMESTAMP_LIMIT {
        return Err(QueueError::TimestampOutOfRange { found: timestamp });
    }
    let limit = VALUE_MAX_LEN - RECORD_OVERHEAD - 512;
    if body.len() > limit {
        return Err(QueueError::MessageTooLarge {
            limit,
            found: body.len(),
        });
    }
    Ok(timestamp)
}

/// Whether a segment of `size` bytes can take a record of `record_len` more bytes without
/// passing the store's item limit (which counts the key and the item header too: 512
/// bytes are kept for them).
pub fn fits_value(size: usize, record_len: usize) -> bool {
    size + record_len + 512 <= VALUE_MAX_LEN
}

/// A record's checksum: its bytes' sum (mod 256) plus 1.
fn checksum(bytes: &[u8]) -> u8 {
    byte_sum(bytes).wrapping_add(1)
}

/// The sum of `bytes` mod 256, eight bytes at a time: records are short (16-byte bodies in
/// the benchmark), where a byte loop was most of `encode_record`'s cost.
fn byte_sum(bytes: &[u8]) -> u8 {
    const EVEN: u64 = 0x00ff_00ff_00ff_00ff;
    // Adds the eight bytes of `x` as four 16-bit lanes (each at most 510), then the lanes
    // into the top 16 bits (at most 2040: no carry crosses a lane).
    let sum8 = |x: u64| -> u64 {
        let pairs = (x & EVEN) + ((x >> 8) & EVEN);
        pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48
    };
    let mut chunks = bytes.chunks_exact(8);
    let mut total = 0u64;
    for c in &mut chunks {
        total += sum8(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    // The tail byte by byte (copying it into a padded word cost a `memcpy` call).
    let tail = chunks
        .remainder()
        .iter()
        .fold(0u64, |a, &b| a + u64::from(b));
    (total + tail) as u8
}

/// Appends one framed record to `out`.
pub fn encode_record(timestamp: i64, body: &[u8], out: &mut Vec<u8>) {
    let mut head = [0u8; 11];
    head[0] = RECORD_MAGIC;
    head[1..7].copy_from_slice(&timestamp.to_be_bytes()[2..]);
    head[7..].copy_from_slice(&(body.len() as u32).to_be_bytes());
    let sum = checksum(&head).wrapping_add(byte_sum(body));
    out.reserve(RECORD_OVERHEAD + body.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(body);
    out.push(sum);
}

/// One record found in a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Its timestamp.
    pub timestamp: i64,
    /// Its body.
    pub body: &'a [u8],
    /// Where the next record starts.
    pub next: usize,
}

/// Decodes the record at `offset` of segment `segment`'s bytes `data`.
pub fn decode_record(data: &[u8], offset: usize, segment: u64) -> Result<Record<'_>, QueueError> {
    let broken = |detail: &str| QueueError::Broken {
        segment,
        offset,
        detail: detail.to_string(),
    };
    let rest = &data[offset..];
    if rest.len() < RECORD_OVERHEAD {
        return Err(broken(
            "expected a record header, found the end of the data",
        ));
    }
    if rest[0] != RECORD_MAGIC {
        return Err(broken(&format!(
            "expected the magic byte 0xff, found {:#04x}",
            rest[0]
        )));
    }
    let mut ts = [0u8; 8];
    ts[2..].copy_from_slice(&rest[1..7]);
    let timestamp = i64::from_be_bytes(ts);
    let len = u32::from_be_bytes([rest[7], rest[8], rest[9], rest[10]]) as usize;
    if rest.len() < RECORD_OVERHEAD + len {
        return Err(broken(&format!(
            "expected a body of {len} bytes, found {}",
            rest.len() - RECORD_OVERHEAD
        )));
    }
    let end = 11 + len;
    if checksum(&rest[..end]) != rest[end] {
        return Err(broken("checksum mismatch"));
    }
    Ok(Record {
        timestamp,
        body: &rest[11..end],
        next: offset + end + 1,
    })
}

/// The newest timestamp among a segment's records (0 if it has none).
pub fn newest_timestamp(data: &[u8], segment: u64) -> Result<i64, QueueError> {
    let mut offset = 0;
    let mut newest = 0;
    while offset < data.len() {
        let r = decode_record(data, offset, segment)?;
        newest = newest.max(r.timestamp);
        offset = r.next;
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eight_byte_sum_is_the_byte_sum_mod_256() {
        for len in 0..=40usize {
            for seed in 0..50u64 {
                let bytes: Vec<u8> = (0..len as u64)
                    .map(|i| {
                        (kvsim::mix64(seed * 64 + i) >> 7) as u8
                            | if seed % 3 == 0 { 0xf0 } else { 0 }
                    })
                    .collect();
                let expected = bytes.iter().fold(0u8, |a, b| a.wrapping_add(*b));
                assert_eq!(byte_sum(&bytes), expected, "{bytes:?}");
            }
        }
        let mut out = vec![7];
        encode_record(0x1234_5678_9abc, b"body", &mut out);
        let sum = out[1..out.len() - 1]
            .iter()
            .fold(1u8, |a, b| a.wrapping_add(*b));
        assert_eq!(out[out.len() - 1], sum);
        assert_eq!(out.len(), 1 + RECORD_OVERHEAD + 4);
    }

    /// The keys are what the format strings they replace give, for ids of every width
    /// (wider than the padding too).
    #[test]
    fn keys_are_the_formatted_ones() {
        for id in [
            0,
            1,
            42,
            9_999_999_999,
            10_000_000_000,
            123_456_789_012,
            u64::MAX,
        ] {
            let p = "mq";
            assert_eq!(segment_key(p, id), format!("{p}.{id:010}").into_bytes());
            assert_eq!(header_key(p, id), format!("{p}.{id:010}.head").into_bytes());
        }
        assert_eq!(last_key("q"), b"q.last");
        assert_eq!(first_key(""), b".first");
    }

    #[test]
    fn records_concatenate_and_decode() {
        let mut data = Vec::new();
        encode_record(5, b"hello", &mut data);
        encode_record(TIMESTAMP_LIMIT - 1, b"", &mut data);
        let a = decode_record(&data, 0, 1).unwrap();
        assert_eq!((a.timestamp, a.body), (5, &b"hello"[..]));
        let b = decode_record(&data, a.next, 1).unwrap();
        assert_eq!((b.timestamp, b.body), (TIMESTAMP_LIMIT - 1, &b""[..]));
        assert_eq!(b.next, data.len());
        assert_eq!(newest_timestamp(&data, 1).unwrap(), TIMESTAMP_LIMIT - 1);
    }

    #[test]
    fn damage_is_reported() {
        let mut data = Vec::new();
        encode_record(7, b"abc", &mut data);
        data[12] ^= 1;
        assert_eq!(
            decode_record(&data, 0, 3).unwrap_err().to_string(),
            "broken segment 3 at byte 0: checksum mismatch"
        );
        assert_eq!(
            decode_record(&data[..5], 0, 3).unwrap_err().to_string(),
            "broken segment 3 at byte 0: expected a record header, found the end of the data"
        );
    }

    #[test]
    fn timestamps_are_checked() {
        assert_eq!(check_write(-1, || 42, b"x").unwrap(), 42);
        assert_eq!(
            check_write(TIMESTAMP_LIMIT, || 0, b"x")
                .unwrap_err()
                .to_string(),
            "timestamp out of range: expected below 2^48-1, found 281474976710655"
        );
    }
}
