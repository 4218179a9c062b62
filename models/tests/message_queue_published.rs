//! The published variant's defects, each pinned by one scripted schedule and the verdict
//! the log's checker gives (the findings listed in `message_queue`'s doc comment).

mod message_queue_support;

use kvsim::{Model, Repairs};
use kvsim_models::expect::Variant;
use kvsim_models::message_queue::published::REPAIRS;
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

/// No port artefact: Tkrzw makes the reader's two end-of-file tests under its mutex, and
/// the port reads `last` before the file, so a roll-over between the two reads loses
/// nothing. (The port as it was read the file first: this schedule made it skip "a".)
#[test]
fn roll_over_between_the_readers_two_reads_loses_nothing() {
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
    s.until(0, "append mq.0000000001 "); // file 1 exists and is the newest, "a" not yet in it
    s.until(1, "get mq.0000000001$"); // the reader read `last` = 1
    s.until(0, "append mq.0000000002 "); // "a" appended, rolled over to file 2
    s.step(1); // the reader reads file 1: "a" is there
    s.until(1, "get mq.0000000001$"); // at its end: `last` = 2 was read first
    s.until(0, "delete mq.turn"); // "b" appended to file 2
    let history = s.finish();
    let read = history
        .ops
        .iter()
        .find(|o| matches!(o.op, MqOp::Read { .. }));
    match &read.expect("the reader's session").outcome {
        kvsim::Outcome::Ok(MqRet::Read(events, End::Timeout)) => assert_eq!(events.len(), 2),
        other => panic!("{other:?}"),
    }
    assert_eq!(model.check(&history).to_string(), "ok");
}

/// No port artefact at the start either: a reader that finds no file starts at file 1 (the
/// first a writer creates), never at a `last` read again later, after the writer rolled
/// over (the port as it was started at file 2 and never returned "a").
#[test]
fn a_reader_that_finds_no_file_starts_at_the_first() {
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
    s.until(1, "get mq.last$"); // the reader's listing
    s.step(1); // finds no file
    s.run(0); // the writer writes "a" to file 1 and "b" to file 2
    let history = s.finish();
    let read = history
        .ops
        .iter()
        .find(|o| matches!(o.op, MqOp::Read { .. }));
    match &read.expect("the reader's session").outcome {
        kvsim::Outcome::Ok(MqRet::Read(events, End::Timeout)) => assert_eq!(events.len(), 2),
        other => panic!("{other:?}"),
    }
    assert_eq!(model.check(&history).to_string(), "ok");
}

/// The published model with `repair` on, one record per file.
fn repaired(repair: &str) -> MessageQueueModel {
    let on = Repairs::parse(REPAIRS, &[repair]).expect("a repair of the queue");
    let mut m = MessageQueueModel::new(Variant::Repaired(on));
    m.max_file_size = 1;
    m
}

/// Runs `schedule` over `ops` (one list per client) with `model`; returns the verdict.
fn scripted(
    model: &MessageQueueModel,
    ops: Vec<Vec<MqOp>>,
    schedule: impl FnOnce(&mut Script<'_, MessageQueueModel>),
) -> (kvsim::History<MqOp, MqRet>, String) {
    let world = World::new(ops.len());
    let handles: Vec<Client> = (0..ops.len()).map(|c| world.client(c)).collect();
    let log: Log<MessageQueueModel> = Default::default();
    let mut s = Script::new(&world, &handles, model, &log, ops);
    schedule(&mut s);
    let history = s.finish();
    let verdict = model.check(&history).to_string();
    (history, verdict)
}

/// Finding 1 (`rebuild-timestamp`): the newest file's header is only written at roll-over
/// and close; after a writer crash the next writer trusts the stale header and stores a
/// lower timestamp. With the repair the next writer rebuilds the timestamp from the
/// file's records.
#[test]
fn next_writer_trusts_the_stale_header_after_a_crash() {
    let ops = || {
        vec![
            vec![turn(&[(100, "a"), (200, "b")])],
            vec![turn(&[(150, "c")])],
            vec![read(0)],
        ]
    };
    // File 2 was created with header 100 and holds "b" at 200; the writer crashes before
    // `close` rewrites the header.
    let schedule = |s: &mut Script<'_, MessageQueueModel>| {
        s.until_nth(0, "set mq.0000000002.head", 2);
        s.crash(0);
    };
    let (history, verdict) = scripted(&published(), ops(), schedule);
    assert_eq!(
        history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Turn(vec![150]))
    );
    insta::assert_snapshot!(verdict, @r#"violation: message log: timestamps decrease in storage: reader C2 returned "b" at 200 and then "c" at 150"#);
    let (history, verdict) = scripted(&repaired("rebuild-timestamp"), ops(), schedule);
    assert_eq!(
        history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Turn(vec![200]))
    );
    assert_eq!(verdict, "ok");
}

/// Finding 2 (`spare-newest-file`): `remove_old_files` judges the file being written by
/// its stale header and removes records above the threshold; the writer's later writes
/// report success and go nowhere. With the repair the newest file is never removed.
#[test]
fn removal_by_stale_header_takes_the_file_being_written() {
    let ops = || {
        vec![
            vec![turn(&[(100, "a"), (300, "b"), (400, "c")])],
            vec![remove(200, false)],
            vec![read(0)],
        ]
    };
    let schedule = |s: &mut Script<'_, MessageQueueModel>| {
        s.until_nth(0, "append mq.0000000001 ", 3); // "a" and "b" are in file 1 (header: 0)
        s.run(1); // removes file 1
    };
    let one_file = |mut m: MessageQueueModel| {
        m.max_file_size = 1000;
        m
    };
    let (history, verdict) = scripted(&one_file(published()), ops(), schedule);
    assert_eq!(
        history.ops[0].outcome,
        kvsim::Outcome::Ok(MqRet::Turn(vec![100, 300, 400])),
        "the write of \"c\" reported success"
    );
    assert_eq!(
        history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Remove(vec![1]))
    );
    insta::assert_snapshot!(verdict, @r#"violation: message log: reader C2 (min_timestamp 0) never returned "b" (timestamp 300) and gave up with 'not found' for segment 1, though the write had completed before the reader started; the largest removal threshold before the reader ended is 200 (C1's removal took segment 1)"#);
    let (history, verdict) = scripted(&one_file(repaired("spare-newest-file")), ops(), schedule);
    assert_eq!(
        history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Remove(vec![]))
    );
    assert_eq!(verdict, "ok");
}

/// Finding 3 (`skip-removed-file`): the file a reader must open next was removed, and
/// every later read says "not found": the reader never gets to the newer files. With the
/// repair it reports the gap and goes on.
#[test]
fn next_file_removed_under_a_reader_stops_it_for_good() {
    let ops = || {
        vec![
            vec![turn(&[(100, "a"), (300, "b"), (500, "c")])],
            vec![read(0)],
            vec![remove(400, true)],
        ]
    };
    let schedule = |s: &mut Script<'_, MessageQueueModel>| {
        s.run(0); // files 1, 2 and 3 hold "a", "b" and "c"
        s.until_nth(1, "get mq.0000000001$", 2); // the reader returned "a", holds file 1
        s.run(2); // removes files 1 and 2
    };
    let (history, verdict) = scripted(&published(), ops(), schedule);
    assert!(matches!(
        &history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Read(e, End::NotFound(2))) if e.len() == 1
    ));
    insta::assert_snapshot!(verdict, @r#"violation: message log: reader C1 (min_timestamp 0) never returned "c" (timestamp 500) and gave up with 'not found' for segment 2, though the write had completed before the reader started; the largest removal threshold before the reader ended is 400 (C2's removal took segments 1, 2)"#);
    let (history, verdict) = scripted(&repaired("skip-removed-file"), ops(), schedule);
    assert!(matches!(
        &history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Read(e, End::Timeout)) if e.len() == 3
    ));
    assert_eq!(verdict, "ok");
}

/// Property 7: a reader stopped for good by a removal never returns what is written after
/// it stopped, though no removal excuses it (the checker sees it even when everything
/// written before the reader stopped was excused).
#[test]
fn a_reader_stopped_for_good_misses_what_is_written_after() {
    let ops = vec![
        vec![turn(&[(100, "a"), (150, "b"), (160, "c")])],
        vec![read(0)],
        vec![remove(200, true)],
        vec![turn(&[(300, "d")])],
    ];
    let (history, verdict) = scripted(&published(), ops, |s| {
        s.run(0); // files 1, 2 and 3 hold "a", "b" and "c"
        s.until_nth(1, "get mq.0000000001$", 2); // the reader returned "a", holds file 1
        s.run(2); // removes files 1 and 2 (all below 200)
        s.run(1); // file 2 is gone: "not found"
        s.run(3); // "d" is written after the reader stopped
    });
    assert!(matches!(
        &history.ops[1].outcome,
        kvsim::Outcome::Ok(MqRet::Read(e, End::NotFound(2))) if e.len() == 1
    ));
    insta::assert_snapshot!(verdict, @r#"violation: message log: reader C1 (min_timestamp 0) never returned "d" (timestamp 300) and never will: it stopped for good with 'not found' for segment 2 (every later read says the same); the largest removal threshold before the reader ended is 200 (C2's removal took segments 1, 2)"#);
}
