//! README's "Your own structure" walks through `examples/my-structure/`: every code block
//! it shows is that crate's code, so what a newcomer copies is what CI builds and runs.

use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

/// The blocks fenced as `lang` in `text`.
fn blocks<'t>(text: &'t str, lang: &str) -> Vec<&'t str> {
    text.split(&format!("```{lang}\n"))
        .skip(1)
        .map(|b| b.split("```").next().expect("a closed block"))
        .collect()
}

/// `s` with every run of whitespace one space.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_readme_section_shows_the_example_crates_own_code() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("## Your own structure")
        .expect("README has the section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let crate_dir = root.join("examples/my-structure");
    let source: String = [
        "src/lib.rs",
        "src/main.rs",
        "src/spec.rs",
        "src/dispenser.rs",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(crate_dir.join(f)).unwrap())
    .collect();
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let rust = blocks(section, "rust");
    assert!(rust.len() >= 5, "main, structure, spec, models, replay");
    for block in rust {
        assert!(
            words(&source).contains(&words(block)),
            "README block not in examples/my-structure/src:\n{block}"
        );
    }
    for block in blocks(section, "toml") {
        assert!(
            words(&manifest).contains(&words(block)),
            "README block not in examples/my-structure/Cargo.toml:\n{block}"
        );
    }
    // The token README replays is the one the crate's test replays.
    let token = section
        .split("-- replay ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("README replays a token");
    assert!(token.starts_with("ticket/published:"), "{token}");
    assert!(source.contains(&format!("{token:?}")), "{token}");
}
