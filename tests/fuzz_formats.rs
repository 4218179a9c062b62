//! Fuzzing the history readers: text made of each format's own pieces, and valid
//! histories with bytes changed, inserted or cut, never panic the reader, the pairing or
//! the spec's conversion; an error names a line of the text (or the line after its end,
//! for "the file ended before …").
//!
//! The budget here is what CI can afford. For a release, run longer:
//! `PROPTEST_CASES=200000 cargo test --profile quick-release --test fuzz_formats`.

use kvsim::formats::{pair, parse_events, to_history, Format, LineError, Value};
use kvsim::specs::cas_register::CasRegisterSpec;
use kvsim::specs::kv::KvSpec;
use proptest::prelude::*;

/// One valid history per format, to mutate.
const SAMPLES: [(Format, &str); 3] = [
    (
        Format::Jsonl,
        r#"{"process": 0, "type": "invoke", "f": "write", "value": 3}
{"process": 1, "type": "invoke", "f": "cas", "value": [3, 4]}
{"process": 0, "type": "ok", "f": "write", "value": 3, "time": 12}
{"process": 1, "type": "info", "f": "cas", "value": [3, 4]}
{"process": 2, "type": "invoke", "f": "read", "value": null}
{"process": 2, "type": "ok", "f": "read", "value": 3}
"#,
    ),
    (
        Format::JepsenEdn,
        r#"[{:process 0, :type :invoke, :f :write, :value 3}
 {:process 1, :type :invoke, :f :cas, :value [3 4]}
 {:process 0, :type :ok, :f :write, :value 3, :time 12}
 {:process :nemesis, :type :info, :f :start, :value nil}
 {:process 1, :type :fail, :f :cas, :value [3 4]}
 {:process 2, :type :invoke, :f :read, :value nil}
 {:process 2, :type :ok, :f :read, :value 3}]
"#,
    ),
    (
        Format::JepsenLog,
        "INFO  jepsen.util - 0\t:invoke\t:write\t3\n\
         INFO  jepsen.util - 1\t:invoke\t:cas\t[3 4]\n\
         INFO  jepsen.util - :nemesis\t:info\t:start\tnil\n\
         INFO  jepsen.util - 0\t:ok\t:write\t3\n\
         INFO  jepsen.util - 1\t:fail\t:cas\t[3 4]\n\
         INFO  jepsen.util - 2\t:invoke\t:read\tnil\n\
         INFO  jepsen.util - 2\t:ok\t:read\t3\n",
    ),
];

/// Pieces every format is made of.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"",
    "\\",
    ":",
    ",",
    " ",
    "\t",
    "\n",
    "\r\n",
    "#{",
    "#",
    "0",
    "1",
    "-7",
    "99999999999999999999",
    "1.5",
    "nil",
    "null",
    "true",
    ":process",
    "\"process\"",
    ":type",
    "\"type\"",
    ":invoke",
    "\"invoke\"",
    ":ok",
    "\"ok\"",
    ":fail",
    ":info",
    ":f",
    "\"f\"",
    ":read",
    "\"read\"",
    ":write",
    ":cas",
    ":value",
    "\"value\"",
    ":key",
    "\"key\"",
    ":time",
    "jepsen.util - ",
    "INFO  ",
    ":nemesis",
    "é",
    "\u{0}",
];

/// Reads `text` as `format` through parsing, pairing and both specs' conversions; the
/// first error, if any.
fn read(format: Format, text: &str) -> Result<(), LineError> {
    let events = parse_events(text, format)?;
    let raws = pair(&events)?;
    if raws.iter().any(|r| r.key.is_some()) {
        to_history(&KvSpec, &raws)?;
    } else {
        to_history(&CasRegisterSpec::<Value>::new(), &raws)?;
    }
    Ok(())
}

/// Reads `text` and checks that an error names a line of it.
fn read_checked(format: Format, text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = read(format, text) {
        let lines = text.lines().count().max(1);
        prop_assert!(
            (1..=lines + 1).contains(&e.line),
            "line {} of a {lines}-line text: {e:?}",
            e.line
        );
        prop_assert!(
            !e.expected.is_empty(),
            "an error says what was expected: {e:?}"
        );
    }
    Ok(())
}

fn format() -> impl Strategy<Value = Format> {
    prop_oneof![
        Just(Format::Jsonl),
        Just(Format::JepsenEdn),
        Just(Format::JepsenLog)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1500)
    ))]

    #[test]
    fn text_made_of_format_pieces_never_panics(
        format in format(),
        pieces in prop::collection::vec(prop::sample::select(PIECES), 0..120),
    ) {
        read_checked(format, &pieces.concat())?;
    }

    #[test]
    fn mutated_valid_histories_never_panic(
        sample in 0..SAMPLES.len(),
        edits in prop::collection::vec((any::<usize>(), 0u8..3, prop::sample::select(PIECES)), 1..6),
    ) {
        let (format, text) = SAMPLES[sample];
        let mut text = text.to_string();
        for (at, kind, piece) in edits {
            // A char boundary at or before `at`.
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match kind {
                0 => text.insert_str(at, piece),
                1 => {
                    let end = text[at..].char_indices().nth(piece.len()).map_or(text.len(), |(i, _)| at + i);
                    text.replace_range(at..end, "");
                }
                _ => text.truncate(at),
            }
        }
        read_checked(format, &text)?;
    }
}

/// The samples themselves read without error, so the mutations start from valid input.
#[test]
fn the_samples_are_valid() {
    for (format, text) in SAMPLES {
        read(format, text).unwrap_or_else(|e| panic!("{format:?}: {e:?}"));
    }
}
