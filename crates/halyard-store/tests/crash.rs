//! Proves crash safety: a child process inserting and committing in a loop is killed with
//! SIGKILL at seeded random points; after each kill the store opens cleanly and holds every
//! sample whose commit the child had reported, once and in order (and a KEEP_LAST channel
//! written alongside holds exactly the newest samples of each instance).
//!
//! Set `HALYARD_STORE_SEED` to replay a run; the seed is printed.

mod common;

use common::{spec, Scratch};
use halyard_store::{
    ChannelId, Inserted, Limits, SampleKind, Store, StoreOptions, StoredSample, SyncLevel,
};
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "HALYARD_STORE_CRASH_CHILD";
const KILLS: usize = 20;

/// splitmix64: small, seeded, good enough to pick kill points.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The sample with sequence number `sn`: everything derives from sn, so the parent can
/// check contents without talking to the child. Data samples only: a dispose is removed by
/// the next write of its instance (the `store` tests cover state changes), and here every
/// sample must stay.
fn nth(sn: i64) -> StoredSample {
    let len = (sn as usize * 37) % 3000 + 1;
    StoredSample {
        writer: [7; 16],
        sn,
        kind: SampleKind::Alive,
        key_hash: [(sn % 7) as u8; 16],
        source_time: sn * 10,
        payload: (0..len).map(|i| (i as i64 ^ sn) as u8).collect(),
    }
}

/// Iterations cycle through the sync levels (the first, `Process`, keeps a rollback journal;
/// `Normal` a write-ahead log; `Full` a rollback journal): a kill must lose nothing committed
/// at any of them, and the store changes journal between iterations.
fn options(iteration: usize) -> StoreOptions {
    let sync = match iteration % 3 {
        0 => SyncLevel::Process,
        1 => SyncLevel::Normal,
        _ => SyncLevel::Full,
    };
    StoreOptions {
        sync,
        max_bytes: None,
    }
}

/// KEEP_LAST depth of the second channel, which gets every sample too.
const DEPTH: u32 = 2;

/// The store with its two channels: KEEP_ALL, and KEEP_LAST [`DEPTH`].
fn open(path: &Path, iteration: usize) -> (Store, ChannelId, ChannelId) {
    let mut store = Store::open(path, options(iteration)).expect("store opens after a kill");
    let all = store
        .channel(&spec("Crash", Limits::default()))
        .expect("channel");
    let last = Limits {
        history_depth: Some(DEPTH),
        ..Limits::default()
    };
    let last = store.channel(&spec("CrashLast", last)).expect("channel");
    (store, all, last)
}

/// The child: continues after the last stored sample, commits batches of random size and
/// reports the committed count after each commit. Runs until killed.
fn child(path: &Path, iteration: usize, seed: u64) -> ! {
    let (mut store, ch, last) = open(path, iteration);
    let mut next = store.for_each_sample(ch, |_| ()).expect("count") as i64 + 1;
    let mut rng = Rng(seed);
    let mut out = std::io::stdout().lock();
    loop {
        let batch = 1 + rng.below(40) as i64;
        for sn in next..next + batch {
            assert!(matches!(
                store.insert(ch, &nth(sn)).expect("insert"),
                Inserted::Stored(_)
            ));
            assert!(matches!(
                store.insert(last, &nth(sn)).expect("insert"),
                Inserted::Stored(_)
            ));
        }
        if next > 1 {
            // A sample seen again (another service, a resend) changes nothing.
            assert_eq!(
                store.insert(ch, &nth(next - 1)).expect("insert"),
                Inserted::Duplicate
            );
        }
        next += batch;
        store.commit().expect("commit");
        writeln!(out, "committed {}", next - 1).expect("stdout");
        out.flush().expect("stdout");
    }
}

#[test]
fn crash_child() {
    // Only does something when the test below starts this binary as its child.
    let (Ok(path), Ok(it), Ok(seed)) = (
        std::env::var(CHILD_ENV),
        std::env::var("HALYARD_STORE_ITERATION"),
        std::env::var("HALYARD_STORE_CHILD_SEED"),
    ) else {
        return;
    };
    child(
        Path::new(&path),
        it.parse().expect("iteration"),
        seed.parse().expect("seed"),
    );
}

#[test]
fn kill_9_loses_no_committed_sample() {
    let seed = match std::env::var("HALYARD_STORE_SEED") {
        Ok(s) => s.parse().expect("HALYARD_STORE_SEED is a u64"),
        Err(_) => std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish(),
    };
    println!("crash test seed {seed} (replay with HALYARD_STORE_SEED={seed})");
    let mut rng = Rng(seed);
    let dir = Scratch::new("crash");
    let path = dir.file("crash.db");
    let exe = std::env::current_exe().expect("test binary");
    let mut total = 0;
    for iteration in 0..KILLS {
        let mut child = Command::new(&exe)
            .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .env("HALYARD_STORE_ITERATION", iteration.to_string())
            .env("HALYARD_STORE_CHILD_SEED", rng.next().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn child");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let commits = 1 + rng.below(25);
        let mut reported = total;
        let mut seen = 0;
        while seen < commits {
            let line = lines
                .next()
                .expect("child ended early")
                .expect("read child");
            if let Some(n) = line.strip_prefix("committed ") {
                reported = n.parse().expect("count");
                seen += 1;
            }
        }
        // Land the kill anywhere: between commits, mid-batch or mid-commit.
        std::thread::sleep(std::time::Duration::from_micros(rng.below(3000)));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        // Read whatever the child printed before dying: those commits happened too.
        for line in lines.map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("committed ") {
                reported = n.parse().expect("count");
            }
        }
        total = verify(&path, iteration, reported, seed);
        println!("kill {iteration}: {reported} reported committed, {total} stored");
    }
    assert!(
        total > KILLS as i64,
        "the children committed almost nothing: {total}"
    );
}

/// Reopens the store and checks samples 1..=n with n ≥ `reported`, in order, each once and
/// intact. Returns n.
fn verify(path: &Path, iteration: usize, reported: i64, seed: u64) -> i64 {
    let (store, ch, last) = open(path, iteration);
    store
        .check()
        .unwrap_or_else(|e| panic!("seed {seed} iteration {iteration}: {e}"));
    let mut expected = 1;
    store
        .for_each_sample(ch, |s| {
            assert_eq!(
                s,
                nth(expected),
                "seed {seed} iteration {iteration}: sample {expected}"
            );
            expected += 1;
        })
        .expect("read");
    let n = expected - 1;
    assert!(
        n >= reported,
        "seed {seed} iteration {iteration}: {reported} reported committed, {n} stored"
    );
    // The KEEP_LAST channel: the last DEPTH samples of each instance among 1..=n, in
    // insertion order, and each instance's state from its last sample. Instance of sn is
    // sn % 7, so sn is among the newest DEPTH of its instance when sn + 7 * DEPTH > n.
    let want: Vec<_> = (1..=n)
        .filter(|sn| sn + 7 * i64::from(DEPTH) > n)
        .map(nth)
        .collect();
    let mut got = Vec::new();
    store.for_each_sample(last, |s| got.push(s)).expect("read");
    let sns = |v: &[StoredSample]| v.iter().map(|s| s.sn).collect::<Vec<_>>();
    assert!(
        got == want,
        "seed {seed} iteration {iteration}: KEEP_LAST channel holds {:?}, expected {:?}",
        sns(&got),
        sns(&want)
    );
    let states = store.instances(last).expect("instances");
    assert_eq!(states.len() as i64, n.min(7));
    for (key, kind, time) in states {
        let newest = (1..=n)
            .rev()
            .find(|sn| [(sn % 7) as u8; 16] == key)
            .expect("instance");
        assert_eq!((kind, time), (nth(newest).kind, nth(newest).source_time));
    }
    n
}

/// Leaves beside a copy of `path` (at `copy`) the state a process killed within a
/// transaction leaves: pages of the open transaction already written to the file and their
/// originals in a hot rollback journal. `sql` is the transaction's work.
fn hot_copy(path: &Path, copy: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch(
        "PRAGMA journal_mode = PERSIST; PRAGMA synchronous = OFF; PRAGMA cache_size = 2;",
    )
    .expect("configure");
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    conn.execute_batch(sql).expect("transaction");
    let journal = |p: &Path| std::path::PathBuf::from(format!("{}-journal", p.display()));
    // The cache of 2 pages spilled: the transaction is in the file and the journal.
    let hot = std::fs::read(journal(path)).expect("journal");
    assert!(
        hot.len() > 512 && hot[..8] != [0; 8],
        "no hot journal: the test needs the transaction to spill"
    );
    std::fs::copy(path, copy).expect("copy file");
    std::fs::write(journal(copy), hot).expect("copy journal");
    // The payload segments belong to the store: a copy takes them along.
    let payloads = Store::payload_dir(path);
    if payloads.is_dir() {
        let to = Store::payload_dir(copy);
        std::fs::create_dir_all(&to).expect("copy payload directory");
        for entry in std::fs::read_dir(&payloads).expect("list payloads") {
            let entry = entry.expect("payload entry");
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy segment");
        }
    }
    drop(conn);
}

#[test]
fn a_transaction_cut_by_a_kill_is_rolled_back_at_open() {
    let dir = Scratch::new("hot");
    let path = dir.file("s.db");
    let copy = dir.file("copy.db");
    let mut store = Store::open(&path, options(0)).expect("open");
    let ch = store
        .channel(&spec("Hot", Limits::default()))
        .expect("channel");
    for sn in 1..=50 {
        let _ = store.insert(ch, &nth(sn)).expect("insert");
    }
    store.commit().expect("commit");
    drop(store);
    hot_copy(
        &path,
        &copy,
        "UPDATE samples SET payload = zeroblob(4000); DELETE FROM instances;",
    );
    let store = Store::open(&copy, options(0)).expect("a store with a hot journal opens");
    store.check().expect("sound after the rollback");
    let mut got = Vec::new();
    store
        .for_each_sample(ch, |s| got.push(s))
        .expect("read samples");
    assert_eq!(got, (1..=50).map(nth).collect::<Vec<_>>());
    assert_eq!(store.instances(ch).expect("instances").len(), 7);
    let journal = std::fs::read(format!("{}-journal", copy.display())).unwrap_or_default();
    assert!(
        journal.len() < 28 || journal[..8] == [0; 8],
        "the journal is no longer hot"
    );
}

#[test]
fn a_foreign_file_with_a_hot_journal_is_refused_untouched() {
    let dir = Scratch::new("hotforeign");
    let path = dir.file("app.db");
    let copy = dir.file("copy.db");
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute_batch(
        "PRAGMA application_id = 4660; CREATE TABLE t (x); \
         INSERT INTO t SELECT zeroblob(3000) FROM (WITH RECURSIVE n(i) AS \
         (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i FROM n);",
    )
    .expect("another application's database");
    drop(conn);
    hot_copy(&path, &copy, "UPDATE t SET x = zeroblob(5000);");
    let before = std::fs::read(&copy).expect("read");
    let err = match Store::open(&copy, options(0)) {
        Ok(_) => panic!("a foreign file was opened"),
        Err(e) => e,
    };
    assert!(
        matches!(&err, halyard_store::StoreError::Foreign { reason, .. } if reason.contains("0x1234")),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read(&copy).expect("read"),
        before,
        "the file changed"
    );
}
