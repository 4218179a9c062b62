//! Every structure describes how it stores its state, in its own terms, so that a report
//! gives the cause of a violation beside its symptom (issue #35).

use kvsim::Model;
use kvsim_models::expect::Variant;
use kvsim_models::{fifo, registry};

#[test]
fn every_variant_of_every_model_describes_its_representation_with_its_own_keys() {
    // A key each description must name (as the model's code spells it).
    let keys = [
        ("fifo", "fifohead7q"),
        ("lock", "lockres"),
        ("counter", "counterhits"),
        ("visitor-counter", "counterv_"),
        ("event-log", "messagelogev_"),
        ("array-locked", "arrayarr"),
        ("array-append", "arraylog"),
        ("table", "tabletbl_"),
        ("spinlock", "counter_lock"),
        ("message-queue", "<prefix>.0000000001"),
        ("cache-fill", "fillvalue"),
    ];
    let entries = registry::registry();
    assert_eq!(entries.len(), keys.len(), "a model without a key to check");
    for e in &entries {
        let (_, key) = keys
            .iter()
            .find(|(name, _)| *name == e.name)
            .unwrap_or_else(|| panic!("{}: no key listed", e.name));
        for (variant, t) in e.targets() {
            let how = t
                .representation()
                .unwrap_or_else(|| panic!("{}/{variant}: no representation", e.name));
            assert!(how.contains(key), "{}/{variant}: {how}", e.name);
            assert!(how.len() < 1200, "{}/{variant}: keep it short", e.name);
        }
    }
}

#[test]
fn the_fifo_says_what_dequeue_returns_in_each_variant() {
    let published = fifo::Fifo::new(Variant::Published);
    let how = published.representation().expect("a representation");
    assert!(
        how.contains("a node's key is its data plus a random suffix"),
        "{how}"
    );
    assert!(how.contains("its value the key of the next node"), "{how}");
    assert!(how.contains("returns that node's data"), "{how}");
    assert!(
        how.contains("the old dummy's, not the next node's"),
        "{how}"
    );
    let fixed = fifo::Fifo::new(Variant::Fixed);
    let how = fixed.representation().expect("a representation");
    assert!(how.contains("returns that next node's data"), "{how}");
}

#[test]
fn the_fifo_describes_each_item_of_its_store() {
    let f = fifo::Fifo::new(Variant::Published);
    assert_eq!(
        f.describe_item(b"fifohead7q", b"zaa34yxs").as_deref(),
        Some("head: the first node (the dummy) is node \"zaa34yxs\"")
    );
    assert_eq!(
        f.describe_item(b"fifohead7q", b"c0x0k3x9qa2b q1w2e3r4").as_deref(),
        Some("head: the first node (the dummy) is node \"c0x0k3x9qa2b\" (claimed by dequeue q1w2e3r4)")
    );
    assert_eq!(
        f.describe_item(b"fifotail7q", b"").as_deref(),
        Some("tail: empty, names no node")
    );
    assert_eq!(
        f.describe_item(b"c0x0k3x9qa2b", b"c1x0p0o9i8u7").as_deref(),
        Some("node of data \"c0x0\": next is node \"c1x0p0o9i8u7\"")
    );
    assert_eq!(
        f.describe_item(b"c0x0k3x9qa2b", b"").as_deref(),
        Some("node of data \"c0x0\": the last node (no next)")
    );
}
