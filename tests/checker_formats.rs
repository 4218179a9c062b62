//! Every format reads the same events, and its error messages name the file, the line,
//! what was expected and what was found (insta snapshots of the messages).

use kvsim::formats::{
    in_syntax, pair, parse_events, to_history, EventType, Format, FormatError, HistoryEvent,
    Syntax, Value,
};
use kvsim::specs::cas_register::{CasOp, CasRegisterSpec, CasRet};
use kvsim::specs::kv::KvSpec;
use kvsim::Outcome;

/// The error for `text` read as `format` from a file called `file`, through parsing,
/// pairing and the spec's conversion (cas-register, or kv for keyed events), with values
/// written in the format's own syntax (as `kvsim check-history` writes them).
fn error(format: Format, file: &str, text: &str) -> String {
    let result: Result<(), FormatError> = in_syntax(Syntax::of(format), || {
        let events = parse_events(text, format).map_err(|e| e.in_file(file))?;
        let raws = pair(&events).map_err(|e| e.in_file(file))?;
        if raws.iter().any(|r| r.key.is_some()) {
            to_history(&KvSpec, &raws).map_err(|e| e.in_file(file))?;
        } else {
            to_history(&CasRegisterSpec::<Value>::new(), &raws).map_err(|e| e.in_file(file))?;
        }
        Ok(())
    });
    match result {
        Ok(()) => "no error".to_string(),
        Err(e) => e.to_string(),
    }
}

fn errors(format: Format, file: &str, cases: &[&str]) -> String {
    cases
        .iter()
        .map(|text| format!("{}\n", error(format, file, text)))
        .collect()
}

#[test]
fn the_same_history_reads_the_same_in_every_format() {
    let jsonl = r#"{"process": 0, "type": "invoke", "f": "write", "value": 3}
{"process": 1, "type": "invoke", "f": "cas", "value": [3, 4]}
{"process": 0, "type": "ok", "f": "write", "value": 3}
{"process": 1, "type": "fail", "f": "cas", "value": [3, 4]}
{"process": 2, "type": "invoke", "f": "read", "value": null}
{"process": 2, "type": "info", "f": "read", "value": null}
"#;
    let edn = "[{:process 0, :type :invoke, :f :write, :value 3}\n {:process 1, :type :invoke, :f :cas, :value [3 4]}\n {:process 0, :type :ok, :f :write, :value 3}\n {:process 1, :type :fail, :f :cas, :value [3 4]}\n {:process 2, :type :invoke, :f :read, :value nil}\n {:process :nemesis, :type :info, :f :start, :value nil}\n {:process 2, :type :info, :f :read, :value nil}]\n";
    let log = "INFO  jepsen.util - 0\t:invoke\t:write\t3\nINFO  jepsen.util - 1\t:invoke\t:cas\t[3 4]\nINFO  jepsen.util - 0\t:ok\t:write\t3\nsomething else logged\nINFO  jepsen.util - 1\t:fail\t:cas\t[3 4]\nINFO  jepsen.util - 2\t:invoke\t:read\tnil\nINFO  jepsen.util - :nemesis\t:info\t:start\tnil\nINFO  jepsen.util - 2\t:info\t:read\tnil\n";
    let spec = CasRegisterSpec::<Value>::new();
    let read = |text: &str, format| {
        assert_eq!(Format::guess(text), Some(format));
        let events = parse_events(text, format).unwrap();
        let raws = pair(&events).unwrap();
        let h = to_history(&spec, &raws).unwrap();
        h.ops
            .into_iter()
            .map(|o| (o.client, o.op, o.outcome))
            .collect::<Vec<_>>()
    };
    let expected = vec![
        (0, CasOp::Write(Value::Int(3)), Outcome::Ok(CasRet::Written)),
        (
            1,
            CasOp::Cas(Value::Int(3), Value::Int(4)),
            Outcome::Ok(CasRet::Swapped(false)),
        ),
        (2, CasOp::Read, Outcome::Unknown),
    ];
    assert_eq!(read(jsonl, Format::Jsonl), expected);
    assert_eq!(read(edn, Format::JepsenEdn), expected);
    assert_eq!(read(log, Format::JepsenLog), expected);
}

#[test]
fn jsonl_events_have_the_documented_fields() {
    let events = parse_events(
        r#"{"process": 4, "type": "ok", "f": "get", "key": "k", "value": "v", "time": 12}"#,
        Format::Jsonl,
    )
    .unwrap();
    assert_eq!(
        events,
        vec![HistoryEvent {
            process: 4,
            kind: EventType::Ok,
            f: "get".into(),
            key: Some(Value::Str("k".into())),
            value: Value::Str("v".into()),
            time_ms: Some(12),
            line: 1,
        }]
    );
}

#[test]
fn jsonl_errors() {
    insta::assert_snapshot!(errors(Format::Jsonl, "h.jsonl", &[
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\"}\nnot json\n",
        "{\"process\": 0, \"type\": \"invoke\"}\n",
        "{\"process\": \"zero\", \"type\": \"invoke\", \"f\": \"read\"}\n",
        "{\"process\": 0, \"type\": \"begin\", \"f\": \"read\"}\n",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1.5}\n",
        "[1, 2]\n",
        "{\"process\": 0, \"type\": \"ok\", \"f\": \"read\", \"value\": 1}\n",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\"}\n{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\"}\n",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\"}\n\n{\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": 1}\n",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"swap\"}\n",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"cas\", \"value\": 5}\n",
    ]));
}

#[test]
fn jepsen_edn_errors() {
    insta::assert_snapshot!(errors(Format::JepsenEdn, "history.edn", &[
        "{:process 0, :type :invoke, :f :read, :value nil}\n{:process 0 :type :ok :f :read :value 1.5}\n",
        "{:process 0, :type :invoke, :f :read, :value nil}\n{:process 0, :type :ok, :f :read\n",
        "[{:process 0, :type :invoke, :f :read, :value nil}\n",
        "{:process 0, :type :invoke, :f :read, :value}\n",
        "{:process 0, :type :invoke, :f :read, :value \"open\n",
        "{:type :invoke, :f :read}\n",
        "{:process 0, :type :crash, :f :read}\n",
        "(1 2 3)\n",
        "{:process 0, :type :invoke, :f :get, :value nil}\n",
        "{:process 0, :type :invoke, :f :get, :key \"k\", :value nil}\n{:process 0, :type :ok, :f :get, :key \"k\", :value [1]}\n",
        "{:process 0, :type :invoke, :f :read, :value nil} ]\n",
    ]));
}

#[test]
fn jepsen_log_errors() {
    insta::assert_snapshot!(errors(
        Format::JepsenLog,
        "etcd.log",
        &[
            "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - x\t:ok\t:read\t3\n",
            "INFO  jepsen.util - 0\t:begin\t:read\tnil\n",
            "INFO  jepsen.util - 0\t:invoke\tread\tnil\n",
            "INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2\n",
            "INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2] 3\n",
            "INFO  jepsen.util - 0\t:invoke\t:cas\t7\n",
            "INFO  jepsen.util - 0\t:ok\t:read\t7\n",
        ]
    ));
}

#[test]
fn unrecognized_files_name_what_they_start_with() {
    let dir = std::env::temp_dir().join(format!("kvsim-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("notes.txt");
    std::fs::write(&path, "\n  hello there\n").unwrap();
    let err = kvsim::formats::read_events(&path, None).unwrap_err();
    let msg = err.to_string().replace(&dir.display().to_string(), "DIR");
    insta::assert_snapshot!(msg, @r#"DIR/notes.txt: cannot tell the format: expected JSON lines, EDN maps or Jepsen log lines, found "hello there"; pass --format"#);
    let missing = kvsim::formats::read_events(&dir.join("missing.edn"), None).unwrap_err();
    assert!(matches!(missing, FormatError::Io { .. }));
    std::fs::remove_dir_all(&dir).unwrap();
}
