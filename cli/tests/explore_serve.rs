//! `kvsim explore TARGET --serve ADDR` (issue #35.2): the search the CLI runs, its report
//! on stdout, then kvsim's page on the real bound address, opening on the verdict, the
//! property, the CLI's counts and the counterexample; the state-space API; stateright's
//! stock Explorer beside it.

mod explorer_support;

use explorer_support::{counts, get, Served};
use std::process::Command;

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[test]
fn the_page_shows_what_the_cli_found_for_fifo_published() {
    let served = Served::start("fifo/published");
    let report = served.report();
    assert!(
        report.contains("  verdict  violation: linearizability (queue): "),
        "{report}"
    );
    let (unique, total, depth) = counts(&report);
    // The same search as without --serve.
    let plain = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(["explore", "fifo/published", "--json"])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(1));
    let plain = json(&String::from_utf8(plain.stdout).unwrap());
    assert_eq!(plain["unique_states"], unique);
    assert_eq!(plain["total_states"], total);
    assert_eq!(plain["max_depth"], depth);

    let (status, page) = served.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("id=\"verdict\">violation</span>"), "{page}");
    assert!(page.contains("<td id=\"fact-property\">linearizability (queue)</td>"));
    assert!(page.contains(&format!("{unique} unique, {total} total · depth {depth}")));
    assert!(page.contains("dequeue returned"));
    assert!(page.contains(">follow the counterexample</button>"));
    assert!(page.contains("<pre id=\"errors\"></pre>"));

    let summary = json(&served.get("/api/report").1);
    assert_eq!(summary["verdict"], "violation");
    assert_eq!(summary["property"], "linearizability (queue)");
    assert_eq!(summary["unique_states"], unique);
    assert_eq!(summary["total_states"], total);
    assert_eq!(summary["token"], plain["token"]);
    let path: Vec<String> = summary["counterexample_path"]
        .as_array()
        .expect("the counterexample's path")
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert!(path.len() > 4, "{path:?}");

    // Its last state is the violation, and every step is labelled in the words of the
    // CLI's report (which shows the same run).
    let (status, end) = served.get(&format!("/api/state?path={}", path.join(".")));
    assert_eq!(status, 200, "{end}");
    let end = json(&end);
    let checker = end["checker"].as_str().unwrap();
    assert!(
        checker.starts_with("violation: linearizability (queue): dequeue returned"),
        "{checker}"
    );
    let steps = end["steps"].as_array().unwrap();
    assert_eq!(steps.len(), path.len());
    for step in steps {
        let step = step.as_str().unwrap();
        let (who, what) = step.split_once(": ").unwrap();
        assert!(who == "C0" || who == "C1", "{step}");
        for part in what.split(" · ") {
            assert!(report.contains(part), "{part:?} is not in the CLI's report");
        }
        assert!(
            page.contains(&step.replace('"', "&quot;")),
            "{step} is not on the page"
        );
    }
    assert_eq!(steps[0], "C0: ▶ Dequeue");

    // The initial state and its labelled successors.
    let init = json(&served.get("/api/state?path=").1);
    let labels: Vec<&str> = init["successors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels[0], "C0: ▶ Dequeue");
    assert!(
        labels.iter().any(|l| l.starts_with("C1: ▶ Enqueue(")),
        "{labels:?}"
    );
    assert!(init["state"][0].as_str().unwrap().starts_with("time "));

    // Bad requests: 400 with what was expected.
    let (status, bad) = served.get("/api/state?path=0.abc");
    assert_eq!(status, 400);
    assert!(json(&bad)["error"]
        .as_str()
        .unwrap()
        .starts_with("bad path step 1: expected a step number"));
    let (status, bad) = served.get("/api/state?path=0.999");
    assert_eq!(status, 400);
    assert!(json(&bad)["error"].as_str().unwrap().contains("found 999"));
    assert_eq!(served.get("/nowhere").0, 404);

    // The counterexample's own report, and stateright's page beside it.
    let (status, cx) = served.get("/counterexample");
    assert_eq!(status, 200);
    assert!(cx.contains("linearizability (queue)") && cx.starts_with("<!DOCTYPE html>"));
    let stock = summary["stock_explorer"].as_str().unwrap().to_string();
    let line = served.stderr.lock().unwrap().join("\n");
    assert!(
        line.contains(&format!("kvsim: stateright's stock Explorer on {stock} ")),
        "{line}"
    );
    assert!(page.contains(&format!("<a href=\"{stock}\">")));
    let stock_addr = stock
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut answered = None;
    for _ in 0..100 {
        if std::net::TcpStream::connect(&stock_addr).is_ok() {
            answered = Some(get(&stock_addr, "/").0);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(answered, Some(200), "stateright's Explorer on {stock_addr}");
}
