//! Proves that the write-ahead log of a store stays small under a slow stream of small
//! commits and is emptied once the store is idle (apart from the store tests: its run is a
//! few seconds of a paced stream, which other tests' load would disturb).

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

mod common;

use common::*;
use halyard_store::{Limits, Store, StoreOptions};

fn keep_last(depth: u32) -> Limits {
    Limits {
        history_depth: Some(depth),
        ..Limits::default()
    }
}

/// The length of the store at `path`'s write-ahead log (0 when there is none).
fn log_len(path: &std::path::Path) -> u64 {
    let mut log = path.as_os_str().to_owned();
    log.push("-wal");
    std::fs::metadata(std::path::PathBuf::from(log)).map_or(0, |m| m.len())
}

/// A slow stream of small samples, each its own transaction (a shape some times a second,
/// which the service commits one by one): every commit appends a few whole pages to the
/// write-ahead log, far more than the sample. The log is checkpointed by how much it grew,
/// and at least every second while the stream runs, so it stays small; once the store is
/// idle it is emptied. (A checkpoint cadence counted in samples' bytes would let it grow by
/// whole pages per sample, to many times the store's size, and stay so.)
#[test]
fn the_log_of_a_slow_stream_of_small_commits_stays_small_and_is_emptied_at_rest() {
    let dir = Scratch::new("small-commits");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_last(1))).unwrap();
    let mut longest = 0;
    for sn in 1..=250i64 {
        let _ = store
            .insert(ch, &sample(1, sn, (sn % 5) as u8, 64))
            .unwrap();
        store.commit().unwrap();
        longest = longest.max(log_len(&path));
        // A stream of 50 samples a second.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Each commit appends whole pages; counting samples' bytes (16 KB in all) there would be
    // no checkpoint, and the log would end past the bound.
    assert!(
        longest <= 4 << 20,
        "the log grew to {longest} bytes for 250 small samples"
    );
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while log_len(&path) > 0 && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(log_len(&path), 0, "the idle store's log is emptied");
    drop(store);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(sns(&store, ch), vec![246, 247, 248, 249, 250]);
}
