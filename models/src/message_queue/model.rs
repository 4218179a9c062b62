//! The queue as a [`Model`]: the workload (writer turns, reader sessions, removals), the
//! check, and the scenarios with the verdicts each variant is expected to get.

use super::layout::QueueError;
use super::read::Read;
use super::spec::{check_log, End, Event, MqOp, MqRet};
use super::{fixed, published};
use crate::expect::{Expect, ExpectedVerdict, Variant};
use kvsim::{FaultKind, History, Kv, KvError, Model, Repair, Scenario, SimRng, Verdict};

/// The published queue's probes ([`Kv::probe`]), hit in [`published`]: its writer,
/// reader and `remove_old_files` (see the module's text).
const PUBLISHED_PROBES: &[&str] = &["roll over", "append miss", "segment gone", "newest removed"];

/// The fixed queue's probes, hit in [`fixed`]: the same places, and its `open` finding
/// the newest segment unsealed (no header yet).
const FIXED_PROBES: &[&str] = &[
    "roll over",
    "append miss",
    "segment gone",
    "newest removed",
    "unsealed segment",
];

/// The message queue under test: one variant, the key prefix and the segment size.
#[derive(Clone, Debug)]
pub struct MessageQueueModel {
    /// The variant.
    pub variant: Variant,
    /// The queue's key prefix.
    pub prefix: String,
    /// `max_file_size`: small, so that turns roll segments over.
    pub max_file_size: usize,
    /// How long a writer's turn lock lives, in seconds (a crashed writer's turn ends then).
    pub turn_lease_secs: i64,
}

impl MessageQueueModel {
    /// The model of `variant` with the default workload parameters (a segment rolls over after each record).
    pub fn new(variant: Variant) -> MessageQueueModel {
        MessageQueueModel {
            variant,
            prefix: "mq".to_string(),
            max_file_size: 16,
            turn_lease_secs: 1,
        }
    }

    /// The client's role: 0 and 2 write, 4 removes and reads, the others read.
    fn role(client: usize) -> Role {
        match client {
            0 | 2 => Role::Writer,
            4 => Role::Remover,
            _ => Role::Reader,
        }
    }

    async fn turn<K: Kv>(&self, kv: &K, writes: &[(i64, String)]) -> Result<MqRet, QueueError> {
        // One writer at a time, as one writing process at a time in Tkrzw: the turn lock is
        // the deployment's, not the queue's, and the same for both variants.
        let lock = format!("{}.turn", self.prefix).into_bytes();
        while !kv.add(&lock, b"1", self.turn_lease_secs).await?.is_stored() {
            kv.sleep_ms(250).await;
        }
        let mut stored = Vec::with_capacity(writes.len());
        match self.variant {
            Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                let mut q = published::PublishedQueue::open(
                    kv,
                    &self.prefix,
                    self.max_file_size,
                    self.variant,
                )
                .await?;
                for (ts, msg) in writes {
                    stored.push(q.write(*ts, msg.as_bytes()).await?);
                }
                q.close().await?;
            }
            Variant::Fixed => {
                let mut q = fixed::FixedQueue::open(kv, &self.prefix, self.max_file_size).await?;
                for (ts, msg) in writes {
                    stored.push(q.write(*ts, msg.as_bytes()).await?);
                }
                q.close().await?;
            }
        }
        kv.delete(&lock).await?;
        Ok(MqRet::Turn(stored))
    }

    async fn session<K: Kv>(
        &self,
        kv: &K,
        min_timestamp: i64,
        timeout_ms: i64,
        max: usize,
    ) -> Result<MqRet, QueueError> {
        let mut events = Vec::new();
        let mut count = 0;
        let mut published = published::open_reader(kv, &self.prefix, min_timestamp, self.variant);
        let mut fixed = fixed::open_reader(kv, &self.prefix, min_timestamp);
        while count < max {
            let read = match self.variant {
                Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                    published.read(timeout_ms).await?
                }
                Variant::Fixed => fixed.read(timeout_ms).await?,
            };
            match read {
                Read::Message { timestamp, message } => {
                    count += 1;
                    events.push(Event::Message {
                        timestamp,
                        message: String::from_utf8_lossy(&message).into_owned(),
                    });
                }
                Read::Gap { from, to } => events.push(Event::Gap { from, to }),
                Read::Timeout => return Ok(MqRet::Read(events, End::Timeout)),
                Read::Canceled => return Ok(MqRet::Read(events, End::Canceled)),
                Read::NotFound { segment } => {
                    return Ok(MqRet::Read(events, End::NotFound(segment)))
                }
            }
        }
        Ok(MqRet::Read(events, End::Limit))
    }

    async fn remove<K: Kv>(
        &self,
        kv: &K,
        threshold: i64,
        exclude_latest: bool,
    ) -> Result<MqRet, QueueError> {
        let removed = match self.variant {
            Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                published::remove_old_files(
                    kv,
                    &self.prefix,
                    threshold,
                    exclude_latest,
                    self.variant,
                )
                .await?
            }
            Variant::Fixed => {
                fixed::remove_old_files(kv, &self.prefix, threshold, exclude_latest).await?
            }
        };
        Ok(MqRet::Remove(removed))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Writer,
    Reader,
    Remover,
}

/// How the structure stores its state ([`Model::representation`]).
const REPRESENTATION: &str = "the log is a row of segments (the article's files): the key <prefix>.0000000001 \
     and up holds a segment's records concatenated, each framed as 0xFF, a 6-byte \
     timestamp, a 4-byte length, the body and a checksum; <prefix>.0000000001.head \
     holds the segment's newest timestamp in decimal (the file header a reader skips \
     by), <prefix>.last the number of the newest segment (and, in the fixed variant, <prefix>.first a lower bound of the oldest). A writer appends \
     records to the newest segment and starts the next one when it passes \
     max_file_size; each reader keeps its own position (segment and offset) and reads \
     on from there";

impl Model for MessageQueueModel {
    fn representation(&self) -> Option<&'static str> {
        Some(REPRESENTATION)
    }

    type Op = MqOp;
    type Ret = MqRet;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &MqOp) -> Result<MqRet, KvError> {
        let result = match op {
            MqOp::Turn { writes } => self.turn(kv, writes).await,
            MqOp::Read {
                min_timestamp,
                timeout_ms,
                max,
            } => self.session(kv, *min_timestamp, *timeout_ms, *max).await,
            MqOp::Remove {
                threshold,
                exclude_latest,
            } => self.remove(kv, *threshold, *exclude_latest).await,
        };
        match result {
            Ok(ret) => Ok(ret),
            Err(QueueError::Kv(e)) => Err(e),
            Err(other) => Ok(MqRet::Failed(other.to_string())),
        }
    }

    fn repairs(&self) -> &'static [Repair] {
        published::REPAIRS
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> MqOp {
        let role = match Self::role(client) {
            Role::Remover if index % 2 == 1 => Role::Reader,
            r => r,
        };
        match role {
            Role::Writer => {
                let n = 1 + rng.index(3);
                let mut ts = 100 * (index as i64 + 1) + rng.below(50) as i64;
                let writes = (0..n)
                    .map(|i| {
                        ts += rng.below(30) as i64;
                        // Now and then an older timestamp, which the queue raises.
                        let given = if rng.chance(0.2) { ts - 60 } else { ts };
                        (given, format!("c{client}.{index}.{i}"))
                    })
                    .collect();
                MqOp::Turn { writes }
            }
            Role::Reader => MqOp::Read {
                min_timestamp: if rng.chance(0.5) {
                    0
                } else {
                    rng.below(300) as i64
                },
                timeout_ms: 1500,
                max: 40,
            },
            Role::Remover => MqOp::Remove {
                threshold: rng.below(400) as i64,
                exclude_latest: rng.chance(0.5),
            },
        }
    }

    fn check(&self, history: &History<MqOp, MqRet>) -> Verdict {
        check_log(history)
    }
}

/// The scenarios of the message queue, with the expected verdicts. Clients 0 and 2 take
/// writer turns, 4 alternates removals and reads, the others read. `shows` names the
/// repairs ([`published::REPAIRS`]) whose defects a scenario finds in the published code.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    const TIMESTAMP: &[&str] = &["rebuild-timestamp"];
    const REMOVAL: &[&str] = &["skip-removed-file", "spare-newest-file"];
    const ALL: &[&str] = &[
        "rebuild-timestamp",
        "skip-removed-file",
        "spare-newest-file",
    ];
    let row = |scenario: Scenario, expect: Expect| (scenario, expect);
    vec![
        row(
            Scenario::new("turns", 4, 3)
                .about("two writers take turns, two readers follow (no faults)"),
            Expect::BOTH_PASS,
        ),
        row(
            Scenario::new("crash", 4, 3)
                .sometimes(&["roll over"])
                .about("writers and readers crash mid-operation; the next writer takes over")
                .faults(&[FaultKind::Crash])
                .fault_budget(2),
            Expect::BROKEN_FIXED.shows(TIMESTAMP),
        ),
        row(
            Scenario::new("removal", 5, 4)
                .about("remove_old_files runs under writers and readers (no faults)")
                .sometimes(&["segment gone"]),
            Expect::BROKEN_FIXED.shows(REMOVAL),
        ),
        row(
            Scenario::new("crash-removal", 5, 4)
                .about("removal while writers crash")
                .faults(&[FaultKind::Crash])
                .fault_budget(2),
            Expect::BROKEN_FIXED.shows(ALL),
        ),
        row(
            Scenario::new("lose", 4, 3)
                .about("requests and replies are lost; the caller sees a timeout")
                .faults(&[FaultKind::Lose])
                .fault_budget(2),
            Expect::BROKEN_FIXED.shows(TIMESTAMP),
        ),
        row(
            Scenario::new("retrying-client", 4, 3)
                .about("lost requests and replies; the client library sends a timed-out command again")
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1),
            Expect::BROKEN_FIXED.shows(TIMESTAMP).then(ExpectedVerdict::Violation),
        ),
        row(
            Scenario::new("delay", 4, 3)
                .about("a request lands late, after its client timed out and moved on")
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .timeout_ms(1_000),
            Expect::BROKEN_FIXED.shows(TIMESTAMP).then(ExpectedVerdict::Violation),
        ),
        row(
            Scenario::new("restart-persistent", 5, 3)
                .about("a persistent store (MemcacheDB-like) restarts mid-run")
                .faults(&[FaultKind::Restart, FaultKind::Crash])
                .fault_budget(2)
                .persistent(),
            Expect::BROKEN_FIXED.shows(ALL),
        ),
        row(
            Scenario::new("restart-volatile", 4, 3)
                .about("memcached restarts: the log's only copy is gone")
                .faults(&[FaultKind::Restart])
                .fault_budget(1),
            Expect::impossible("a volatile restart loses every segment: records with no other copy are gone"),
        ),
        row(
            Scenario::new("evict", 4, 3)
                .about("the store evicts keys: a segment's only copy is gone")
                .faults(&[FaultKind::Evict])
                .fault_budget(2),
            Expect::impossible("an evicted segment is the only copy of its records"),
        ),
        row(
            Scenario::new("lru", 4, 3)
                .about("a small cache (1,500 bytes): the store's LRU evicts the oldest segments")
                .faults(&[FaultKind::Lru])
                .memory_limit(1_500),
            Expect::impossible("a segment pushed out by memory pressure is the only copy of its records"),
        ),
        row(
            Scenario::new("skew", 4, 3)
                .about("clients' clocks are offset, drift and jump: writers stamp and readers time out by them")
                .faults(&[FaultKind::Skew])
                .fault_budget(2),
            Expect::BOTH_PASS,
        ),
    ]
}
