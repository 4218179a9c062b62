//! The fixed variant under the schedules that break the published one, and its API's
//! promises: gaps, timeouts, cancellation, one writer at a time.

mod message_queue_support;

use kvsim::block_on_ready;
use kvsim::Model;
use kvsim::Outcome;
use kvsim::Verdict;
use kvsim_models::expect::Variant;
use kvsim_models::message_queue::spec::{End, Event, MqOp, MqRet};
use kvsim_models::message_queue::{fixed, FixedQueue, MessageQueueModel, QueueError, Read};
use message_queue_support::{Client, Log, Script, World};
use std::future::Future;
use std::task::{Context, Poll, Waker};

fn turn(writes: &[(i64, &str)]) -> MqOp {
    MqOp::Turn {
        writes: writes.iter().map(|(t, m)| (*t, m.to_string())).collect(),
    }
}

fn read(min_timestamp: i64) -> MqOp {
    MqOp::Read {
        min_timestamp,
        timeout_ms: 1500,
        max: 40,
    }
}

fn remove(threshold: i64, exclude_latest: bool) -> MqOp {
    MqOp::Remove {
        threshold,
        exclude_latest,
    }
}

fn fixed_model(max_file_size: usize) -> MessageQueueModel {
    let mut m = MessageQueueModel::new(Variant::Fixed);
    m.max_file_size = max_file_size;
    m
}

fn messages(outcome: &Outcome<MqRet>) -> Vec<String> {
    match outcome {
        Outcome::Ok(MqRet::Read(events, _)) => events
            .iter()
            .map(|e| match e {
                Event::Message { message, .. } => message.clone(),
                Event::Gap { from, to } => format!("gap {from}..{to}"),
            })
            .collect(),
        other => panic!("not a completed read: {other:?}"),
    }
}

#[test]
fn reader_at_the_end_of_a_segment_sees_what_was_appended_before_the_roll_over() {
    let model = fixed_model(20); // "a" and "b" in segment 1, "c" in segment 2
    let world = World::new(2);
    let handles: Vec<Client> = (0..2).map(|c| world.client(c)).collect();
    let log: Log<MessageQueueModel> = Default::default();
    let mut s = Script::new(
        &world,
        &handles,
        &model,
        &log,
        vec![
            vec![turn(&[(100, "a"), (200, "b"), (300, "c")])],
            vec![read(0)],
        ],
    );
    s.until(0, "append mq.0000000001 "); // segment 1 holds "a"
    s.until_nth(1, "get mq.0000000002$", 2); // the reader returned "a", looks for segment 2
    s.run(0); // "b" appended, segment 2 created with "c"
    let history = s.finish();
    assert_eq!(messages(&history.ops[1].outcome), ["a", "b", "c"]);
    assert_eq!(model.check(&history), Verdict::Ok);
}

#[test]
fn next_writer_rebuilds_the_newest_timestamp_after_a_crash() {
    let model = fixed_model(1);
    let world = World::new(3);
    let handles: Vec<Client> = (0..3).map(|c| world.client(c)).collect();
    let log: Log<MessageQueueModel> = Default::default();
    let mut s = Script::new(
        &world,
        &handles,
        &model,
        &log,
        vec![
            vec![turn(&[(100, "a"), (200, "b")])],
            vec![turn(&[(150, "c")])],
            vec![read(0)],
        ],
    );
    s.until_nth(0, "set mq.last ", 3); // crash in `close`: segment 2 is not sealed
    s.crash(0);
    let history = s.finish();
    assert_eq!(history.ops[1].outcome, Outcome::Ok(MqRet::Turn(vec![200])));
    assert_eq!(messages(&history.ops[2].outcome), ["a", "b", "c"]);
    assert_eq!(model.check(&history), Verdict::Ok);
    // The next writer sealed the crashed writer's segment with its true newest timestamp.
    let kv = world.client(0);
    assert_eq!(
        block_on_ready(kvsim::Kv::get(&kv, b"mq.0000000002.head")).unwrap(),
        Some(b"200".to_vec())
    );
}

#[test]
fn removal_never_takes_the_segment_being_written() {
    let model = fixed_model(1000);
    let world = World::new(3);
    let handles: Vec<Client> = (0..3).map(|c| world.client(c)).collect();
    let log: Log<MessageQueueModel> = Default::default();
    let mut s = Script::new(
        &world,
        &handles,
        &model,
        &log,
        vec![
            vec![turn(&[(100, "a"), (300, "b"), (400, "c")])],
            vec![remove(200, false)],
            vec![read(0)],
        ],
    );
    s.until_nth(0, "append mq.0000000001 ", 2);
    s.run(1);
    let history = s.finish();
    assert_eq!(history.ops[1].outcome, Outcome::Ok(MqRet::Remove(vec![])));
    assert_eq!(messages(&history.ops[2].outcome), ["a", "b", "c"]);
    assert_eq!(model.check(&history), Verdict::Ok);
}

#[test]
fn segment_removed_under_a_reader_is_reported_as_a_gap_and_reading_goes_on() {
    let model = fixed_model(1);
    let world = World::new(3);
    let handles: Vec<Client> = (0..3).map(|c| world.client(c)).collect();
    let log: Log<MessageQueueModel> = Default::default();
    let mut s = Script::new(
        &world,
        &handles,
        &model,
        &log,
        vec![
            vec![turn(&[(100, "a"), (300, "b")])],
            vec![read(0)],
            vec![remove(200, true)],
        ],
    );
    s.run(0);
    s.until_nth(1, "get mq.0000000001$", 2); // the reader returned "a"
    s.run(2);
    let history = s.finish();
    assert_eq!(history.ops[2].outcome, Outcome::Ok(MqRet::Remove(vec![1])));
    assert_eq!(messages(&history.ops[1].outcome), ["a", "gap 1..2", "b"]);
    assert!(matches!(
        history.ops[1].outcome,
        Outcome::Ok(MqRet::Read(_, End::Timeout))
    ));
    assert_eq!(model.check(&history), Verdict::Ok);
}

/// Polls `f` once.
fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

/// Polls `f` to the end, letting virtual time run `step_ms` per poll.
fn drive<F: Future>(world: &World, f: F, step_ms: u64) -> F::Output {
    let mut f = std::pin::pin!(f);
    for _ in 0..100_000 {
        if let Poll::Ready(v) = poll_once(f.as_mut()) {
            return v;
        }
        world.advance(step_ms);
    }
    panic!("did not finish");
}

#[test]
fn reads_time_out_wait_and_are_cancelled_for_good() {
    let world = World::new(2);
    let w = world.client(0);
    let r = world.client(1);
    let mut q = drive(&world, FixedQueue::open(&w, "q", 100), 1).unwrap();
    let reader_q = drive(&world, FixedQueue::open(&r, "q", 100), 1).unwrap();
    let mut reader = reader_q.make_reader(0);
    // Nothing yet: 0 looks once, a positive timeout waits that long.
    assert_eq!(drive(&world, reader.read(0), 1).unwrap(), Read::Timeout);
    let start = kvsim::Kv::now_ms(&w);
    assert_eq!(drive(&world, reader.read(300), 1).unwrap(), Read::Timeout);
    assert!(kvsim::Kv::now_ms(&w) >= start + 300);
    drive(&world, q.write(-1, b"x"), 1).unwrap();
    match drive(&world, reader.read(-1), 1).unwrap() {
        Read::Message { message, .. } => assert_eq!(message, b"x"),
        other => panic!("{other:?}"),
    }
    // A reader waiting forever is cancelled, and stays cancelled.
    {
        let mut waiting = std::pin::pin!(reader.read(-1));
        for _ in 0..20 {
            assert!(poll_once(waiting.as_mut()).is_pending());
            world.advance(50);
        }
        reader_q.cancel_readers();
        world.advance(200);
        assert_eq!(drive(&world, waiting, 10).unwrap(), Read::Canceled);
    }
    drive(&world, q.write(-1, b"y"), 1).unwrap();
    assert_eq!(drive(&world, reader.read(0), 1).unwrap(), Read::Canceled);
}

#[test]
fn a_second_writer_is_refused_when_it_races_for_a_segment() {
    let world = World::new(2);
    let a = world.client(0);
    let b = world.client(1);
    let mut qa = drive(&world, FixedQueue::open(&a, "q", 100), 1).unwrap();
    let mut qb = drive(&world, FixedQueue::open(&b, "q", 100), 1).unwrap();
    assert_eq!(drive(&world, qa.write(10, b"a"), 1).unwrap(), 10);
    assert_eq!(
        drive(&world, qb.write(20, b"b"), 1).unwrap_err(),
        QueueError::ConcurrentWriter { segment: 1 }
    );
    let removed = drive(&world, fixed::remove_old_files(&a, "q", 100, false), 1).unwrap();
    assert!(removed.is_empty(), "the segment being written stays");
}
