//! The step-through viewer in a real browser: `kvsim replay TOKEN --html` for fifo/published's
//! counterexample without faults (its token from `reports/`), loaded by headless Chromium
//! at `#step=N` with no click; the DOM it shows must hold the violation's reason, step N
//! marked current, the store's contents at step N and no script error.
//!
//! Skipped with a notice when `chromium` is not installed, unless
//! `KVSIM_REQUIRE_CHROMIUM=1` (CI), where it fails.

use kvsim::report::{rows, Who};
use kvsim::sim::Token;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long Chromium may take to load and dump a page.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// Whether Chromium can be run; `false` (after a notice) when it is absent and not
/// required.
fn chromium_present() -> bool {
    let found = Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("KVSIM_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "KVSIM_REQUIRE_CHROMIUM=1 but `chromium` cannot be run"
        );
        eprintln!("notice: chromium is not installed; the viewer's browser test is skipped");
    }
    found
}

/// The DOM Chromium shows for `url`, after the page's scripts ran; the browser is killed
/// when it takes longer than [`BROWSER_TIMEOUT`].
fn dump_dom(url: &str, profile: &Path) -> String {
    let out_path = profile.join("dom.html");
    let out = std::fs::File::create(&out_path).expect("dom file");
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.join("profile").display()),
            "--dump-dom",
            url,
        ])
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if start.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium took more than {BROWSER_TIMEOUT:?} for {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&out_path).expect("the dumped DOM")
}

/// fifo/published's counterexample without faults, as `reports/` gives it.
fn token() -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/fifo/published-none.txt");
    let text = std::fs::read_to_string(&file).expect("reports/fifo/published-none.txt");
    let at = text.find("kvsim replay ").expect("a replay line") + "kvsim replay ".len();
    text[at..]
        .split_whitespace()
        .next()
        .expect("a token")
        .to_string()
}

/// The HTML text of `s` as the DOM serializes a text node.
fn text_node(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The element with `id`, from its start tag to the end of the DOM.
fn from_id<'d>(dom: &'d str, id: &str) -> &'d str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element {id} in the DOM"));
    &dom[dom[..at].rfind('<').expect("a start tag")..]
}

#[test]
fn the_viewer_shows_the_violation_and_the_store_at_the_step_its_url_names() {
    if !chromium_present() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("kvsim-viewer-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let page: PathBuf = dir.join("viewer.html");
    let token = token();
    let status = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(["replay", &token, "--html"])
        .arg(&page)
        .stdout(Stdio::null())
        .status()
        .expect("kvsim runs");
    assert_eq!(status.code(), Some(1), "the replay is a violation");

    // What the page must show, from the run itself.
    let entries = kvsim_models::registry::registry();
    let t = Token::decode(&token).expect("the token decodes");
    let target = entries
        .iter()
        .flat_map(|e| e.targets())
        .find(|(_, x)| x.name() == t.target)
        .expect("a registered target")
        .1;
    let r = target.run_with_store(&t.scenario, &t.config, t.seed, t.choices.as_deref());
    let kvsim::Verdict::Violation(v) = &r.verdict else {
        panic!("a violation, found {:?}", r.verdict)
    };
    let log = r.store.as_ref().expect("a store log");
    // Step N: the last that changes the store (steps are numbered after setup).
    let numbered: Vec<usize> = rows(&r)
        .iter()
        .enumerate()
        .filter(|(_, row)| row.who != Who::Setup)
        .map(|(i, _)| i)
        .collect();
    let last_change = log.changes.last().expect("a change").at;
    let n = numbered
        .iter()
        .position(|&i| i == last_change)
        .expect("a numbered step")
        + 1;
    assert!(
        n > 1 && n < numbered.len(),
        "step {n} of {}",
        numbered.len()
    );
    let store = log.at(last_change);
    let before = log.at(numbered[n - 2]);
    assert!(!store.is_empty());

    let url = format!("file://{}#step={n}", page.display());
    let dom = dump_dom(&url, &dir);
    // No script error.
    assert!(
        dom.contains("<div id=\"errors\" class=\"kv-errors\" role=\"alert\"></div>"),
        "script errors: {}",
        &from_id(&dom, "errors")[..400.min(from_id(&dom, "errors").len())]
    );
    // The violation's property and reason.
    let reason = from_id(&dom, "kv-reason");
    assert!(reason.contains(&text_node(&v.property)), "{reason:.300}");
    assert!(reason.contains(&text_node(&v.reason)), "{reason:.300}");
    // Step N is the current one: in the controls, and its timeline row alone is marked.
    let now = from_id(&dom, "kv-now");
    assert!(
        now.starts_with(&format!(
            "<span class=\"kv-now\" id=\"kv-now\">step {n} of {} ",
            numbered.len()
        )),
        "{now:.200}"
    );
    assert_eq!(dom.matches("aria-current=\"step\"").count(), 1);
    let row_at = dom.find("aria-current=\"step\"").unwrap();
    let row = &dom[dom[..row_at].rfind("<tr").unwrap()..row_at];
    assert!(row.contains(&format!("data-step=\"{n}\"")), "{row}");
    assert!(row.contains("kv-cur"), "{row}");
    // The store at step N: every item with its value and cas; what the step removed.
    let table = from_id(&dom, "kv-store");
    let table = &table[..table.find("</table>").expect("the store's table")];
    for it in store.values() {
        let want = format!(
            "<td class=\"kv-key\">{}</td><td class=\"kv-val\">{}</td><td class=\"kv-num\">{}</td>",
            text_node(&it.key),
            text_node(&it.value),
            it.cas
        );
        assert!(table.contains(&want), "{want} not in {table}");
    }
    for key in before.keys().filter(|k| !store.contains_key(*k)) {
        assert!(
            table.contains(&format!(
                "<tr class=\"kv-gone\"><td class=\"kv-key\">{}</td>",
                text_node(&key.1)
            )),
            "{key:?} removed at step {n}: {table}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
