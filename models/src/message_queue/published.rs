//! The `published` variant: Tkrzw's MessageQueue as the article and the released library
//! describe it, transcribed onto the KV store, defects included.
//!
//! Transcription choices (where a file operation has no single KV counterpart):
//! - a file is the key `{prefix}.NNNNNNNNNN` (its records) plus `….head` (its header: the
//!   newest timestamp, as Tkrzw's metadata block). The header is written when the file is
//!   created (with the newest timestamp so far), when it is closed by a roll-over, and by
//!   `close`: never per write, so the newest file's header is stale while it is written;
//! - the directory listing is `{prefix}.last` (the newest file's id, set by the writer after
//!   it created the file) and the headers below it;
//! - Tkrzw's reader asks the writer's in-memory `last_file_id_` whether its file is the
//!   newest; here it reads `{prefix}.last`;
//! - a writer keeps writing into a file removed under it: Tkrzw's open descriptor outlives
//!   the unlink and the write reports success. Here the `append` to the missing key stores
//!   nothing and the write reports success all the same.

use super::layout::{
    check_write, decode_record, encode_record, fits_value, header_key, last_key, parse_number,
    segment_key, QueueError,
};
use super::read::{CancelFlag, Deadline, Read};
use kvsim::Kv;

/// A queue handle of the published variant (Tkrzw's `MessageQueue` opened for writing).
pub struct PublishedQueue<'a, K: Kv> {
    kv: &'a K,
    prefix: String,
    max_file_size: usize,
    last_file_id: u64,
    file_size: usize,
    timestamp: i64,
    cancel: CancelFlag,
}

/// Tkrzw's `FindFiles`: the ids of the files that exist, oldest first (probing the headers
/// downwards from `{prefix}.last`).
async fn find_files<K: Kv>(kv: &K, prefix: &str) -> Result<Vec<(u64, i64)>, QueueError> {
    let key = last_key(prefix);
    let Some(last) = kv.get(&key).await? else {
        return Ok(Vec::new());
    };
    let last = parse_number(&key, &last)?.max(0) as u64;
    let mut files = Vec::new();
    let mut id = last;
    while id >= 1 {
        let hk = header_key(prefix, id);
        match kv.get(&hk).await? {
            Some(h) => files.push((id, parse_number(&hk, &h)?)),
            None if !files.is_empty() => break,
            None => {}
        }
        id -= 1;
    }
    files.reverse();
    Ok(files)
}

impl<'a, K: Kv> PublishedQueue<'a, K> {
    /// `Open(prefix, max_file_size)`: continues the newest file, taking the newest timestamp
    /// from its header; with no file, creates file 1 with timestamp 0.
    pub async fn open(
        kv: &'a K,
        prefix: &str,
        max_file_size: usize,
    ) -> Result<PublishedQueue<'a, K>, QueueError> {
        let mut q = PublishedQueue {
            kv,
            prefix: prefix.to_string(),
            max_file_size,
            last_file_id: 0,
            file_size: 0,
            timestamp: 0,
            cancel: CancelFlag::default(),
        };
        let files = find_files(kv, prefix).await?;
        match files.last() {
            None => {
                q.last_file_id = 1;
                q.create_file().await?;
            }
            Some(&(id, header)) => {
                q.last_file_id = id;
                // Tkrzw trusts the header's timestamp; it scans the file only for its size.
                q.timestamp = header;
                q.file_size = kv
                    .get(&segment_key(prefix, id))
                    .await?
                    .map_or(0, |d| d.len());
            }
        }
        Ok(q)
    }

    async fn create_file(&mut self) -> Result<(), QueueError> {
        let id = self.last_file_id;
        self.kv.set(&segment_key(&self.prefix, id), b"", 0).await?;
        self.sync().await?;
        self.kv
            .set(&last_key(&self.prefix), id.to_string().as_bytes(), 0)
            .await?;
        self.file_size = 0;
        Ok(())
    }

    /// `SynchronizeImpl`: writes the newest file's header.
    async fn sync(&self) -> Result<(), QueueError> {
        self.kv
            .set(
                &header_key(&self.prefix, self.last_file_id),
                self.timestamp.to_string().as_bytes(),
                0,
            )
            .await?;
        Ok(())
    }

    /// `Write(timestamp, message)`: the stored timestamp is `max(timestamp, newest so
    /// far)`; a negative timestamp means now. Returns the stored timestamp.
    pub async fn write(&mut self, timestamp: i64, message: &[u8]) -> Result<i64, QueueError> {
        let timestamp = check_write(timestamp, || self.kv.now_ms() as i64, message)?;
        let mut record = Vec::with_capacity(message.len() + 12);
        if self.file_size >= self.max_file_size || !fits_value(self.file_size, message.len() + 12) {
            self.kv.probe("roll over");
            self.sync().await?;
            self.last_file_id += 1;
            self.create_file().await?;
        }
        self.timestamp = timestamp.max(self.timestamp);
        encode_record(self.timestamp, message, &mut record);
        // The outcome is not looked at: a removed file swallows the write (see the module).
        let outcome = self
            .kv
            .append(&segment_key(&self.prefix, self.last_file_id), &record)
            .await?;
        if !outcome.is_stored() {
            self.kv.probe("append miss");
        }
        self.file_size += record.len();
        Ok(self.timestamp)
    }

    /// `Close`: writes the newest file's header.
    pub async fn close(self) -> Result<(), QueueError> {
        self.sync().await
    }

    /// `CancelReaders`: every waiting and later read of this handle's readers returns
    /// [`Read::Canceled`].
    pub fn cancel_readers(&self) {
        self.cancel.cancel();
    }

    /// `MakeReader(min_timestamp)`: a reader that starts lazily at its first read.
    pub fn make_reader(&self, min_timestamp: i64) -> PublishedReader<'a, K> {
        PublishedReader::new(self.kv, &self.prefix, min_timestamp, self.cancel.clone())
    }
}

/// `RemoveOldFiles(prefix, threshold, exclude_latest)`: removes every file whose header
/// timestamp is below `threshold` (the newest file too unless `exclude_latest`). Returns the
/// removed ids.
pub async fn remove_old_files<K: Kv>(
    kv: &K,
    prefix: &str,
    threshold: i64,
    exclude_latest: bool,
) -> Result<Vec<u64>, QueueError> {
    let files = find_files(kv, prefix).await?;
    let newest = files.last().map(|f| f.0);
    let mut removed = Vec::new();
    for (id, header) in files {
        if header < threshold && !(exclude_latest && Some(id) == newest) {
            if Some(id) == newest {
                kv.probe("newest removed");
            }
            kv.delete(&segment_key(prefix, id)).await?;
            kv.delete(&header_key(prefix, id)).await?;
            removed.push(id);
        }
    }
    Ok(removed)
}

/// `MakeReader(min_timestamp)` without a writer handle (Tkrzw's read-only open); such a
/// reader cannot be cancelled.
pub fn open_reader<'a, K: Kv>(
    kv: &'a K,
    prefix: &str,
    min_timestamp: i64,
) -> PublishedReader<'a, K> {
    PublishedReader::new(kv, prefix, min_timestamp, CancelFlag::default())
}

/// A reader of the published variant (Tkrzw's `MessageQueue::Reader`).
pub struct PublishedReader<'a, K: Kv> {
    kv: &'a K,
    prefix: String,
    min_timestamp: i64,
    file_id: Option<u64>,
    offset: usize,
    data: Vec<u8>,
    cancel: CancelFlag,
}

impl<'a, K: Kv> PublishedReader<'a, K> {
    pub(crate) fn new(
        kv: &'a K,
        prefix: &str,
        min_timestamp: i64,
        cancel: CancelFlag,
    ) -> PublishedReader<'a, K> {
        PublishedReader {
            kv,
            prefix: prefix.to_string(),
            min_timestamp,
            file_id: None,
            offset: 0,
            data: Vec::new(),
            cancel,
        }
    }

    /// `Read(timeout)`: the next message with timestamp `>= min_timestamp`; at the end of
    /// the newest file, waits for a write (negative: forever, 0: not at all, positive: up to
    /// that many ms).
    pub async fn read(&mut self, timeout_ms: i64) -> Result<Read, QueueError> {
        let deadline = Deadline::start(self.kv, timeout_ms);
        loop {
            if self.cancel.is_canceled() {
                return Ok(Read::Canceled);
            }
            let file_id = match self.file_id {
                Some(id) => id,
                None => {
                    // Lazy start: the first file whose header is >= min_timestamp, else the
                    // newest file.
                    let files = find_files(self.kv, &self.prefix).await?;
                    let start = match files.iter().find(|f| f.1 >= self.min_timestamp) {
                        Some(f) => f.0,
                        None => {
                            let key = last_key(&self.prefix);
                            match self.kv.get(&key).await? {
                                Some(v) => parse_number(&key, &v)?.max(0) as u64,
                                None => 1,
                            }
                        }
                    };
                    self.file_id = Some(start);
                    self.offset = 0;
                    self.data.clear();
                    start
                }
            };
            if self.offset >= self.data.len() {
                // The file's current size.
                match self.kv.get(&segment_key(&self.prefix, file_id)).await? {
                    Some(d) => self.data = d,
                    None if self.kv.get(&last_key(&self.prefix)).await?.is_none() => {
                        // No file yet (see below): wait for the first.
                        if !deadline.wait(self.kv, false).await {
                            return Ok(Read::Timeout);
                        }
                        continue;
                    }
                    None => {
                        self.kv.probe("segment gone");
                        return Ok(Read::NotFound { segment: file_id });
                    }
                }
            }
            if self.offset >= self.data.len() {
                // End of file: the newest file waits, an older one moves on.
                // (No file recorded yet: Tkrzw's reader needs an open queue, which always
                // has a file; here the reader waits for the first one.)
                let key = last_key(&self.prefix);
                let last = match self.kv.get(&key).await? {
                    Some(v) => parse_number(&key, &v)?.max(0) as u64,
                    None => file_id,
                };
                if file_id == last {
                    if !deadline.wait(self.kv, false).await {
                        return Ok(Read::Timeout);
                    }
                } else {
                    self.file_id = Some(file_id + 1);
                    self.offset = 0;
                    self.data.clear();
                }
                continue;
            }
            let record = decode_record(&self.data, self.offset, file_id)?;
            self.offset = record.next;
            if record.timestamp >= self.min_timestamp {
                return Ok(Read::Message {
                    timestamp: record.timestamp,
                    message: record.body.to_vec(),
                });
            }
        }
    }
}
