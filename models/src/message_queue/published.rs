//! The `published` variant: Tkrzw's MessageQueue as the article and the released library
//! (1.0.25) describe it, transcribed onto the KV store, defects included; each defect's
//! fix is a repair ([`REPAIRS`]), a switch in this code.
//!
//! Transcription choices (where a file operation has no single KV counterpart):
//! - a file is the key `{prefix}.NNNNNNNNNN` (its records) plus `….head` (its header: the
//!   newest timestamp, as Tkrzw's metadata block). The header is written when the file is
//!   created (with the newest timestamp so far), when it is closed by a roll-over, and by
//!   `close`: never per write, so the newest file's header is stale while it is written;
//! - the directory listing is `{prefix}.last` (the newest file's id, set by the writer after
//!   it created the file) and the headers below it;
//! - a writer keeps writing into a file removed under it: Tkrzw's open descriptor outlives
//!   the unlink and the write reports success, and the records go when the writer closes
//!   the file. Here the `append` to the missing key stores nothing and the write reports
//!   success all the same: the records are gone at once instead of at `close`;
//! - a reader holds the file it reads open, as Tkrzw's does (`data`, refreshed from the
//!   store while the file exists): a file removed while the reader is in it is read to the
//!   end of what the reader had, and only a file the reader must *open* (its start, or
//!   the next one) and finds missing stops it, with "not found", for good.
//!
//! # Tkrzw's mutex, and why this port adds no race
//!
//! Tkrzw's reader and writer are threads of one process sharing one mutex: the writer's
//! `Write` (with its roll-over) and every turn of the reader's loop hold it, so the
//! reader's two end-of-file tests ("am I at the end of my file?", "is it the newest
//! file?") and its lazy start (the listing, the headers, else the writer's newest file)
//! each see one state of the queue. The port reads the store in several commands, so it
//! orders them so that what they see together is one state too:
//! - **end of file**: the reader reads `{prefix}.last` *first*, then its file. A writer
//!   sets `last` past a file only after its last append to it, and ids and sizes only
//!   grow, so: `last` > k then "at the end" means that at the second read, k was at its
//!   end and not the newest (move on, as Tkrzw does); `last` = k then "at the end" means
//!   that at the first read, k was the newest and at its end (the size then was at most
//!   the size later; wait, as Tkrzw does). Either pair is Tkrzw's pair at one instant;
//! - **start**: the reader starts at the first listed file whose header is at or above
//!   its `min_timestamp`, else at the newest file *of the same listing* (no file: at
//!   file 1, which a writer creates first), never at a `last` read again later. The
//!   listing reads `last` first: every file below it exists with its final header (a
//!   roll-over writes the header before it creates the next file), and the newest one's
//!   header only grows, which changes no choice.
//!
//! What the port keeps of the mutex is exactly that; Tkrzw's `RemoveOldFiles` is a static
//! function that takes no mutex (it lists and unlinks files, as `rm` may), and the
//! writer's header is stale between its writes in Tkrzw as here, so every defect below is
//! Tkrzw's own:
//! - `rebuild-timestamp`: the next writer's `open` trusts the newest file's header,
//!   stale after a writer that never closed (crashed, or lost its turn on a lost reply);
//! - `spare-newest-file`: `remove_old_files` judges the file being written by its stale
//!   header and removes it with records at or above the threshold;
//! - `skip-removed-file`: a reader whose next file was removed returns "not found" for
//!   good.

use super::layout::{
    check_write, decode_record, encode_record, fits_value, header_key, last_key, newest_timestamp,
    parse_number, segment_key, QueueError,
};
use super::read::{CancelFlag, Deadline, Read};
use crate::expect::Variant;
use kvsim::{Kv, Repair};

/// The repairs of the published queue ([`kvsim::Model::repairs`]), each the fix of one of
/// Tkrzw's defects, named after the fix.
pub const REPAIRS: &[Repair] = &[
    Repair {
        name: "rebuild-timestamp",
        fixes: "the next writer trusts the newest file's stale header and stores lower timestamps after higher ones: rebuild the newest timestamp from the file's records",
    },
    Repair {
        name: "skip-removed-file",
        fixes: "a reader whose next file was removed returns 'not found' for good: skip to the next file that exists and report the gap",
    },
    Repair {
        name: "spare-newest-file",
        fixes: "remove_old_files judges the file being written by its stale header and removes records at or above the threshold: never remove the newest file",
    },
];

/// A queue handle of the published variant (Tkrzw's `MessageQueue` opened for writing).
pub struct PublishedQueue<'a, K: Kv> {
    kv: &'a K,
    prefix: String,
    max_file_size: usize,
    last_file_id: u64,
    file_size: usize,
    timestamp: i64,
    cancel: CancelFlag,
    variant: Variant,
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
    /// from its header (with `rebuild-timestamp`: from its records too); with no file,
    /// creates file 1 with timestamp 0. `variant` says which repairs are on.
    pub async fn open(
        kv: &'a K,
        prefix: &str,
        max_file_size: usize,
        variant: Variant,
    ) -> Result<PublishedQueue<'a, K>, QueueError> {
        let mut q = PublishedQueue {
            kv,
            prefix: prefix.to_string(),
            max_file_size,
            last_file_id: 0,
            file_size: 0,
            timestamp: 0,
            cancel: CancelFlag::default(),
            variant,
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
                let data = kv.get(&segment_key(prefix, id)).await?.unwrap_or_default();
                if variant.repaired("rebuild-timestamp") {
                    q.timestamp = header.max(newest_timestamp(&data, id)?);
                }
                q.file_size = data.len();
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
        PublishedReader::new(
            self.kv,
            &self.prefix,
            min_timestamp,
            self.cancel.clone(),
            self.variant,
        )
    }
}

/// `RemoveOldFiles(prefix, threshold, exclude_latest)`: removes every file whose header
/// timestamp is below `threshold` (the newest file too unless `exclude_latest`; never with
/// `spare-newest-file`). Returns the removed ids. Like Tkrzw's, a static function: it takes
/// no part in the writer's and readers' mutex.
pub async fn remove_old_files<K: Kv>(
    kv: &K,
    prefix: &str,
    threshold: i64,
    exclude_latest: bool,
    variant: Variant,
) -> Result<Vec<u64>, QueueError> {
    let files = find_files(kv, prefix).await?;
    let newest = files.last().map(|f| f.0);
    let spare_newest = exclude_latest || variant.repaired("spare-newest-file");
    let mut removed = Vec::new();
    for (id, header) in files {
        if header < threshold && !(spare_newest && Some(id) == newest) {
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

/// `MakeReader(min_timestamp)` without a writer handle (a reader thread of the writer's
/// process, sharing its mutex, whose queue handle the model does not keep); such a reader
/// cannot be cancelled. `variant` says which repairs are on.
pub fn open_reader<'a, K: Kv>(
    kv: &'a K,
    prefix: &str,
    min_timestamp: i64,
    variant: Variant,
) -> PublishedReader<'a, K> {
    PublishedReader::new(kv, prefix, min_timestamp, CancelFlag::default(), variant)
}

/// A reader of the published variant (Tkrzw's `MessageQueue::Reader`).
pub struct PublishedReader<'a, K: Kv> {
    kv: &'a K,
    prefix: String,
    min_timestamp: i64,
    file_id: Option<u64>,
    /// The reader holds `file_id` open: `data` is what it has of it.
    open: bool,
    offset: usize,
    data: Vec<u8>,
    cancel: CancelFlag,
    variant: Variant,
}

/// What the reader's look at `{prefix}.last` and then at its file found.
enum Look {
    /// The file has records past the reader's offset.
    More,
    /// At the end of the file, and it is the newest one: wait for a write.
    Newest,
    /// At the end of the file, and a newer one exists: open the next.
    Older,
    /// No file exists yet: wait for the first.
    NoFile,
    /// The file the reader must open is missing.
    Missing,
}

impl<'a, K: Kv> PublishedReader<'a, K> {
    fn new(
        kv: &'a K,
        prefix: &str,
        min_timestamp: i64,
        cancel: CancelFlag,
        variant: Variant,
    ) -> PublishedReader<'a, K> {
        PublishedReader {
            kv,
            prefix: prefix.to_string(),
            min_timestamp,
            file_id: None,
            open: false,
            offset: 0,
            data: Vec::new(),
            cancel,
            variant,
        }
    }

    /// The lazy start, from one listing: the first file whose header is at or above
    /// `min_timestamp`, else the newest listed file (no file: file 1, the first a writer
    /// creates). Tkrzw does this under its mutex; see the module for why one listing is
    /// one state of the queue.
    async fn start(&self) -> Result<u64, QueueError> {
        let files = find_files(self.kv, &self.prefix).await?;
        Ok(match files.iter().find(|f| f.1 >= self.min_timestamp) {
            Some(f) => f.0,
            None => files.last().map_or(1, |f| f.0),
        })
    }

    /// The newest file's id, if any is recorded.
    async fn last(&self) -> Result<Option<u64>, QueueError> {
        let key = last_key(&self.prefix);
        Ok(match self.kv.get(&key).await? {
            Some(v) => Some(parse_number(&key, &v)?.max(0) as u64),
            None => None,
        })
    }

    /// Tkrzw's two end-of-file tests under its mutex: `{prefix}.last` first, then the file
    /// (see the module: the pair is the queue's state at one instant).
    async fn look(&mut self, file_id: u64) -> Result<Look, QueueError> {
        let last = self.last().await?;
        match self.kv.get(&segment_key(&self.prefix, file_id)).await? {
            Some(d) => {
                self.data = d;
                self.open = true;
            }
            None if last.is_none() => return Ok(Look::NoFile),
            // Not open yet: Tkrzw's open of the file fails.
            None if !self.open => return Ok(Look::Missing),
            // Removed while open: the reader reads what it holds, as from an unlinked
            // file (the writer's later appends to it are gone; see the module).
            None => {}
        }
        Ok(if self.offset < self.data.len() {
            Look::More
        } else if last.is_none_or(|l| l <= file_id) {
            Look::Newest
        } else {
            Look::Older
        })
    }

    fn enter(&mut self, file_id: u64) {
        self.file_id = Some(file_id);
        self.open = false;
        self.offset = 0;
        self.data.clear();
    }

    /// With `skip-removed-file`: the first file after `file_id` that exists, entered, and
    /// the gap to report; `None` when no newer file is recorded (wait).
    async fn skip(&mut self, file_id: u64) -> Result<Option<Read>, QueueError> {
        let last = self.last().await?.unwrap_or(0);
        if last <= file_id {
            return Ok(None);
        }
        let mut next = last + 1;
        for id in file_id + 1..=last {
            if self.kv.get(&segment_key(&self.prefix, id)).await?.is_some() {
                next = id;
                break;
            }
        }
        self.enter(next);
        Ok(Some(Read::Gap {
            from: file_id,
            to: next,
        }))
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
                    let start = self.start().await?;
                    self.enter(start);
                    start
                }
            };
            if self.offset >= self.data.len() {
                match self.look(file_id).await? {
                    Look::More => {}
                    Look::Newest | Look::NoFile => {
                        if !deadline.wait(self.kv, false).await {
                            return Ok(Read::Timeout);
                        }
                        continue;
                    }
                    Look::Older => {
                        self.enter(file_id + 1);
                        continue;
                    }
                    Look::Missing => {
                        self.kv.probe("segment gone");
                        if self.variant.repaired("skip-removed-file") {
                            match self.skip(file_id).await? {
                                Some(gap) => return Ok(gap),
                                None => {
                                    if !deadline.wait(self.kv, false).await {
                                        return Ok(Read::Timeout);
                                    }
                                    continue;
                                }
                            }
                        }
                        return Ok(Read::NotFound { segment: file_id });
                    }
                }
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
