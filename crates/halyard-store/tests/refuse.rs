//! Proves that a file which is not a sound Halyard store is refused with the right error
//! and left byte for byte as it was: garbage, truncated (to nothing too), damaged, foreign
//! and newer files.

mod common;

use common::{sample, spec, Scratch};
use halyard_store::{Limits, Store, StoreError, StoreOptions, APPLICATION_ID, SCHEMA_VERSION};
use rusqlite::Connection;
use std::path::Path;

/// Opens `path` expecting a refusal; returns the error after checking the bytes stayed.
fn refused(path: &Path) -> StoreError {
    let before = std::fs::read(path).unwrap();
    let err = match Store::open(path, StoreOptions::default()) {
        Ok(_) => panic!("{} was opened", path.display()),
        Err(e) => e,
    };
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "{} changed",
        path.display()
    );
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    err
}

/// A closed store of `n` samples of 500 bytes, which stay in their rows (the log
/// checkpointed into the file): the SQLite file itself is what these tests damage.
fn store_with(path: &Path, n: i64) {
    let mut store = Store::open(path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    for sn in 1..=n {
        let _ = store.insert(ch, &sample(1, sn, 1, 500)).unwrap();
    }
    store.commit().unwrap();
}

/// A closed store of `n` 4 KB samples, whose payloads are in segments; returns the
/// segment files.
fn store_with_segments(path: &Path, n: i64) -> Vec<std::path::PathBuf> {
    let mut store = Store::open(path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    for sn in 1..=n {
        let _ = store.insert(ch, &sample(1, sn, 1, 4000)).unwrap();
    }
    store.commit().unwrap();
    drop(store);
    let mut files: Vec<_> = std::fs::read_dir(Store::payload_dir(path))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn a_store_without_its_payload_segments_is_corrupt_and_kept() {
    let dir = Scratch::new("nosegments");
    let path = dir.file("s.db");
    let files = store_with_segments(&path, 50);
    assert_eq!(files.len(), 1, "{files:?}");
    let kept = dir.file("kept.seg");
    std::fs::rename(&files[0], &kept).unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("missing"), "{err}");
    // Put back, it opens and serves every sample.
    std::fs::rename(&kept, &files[0]).unwrap();
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    let (ch, _) = store.channels().unwrap()[0].clone();
    assert_eq!(common::sns(&store, ch), (1..=50).collect::<Vec<_>>());
}

#[test]
fn a_truncated_payload_segment_is_corrupt_and_kept() {
    let dir = Scratch::new("shortsegment");
    let path = dir.file("s.db");
    let files = store_with_segments(&path, 50);
    let full = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &full[..full.len() / 2]).unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_eq!(std::fs::read(&files[0]).unwrap().len(), full.len() / 2);
}

#[test]
fn a_damaged_payload_record_is_reported_never_delivered() {
    let dir = Scratch::new("badrecord");
    let path = dir.file("s.db");
    let files = store_with_segments(&path, 50);
    let mut bytes = std::fs::read(&files[0]).unwrap();
    // The header of the 10th record: 16 + 4000 bytes each.
    let at = 9 * (16 + 4000);
    bytes[at..at + 16].fill(0xEE);
    std::fs::write(&files[0], &bytes).unwrap();
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    let (ch, _) = store.channels().unwrap()[0].clone();
    let mut got = Vec::new();
    let err = store
        .for_each_sample(ch, |s| got.push(s.sn))
        .expect_err("a damaged record is an error");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("no record of row"), "{err}");
    assert!(
        got.is_empty(),
        "samples delivered before the error: {got:?}"
    );
}

#[test]
fn a_store_truncated_to_nothing_is_refused_not_taken_as_new() {
    let dir = Scratch::new("empty");
    let path = dir.file("e.db");
    store_with(&path, 3);
    std::fs::File::create(&path).unwrap(); // truncates it to 0 bytes
    let err = refused(&path);
    assert!(matches!(err, StoreError::Empty { .. }), "{err:?}");
    assert!(err.to_string().contains("empty (0 bytes)"), "{err}");
}

#[test]
fn garbage_is_not_a_database() {
    let dir = Scratch::new("garbage");
    let path = dir.file("g.db");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&path, bytes).unwrap();
    assert!(matches!(refused(&path), StoreError::NotADatabase { .. }));
    std::fs::write(&path, b"SQLite").unwrap();
    assert!(matches!(refused(&path), StoreError::NotADatabase { .. }));
}

#[test]
fn sqlite_magic_with_garbage_after_is_refused() {
    let dir = Scratch::new("magic");
    let path = dir.file("m.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..8192u32).map(|i| (i.wrapping_mul(40503) >> 7) as u8));
    std::fs::write(&path, bytes).unwrap();
    let err = refused(&path);
    assert!(
        matches!(
            err,
            StoreError::NotADatabase { .. } | StoreError::Corrupt { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn truncated_store_is_corrupt() {
    let dir = Scratch::new("truncated");
    let path = dir.file("t.db");
    store_with(&path, 200);
    let full = std::fs::read(&path).unwrap();
    assert!(full.len() > 100_000);
    std::fs::write(&path, &full[..full.len() / 2]).unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    // Cut inside the header: not even a database.
    std::fs::write(&path, &full[..60]).unwrap();
    let err = refused(&path);
    assert!(
        matches!(
            err,
            StoreError::NotADatabase { .. } | StoreError::Corrupt { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn damaged_page_is_corrupt() {
    let dir = Scratch::new("damaged");
    let path = dir.file("d.db");
    store_with(&path, 200);
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    // Damage the headers of a few b-tree pages in the middle of the file.
    for p in [3, 10, 20] {
        for b in &mut bytes[p * page..p * page + 64] {
            *b = 0xa5;
        }
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = refused(&path);
    match &err {
        StoreError::Corrupt { detail, .. } => assert!(!detail.is_empty()),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn other_applications_sqlite_files_are_foreign() {
    let dir = Scratch::new("foreign");
    // Another application's id.
    let path = dir.file("app.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA application_id = 4660; CREATE TABLE t (x);")
        .unwrap();
    drop(conn);
    let err = refused(&path);
    assert!(
        matches!(&err, StoreError::Foreign { reason, .. } if reason.contains("0x1234")),
        "{err:?}"
    );
    // No id, but tables: some other program's database.
    let path = dir.file("plain.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE samples (x); INSERT INTO samples VALUES (1);")
        .unwrap();
    drop(conn);
    assert!(matches!(refused(&path), StoreError::Foreign { .. }));
    // Our id with a table we do not know.
    let path = dir.file("extra.db");
    store_with(&path, 3);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE surprise (x);").unwrap();
    drop(conn);
    let err = refused(&path);
    assert!(
        matches!(&err, StoreError::Foreign { reason, .. } if reason.contains("surprise")),
        "{err:?}"
    );
    // Our id with a table missing.
    let path = dir.file("missing.db");
    store_with(&path, 3);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE instances;").unwrap();
    drop(conn);
    assert!(matches!(refused(&path), StoreError::Foreign { .. }));
}

#[test]
fn newer_schema_is_refused() {
    let dir = Scratch::new("newer");
    let path = dir.file("n.db");
    store_with(&path, 3);
    let conn = Connection::open(&path).unwrap();
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, APPLICATION_ID);
    conn.execute_batch(&format!("PRAGMA user_version = {};", SCHEMA_VERSION + 1))
        .unwrap();
    drop(conn);
    match refused(&path) {
        StoreError::NewerSchema {
            found, supported, ..
        } => assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION)),
        other => panic!("expected NewerSchema, got {other:?}"),
    }
}

#[test]
fn missing_directory_and_empty_file() {
    let dir = Scratch::new("dirs");
    let path = dir.file("no/such/dir/s.db");
    let err = match Store::open(&path, StoreOptions::default()) {
        Ok(_) => panic!("opened in a missing directory"),
        Err(e) => e,
    };
    assert!(matches!(err, StoreError::NoDirectory { .. }), "{err:?}");
    assert!(err.to_string().contains("no/such/dir/s.db"), "{err}");
    // An empty file (e.g. made by `touch`) cannot be told from a store truncated to nothing:
    // refused too, and a store is made once it is removed.
    let path = dir.file("empty.db");
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(refused(&path), StoreError::Empty { .. }));
    std::fs::remove_file(&path).unwrap();
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    let _ = store.insert(ch, &sample(1, 1, 1, 10)).unwrap();
    assert_eq!(store.commit().unwrap(), 1);
}
