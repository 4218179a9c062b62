//! kvsim's Explorer page in a real browser (issue #35.3): headless Chromium loads
//! `kvsim explore fifo/published --serve` with no click (`--dump-dom`) and the page shows
//! the violation, the property, the counterexample's steps with the last one highlighted
//! by the page's script, and no script error. Skipped with a notice when Chromium is
//! absent, unless `KVSIM_REQUIRE_CHROMIUM=1` (CI), which makes it fail.

mod explorer_support;

use explorer_support::{counts, Served};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium's command, or `None` (after a notice, or a panic under
/// `KVSIM_REQUIRE_CHROMIUM=1`) when it is not installed.
fn chromium() -> Option<&'static str> {
    for name in ["chromium", "chromium-browser"] {
        let found = Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found {
            return Some(name);
        }
    }
    if std::env::var("KVSIM_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
        panic!("chromium is not installed, and KVSIM_REQUIRE_CHROMIUM=1 requires it");
    }
    eprintln!("notice: explorer_browser skipped: chromium is not installed");
    None
}

/// Chromium in a process group of its own, killed as a group when dropped (its renderer
/// and helpers too), also when the test fails.
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The DOM of `url` after Chromium loaded it (at most 90 s).
fn dump_dom(chromium: &str, url: &str) -> String {
    let profile = std::env::temp_dir().join(format!("kvsim-chromium-{}", std::process::id()));
    let child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            &format!("--user-data-dir={}", profile.display()),
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let mut browser = Browser(child);
    let mut stdout = browser.0.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        let _ = stdout.read_to_string(&mut dom);
        dom
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if browser.0.try_wait().unwrap().is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "chromium did not finish in 90 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(browser);
    let dom = reader.join().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    dom
}

/// The text of the element with this id (its first line of markup, tags and all).
fn element<'a>(dom: &'a str, open: &str, close: &str) -> &'a str {
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in the page: {dom}"));
    let rest = &dom[start + open.len()..];
    &rest[..rest.find(close).expect("the element ends")]
}

#[test]
fn chromium_shows_the_violation_and_its_steps_with_no_click() {
    let Some(chromium) = chromium() else {
        return;
    };
    let served = Served::start("fifo/published");
    let (unique, total, depth) = counts(&served.report());
    let dom = dump_dom(chromium, &format!("http://{}/", served.addr));
    assert!(dom.contains("<html"), "no page: {dom:?}");
    // No script error (the page writes window.onerror into #errors).
    assert_eq!(element(&dom, "<pre id=\"errors\">", "</pre>"), "");
    assert!(dom.contains("id=\"verdict\">violation</span>"), "{dom}");
    let reason = element(&dom, "id=\"reason\">", "</p>");
    assert!(
        reason.starts_with("violation: linearizability (queue): dequeue returned"),
        "{reason}"
    );
    assert!(dom.contains("<td id=\"fact-property\">linearizability (queue)</td>"));
    assert!(dom.contains(&format!("{unique} unique, {total} total · depth {depth}")));
    // The counterexample's steps, the last highlighted by the script (it ran).
    let steps = element(&dom, "<ol class=\"steps\" id=\"cx\">", "</ol>");
    let items: Vec<&str> = steps.split("<li").skip(1).collect();
    assert!(items.len() > 4, "{steps}");
    assert!(steps.contains("C0: ▶ Dequeue"), "{steps}");
    assert!(
        items.last().unwrap().starts_with(" class=\"here\""),
        "the last step is not highlighted: {steps}"
    );
    assert!(dom.contains("then the checker says: violation: linearizability (queue)"));
    // The state browser opened on the violating state, rendered by the script.
    let checker = element(&dom, "id=\"checker\">", "</p>");
    assert!(
        checker.starts_with("checker: violation: linearizability"),
        "{checker}"
    );
    assert!(
        dom.contains("class=\"checker bad\" id=\"checker\""),
        "{dom}"
    );
}
