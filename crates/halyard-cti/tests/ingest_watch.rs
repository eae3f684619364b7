//! Proves that the watched directory ingests STIX bundles and MISP events into a real node and
//! moves them to `done/`, refuses invalid files into `refused/` with a reason, ignores
//! dotfiles, other names and files still being written, keeps a file in place when the node
//! fails transiently, does not take a file again when its move failed, and that its thread
//! ends promptly when stopped.
#![allow(clippy::disallowed_methods)]

mod ingest_util;

use halyard_cti::ingest;
use halyard_cti::ingest::watch::Watcher;
use halyard_cti::node::Node;
use halyard_stix::marking::Tlp;
use ingest_util::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// A node watching `<dir>/in` every 50 ms.
fn watching(dir: &Path, extra: &str) -> (Arc<Node>, Arc<Recorder>, PathBuf) {
    let inbox = dir.join("in");
    let (node, rec) = node_in(
        dir,
        &format!(
            "{extra}\n[watch]\ndir = \"{}\"\ninterval_ms = 50\n",
            inbox.display()
        ),
    );
    std::fs::create_dir_all(&inbox).unwrap();
    (node, rec, inbox)
}

/// Writes a file as a careful writer does: a dotfile renamed into place.
fn drop_file(inbox: &Path, name: &str, text: &str) {
    let tmp = inbox.join(format!(".{name}.part"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, inbox.join(name)).unwrap();
}

/// Sets a file's modification time `secs` seconds in the past.
fn age(path: &Path, secs: u64) {
    let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

fn misp_event() -> String {
    json!({"Event": {
        "uuid": "c2d4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f",
        "info": "Scanning from a known host",
        "date": "2026-01-02",
        "timestamp": "1767312000",
        "Orgc": {"uuid": "7e3d1c2b-4a5f-4b6c-9d8e-1f2a3b4c5d6e", "name": "ACME CERT"},
        "Tag": [{"name": "tlp:green"}],
        "Attribute": [{
            "uuid": "0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
            "type": "ip-dst",
            "category": "Network activity",
            "value": "203.0.113.9",
            "to_ids": true,
            "timestamp": "1767312000"
        }]
    }})
    .to_string()
}

fn start_and_stop_later(node: &Arc<Node>) -> (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let handles = ingest::start(node, stop.clone());
    (stop, handles)
}

fn stop_all(stop: &AtomicBool, handles: Vec<std::thread::JoinHandle<()>>) {
    stop.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn a_valid_bundle_is_ingested_and_moved_to_done() {
    let dir = tmp("watch-valid");
    let (node, rec, inbox) = watching(&dir, "");
    let (stop, handles) = start_and_stop_later(&node);
    drop_file(
        &inbox,
        "feed.json",
        &bundle(vec![indicator(1, Tlp::Green), indicator(2, Tlp::Green)]),
    );
    assert!(wait_until(Duration::from_secs(10), || inbox
        .join("done/feed.json")
        .exists()));
    stop_all(&stop, handles);
    assert!(!inbox.join("feed.json").exists());
    assert!(has(&node, &indicator_id(1)) && has(&node, &indicator_id(2)));
    assert_eq!(rec.shared_ids(), vec![indicator_id(1), indicator_id(2)]);
    // Nothing else written: no reason file, no refused directory.
    assert!(!inbox.join("refused").exists());
    let done: Vec<_> = std::fs::read_dir(inbox.join("done")).unwrap().collect();
    assert_eq!(done.len(), 1);
    assert_eq!(node.counters().refused_input.load(Ordering::Relaxed), 0);
}

#[test]
fn an_invalid_file_is_refused_with_its_reason_and_counted() {
    let dir = tmp("watch-invalid");
    let (node, _rec, inbox) = watching(&dir, "");
    let (stop, handles) = start_and_stop_later(&node);
    let mut bad = indicator(3, Tlp::Green);
    bad.as_object_mut().unwrap().remove("pattern");
    drop_file(
        &inbox,
        "bad.json",
        &bundle(vec![indicator(4, Tlp::Green), bad]),
    );
    drop_file(&inbox, "garbage.json", "{ this is not json");
    assert!(wait_until(Duration::from_secs(10), || inbox
        .join("refused/garbage.json.reason")
        .exists()
        && inbox.join("refused/bad.json.reason").exists()));
    stop_all(&stop, handles);
    assert!(inbox.join("refused/bad.json").exists());
    assert!(inbox.join("refused/garbage.json").exists());
    let reason = std::fs::read_to_string(inbox.join("refused/bad.json.reason")).unwrap();
    assert!(reason.contains("pattern"), "{reason}");
    // All or nothing: the valid indicator of the refused file was not taken.
    assert!(!has(&node, &indicator_id(4)));
    assert_eq!(node.counters().refused_input.load(Ordering::Relaxed), 2);
    let log = node.db().audit_log(None, 100).unwrap();
    assert_eq!(log.iter().filter(|r| r.entry.action == "refuse").count(), 2);
}

#[test]
fn a_misp_event_is_converted_and_ingested() {
    let dir = tmp("watch-misp");
    let (node, rec, inbox) = watching(&dir, "");
    let (stop, handles) = start_and_stop_later(&node);
    drop_file(&inbox, "event.json", &misp_event());
    assert!(wait_until(Duration::from_secs(10), || inbox
        .join("done/event.json")
        .exists()
        || inbox.join("refused/event.json").exists()));
    stop_all(&stop, handles);
    let reason = std::fs::read_to_string(inbox.join("refused/event.json.reason"));
    assert!(reason.is_err(), "refused: {reason:?}");
    assert!(node.counters().ingested.load(Ordering::Relaxed) >= 2);
    assert!(node
        .db()
        .versions_of(
            "report--c2d4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f",
            &everything()
        )
        .is_ok_and(|v| !v.is_empty()));
    assert!(!rec.shared_ids().is_empty());
}

#[test]
fn dotfiles_and_other_names_are_ignored() {
    let dir = tmp("watch-ignore");
    let (node, _rec, inbox) = watching(&dir, "");
    let text = bundle(vec![indicator(5, Tlp::Green)]);
    for name in [".hidden.json", "notes.txt", "feed.json.part", "a€son"] {
        std::fs::write(inbox.join(name), &text).unwrap();
        age(&inbox.join(name), 60);
    }
    std::fs::create_dir_all(inbox.join("sub.json")).unwrap();
    let (stop, handles) = start_and_stop_later(&node);
    std::thread::sleep(Duration::from_millis(600));
    stop_all(&stop, handles);
    for name in [".hidden.json", "notes.txt", "feed.json.part", "a€son"] {
        assert!(inbox.join(name).exists(), "{name} was moved");
    }
    assert!(!inbox.join("done").exists() && !inbox.join("refused").exists());
    assert!(!has(&node, &indicator_id(5)));
}

#[test]
fn a_file_still_growing_is_not_read_until_its_size_is_stable() {
    let dir = tmp("watch-growing");
    let (node, _rec, inbox) = watching(&dir, "");
    let watch = node.config().watch.clone().unwrap();
    let mut watcher = Watcher::new(node.clone(), watch);
    let never = AtomicBool::new(false);
    let text = bundle(vec![indicator(6, Tlp::Green)]);
    let (first, rest) = text.split_at(text.len() / 2);
    let path = inbox.join("slow.json");
    // Old enough by its time, but its size changes between scans: a writer that sets the
    // modification time, or a clock that went back.
    std::fs::write(&path, first).unwrap();
    age(&path, 60);
    assert_eq!(watcher.scan(&never).waiting, vec!["slow.json"]);
    let (a, b) = rest.split_at(rest.len() / 2);
    for part in [a, b] {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, part.as_bytes()).unwrap();
        drop(f);
        age(&path, 60);
        let report = watcher.scan(&never);
        assert_eq!(report.waiting, vec!["slow.json"], "{report:?}");
        assert!(path.exists());
    }
    // Unchanged since the previous scan: read now, whole.
    let report = watcher.scan(&never);
    assert_eq!(report.ingested, vec!["slow.json"], "{report:?}");
    assert!(has(&node, &indicator_id(6)));
    assert_eq!(node.counters().refused_input.load(Ordering::Relaxed), 0);
}

#[test]
fn a_file_modified_less_than_a_second_ago_waits() {
    let dir = tmp("watch-fresh");
    let (node, _rec, inbox) = watching(&dir, "");
    let watch = node.config().watch.clone().unwrap();
    let mut watcher = Watcher::new(node.clone(), watch);
    let never = AtomicBool::new(false);
    let path = inbox.join("fresh.json");
    std::fs::write(&path, bundle(vec![indicator(7, Tlp::Green)])).unwrap();
    let written = Instant::now();
    let mut scans = 0;
    while written.elapsed() < Duration::from_millis(700) {
        let report = watcher.scan(&never);
        if written.elapsed() < Duration::from_millis(900) {
            assert!(report.ingested.is_empty(), "read too early: {report:?}");
        }
        scans += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(scans >= 2);
    assert!(path.exists());
    assert!(wait_until(Duration::from_secs(5), || {
        watcher.scan(&never);
        inbox.join("done/fresh.json").exists()
    }));
}

#[test]
fn a_transient_refusal_by_the_node_leaves_the_file_to_retry() {
    let dir = tmp("watch-transient");
    // Amber needs review, and the queue holds one: two amber objects make the node full.
    let (node, _rec, inbox) = watching(&dir, "[limits]\nmax_review_queue = 1\n");
    let watch = node.config().watch.clone().unwrap();
    let mut watcher = Watcher::new(node.clone(), watch);
    let never = AtomicBool::new(false);
    let path = inbox.join("amber.json");
    std::fs::write(
        &path,
        bundle(vec![indicator(8, Tlp::Amber), indicator(9, Tlp::Amber)]),
    )
    .unwrap();
    age(&path, 60);
    watcher.scan(&never);
    for _ in 0..3 {
        let report = watcher.scan(&never);
        assert_eq!(report.retry, vec!["amber.json"], "{report:?}");
    }
    assert!(path.exists());
    assert!(!inbox.join("refused").exists());
    assert_eq!(node.counters().refused_input.load(Ordering::Relaxed), 0);
    assert!(!has(&node, &indicator_id(8)));
}

#[test]
fn a_name_taken_in_done_gets_a_suffix() {
    let dir = tmp("watch-clash");
    let (node, _rec, inbox) = watching(&dir, "");
    let watch = node.config().watch.clone().unwrap();
    let mut watcher = Watcher::new(node.clone(), watch);
    let never = AtomicBool::new(false);
    for n in [10, 11] {
        let path = inbox.join("feed.json");
        std::fs::write(&path, bundle(vec![indicator(n, Tlp::Green)])).unwrap();
        age(&path, 60);
        watcher.scan(&never);
        assert_eq!(watcher.scan(&never).ingested, vec!["feed.json"]);
    }
    assert!(inbox.join("done/feed.json").exists());
    assert!(inbox.join("done/feed.1.json").exists());
}

#[test]
fn a_file_whose_move_fails_is_not_ingested_again() {
    let dir = tmp("watch-stuck");
    let (node, _rec, inbox) = watching(&dir, "");
    // A plain file named `done` makes the directory impossible to create.
    std::fs::write(inbox.join("done"), "").unwrap();
    let watch = node.config().watch.clone().unwrap();
    let mut watcher = Watcher::new(node.clone(), watch);
    let never = AtomicBool::new(false);
    let path = inbox.join("feed.json");
    std::fs::write(&path, bundle(vec![indicator(13, Tlp::Green)])).unwrap();
    age(&path, 60);
    watcher.scan(&never);
    assert_eq!(watcher.scan(&never).ingested, vec!["feed.json"]);
    for _ in 0..3 {
        assert_eq!(watcher.scan(&never), Default::default());
    }
    assert!(path.exists() && has(&node, &indicator_id(13)));
    let log = node.db().audit_log(None, 100).unwrap();
    assert_eq!(log.iter().filter(|r| r.entry.action == "ingest").count(), 1);
    // Once the way is clear and the file changes, it is taken again (a duplicate) and moved.
    std::fs::remove_file(inbox.join("done")).unwrap();
    age(&path, 30);
    watcher.scan(&never);
    assert_eq!(watcher.scan(&never).ingested, vec!["feed.json"]);
    assert!(inbox.join("done/feed.json").exists());
}

#[test]
fn a_file_over_the_size_limit_is_refused_unread() {
    let dir = tmp("watch-large");
    let (node, _rec, inbox) = watching(&dir, "[limits]\nmax_body_bytes = 100\n");
    let watch = node.config().watch.clone().unwrap();
    let mut watcher = Watcher::new(node.clone(), watch);
    let never = AtomicBool::new(false);
    let path = inbox.join("large.json");
    std::fs::write(&path, bundle(vec![indicator(12, Tlp::Green)])).unwrap();
    age(&path, 60);
    watcher.scan(&never);
    assert_eq!(watcher.scan(&never).refused, vec!["large.json"]);
    let reason = std::fs::read_to_string(inbox.join("refused/large.json.reason")).unwrap();
    assert!(reason.contains("max_body_bytes"), "{reason}");
}

#[test]
fn stop_ends_the_watcher_promptly() {
    let dir = tmp("watch-stop");
    let (node, _rec, _inbox) = watching(&dir, "");
    let (stop, handles) = start_and_stop_later(&node);
    assert_eq!(handles.len(), 1);
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    stop_all(&stop, handles);
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

fn everything() -> Vec<halyard_cti::store::CollectionKey> {
    let mut v = Vec::new();
    for sector in [None, Some("finance".to_string())] {
        for tlp in [
            Tlp::Clear,
            Tlp::Green,
            Tlp::Amber,
            Tlp::AmberStrict,
            Tlp::Red,
        ] {
            v.push(halyard_cti::store::CollectionKey {
                sector: sector.clone(),
                tlp,
            });
        }
    }
    v
}
