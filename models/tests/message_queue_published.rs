//! The published variant's defects, each pinned by one scripted schedule and the verdict
//! the log's checker gives (the findings listed in `message_queue`'s doc comment).

mod message_queue_support;

use kvsim::Model;
use kvsim_models::expect::Variant;
use kvsim_models::message_queue::spec::{End, MqOp, MqRet};
use kvsim_models::message_queue::MessageQueueModel;
use message_queue_support::{Client, Log, Script, World};

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

/// The published model with one record per file.
fn published() -> MessageQueueModel {
    let mut m = MessageQueueModel::new(Variant::Published);
    m.max_file_size = 1;
    m
}

/// Finding 2: the reader tests "end of file" and "newest file" in two reads; a roll-over
/// in between makes it skip the rest of the file. No fault needed.
#[test]
fn roll_over_between_end_of_file_and_newest_test_loses_records() {
    let model = published();
    let world = World::new(2);
    let handles: Vec<Client> = (0..2).map(|c| world.client(c)).collect();
    let log: Log<MessageQueueModel> = Default::default();
    let mut s = Script::new(
        &world,
        &handles,
        &model,
        &log,
        vec![vec![turn(&[(100, "a"), (200, "b")])], vec![read(0)]],
    );
    s.until(0, "append mq.0000000001 "); // file 1 exists, "a" not yet in it
    s.until_nth(1, "get mq.last$", 2); // the reader read file 1 (empty): end of file
    s.until(0, "append mq.0000000002 "); // "a" appended, rolled over to file 2
    let history = s.finish();
    let reads = match &history.ops[1].outcome {
        kvsim::Outcome::Ok(MqRet::Read(events, End::Timeout)) => events.len(),
        other => panic!("{other:?}"),
    };
    assert_eq!(reads, 1, "the reader returned only \"b\"");
    insta::assert_snapshot!(model.check(&history).to_string(), @r#"violation: message log: reader C1 (min_timestamp 0) never returned "a" (timestamp 100) but returned "b", written after it; no removal ran before the reader ended"#);
}

/// Finding 1: the newest file's header is only written at roll-over and close; after a
/// writer crash the next writer trusts the stale header and stores a lower timestamp.
#[test]
fn next_writer_trusts_the_stale_header_after_a_crash() {
    let model = published();
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
    // File 2 was created with header 100 and holds "b" at 200; the writer crashes before
    // `close` rewrites the header.
    s.until_nth(0, "set mq.0000000002.head", 2);
    s.crash(0);
    let history = s.finish();
    assert_eq!(
        history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Turn(vec![150]))
    );
    insta::assert_snapshot!(model.check(&history).to_string(), @r#"violation: message log: timestamps decrease in storage: reader C2 returned "b" at 200 and then "c" at 150"#);
}

/// Finding 3: `remove_old_files` judges the file being written by its stale header and
/// removes records above the threshold; the writer's later writes report success and go
/// nowhere.
#[test]
fn removal_by_stale_header_takes_the_file_being_written() {
    let mut model = published();
    model.max_file_size = 1000; // one file
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
    s.until_nth(0, "append mq.0000000001 ", 3); // "a" and "b" are in file 1 (header: 0)
    s.run(1); // removes file 1
    let history = s.finish();
    assert_eq!(
        history.ops[0].outcome,
        kvsim::Outcome::Ok(MqRet::Turn(vec![100, 300, 400])),
        "the write of \"c\" reported success"
    );
    assert_eq!(
        history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Remove(vec![1]))
    );
    insta::assert_snapshot!(model.check(&history).to_string(), @r#"violation: message log: reader C2 (min_timestamp 0) never returned "b" (timestamp 300) and gave up with 'not found' for segment 1, though the write had completed before the reader started; the largest removal threshold before the reader ended is 200"#);
}

/// Finding 4: a file removed under a reader makes every later read "not found": the
/// reader never gets to the newer files.
#[test]
fn file_removed_under_a_reader_stops_it_for_good() {
    let model = published();
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
    s.run(0); // file 1 holds "a" (header 100), file 2 holds "b" (header 300)
    s.until_nth(1, "get mq.0000000001$", 2); // the reader returned "a"
    s.run(2); // removes file 1
    let history = s.finish();
    assert!(matches!(
        &history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Read(e, End::NotFound(1))) if e.len() == 1
    ));
    insta::assert_snapshot!(model.check(&history).to_string(), @r#"violation: message log: reader C1 (min_timestamp 0) never returned "b" (timestamp 300) and gave up with 'not found' for segment 1, though the write had completed before the reader started; the largest removal threshold before the reader ended is 200"#);
}
