//! §1 FIFO queue on `gets`/`cas`/`add` (000): a Michael–Scott linked list in the store.
//!
//! # Published
//! The key of a node is `data + RandomString()`, its value the key of the next node
//! (empty at the end); `head` and `tail` hold node keys; a dummy node starts the list.
//! ```text
//! enqueue(data): newdata = data + RandomString(); add(newdata, NULL)
//!   loop: old_tail, tu = gets(tail); curr, nu = gets(old_tail)
//!         if curr == NULL: if cas(old_tail, nu, newdata): cas(tail, tu, newdata); return
//!         else: cas(tail, tu, curr)
//! dequeue(): loop: old_head, hu = gets(head); old_tail, tu = gets(tail); next, _ = gets(old_head)
//!         if old_head == old_tail: if next == NULL: return NULL else cas(tail, tu, next)
//!         elif cas(head, hu, next): delete(old_head); return RemoveRandomString(old_head)
//! ```
//! with the two \[repair\]s of `STRUCTURES.md` (the printed code passes `curr_tail` and
//! `new_key` where `old_tail` and `newdata` are meant). As printed, `dequeue` returns the
//! data of `old_head`, the node it unlinks (the dummy, at first), not of `next`; that is
//! transcribed as printed. `head` and `tail` are random
//! names in the original, created by `init` and handed to every client out of band; here
//! they are fixed by the constructor ([`Fifo::new`]) and `setup` runs the rest of `init`.
//! A `gets` miss reads as NULL with unique 0 (what a client returning a NULL string and no
//! unique gives), and a `cas` with unique 0 never matches.
//!
//! The author warns that on memcached LRU eviction removes nodes in the middle of the
//! queue, so the design is meant for stores that never evict (Flare, kumofs): every node
//! is the only copy of the link to the rest of the queue, and a lost node silently cuts
//! the queue there (a `dequeue` then answers "empty" while elements were enqueued).
//!
//! # The article's defects
//! - **dequeue-next** (`no-faults`): "return RemoveRandomString(old_head) // 削除したキーから乱数を剥がして返す"
//!   — dequeue hands out the data of the node it unlinks, the old dummy, not of the next
//!   node: the first dequeue returns "" (the dummy's data), every later one the element
//!   before the real head.
//! - **none:lru-cuts-the-queue** (`lru`): "実際にこれをmemcached上で動かすとLRUに従ってキューの中間データが消えるのでFlareやkumofsなどの上でしか実用できません。"
//!   — the author's own warning: LRU evicts the oldest node, the one head points to, head
//!   moves onto its NULL link and the dequeue returns "" while elements were enqueued
//!   ("head moved onto a NULL link ... the queue is cut there"); every later operation
//!   sends an empty key.
//! - **none:lost-tail-node-livelocks** (`evict`): "string curr_tail, int new_uniq = kvs.gets(old_tail)"
//!   — a miss reads as NULL with no unique, so once the node tail points to is gone the
//!   linking `cas` can never succeed and every enqueue loops forever (progress).
//! - **none:lost-pointer-sends-an-empty-key** (`evict-alone`): "string next, int next_uniq = kvs.gets(old_head)"
//!   — the head or tail pointer evicted reads as NULL, and the operation asks the store
//!   for the node named "" (valid commands: an empty key).
//! - **link-read-back** (`retrying-client`): "if(result == false): // 他のクライアントがenqueueした continue // 初めからやり直し"
//!   — a client library that resends a timed-out `cas` turns the enqueue's own landed
//!   link into EXISTS; the enqueue starts over, finds its node at the end and links it to
//!   itself: the node now links to itself and every later enqueue loops (progress).
//! - **none:resent-head-cas** (`retrying-client`): "bool result = kvs.cas(head, head_uniq, next) // dequeue操作の線形化ポイント"
//!   — a resent head `cas` that landed answers EXISTS, the dequeue takes it for another
//!   client's and dequeues again: one element is lost (a later dequeue answers NULL
//!   while the queue holds it, or hands out the one behind it).
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! The ladder (`kvsim check fifo/published+REPAIR...`): `published` fails every scenario
//! on its dequeue; with `dequeue-next` on it passes `no-faults`, `crash-lose`,
//! `persistent` and `delay`, and the defects behind it show:
//! - No faults, 2 clients × 2 operations: `dequeue` returns the data of the node it
//!   unlinks, not of the next one, so the first dequeue hands out the dummy's (empty)
//!   data and every later one the element before the real head
//!   (`fifo_published_hands_out_the_dummy_first`). Every scenario of `published` shows it.
//! - `lru` (one client, 12 operations, 3,000 bytes), with `dequeue-next`: the store's LRU
//!   evicts the node head points to and the dequeue returns "" while "c0x1" is queued
//!   (`fifo_dequeue_next_is_cut_by_lru_in_the_middle`); also the head pointer evicted (an
//!   empty key) and the tail's node evicted (enqueue loops).
//! - `evict`: once the node `tail` points to is evicted, `gets` of it reads NULL with
//!   unique 0, the linking `cas` can never succeed and `tail` never moves: every later
//!   `enqueue` loops forever (a progress violation,
//!   `fifo_published_livelocks_when_the_tail_node_is_evicted`); an evicted middle node
//!   cuts the queue, and `restart` loses it whole.
//! - `evict-alone` (one client, so no interleaving can mask what each lost key does):
//!   the tail *pointer* evicted, `dequeue` returns "" from an empty queue, and `enqueue`
//!   takes the miss for a node named "" and asks the store for it; the head pointer
//!   evicted, `dequeue` does the same. A client library refuses an empty key, so the
//!   operation fails on a command no correct structure sends: the `valid commands`
//!   property (a finding of its own, also under `lru` and `restart`).
//! - `retrying-client`, with `dequeue-next`: a resent linking `cas` links the node to
//!   itself and the next enqueue loops (removed by `link-read-back`); a resent head `cas`
//!   loses an element, with every repair on
//!   (`fifo_repaired_loses_an_element_to_a_resent_head_cas`). `link-read-back` reads the
//!   node back and checks whether tail already names our node; when the node before ours
//!   was dequeued and deleted in between and tail moved past ours, it still cannot tell
//!   (rare: about 1 run in 6,000).
//!
//! # Fixed
//! The same algorithm, plus loss detection and timeout handling:
//! - a `gets` miss on a node that `head` (or `tail`) still points to, or on `head` or
//!   `tail` themselves, means data was lost; the operation answers [`Ret::Lost`] without
//!   having changed the queue (it detects the loss before its linearization point);
//! - a timed-out linking `cas` is resolved by reading the node back (it holds our key or
//!   not); a timed-out `cas` of `head` cannot be resolved (another dequeuer may have
//!   moved head to the same node), so that dequeue's outcome is reported unknown;
//! - the final `delete` is garbage collection: its failure does not fail the dequeue;
//! - a client library that sends a timed-out command again (most do) turns a linking
//!   `cas` that landed into EXISTS: the enqueue reads the node back as above, and stops
//!   when its own node is already the tail (linking it again would make it its own
//!   successor, a livelock kvsim found); the dequeue writes a claim unique to it beside
//!   the new head (`NODE CLAIM`) and reads head back after an EXISTS.
//!
//! Tolerates (linearizable, never a wrong answer), by scenario: no faults (`no-faults`),
//! `crash` and `lose` (`crash-lose`), `delay` (`delay`), `restart` on a store that keeps
//! its data (`persistent`). Safe under `evict` (`evict`), `lru` (`lru`) and `restart`
//! (`restart`): a lost node makes it answer `Lost`, never "empty". Untested (no scenario
//! uses them): `pause`, `skew`, `expire` (no expiry used), `shard-fail`.
//!
//! Not fixed yet (scenario `retrying-client`, `lose` with a library that retries once,
//! expected to fail): when the retried `cas` of `head` landed and another dequeue moved
//! head on before ours read it back, the claim is gone and ours dequeues a second element
//! (or reports "empty" with one left). Telling needs a claim that outlives the next move
//! of head (e.g. written into the dequeued node itself before head moves), a redesign of
//! the dequeue.
//!
//! What no design on this store can fix: liveness under `evict`, `lru`, `restart` and
//! `shard-fail` (the scenarios above pass only because `Lost` is an allowed answer): a lost
//! node is the only copy of the link to the rest of the queue, so nothing can hand out the
//! elements behind it.
//!
//! Probes: `cas lost` (a `cas` linking a node or moving head was not stored: another client
//! got there first, or a resent command landed twice; the operation tries again or, fixed,
//! reads back), `tail lagging` (tail points to a node that has a successor, and the client
//! helps it along), `missing key` (a `gets` missed head, tail or a node they point to:
//! published reads it as NULL, fixed answers `Lost`), `timeout resolved` (fixed: a
//! timed-out `add` sent again, or a timed-out linking `cas` resolved by reading the node
//! back), `already linked` (fixed: the enqueuer finds its own node already the tail, an
//! attempt it took for lost having landed).

use crate::expect::{Expect, ExpectedVerdict, Variant};
use crate::lincheck;
use crate::spec_adapter::{Adapted, View};
use kvsim::{
    CheckerLimits, FaultKind, History, JsonlFormat, JsonlOp, Kv, KvError, Model, QueueOp, QueueRet,
    Repair, Scenario, SimRng, Verdict, Versioned, SIMULATED_LIMITS,
};
use serde_json::json;
use std::collections::VecDeque;

/// Length of the random suffix of a node's key.
pub const SUFFIX_LEN: usize = 8;

/// The published queue's probes ([`Kv::probe`]): its `enqueue` and `dequeue` loops and
/// `gets_or_null`.
const PUBLISHED_PROBES: &[&str] = &["cas lost", "tail lagging", "missing key"];

/// The fixed queue's probes: its `enqueue` (with its step) and `dequeue`.
const FIXED_PROBES: &[&str] = &[
    "cas lost",
    "tail lagging",
    "missing key",
    "timeout resolved",
    "already linked",
];

/// The repairs of the published queue ([`Model::repairs`]), each the fix of one defect.
pub const REPAIRS: &[Repair] = &[
    Repair {
        name: "dequeue-next",
        fixes:
            "dequeue returns the data of the node it unlinks (the old dummy), not of the next node",
    },
    Repair {
        name: "link-read-back",
        fixes: "a linking cas answered EXISTS is taken for another client's enqueue, though a \
                resent cas of our own may have linked the node: enqueue starts over and links \
                its node to itself",
    },
];

/// A queue operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `enqueue(data)`.
    Enqueue(String),
    /// `dequeue()`.
    Dequeue,
}

/// What a queue operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `enqueue` returned.
    Enqueued,
    /// `dequeue` returned this element, or `None` (NULL) for an empty queue.
    Dequeued(Option<String>),
    /// The fixed variant found part of the queue gone and changed nothing.
    Lost,
}

/// The FIFO of §1, in one of its variants.
#[derive(Clone, Debug)]
pub struct Fifo {
    variant: Variant,
    head: Vec<u8>,
    tail: Vec<u8>,
}

/// The published FIFO.
pub fn published() -> Fifo {
    Fifo::new(Variant::Published)
}

/// The fixed FIFO.
pub fn fixed() -> Fifo {
    Fifo::new(Variant::Fixed)
}

/// `gets` as the published pseudocode reads it: a miss is NULL with unique 0.
async fn gets_or_null<K: Kv>(kv: &K, key: &[u8]) -> Result<(Vec<u8>, u64), KvError> {
    Ok(match kv.gets(key).await? {
        Some(Versioned { data, cas, .. }) => (data, cas),
        None => {
            kv.probe("missing key");
            (Vec::new(), 0)
        }
    })
}

/// `RemoveRandomString`: the data part of a node's key.
fn remove_random_string(key: &[u8]) -> String {
    let end = key.len().saturating_sub(SUFFIX_LEN);
    String::from_utf8_lossy(&key[..end]).into_owned()
}

enum Step<T> {
    Done(T),
    Retry,
}

impl Fifo {
    /// A queue whose shared `head` and `tail` keys are `fifohead7q` and `fifotail7q`.
    pub fn new(variant: Variant) -> Fifo {
        Fifo {
            variant,
            head: b"fifohead7q".to_vec(),
            tail: b"fifotail7q".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    async fn published_enqueue<K: Kv>(&self, kv: &K, data: &str) -> Result<Ret, KvError> {
        let newdata = format!("{data}{}", kv.random_string(SUFFIX_LEN)).into_bytes();
        kv.add(&newdata, b"", 0).await?;
        loop {
            let (old_tail, tail_uniq) = gets_or_null(kv, &self.tail).await?;
            if old_tail == newdata && self.variant.repaired("link-read-back") {
                // Repair `link-read-back`: our node is the tail, so an attempt we took for
                // lost linked it (and its node was dequeued before we read it back);
                // linking it again would make it its own successor.
                return Ok(Ret::Enqueued);
            }
            let (curr_tail, new_uniq) = gets_or_null(kv, &old_tail).await?;
            if curr_tail.is_empty() {
                let ok = kv.cas(&old_tail, new_uniq, &newdata, 0).await?;
                if !ok.is_stored() {
                    kv.probe("cas lost");
                    // Repair `link-read-back`: a library that resends a timed-out command
                    // turns our own landed `cas` into EXISTS; the node's value tells (our
                    // node's name is unique).
                    let linked = self.variant.repaired("link-read-back")
                        && kv.get(&old_tail).await?.is_some_and(|v| v == newdata);
                    if !linked {
                        continue;
                    }
                }
                kv.cas(&self.tail, tail_uniq, &newdata, 0).await?;
                return Ok(Ret::Enqueued);
            } else {
                kv.probe("tail lagging");
                kv.cas(&self.tail, tail_uniq, &curr_tail, 0).await?;
            }
        }
    }

    async fn published_dequeue<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        loop {
            let (old_head, head_uniq) = gets_or_null(kv, &self.head).await?;
            let (old_tail, tail_uniq) = gets_or_null(kv, &self.tail).await?;
            let (next, _next_uniq) = gets_or_null(kv, &old_head).await?;
            if old_head == old_tail {
                if next.is_empty() {
                    return Ok(Ret::Dequeued(None));
                } else {
                    kv.probe("tail lagging");
                    kv.cas(&self.tail, tail_uniq, &next, 0).await?;
                }
            } else if kv.cas(&self.head, head_uniq, &next, 0).await?.is_stored() {
                kv.delete(&old_head).await?;
                // Repair `dequeue-next`: the element is the data of the node that becomes
                // the new dummy (`next`), not of the one unlinked.
                let taken = if self.variant.repaired("dequeue-next") {
                    &next
                } else {
                    &old_head
                };
                return Ok(Ret::Dequeued(Some(remove_random_string(taken))));
            } else {
                kv.probe("cas lost");
            }
        }
    }

    async fn fixed_enqueue<K: Kv>(&self, kv: &K, data: &str) -> Result<Ret, KvError> {
        let newdata = format!("{data}{}", kv.random_string(SUFFIX_LEN)).into_bytes();
        loop {
            match kv.add(&newdata, b"", 0).await {
                Ok(_) => break,
                Err(e) if e.is_indeterminate() => {
                    kv.probe("timeout resolved");
                    continue; // add is idempotent here
                }
                Err(e) => return Err(e),
            }
        }
        loop {
            match self.fixed_enqueue_step(kv, &newdata).await? {
                Step::Done(r) => return Ok(r),
                Step::Retry => continue,
            }
        }
    }

    async fn fixed_enqueue_step<K: Kv>(
        &self,
        kv: &K,
        newdata: &[u8],
    ) -> Result<Step<Ret>, KvError> {
        let Some(t) = kv.gets(&self.tail).await? else {
            kv.probe("missing key");
            return Ok(Step::Done(Ret::Lost));
        };
        if t.data == newdata {
            // Our node is the tail: an attempt we took for lost was linked (and tail
            // advanced to it). Linking it again would make it its own successor.
            kv.probe("already linked");
            return Ok(Step::Done(Ret::Enqueued));
        }
        let Some(node) = kv.gets(&t.data).await? else {
            // The node tail points to is gone: dequeued since we read tail, or lost.
            return Ok(match kv.get(&self.tail).await? {
                Some(now) if now == t.data => {
                    kv.probe("missing key");
                    Step::Done(Ret::Lost)
                }
                Some(_) => Step::Retry,
                None => {
                    kv.probe("missing key");
                    Step::Done(Ret::Lost)
                }
            });
        };
        if !node.data.is_empty() {
            kv.probe("tail lagging");
            let _ = kv.cas(&self.tail, t.cas, &node.data, 0).await;
            return Ok(Step::Retry);
        }
        // A `cas` that is not STORED may still have linked our node: a client library
        // that retries a timed-out command turns our own landed `cas` into EXISTS. Our
        // node's name is unique, so the last node's value tells.
        let linked = match kv.cas(&t.data, node.cas, newdata, 0).await {
            Ok(o) if o.is_stored() => true,
            Ok(_) => {
                kv.probe("cas lost");
                kv.get(&t.data).await?.is_some_and(|v| v == newdata)
            }
            Err(e) if e.is_indeterminate() => {
                kv.probe("timeout resolved");
                match kv.get(&t.data).await? {
                    Some(v) if v == newdata => true,
                    Some(_) => false,
                    // The node vanished: maybe we linked, maybe not; we cannot tell.
                    None => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        if !linked {
            return Ok(Step::Retry);
        }
        // Speculative: fails only if another client already advanced tail.
        let _ = kv.cas(&self.tail, t.cas, newdata, 0).await;
        Ok(Step::Done(Ret::Enqueued))
    }

    async fn fixed_dequeue<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        // The head names its node, then (once a dequeue moved it) that dequeue's claim:
        // `NODE CLAIM`. A `cas` of head that is not STORED may still be ours (a library
        // that retries a timed-out command turns our own landed `cas` into EXISTS); the
        // claim, unique per dequeue, tells.
        let claim = kv.random_string(SUFFIX_LEN);
        loop {
            let Some(h) = kv.gets(&self.head).await? else {
                kv.probe("missing key");
                return Ok(Ret::Lost);
            };
            let hnode = head_node(&h.data);
            let Some(t) = kv.gets(&self.tail).await? else {
                kv.probe("missing key");
                return Ok(Ret::Lost);
            };
            let Some(node) = kv.gets(hnode).await? else {
                // The head node is gone: another dequeue moved head on and deleted it, or
                // it was lost while head still points to it.
                match kv.get(&self.head).await? {
                    Some(now) if now == h.data => {
                        kv.probe("missing key");
                        return Ok(Ret::Lost);
                    }
                    Some(_) => continue,
                    None => {
                        kv.probe("missing key");
                        return Ok(Ret::Lost);
                    }
                }
            };
            let next = node.data;
            if hnode == &t.data[..] {
                if next.is_empty() {
                    return Ok(Ret::Dequeued(None));
                }
                kv.probe("tail lagging");
                let _ = kv.cas(&self.tail, t.cas, &next, 0).await;
                continue;
            }
            if next.is_empty() {
                // head lags behind a tail that moved on: our reads were not a snapshot.
                continue;
            }
            let mut claimed = next.clone();
            claimed.push(b' ');
            claimed.extend_from_slice(claim.as_bytes());
            let moved = match kv.cas(&self.head, h.cas, &claimed, 0).await {
                Ok(o) if o.is_stored() => true,
                Ok(_) => {
                    kv.probe("cas lost");
                    kv.get(&self.head).await? == Some(claimed)
                }
                Err(e) if e.is_indeterminate() => return Err(e),
                Err(e) => return Err(e),
            };
            if moved {
                // Garbage collection only: the element is ours whatever happens here.
                let _ = kv.delete(hnode).await;
                return Ok(Ret::Dequeued(Some(remove_random_string(&next))));
            }
        }
    }
}

/// The node a fixed queue's head names: its value up to the dequeuer's claim.
fn head_node(head: &[u8]) -> &[u8] {
    head.split(|&b| b == b' ').next().unwrap_or(head)
}

/// An operation's fields in a history file (read by `kvsim check-history --spec queue`).
fn jsonl_op(op: &Op, ret: Option<&Ret>) -> JsonlOp {
    let fail = ret == Some(&Ret::Lost);
    match op {
        Op::Enqueue(x) => JsonlOp::new("enqueue", json!(x), json!(null), fail),
        Op::Dequeue => {
            let x = match ret {
                Some(Ret::Dequeued(x)) => json!(x),
                _ => json!(null),
            };
            JsonlOp::new("dequeue", json!(null), x, fail)
        }
    }
}

/// What one item of the FIFO's store means: `head` and `tail` name a node, any other key is
/// a node (its data plus a random suffix) whose value is the next node's key.
fn describe_fifo_item(head: &[u8], tail: &[u8], key: &[u8], value: &[u8]) -> Option<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if key == head {
        let (first, claim) = match value.iter().position(|&b| b == b' ') {
            Some(i) => (&value[..i], Some(text(&value[i + 1..]))),
            None => (value, None),
        };
        let claimed = claim.map_or(String::new(), |c| format!(" (claimed by dequeue {c})"));
        if first.is_empty() {
            return Some(format!("head: empty, names no node{claimed}"));
        }
        return Some(format!(
            "head: the first node (the dummy) is node {:?}{claimed}",
            text(first)
        ));
    }
    if key == tail {
        if value.is_empty() {
            return Some("tail: empty, names no node".to_string());
        }
        return Some(format!(
            "tail: the last node is node {:?} (or one behind it)",
            text(value)
        ));
    }
    let k = text(key);
    let data = k.get(..k.len().saturating_sub(SUFFIX_LEN)).unwrap_or("");
    Some(if value.is_empty() {
        format!("node of data {data:?}: the last node (no next)")
    } else {
        format!("node of data {data:?}: next is node {:?}", text(value))
    })
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "a linked list of nodes: a node's key is its data plus a random suffix of 8 \
     characters (Enqueue(\"c0x0\") makes a node such as c0x0k3x9qa2b), its value the \
     key of the next node (empty: the last node); fifohead7q holds the key of the \
     first node, a dummy whose data was handed out already, and fifotail7q the key of \
     the last node (or one behind it: tail may lag); setup makes a dummy node with a \
     random key. Enqueue adds its node, then links it with a cas of the last node's \
     value; dequeue moves head on to the next node with a cas of fifohead7q, deletes \
     the node it unlinked and returns that node's data (its key without the suffix): \
     as printed, the old dummy's, not the next node's. A node that is gone (evicted) \
     cuts the queue there: nothing after it can be reached";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "a linked list of nodes: a node's key is its data plus a random suffix of 8 \
     characters (Enqueue(\"c0x0\") makes a node such as c0x0k3x9qa2b), its value the \
     key of the next node (empty: the last node); fifohead7q holds the key of the \
     first node, a dummy whose data was handed out already, then a space and the \
     claim of the dequeue that moved it there (NODE CLAIM), and fifotail7q the key of \
     the last node (or one behind it: tail may lag). Dequeue moves head on to the \
     next node with a cas and returns that next node's data (its key without the \
     suffix); a node, head or tail found missing means the queue was lost, and the \
     operation answers Lost";

impl Model for Fifo {
    fn representation(&self) -> Option<&'static str> {
        Some(match self.variant {
            Variant::Fixed => REPRESENTATION_FIXED,
            _ => REPRESENTATION,
        })
    }

    fn describe_item(&self, key: &[u8], value: &[u8]) -> Option<String> {
        describe_fifo_item(&self.head, &self.tail, key, value)
    }

    type Op = Op;
    type Ret = Ret;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        let dummy = kv.random_string(SUFFIX_LEN).into_bytes();
        kv.add(&dummy, b"", 0).await?;
        kv.add(&self.head, &dummy, 0).await?;
        kv.add(&self.tail, &dummy, 0).await?;
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Enqueue(d)) => {
                self.published_enqueue(kv, d).await
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Dequeue) => {
                self.published_dequeue(kv).await
            }
            (Variant::Fixed, Op::Enqueue(d)) => self.fixed_enqueue(kv, d).await,
            (Variant::Fixed, Op::Dequeue) => self.fixed_dequeue(kv).await,
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn repairs(&self) -> &'static [Repair] {
        REPAIRS
    }

    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> Op {
        if rng.chance(0.55) {
            Op::Enqueue(format!("c{client}x{index}"))
        } else {
            Op::Dequeue
        }
    }

    fn history_format(&self) -> Option<JsonlFormat<Op, Ret>> {
        Some(JsonlFormat {
            spec: "queue",
            args: Vec::new(),
            describe: jsonl_op,
        })
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        let spec = Adapted(QueueView::of(self));
        lincheck::check(&spec, history, limits, |r| *r == Ret::Lost)
    }

    fn check_long(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_long_with(history, &SIMULATED_LIMITS)
    }

    /// [`kvsim::check_unique_queue`] (the workload's values are unique: `c<client>x<index>`),
    /// polynomial in the history's length (a `Lost` answer had no effect); the general
    /// search of [`Model::check_with`], within `limits`, only where it does not settle the
    /// question.
    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        use kvsim::{check_unique_queue, Operation, Outcome, UniqueCheck};
        let ops = history
            .ops
            .iter()
            .map(|o| Operation {
                client: o.client,
                op: match &o.op {
                    Op::Enqueue(x) => QueueOp::Enqueue(x.as_str()),
                    Op::Dequeue => QueueOp::Dequeue,
                },
                call: o.call,
                ret: o.ret,
                call_ms: o.call_ms,
                ret_ms: o.ret_ms,
                outcome: match &o.outcome {
                    Outcome::Ok(Ret::Enqueued) => Outcome::Ok(QueueRet::Enqueued),
                    Outcome::Ok(Ret::Dequeued(x)) => Outcome::Ok(QueueRet::Dequeued(x.as_deref())),
                    Outcome::Ok(Ret::Lost) | Outcome::Failed => Outcome::Failed,
                    Outcome::Unknown => Outcome::Unknown,
                },
                marks: Vec::new(),
            })
            .collect();
        match check_unique_queue(&History { ops }) {
            UniqueCheck::Ok(_) => Verdict::Ok,
            UniqueCheck::Violation(v) => Verdict::Violation(v),
            UniqueCheck::Inconclusive(_) | UniqueCheck::NotUnique(_) => {
                self.check_with(history, limits)
            }
        }
    }
}

/// The sequential FIFO queue: kvsim's [`kvsim::QueueSpec`] over the model's
/// operations, with the model's own explanations.
pub type QueueSpec = Adapted<QueueView>;

/// The FIFO's operations as [`kvsim::QueueSpec`]'s.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueView {
    /// Which dequeue the history comes from, where known: `Some(true)` the published one,
    /// which hands out the data of the node it unlinks; `Some(false)` one that hands out
    /// the next node's (`dequeue-next` on, or fixed); `None` unknown (a history file).
    pub unlinked_data: Option<bool>,
}

impl QueueView {
    /// The view for the queue `fifo`'s histories (its dequeue known).
    pub fn of(fifo: &Fifo) -> QueueView {
        QueueView {
            unlinked_data: Some(
                fifo.variant != Variant::Fixed && !fifo.variant.repaired("dequeue-next"),
            ),
        }
    }

    /// Why a dequeue returned `x`, where the model knows it: the structure's cause.
    fn cause(&self, state: &VecDeque<String>, x: &str) -> &'static str {
        match (self.unlinked_data, x.is_empty()) {
            (Some(true), true) => {
                " (the data of the node it unlinked: the dummy, which holds none)"
            }
            (Some(true), false) if !state.iter().any(|e| e == x) => {
                " (the data of the node it unlinked, dequeued before: not of the next node)"
            }
            // A dequeue that hands out the next node's data returns "" only when head
            // moved onto a NULL link: the node head pointed to was missing.
            (Some(false), true) => {
                " (head moved onto a NULL link: the node it pointed to is gone and the queue \
                 is cut there)"
            }
            _ => "",
        }
    }
}

impl View for QueueView {
    type Spec = kvsim::QueueSpec<String>;
    type Op = Op;
    type Ret = Ret;

    fn spec(&self) -> kvsim::QueueSpec<String> {
        kvsim::QueueSpec::new()
    }

    fn op(&self, op: &Op) -> QueueOp<String> {
        match op {
            Op::Enqueue(d) => QueueOp::Enqueue(d.clone()),
            Op::Dequeue => QueueOp::Dequeue,
        }
    }

    fn ret(&self, ret: QueueRet<String>) -> Ret {
        match ret {
            QueueRet::Enqueued => Ret::Enqueued,
            QueueRet::Dequeued(front) => Ret::Dequeued(front),
        }
    }

    fn explain(&self, state: &VecDeque<String>, op: &Op, expected: &Ret, found: &Ret) -> String {
        match (op, found) {
            (Op::Dequeue, Ret::Dequeued(None)) => format!(
                "dequeue returned NULL (empty), but the queue holds {:?}",
                state.iter().collect::<Vec<_>>()
            ),
            (Op::Dequeue, Ret::Dequeued(Some(x))) => {
                let why = self.cause(state, x);
                match state.front() {
                    Some(h) => {
                        format!("dequeue returned {x:?}{why}, but the queue's head is {h:?}")
                    }
                    None => format!("dequeue returned {x:?}{why}, but the queue is empty"),
                }
            }
            _ => format!("{op:?} returned {found:?}, expected {expected:?}"),
        }
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 4)
                .about("concurrent enqueues and dequeues")
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["dequeue-next"]),
        ),
        (
            // One client, a queue a dozen operations long in a 3,000-byte cache: the
            // store's LRU reaches the oldest node (the dummy head points to, or one behind
            // it) while the queue is still in use, as the author warns: head moves onto a
            // NULL link and the queue is cut there. Two clients in a smaller cache lose the
            // head pointer or the tail's node first. memcached evicts a node only to make
            // room in the node's slab class (class 2, 120-byte chunks at the scaled
            // geometry: a node is about 106 bytes), so the neighbour writes items of that
            // class (40-byte values, 118-byte items); pressing classes 1 to 3 in turn (the
            // default) cuts the queue in a few runs of 500 only.
            Scenario::new("lru", 1, 12)
                .about("a small cache (3,000 bytes): the store's LRU evicts the oldest nodes, in the middle of the queue")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Lru])
                .memory_limit(3000)
                .neighbour(40)
                .runs(500),
            Expect::BROKEN_FIXED
                .shows(&["dequeue-next"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("evict", 2, 5)
                .about("keys may be evicted at any step (memcached's LRU)")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED
                .shows(&["dequeue-next"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            // One client: no interleaving, so the no-fault defect cannot happen and every
            // failure is an eviction's own. Which key goes decides what breaks: the tail
            // pointer, the sentinel node, a node in the middle, the head pointer.
            Scenario::new("evict-alone", 1, 6)
                .about("one client, keys evicted at any step: what each lost key does on its own")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .sometimes(&["missing key"])
                .runs(2000),
            Expect::BROKEN_FIXED
                .shows(&["dequeue-next"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("restart", 2, 5)
                .about("the server may restart and lose its volatile data")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Restart])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED
                .shows(&["dequeue-next"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("crash-lose", 3, 4)
                .about("clients crash mid-operation; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose])
                .fault_budget(2)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["dequeue-next"]),
        ),
        (
            Scenario::new("persistent", 3, 4)
                .about("a store that never evicts and survives restarts (Flare, kumofs)")
                .faults(&[FaultKind::Restart, FaultKind::Crash])
                .persistent()
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["dequeue-next"]),
        ),
        (
            Scenario::new("delay", 3, 4)
                .about("a request lands late, after its client timed out and moved on")
                .sometimes(&["timeout resolved"])
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .timeout_ms(1_000)
                .runs(500),
            Expect::BROKEN_FIXED.shows(&["dequeue-next"]),
        ),
        (
            Scenario::new("retrying-client", 3, 4)
                .about(
                    "lost requests and replies; the client library sends a timed-out command again",
                )
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1)
                .runs(3000),
            Expect::not_yet_fixed(
                "a dequeue claim that outlives the next move of head (written into the dequeued \
                 node before head moves) tells a resent head cas that landed",
            )
            .shows(&["dequeue-next", "link-read-back"])
            .then(ExpectedVerdict::Violation),
        ),
    ]
}
