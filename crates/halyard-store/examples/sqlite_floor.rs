//! The floor under the store: what SQLite alone costs per 1 KB sample, with no Halyard code
//! around it, one sample per row (the store's schema) or several samples packed in one row,
//! in each journal mode the sync levels use. It bounds what PERSISTENT throughput can reach
//! on a machine (the durability target is a share of VOLATILE throughput, and on a machine
//! whose cores VOLATILE already keeps busy every microsecond of CPU a stored sample costs
//! counts).
//!
//! ```text
//! cargo run --release -p halyard-store --example sqlite_floor -- [SAMPLES] [PER_ROW] [wal|rollback] [DIR]
//! ```
//! Defaults: 300 000 samples, 1 per row, `wal`, the system temp directory. The table has the
//! store's columns and page size (16 KB); it commits every 1024 samples (the service's
//! default batch is 4096 samples or 10 ms). `wal` is the `normal` level's journal (synchronous NORMAL; the log is checkpointed
//! on this thread every 64 MB, so the figure includes the copy into the file), `rollback`
//! the `process` level's (synchronous OFF). Printed: wall time and this process's CPU time
//! (user + system, from /proc/self/stat) per sample.

use rusqlite::{params, Connection};
use std::time::{Duration, Instant};

const PAGE_SIZE: i64 = 16 * 1024;
const SAMPLE_BYTES: usize = 1024;
const SAMPLES_PER_COMMIT: usize = 1024;

fn main() -> rusqlite::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let samples: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(300_000);
    let per_row: usize = args
        .get(2)
        .and_then(|a| a.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1);
    let mode = args.get(3).map_or("wal", String::as_str);
    if mode != "wal" && mode != "rollback" {
        eprintln!("sqlite_floor: journal mode {mode:?}: use wal or rollback");
        std::process::exit(2);
    }
    let dir = args.get(4).map_or_else(std::env::temp_dir, Into::into);
    let path = dir.join(format!("halyard-sqlite-floor-{}.db", std::process::id()));
    let conn = Connection::open(&path)?;
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    if mode == "wal" {
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "wal_autocheckpoint", 64 * 1024 * 1024 / PAGE_SIZE)?;
    } else {
        conn.pragma_update(None, "synchronous", "OFF")?;
    }
    conn.pragma_update(None, "cache_size", -32 * 1024)?;
    conn.execute_batch(
        "CREATE TABLE samples (id INTEGER PRIMARY KEY, channel INTEGER NOT NULL, \
         writer BLOB NOT NULL, sn INTEGER NOT NULL, kind INTEGER NOT NULL, \
         key_hash BLOB NOT NULL, source_time INTEGER NOT NULL, payload BLOB NOT NULL)",
    )?;
    let payload = vec![0x5a_u8; SAMPLE_BYTES * per_row];
    let rows = samples / per_row;
    let rows_per_commit = (SAMPLES_PER_COMMIT / per_row).max(1);
    let cpu_before = cpu_seconds();
    let start = now();
    conn.execute_batch("BEGIN")?;
    for row in 0..rows {
        let n = row as i64;
        conn.prepare_cached(
            "INSERT INTO samples (id, channel, writer, sn, kind, key_hash, source_time, payload) \
             VALUES (?1, 1, ?2, ?3, 1, ?4, ?5, ?6)",
        )?
        .execute(params![
            n + 1,
            &[1_u8; 16][..],
            n,
            &[(row % 100) as u8; 16][..],
            n,
            &payload[..]
        ])?;
        if (row + 1) % rows_per_commit == 0 {
            conn.execute_batch("COMMIT; BEGIN")?;
        }
    }
    conn.execute_batch("COMMIT")?;
    let wall = (now() - start).as_secs_f64();
    let cpu = cpu_seconds().zip(cpu_before).map(|(a, b)| a - b);
    let stored = (rows * per_row) as f64;
    print!(
        "sqlite_floor {mode} {per_row} per row: {} samples of {SAMPLE_BYTES} B in {wall:.2} s, \
         {:.0} samples/s, wall {:.2} us/sample",
        rows * per_row,
        stored / wall,
        wall * 1e6 / stored
    );
    match cpu {
        Some(cpu) => println!(", CPU {:.2} us/sample", cpu * 1e6 / stored),
        None => println!(", CPU time unknown (no /proc/self/stat)"),
    }
    drop(conn);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// The benchmark measures wall time; the library itself reads no clock.
#[allow(clippy::disallowed_methods)]
fn now() -> Duration {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed()
}

/// This process's user + system CPU seconds, from /proc/self/stat (clock ticks of 1/100 s).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}
