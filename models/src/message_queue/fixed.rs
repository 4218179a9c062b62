//! The `fixed` variant: the same API and layout, designed so that nothing the spec promises
//! is lost under client crashes, lost replies, restarts of a persistent store and
//! `remove_old_files`.
//!
//! What differs from the published variant, and why:
//! - **One writer session per segment.** A writer's first write creates a new segment with
//!   `add` (a second writer that races for the same id gets `NOT_STORED` and an error), and
//!   it only ever appends to segments it created. So a segment has one writer, and once
//!   segment `k+1` exists no record will be appended to segment `k` any more.
//! - **Headers are final.** A segment's header (`….head`) is written once, when its writer
//!   moves on (roll-over or `close`) or when the next writer takes over after a crash, and
//!   holds the newest timestamp of the segment's records. A reader skips a segment by its
//!   header only; a segment without a header is read. The published variant's header of the
//!   newest file is stale while it is written, and skipping by it loses records.
//! - **The newest timestamp is rebuilt from the records** at open (the newest segment is
//!   parsed), and kept in `{prefix}.last` (`"id timestamp"`) before any header is written, so
//!   a removal never takes the newest timestamp with it: a later writer never stores a lower
//!   timestamp than any record written before.
//! - **End of a segment:** a reader moves on from segment `k` only after it saw `k+1`
//!   exist and then read `k` once more (no append to `k` can follow the creation of `k+1`),
//!   instead of testing "end of file" and "is newest" in two unrelated reads.
//! - **Removal** removes a prefix of the log: sealed segments (header present) whose newest
//!   timestamp is below the threshold, oldest first, stopping at the first one that is not;
//!   an unsealed segment (being written, or whose writer crashed) is never removed.
//! - **A segment that disappears under a reader** (removed, or lost by the store) is
//!   reported once as [`Read::Gap`] and reading goes on at the next segment that exists.

use super::layout::{
    check_write, decode_record, encode_record, first_key, fits_value, header_key, last_key,
    newest_timestamp, parse_number, segment_key, QueueError,
};
use super::read::{CancelFlag, Deadline, Read};
use kvsim::Kv;

/// Reads `{prefix}.last` (`"id timestamp"`), `(0, 0)` if missing.
async fn read_last<K: Kv>(kv: &K, prefix: &str) -> Result<(u64, i64), QueueError> {
    let key = last_key(prefix);
    let Some(v) = kv.get(&key).await? else {
        return Ok((0, 0));
    };
    let text = String::from_utf8_lossy(&v).into_owned();
    let mut parts = text.split(' ');
    let id = parse_number(&key, parts.next().unwrap_or("").as_bytes())?;
    let ts = parse_number(&key, parts.next().unwrap_or("").as_bytes())?;
    Ok((id.max(0) as u64, ts))
}

async fn write_last<K: Kv>(kv: &K, prefix: &str, id: u64, ts: i64) -> Result<(), QueueError> {
    kv.set(&last_key(prefix), format!("{id} {ts}").as_bytes(), 0)
        .await?;
    Ok(())
}

/// The id of the newest segment: `{prefix}.last`, then probing upwards (the hint lags by
/// one segment when a writer crashed between creating a segment and recording it).
async fn newest_id<K: Kv>(kv: &K, prefix: &str) -> Result<(u64, i64), QueueError> {
    let (mut id, ts) = read_last(kv, prefix).await?;
    while kv.get(&segment_key(prefix, id + 1)).await?.is_some() {
        id += 1;
    }
    Ok((id, ts))
}

async fn read_first<K: Kv>(kv: &K, prefix: &str) -> Result<u64, QueueError> {
    let key = first_key(prefix);
    Ok(match kv.get(&key).await? {
        Some(v) => parse_number(&key, &v)?.max(1) as u64,
        None => 1,
    })
}

async fn read_header<K: Kv>(kv: &K, prefix: &str, id: u64) -> Result<Option<i64>, QueueError> {
    let key = header_key(prefix, id);
    match kv.get(&key).await? {
        Some(v) => Ok(Some(parse_number(&key, &v)?)),
        None => Ok(None),
    }
}

/// A queue handle of the fixed variant. One writer at a time (see the module).
pub struct FixedQueue<'a, K: Kv> {
    kv: &'a K,
    prefix: String,
    max_file_size: usize,
    /// The segment this writer created and appends to.
    current: Option<u64>,
    /// The id the next segment gets.
    next_id: u64,
    /// An unsealed segment of an earlier writer, to seal once this writer moves on.
    to_seal: Option<(u64, i64)>,
    /// The key of `current`.
    current_key: Vec<u8>,
    size: usize,
    timestamp: i64,
    /// A buffer for the record being written.
    record: Vec<u8>,
    cancel: CancelFlag,
}

impl<'a, K: Kv> FixedQueue<'a, K> {
    /// Opens the queue: finds the newest segment and rebuilds the newest timestamp from its
    /// records. Nothing is written until the first `write`.
    pub async fn open(
        kv: &'a K,
        prefix: &str,
        max_file_size: usize,
    ) -> Result<FixedQueue<'a, K>, QueueError> {
        let (last, recorded) = newest_id(kv, prefix).await?;
        let first = read_first(kv, prefix).await?;
        let mut timestamp = recorded;
        let mut to_seal = None;
        let mut id = last;
        while id >= first && id >= 1 {
            if let Some(data) = kv.get(&segment_key(prefix, id)).await? {
                let newest = newest_timestamp(&data, id)?;
                timestamp = timestamp.max(newest);
                if read_header(kv, prefix, id).await?.is_none() {
                    kv.probe("unsealed segment");
                    to_seal = Some((id, newest));
                }
                break;
            }
            id -= 1;
        }
        Ok(FixedQueue {
            kv,
            prefix: prefix.to_string(),
            max_file_size,
            current: None,
            next_id: last + 1,
            to_seal,
            current_key: Vec::new(),
            size: 0,
            timestamp,
            record: Vec::with_capacity(64),
            cancel: CancelFlag::default(),
        })
    }

    /// Writes one message; the stored timestamp is `max(timestamp, newest in the log)` (a
    /// negative timestamp means now). Returns the stored timestamp.
    pub async fn write(&mut self, timestamp: i64, message: &[u8]) -> Result<i64, QueueError> {
        let timestamp = check_write(timestamp, || self.kv.now_ms() as i64, message)?;
        let stored = timestamp.max(self.timestamp);
        let mut record = std::mem::take(&mut self.record);
        record.clear();
        encode_record(stored, message, &mut record);
        let result = self.write_record(stored, &record).await;
        self.record = record;
        result
    }

    async fn write_record(&mut self, stored: i64, record: &[u8]) -> Result<i64, QueueError> {
        if let Some(cur) = self.current {
            if self.size < self.max_file_size && fits_value(self.size, record.len()) {
                if self.kv.append(&self.current_key, record).await?.is_stored() {
                    self.size += record.len();
                    self.timestamp = stored;
                    return Ok(stored);
                }
                // The segment is gone (lost by the store): continue in a new one.
                self.kv.probe("append miss");
                self.to_seal = None;
            } else {
                self.kv.probe("roll over");
                self.to_seal = Some((cur, self.timestamp));
            }
            self.current = None;
        }
        let id = self.next_id;
        let key = segment_key(&self.prefix, id);
        if !self.kv.add(&key, record, 0).await?.is_stored() {
            return Err(QueueError::ConcurrentWriter { segment: id });
        }
        self.current_key = key;
        self.current = Some(id);
        self.next_id = id + 1;
        self.size = record.len();
        self.timestamp = stored;
        write_last(self.kv, &self.prefix, id, stored).await?;
        if let Some((old, newest)) = self.to_seal.take() {
            self.seal(old, newest).await?;
        }
        Ok(stored)
    }

    async fn seal(&self, id: u64, newest: i64) -> Result<(), QueueError> {
        self.kv
            .set(
                &header_key(&self.prefix, id),
                newest.to_string().as_bytes(),
                0,
            )
            .await?;
        Ok(())
    }

    /// Closes the writer: records the newest timestamp, then seals the current segment.
    pub async fn close(self) -> Result<(), QueueError> {
        if let Some(cur) = self.current {
            write_last(self.kv, &self.prefix, cur, self.timestamp).await?;
            self.seal(cur, self.timestamp).await?;
        }
        Ok(())
    }

    /// Every waiting and later read of this handle's readers returns [`Read::Canceled`].
    pub fn cancel_readers(&self) {
        self.cancel.cancel();
    }

    /// A reader of the messages with timestamp `>= min_timestamp`; it finds its start at
    /// its first read.
    pub fn make_reader(&self, min_timestamp: i64) -> FixedReader<'a, K> {
        FixedReader::new(self.kv, &self.prefix, min_timestamp, self.cancel.clone())
    }
}

/// A reader without a writer handle; such a reader cannot be cancelled.
pub fn open_reader<'a, K: Kv>(kv: &'a K, prefix: &str, min_timestamp: i64) -> FixedReader<'a, K> {
    FixedReader::new(kv, prefix, min_timestamp, CancelFlag::default())
}

/// Removes the oldest segments, oldest first, while they are sealed and their newest
/// timestamp is below `threshold` (and, with `exclude_latest`, not the newest segment).
/// Stops at the first segment that does not qualify, so what remains is a suffix of the
/// log. Returns the removed ids.
pub async fn remove_old_files<K: Kv>(
    kv: &K,
    prefix: &str,
    threshold: i64,
    exclude_latest: bool,
) -> Result<Vec<u64>, QueueError> {
    let first = read_first(kv, prefix).await?;
    let (last, _) = newest_id(kv, prefix).await?;
    let mut removed = Vec::new();
    let mut new_first = first;
    for id in first..=last {
        match read_header(kv, prefix, id).await? {
            None => {
                if kv.get(&segment_key(prefix, id)).await?.is_some() {
                    break; // unsealed: being written, or its writer crashed
                }
            }
            Some(newest) => {
                if newest >= threshold || (exclude_latest && id == last) {
                    break;
                }
                if id == last {
                    kv.probe("newest removed");
                }
                kv.delete(&segment_key(prefix, id)).await?;
                kv.delete(&header_key(prefix, id)).await?;
                removed.push(id);
            }
        }
        new_first = id + 1;
    }
    if new_first > first {
        kv.set(&first_key(prefix), new_first.to_string().as_bytes(), 0)
            .await?;
    }
    Ok(removed)
}

/// A reader of the fixed variant.
pub struct FixedReader<'a, K: Kv> {
    kv: &'a K,
    prefix: String,
    min_timestamp: i64,
    segment: Option<u64>,
    offset: usize,
    data: Vec<u8>,
    /// The last look found new records (see [`Deadline::wait`]).
    hot: bool,
    cancel: CancelFlag,
}

impl<'a, K: Kv> FixedReader<'a, K> {
    fn new(kv: &'a K, prefix: &str, min_timestamp: i64, cancel: CancelFlag) -> Self {
        FixedReader {
            kv,
            prefix: prefix.to_string(),
            min_timestamp,
            segment: None,
            offset: 0,
            data: Vec::new(),
            hot: false,
            cancel,
        }
    }

    /// The first segment that may hold a record `>= min_timestamp`: skips sealed segments
    /// whose header is below it and segments that are gone.
    async fn start(&self) -> Result<u64, QueueError> {
        let first = read_first(self.kv, &self.prefix).await?;
        let (last, _) = newest_id(self.kv, &self.prefix).await?;
        for id in first..=last {
            match read_header(self.kv, &self.prefix, id).await? {
                Some(newest) if newest < self.min_timestamp => continue,
                Some(_) => return Ok(id),
                None => {
                    if self.kv.get(&segment_key(&self.prefix, id)).await?.is_some() {
                        return Ok(id);
                    }
                }
            }
        }
        Ok(last + 1)
    }

    /// The first segment in `id+1..=last` that exists, if any.
    async fn next_existing(
        &self,
        id: u64,
        last: u64,
    ) -> Result<Option<(u64, Vec<u8>)>, QueueError> {
        for j in id + 1..=last {
            if let Some(d) = self.kv.get(&segment_key(&self.prefix, j)).await? {
                return Ok(Some((j, d)));
            }
        }
        Ok(None)
    }

    fn enter(&mut self, id: u64, data: Vec<u8>) {
        self.segment = Some(id);
        self.offset = 0;
        self.data = data;
    }

    /// The next message with timestamp `>= min_timestamp`; at the end of the log, waits for
    /// a write (negative timeout: forever, 0: not at all, positive: up to that many ms).
    pub async fn read(&mut self, timeout_ms: i64) -> Result<Read, QueueError> {
        let deadline = Deadline::start(self.kv, timeout_ms);
        loop {
            if self.cancel.is_canceled() {
                return Ok(Read::Canceled);
            }
            let seg = match self.segment {
                Some(s) => s,
                None => {
                    let s = self.start().await?;
                    self.enter(s, Vec::new());
                    s
                }
            };
            if self.offset < self.data.len() {
                let record = decode_record(&self.data, self.offset, seg)?;
                self.offset = record.next;
                if record.timestamp >= self.min_timestamp {
                    return Ok(Read::Message {
                        timestamp: record.timestamp,
                        message: record.body.to_vec(),
                    });
                }
                continue;
            }
            // Just after a fetch that brought records (`hot`), the segment is not fetched
            // again before the next wait: a `get` copies the whole segment.
            let fetched = if self.hot {
                Some(Vec::new())
            } else {
                self.kv.get(&segment_key(&self.prefix, seg)).await?
            };
            match fetched {
                Some(d) if d.len() > self.offset => {
                    self.data = d;
                    self.hot = true;
                    continue;
                }
                Some(_) => {
                    // At the end of `seg`: move on only once `seg + 1` exists, after one
                    // more look at `seg` (no append to `seg` follows the creation of `seg+1`).
                    let next = match self.kv.get(&segment_key(&self.prefix, seg + 1)).await? {
                        Some(d) => Some((seg + 1, d)),
                        None => {
                            // `seg+1` may be gone, or created since our first look.
                            let (last, _) = newest_id(self.kv, &self.prefix).await?;
                            self.next_existing(seg, last).await?
                        }
                    };
                    let Some((j, d)) = next else {
                        if !deadline.wait(self.kv, std::mem::take(&mut self.hot)).await {
                            return Ok(Read::Timeout);
                        }
                        continue;
                    };
                    match self.kv.get(&segment_key(&self.prefix, seg)).await? {
                        Some(again) if again.len() > self.offset => {
                            self.data = again;
                            continue;
                        }
                        Some(_) => {
                            self.enter(j, d);
                            if j > seg + 1 {
                                self.kv.probe("segment gone");
                                return Ok(Read::Gap {
                                    from: seg + 1,
                                    to: j,
                                });
                            }
                        }
                        None => {
                            self.enter(j, d);
                            self.kv.probe("segment gone");
                            return Ok(Read::Gap { from: seg, to: j });
                        }
                    }
                }
                None => {
                    // `seg` is gone (removed, or lost by the store), or not created yet.
                    // `last` is recorded after its segment is created, so every segment up
                    // to it was created: a missing one is gone.
                    let (last, _) = newest_id(self.kv, &self.prefix).await?;
                    if last < seg {
                        if !deadline.wait(self.kv, std::mem::take(&mut self.hot)).await {
                            return Ok(Read::Timeout);
                        }
                        continue;
                    }
                    let next = self.next_existing(seg, last).await?;
                    // `seg` may have been created since our first look.
                    if let Some(d) = self.kv.get(&segment_key(&self.prefix, seg)).await? {
                        self.data = d;
                        continue;
                    }
                    let (j, d) = next.unwrap_or((last + 1, Vec::new()));
                    self.enter(j, d);
                    self.kv.probe("segment gone");
                    return Ok(Read::Gap { from: seg, to: j });
                }
            }
        }
    }
}
