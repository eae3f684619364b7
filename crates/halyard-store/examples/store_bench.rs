//! Measures the store: insert throughput of 1 KB samples with batched commits, then the
//! time to stream them all back (the late-joiner catch-up the durability service serves).
//!
//! ```text
//! cargo run --release -p halyard-store --example store_bench -- [SAMPLES] [BATCH] [DIR] [process|normal|full]
//! ```
//! Defaults: 1 000 000 samples, commit every 1000, the system temp directory, sync level
//! `normal` (see `SyncLevel`).

use halyard_store::{ChannelSpec, StoreError};
use halyard_store::{Limits, SampleKind, Store, StoreOptions, StoredSample, SyncLevel};
use std::time::{Duration, Instant};

fn main() -> Result<(), StoreError> {
    let args: Vec<String> = std::env::args().collect();
    let samples: i64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let batch: i64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let dir = args.get(3).map_or_else(std::env::temp_dir, Into::into);
    let sync = match args.get(4).map(|a| a.parse::<SyncLevel>()) {
        None => SyncLevel::default(),
        Some(Ok(level)) => level,
        Some(Err(why)) => {
            eprintln!("store_bench: {why}");
            std::process::exit(2);
        }
    };
    let path = dir.join(format!("halyard-store-bench-{}.db", std::process::id()));
    let options = StoreOptions {
        sync,
        max_bytes: None,
    };
    let mut store = Store::open(&path, options)?;
    let spec = ChannelSpec {
        topic: "Bench".into(),
        type_name: "Bytes".into(),
        limits: Limits::default(),
        persistent: true,
        ..ChannelSpec::default()
    };
    let ch = store.channel(&spec)?;
    let mut sample = StoredSample {
        writer: [1; 16],
        sn: 0,
        kind: SampleKind::Alive,
        key_hash: [0; 16],
        source_time: 0,
        payload: vec![0x5a; 1024],
    };
    let start = now();
    for sn in 1..=samples {
        sample.sn = sn;
        sample.key_hash[0] = (sn % 100) as u8;
        sample.source_time = sn;
        let _ = store.insert(ch, &sample)?;
        if sn % batch == 0 {
            store.commit()?;
        }
    }
    store.commit()?;
    let insert = now() - start;
    let stats = store.stats()?;
    drop(store);

    let start = now();
    let store = Store::open(&path, options)?;
    let open = now() - start;
    let start = now();
    let mut bytes = 0usize;
    let n = store.for_each_sample(ch, |s| bytes += s.payload.len())?;
    let read = now() - start;
    println!(
        "insert {samples} x 1 KB, commit every {batch}, sync {sync:?}: {:.2} s, {:.0} samples/s",
        insert.as_secs_f64(),
        samples as f64 / insert.as_secs_f64()
    );
    println!(
        "stream {n} samples ({bytes} payload bytes) after reopen: {:.2} s, {:.0} samples/s",
        read.as_secs_f64(),
        n as f64 / read.as_secs_f64()
    );
    println!(
        "reopen (inspection with quick_check): {:.2} s",
        open.as_secs_f64()
    );
    println!(
        "file {} bytes, {:.0} bytes per sample",
        stats.file_bytes,
        stats.file_bytes as f64 / samples as f64
    );
    drop(store);
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok(())
}

/// The benchmark measures wall time; the library itself reads no clock.
#[allow(clippy::disallowed_methods)]
fn now() -> Duration {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed()
}
