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
//! ([`kvsim::Kv::wait_for_change_ms`]): virtual time in the simulator, a condition
//! variable on [`kvsim::store::memstore`]'s store, never a busy loop.
//!
//! Two variants: [`published`](mod@published) transcribes the article and Tkrzw 1.0.25 faithfully, defects
//! included; [`fixed`](mod@fixed) is the project's design. [`spec`] states the log's specification and
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
//! - misses only what `remove_old_files(threshold, …)` removed, and that is never a record
//!   at or above the threshold: removal takes sealed segments (whose writer moved on) whose
//!   newest record is below the threshold, oldest first; the segment being written is
//!   never removed. A segment that disappears under a reader is reported once as
//!   [`Read::Gap`], and reading goes on at the next segment.
//!
//! It keeps these promises, by scenario: with no faults (`turns`, and `removal` for the
//! last one); when writers or readers **crash** at any point (`crash`, `crash-removal`: a
//! crashed write may or may not be in the log; a later writer rebuilds the newest
//! timestamp from the records); when **replies are lost** (`lose`: the caller sees an
//! error; the write may or may not have happened, and the writer must not carry on as if
//! it had not); when a **persistent store restarts** (`restart-persistent`: MemcacheDB,
//! kumofs, Flare); and when **client clocks are skewed** (`skew`: writers stamp and
//! readers time out by their own clocks, and stored timestamps still never decrease).
//! It also survives a client library that **resends** a timed-out command
//! (`retrying-client`: a segment is created by `add`, so a resent creation fails instead of
//! duplicating a record) and **late delivery** (`delay`). Untested: `pause`, `expire`,
//! `shard-fail`.
//!
//! Not fixed yet: concurrent writers are detected only when they race for a new segment,
//! and a paused writer that outlives its turn and writes beside its successor is outside
//! the one-writer contract; the workload hands out writer turns by a lock, so neither is
//! tested.
//!
//! What no design on a memcached-style store can promise: a **volatile store that evicts
//! or restarts loses data** (scenarios `evict`; `lru`, a 1,500-byte cache whose LRU
//! evicts the oldest segments; `restart-volatile`; `shard-fail` the same, untested),
//! because the queue's records have no other copy. Then readers miss messages (the fixed
//! reader reports the lost segments as gaps, and a segment lost while written is continued
//! in a new one), and after the store lost the queue's bookkeeping keys, timestamps may
//! restart low. Run it on a persistent store, or with memory to spare and eviction off, if
//! the log matters.
//!
//! # The article's defects
//!
//! - **rebuild-timestamp** (`crash`): "writes can carry lower timestamps than records already there: rebuild it from the records."
//!   — a writer that crashed (or lost its turn on a lost reply, `lose`) before `close` leaves
//!   the newest file's header stale; the next writer's `open` takes it as the newest
//!   timestamp and stores lower timestamps after higher ones: "timestamps decrease in storage"
//! - **rebuild-timestamp** (`crash-removal`): "The newest file's header is stale while it is being written: skipping by it loses records."
//!   — the next writer seals the file with a header below the crashed writer's records, and
//!   a reader or a removal that judges the file by it skips records above its threshold
//! - **spare-newest-file** (`removal`): "below threshold; without exclude_latest it can delete the file being written."
//!   — `remove_old_files` judges the file being written by its stale header and removes
//!   records at or above its threshold, and the writer's later writes into it report success
//!   and are gone: "never returned X (timestamp ≥ threshold) … (C4's removal took segment k)"
//! - **skip-removed-file** (`removal`): "用済みになった古いファイルは、運用中でも、rmコマンドとかの適当な手段で消してよい。"
//!   — a reader whose next file was removed while running says "not found" on every later
//!   read: "stopped for good with 'not found' for segment k" (`STRUCTURES.md`: "A reader
//!   whose next file was removed returns")
//! - **none:only-copy** (`evict`): "In this project the queue's storage is the KV store (a file becomes a key or a few keys), so the same faults apply to it."
//!   — an evicted (or LRU-pushed, or volatile-restart-lost) segment is the only copy of its
//!   records: readers miss them whatever the code
//!
//! # Findings
//!
//! The port is as faithful as its original: Tkrzw's mutex makes the reader's end-of-file
//! tests and its lazy start one state of the queue, and the port's reads are ordered so
//! that they are too ([`published`]'s module text says how and why no race is added or
//! removed). With no faults (`turns`) and with skewed clocks (`skew`) the published
//! variant passes; every finding below is Tkrzw's own design on a shared store. Each is
//! pinned by a scripted schedule in `models/tests/message_queue_published.rs` and found at
//! random by `kvsim check message-queue/published`; each repair switches one off
//! (`kvsim check message-queue/published+REPAIR`).
//! 1. **The next writer trusts a stale header** (`rebuild-timestamp`; scenarios `crash`,
//!    `lose`, `crash-removal`, `restart-persistent`): "timestamps decrease in storage".
//! 2. **Removal by a stale header takes the file being written** (`spare-newest-file`;
//!    `removal`, `crash-removal`): records at or above the threshold are gone, and a reader
//!    that starts after their write "never returned" them.
//! 3. **A reader stopped for good by a removal** (`skip-removed-file`; `removal`,
//!    `crash-removal`): the file it must open next is gone, and every later read says
//!    "not found": the checker's property 7 (no reader stopped for good).
//! 4. **A resent `append` stores a record twice** (no repair; `retrying-client`): a client
//!    library that sends a timed-out `append` again whose first copy landed duplicates the
//!    record: "reader C1 returned X twice". Tkrzw appends to a local file and never resends.
//! 5. **A late command lands after the writer moved on** (no repair; `delay`): a
//!    timed-out writer's late `append` or `set` lands in a file readers have passed, or sets
//!    `last` back. Tkrzw's local writes never land late.
//!
//! With every repair on, the published variant passes `turns`, `crash`, `removal`,
//! `crash-removal`, `lose`, `restart-persistent` and `skew`, and fails `retrying-client` and
//! `delay` (findings 4 and 5) and the data-losing scenarios (`evict`, `lru`,
//! `restart-volatile`), as the fixed variant does the last three. A torn last record
//! (Tkrzw's crash recovery) cannot happen here: memcached applies an `append` whole.
//!
//! Probes: `roll over` (a writer closed its full segment and started the next),
//! `append miss` (a write's `append` found its segment gone: published, the write is
//! silently lost, finding 2; fixed, it continues in a new segment), `segment gone` (a
//! reader found the segment it must read next missing: published stops with "not found"
//! for good, finding 3; fixed reports a gap), `newest removed` (`remove_old_files` removed
//! the newest segment: published, the file still being written, judged by its stale
//! header; fixed, only once sealed), `unsealed segment` (fixed: `open` found the newest
//! segment without a header, its writer having crashed or lost its turn, and will seal it).

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
