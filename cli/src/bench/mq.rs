//! `kvsim bench mq`: the message queue's throughput, as the article measured Tkrzw's: one
//! writer thread and one blocking reader thread, 1,000,000 messages of 16 bytes, every
//! message checked by the reader, over [`MemStore`] (the fixed variant, 32 KiB segments).
//! The figure is the wall time from the threads' start until the reader has read the last
//! message and the writer has closed the queue, over 5 runs.

use kvsim::block_on_ready;
use kvsim::store::memstore::MemStore;
use kvsim::store::StoreConfig;
use kvsim_models::message_queue::{fixed, FixedQueue, Read};
use serde_json::{Map, Value};
use std::time::Instant;

/// Messages per run.
const MESSAGES: u64 = 1_000_000;
/// Bytes per message.
const MESSAGE_BYTES: usize = 16;
/// `max_file_size`. A reader's `get` copies the whole current segment (as memcached
/// does) under the store's lock once per poll, stalling the writer meanwhile, while every
/// roll-over costs the writer three more commands. Measured here (median of 5 runs, quiet
/// machine, after the store moved to a hash table): 16 KiB 0.36-0.40 s, 32 KiB 0.23-0.37 s,
/// 64 KiB 0.30-0.40 s, 128 KiB 0.35-0.41 s, 256 KiB 0.39-0.42 s, 512 KiB 0.41 s.
const SEGMENT_BYTES: usize = 32 * 1024;
/// Runs.
const RUNS: usize = 5;

/// The body of message `i`: its number, then its complement.
fn message(i: u64) -> [u8; MESSAGE_BYTES] {
    let mut m = [0u8; MESSAGE_BYTES];
    m[..8].copy_from_slice(&i.to_be_bytes());
    m[8..].copy_from_slice(&(!i).to_be_bytes());
    m
}

/// One run: seconds from start to the last message read and the queue closed.
fn once() -> Result<f64, String> {
    let store = MemStore::new(StoreConfig::default());
    let start = Instant::now();
    std::thread::scope(|s| {
        let reader = s.spawn(|| -> Result<(), String> {
            let kv = store.client(1);
            let mut reader = fixed::open_reader(&kv, "bench", 0);
            for i in 0..MESSAGES {
                match block_on_ready(reader.read(-1)).map_err(|e| e.to_string())? {
                    Read::Message { timestamp, message: m } => {
                        if timestamp != i as i64 || m[..] != message(i)[..] {
                            return Err(format!(
                                "message {i}: expected timestamp {i} and body {:?}, found {timestamp} and {m:?}",
                                message(i)
                            ));
                        }
                    }
                    other => return Err(format!("message {i}: expected a message, found {other:?}")),
                }
            }
            Ok(())
        });
        let writer = s.spawn(|| -> Result<(), String> {
            let kv = store.client(0);
            let mut queue = block_on_ready(FixedQueue::open(&kv, "bench", SEGMENT_BYTES))
                .map_err(|e| e.to_string())?;
            for i in 0..MESSAGES {
                block_on_ready(queue.write(i as i64, &message(i))).map_err(|e| e.to_string())?;
            }
            block_on_ready(queue.close()).map_err(|e| e.to_string())
        });
        let w = writer
            .join()
            .map_err(|_| "the writer panicked".to_string())?;
        let r = reader
            .join()
            .map_err(|_| "the reader panicked".to_string())?;
        w.and(r)
    })?;
    Ok(start.elapsed().as_secs_f64())
}

/// Runs the suite: `seconds_median`, `seconds_min` and `seconds_max` over 5 runs.
pub fn run() -> Result<Map<String, Value>, String> {
    let mut secs = (0..RUNS)
        .map(|_| once())
        .collect::<Result<Vec<f64>, String>>()?;
    secs.sort_by(f64::total_cmp);
    let mut out = Map::new();
    out.insert("seconds_median".into(), Value::from(secs[RUNS / 2]));
    out.insert("seconds_min".into(), Value::from(secs[0]));
    out.insert("seconds_max".into(), Value::from(secs[RUNS - 1]));
    out.insert("messages".into(), Value::from(MESSAGES));
    out.insert("message_bytes".into(), Value::from(MESSAGE_BYTES));
    out.insert("segment_bytes".into(), Value::from(SEGMENT_BYTES));
    Ok(out)
}
