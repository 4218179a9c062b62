//! A message queue on an update log (Tkrzw's `MessageQueue`, from the article "DBサービスを作ろう
//! その9 更新ログのメッセージキュー化"), with its storage on the KV store.
//!
//! The API is the article's: [`FixedQueue::open`]`(prefix, max_file_size)`,
//! [`write`](FixedQueue::write)`(timestamp, message)`,
//! [`make_reader`](FixedQueue::make_reader)`(min_timestamp)`,
//! [`read`](FixedReader::read)`(timeout)` → a message, a timeout or "canceled",
//! [`cancel_readers`](FixedQueue::cancel_readers) and
//! [`remove_old_files`](fixed::remove_old_files)`(threshold, exclude_latest)`. Messages are
//! not consumed by reading: every reader has its own position. A "file" is a *segment*: the
//! key `{prefix}.0000000001` and up holds its records, `….head` its newest timestamp, so a
//! reader can skip whole segments (see [`layout`]). Readers wait in the client's time
//! ([`kvsim::kv::Kv::wait_for_change_ms`]): virtual time in the simulator, a condition
//! variable on [`kvsim::memstore`]'s store, never a busy loop.
//!
//! Two variants: [`published`] transcribes the article and Tkrzw 1.0.25 faithfully, defects
//! included; [`fixed`] is the project's design. [`spec`] states the log's specification and
//! checks histories against it; [`model`] is the workload and the scenarios.
//!
//! # What a user of the fixed variant may expect
//!
//! With **one writer at a time** (one process holding the queue for writing, as in Tkrzw;
//! a second writer racing for a new segment gets [`QueueError::ConcurrentWriter`], but
//! concurrent writers are not otherwise detected), every reader:
//! - returns every message whose stored timestamp is at least its `min_timestamp`, in the
//!   order they were written, each exactly once; the stored timestamp is
//!   `max(given, newest already in the log)`, so stored timestamps never decrease;
//! - keeps this promise when writers or readers **crash** at any point (a crashed write may
//!   or may not be in the log; a later writer rebuilds the newest timestamp from the
//!   records), when **replies are lost** (the caller sees an error; the write may or may not
//!   have happened, and the writer must not carry on as if it had not), and when a
//!   **persistent store restarts** (MemcacheDB, kumofs, Flare);
//! - misses only what `remove_old_files(threshold, …)` removed, and that is never a record
//!   at or above the threshold: removal takes sealed segments (whose writer moved on) whose
//!   newest record is below the threshold, oldest first; the segment being written is
//!   never removed. A segment that disappears under a reader is reported once as
//!   [`Read::Gap`], and reading goes on at the next segment.
//!
//! What no design on a memcached-style store can promise: a **volatile store that evicts
//! or restarts loses data**, and the queue's records have no other copy. Then readers
//! miss messages (the fixed reader reports the lost segments as gaps, and a segment lost
//! while written is continued in a new one), and after the store lost the queue's
//! bookkeeping keys, timestamps may restart low. Run it on a persistent store, or with
//! memory to spare and eviction off, if the log matters. A paused writer that outlives its
//! turn and writes beside its successor is outside the one-writer contract.
//!
//! # What the harness found in the published variant
//!
//! (Pinned by `models/tests/message_queue_published.rs`.)
//! 1. **Stale header after a crash.** The newest file's header is written at roll-over and
//!    at close only. A writer that crashes mid-turn leaves it stale; the next writer's open
//!    trusts it as the newest timestamp and stores lower timestamps after higher ones
//!    (scenario `crash`: "timestamps decrease in storage").
//! 2. **Roll-over races the reader's end-of-file test.** The reader tests "end of file"
//!    (reads the file) and "is this the newest file" (reads `{prefix}.last`) separately;
//!    if the writer appends and rolls over in between, the reader moves to the next file
//!    and the appended records are never read (scenario `turns`, no fault needed).
//! 3. **Skipping by the stale header.** `remove_old_files` judges the newest file by its
//!    stale header and removes records at or above the threshold (scenario `removal`),
//!    and without `exclude_latest` it removes the file being written: the writer's later
//!    writes report success and go nowhere.
//! 4. **A file removed under a reader** makes every later read return "not found": the
//!    reader never sees the messages written after it (scenario `removal`).

pub mod fixed;
pub mod layout;
pub mod model;
pub mod published;
mod read;
pub mod spec;

pub use fixed::{FixedQueue, FixedReader};
pub use layout::QueueError;
pub use model::{scenarios, MessageQueueModel};
pub use published::{PublishedQueue, PublishedReader};
pub use read::Read;

/// The published variant, as a model (`message-queue/published`).
pub fn published() -> MessageQueueModel {
    use crate::expect::Variant;
    MessageQueueModel::new(Variant::Published)
}

/// The fixed variant, as a model (`message-queue/fixed`).
pub fn fixed() -> MessageQueueModel {
    use crate::expect::Variant;
    MessageQueueModel::new(Variant::Fixed)
}
