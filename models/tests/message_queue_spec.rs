//! The log checker on hand-made histories: one test per clause of the spec, with the
//! message people read.

use kvsim::{History, Operation, Outcome};
use kvsim_models::message_queue::spec::{check_log, End, Event, MqOp, MqRet};

struct H(Vec<Operation<MqOp, MqRet>>);

impl H {
    fn new() -> H {
        H(Vec::new())
    }

    fn push(
        mut self,
        client: usize,
        op: MqOp,
        call: u64,
        ret: Option<u64>,
        out: Outcome<MqRet>,
    ) -> H {
        self.0.push(Operation {
            client,
            op,
            call,
            ret,
            call_ms: call,
            ret_ms: ret,
            outcome: out,
            marks: Vec::new(),
        });
        self
    }

    /// A turn writing `msgs` at the given timestamps (stored as given), completed.
    fn turn(self, client: usize, call: u64, ret: u64, msgs: &[(i64, &str)]) -> H {
        let op = MqOp::Turn {
            writes: msgs.iter().map(|(t, m)| (*t, m.to_string())).collect(),
        };
        let stored = msgs.iter().map(|(t, _)| *t).collect();
        self.push(
            client,
            op,
            call,
            Some(ret),
            Outcome::Ok(MqRet::Turn(stored)),
        )
    }

    /// A reader session with `min` that returned `msgs` and ended with `end`.
    fn read(
        self,
        client: usize,
        call: u64,
        ret: u64,
        min: i64,
        msgs: &[(i64, &str)],
        end: End,
    ) -> H {
        let op = MqOp::Read {
            min_timestamp: min,
            timeout_ms: 100,
            max: 40,
        };
        let events = msgs
            .iter()
            .map(|(t, m)| Event::Message {
                timestamp: *t,
                message: m.to_string(),
            })
            .collect();
        self.push(
            client,
            op,
            call,
            Some(ret),
            Outcome::Ok(MqRet::Read(events, end)),
        )
    }

    fn check(self) -> String {
        let mut ops = self.0;
        ops.sort_by_key(|o| o.call);
        check_log(&History { ops }).to_string()
    }
}

#[test]
fn a_correct_history_passes() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a"), (20, "b")])
        .read(1, 3, 9, 0, &[(10, "a"), (20, "b"), (30, "c")], End::Timeout)
        .turn(0, 4, 5, &[(30, "c")])
        .read(2, 6, 7, 15, &[(20, "b")], End::Limit)
        .check();
    assert_eq!(v, "ok");
}

#[test]
fn a_message_nobody_wrote_is_a_phantom() {
    let v = H::new()
        .read(1, 1, 2, 0, &[(10, "z")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 returned "z", which no writer wrote"#);
}

#[test]
fn the_returned_timestamp_is_the_stored_one() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a")])
        .read(1, 3, 4, 0, &[(11, "a")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 returned "a" with timestamp 11, but its write stored 10"#);
}

#[test]
fn nothing_below_min_timestamp() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a")])
        .read(1, 3, 4, 50, &[(10, "a")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 with min_timestamp 50 returned "a" with timestamp 10"#);
}

#[test]
fn exactly_once() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a")])
        .read(1, 3, 4, 0, &[(10, "a"), (10, "a")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 returned "a" twice (reads #1 and #2)"#);
}

#[test]
fn timestamps_never_decrease_along_a_reader() {
    let v = H::new()
        .push(
            0,
            MqOp::Turn {
                writes: vec![(20, "a".into())],
            },
            1,
            None,
            Outcome::Unknown,
        )
        .turn(2, 3, 4, &[(10, "b")])
        .read(1, 5, 6, 0, &[(20, "a"), (10, "b")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: timestamps decrease in storage: reader C1 returned "a" at 20 and then "b" at 10"#);
}

#[test]
fn timestamps_never_decrease_between_turns() {
    let v = H::new()
        .turn(0, 1, 2, &[(20, "a")])
        .turn(2, 3, 4, &[(10, "b")])
        .check();
    insta::assert_snapshot!(v, @"violation: message log: timestamps decrease in storage: C0's turn stored 20, and C2's later turn stored 10");
}

#[test]
fn write_order() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a"), (10, "b")])
        .read(1, 3, 4, 0, &[(10, "b"), (10, "a")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 returned "b" before "a", but "a" was written first"#);
}

#[test]
fn a_gap_before_a_returned_message_is_a_loss() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a"), (20, "b")])
        .read(1, 3, 4, 0, &[(20, "b")], End::Limit)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 (min_timestamp 0) never returned "a" (timestamp 10) but returned "b", written after it; no removal ran before the reader ended"#);
}

#[test]
fn a_reader_that_caught_up_saw_every_earlier_write() {
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a")])
        .read(1, 3, 4, 0, &[], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 (min_timestamp 0) never returned "a" (timestamp 10) and timed out waiting, though the write had completed before the reader started; no removal ran before the reader ended"#);
}

#[test]
fn removal_excuses_only_what_is_below_its_threshold() {
    let remove = |t| MqOp::Remove {
        threshold: t,
        exclude_latest: false,
    };
    let ok = H::new()
        .turn(0, 1, 2, &[(10, "a"), (20, "b")])
        .push(
            2,
            remove(15),
            3,
            Some(4),
            Outcome::Ok(MqRet::Remove(vec![1])),
        )
        .read(1, 5, 6, 0, &[(20, "b")], End::Timeout)
        .check();
    assert_eq!(ok, "ok");
    let v = H::new()
        .turn(0, 1, 2, &[(10, "a"), (20, "b")])
        .push(2, remove(15), 3, Some(4), Outcome::Unknown)
        .read(1, 5, 6, 0, &[], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 (min_timestamp 0) never returned "b" (timestamp 20) and timed out waiting, though the write had completed before the reader started; the largest removal threshold before the reader ended is 15"#);
}

#[test]
fn writes_concurrent_with_a_session_are_not_required_but_unknown_ones_seen_are_in_the_log() {
    let ok = H::new()
        .read(1, 1, 4, 0, &[], End::Timeout)
        .turn(0, 2, 3, &[(10, "a")])
        .check();
    assert_eq!(ok, "ok");
    // "b" of a crashed turn was seen, so "a" before it is in the log too.
    let v = H::new()
        .push(
            0,
            MqOp::Turn {
                writes: vec![(10, "a".into()), (20, "b".into())],
            },
            1,
            None,
            Outcome::Unknown,
        )
        .read(1, 2, 3, 0, &[(20, "b")], End::Timeout)
        .read(2, 4, 5, 0, &[(10, "a"), (20, "b")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: reader C1 (min_timestamp 0) never returned "a" (timestamp 10) but returned "b", written after it; no removal ran before the reader ended"#);
}

#[test]
fn readers_agree_on_the_order() {
    let v = H::new()
        .turn(0, 1, 4, &[(10, "a")])
        .turn(2, 2, 3, &[(10, "b")])
        .read(1, 5, 6, 0, &[(10, "a"), (10, "b")], End::Timeout)
        .read(3, 7, 8, 0, &[(10, "b"), (10, "a")], End::Timeout)
        .check();
    insta::assert_snapshot!(v, @r#"violation: message log: readers C1 and C3 disagree on the order of "a" and "b""#);
}

#[test]
fn a_failed_reader_is_a_violation() {
    let v = H::new()
        .push(
            1,
            MqOp::Read {
                min_timestamp: 0,
                timeout_ms: 1,
                max: 1,
            },
            1,
            Some(2),
            Outcome::Ok(MqRet::Failed(
                "broken segment 1 at byte 0: checksum mismatch".into(),
            )),
        )
        .check();
    insta::assert_snapshot!(v, @"violation: message log: reader C1 failed: broken segment 1 at byte 0: checksum mismatch");
}
