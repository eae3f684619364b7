//! Checkpoints of a write-ahead-log store ([`crate::SyncLevel::Normal`]) on a thread of their
//! own.
//!
//! # Design
//!
//! In WAL mode every committed page is appended to the log, and a *checkpoint* later copies
//! the log's pages into the database file and fsyncs it (`synchronous = NORMAL`). SQLite runs
//! that checkpoint inside the commit that takes the log past 1000 pages, on the committing
//! thread: for a stream of small samples a large share of the durability service thread's
//! time went there (copying pages into the file's fresh page-cache pages, then the fsync). So the store
//! turns automatic checkpoints off on its connection and gives them to this thread, which has
//! a connection of its own and runs a PASSIVE checkpoint each time the log has grown by
//! [`SIGNAL_BYTES`] more: a passive checkpoint never waits for, nor blocks, the writer (the
//! WAL design lets one checkpointer copy frames while a writer appends).
//!
//! *What grows the log is pages, not samples.* Each commit appends every page it changed,
//! whole (the table's last leaf, the instance rows, the interior pages above them: several
//! pages for a commit of one small sample), so the cadence follows the log file's own growth
//! (looked at after each commit), or the bytes committed when more (a log that restarted
//! grows inside its file). Counting the samples' bytes alone, a slow stream of small
//! samples, each its own transaction, would never reach a checkpoint, and a log many times
//! the store's size would stay beside it for good.
//!
//! The log restarts (the next commit writes it from its start, and it grows no more) only
//! when a commit begins after a checkpoint copied every frame: a pass that takes longer than
//! the gap between two commits (its fsync, on a busy disk) leaves the frames committed
//! meanwhile, and the log grows on to the next pass. A fast stream grows the log to the bound
//! below, where commits restart it themselves. A slow one (less than [`SIGNAL_BYTES`] of log
//! a second, as most are) gets a pass every [`IDLE_CHECKPOINT`] that ends with the log wholly
//! copied: passes, each copying what came during the one before, and if the stream still
//! races them, a RESTART checkpoint, which holds the next commit for the few frames left.

//! *At rest the log is emptied.* When the store committed nothing for an
//! [`IDLE_CHECKPOINT`], the thread runs a TRUNCATE checkpoint, which empties the log file,
//! without waiting for a writer (a busy store is tried again at the next tick). A store that
//! is written and left alone keeps no log beside it.
//!
//! A passive checkpoint cannot restart the log: SQLite restarts it when a writer begins a
//! transaction after every frame was copied, which a checkpointer racing a steady stream of
//! commits may seldom leave it. So the committing thread bounds the log itself: once it is
//! longer than [`log_limit`] (256 MB, less for a store with a small size cap), a commit runs
//! a RESTART checkpoint, as SQLite's own automatic checkpoint would have, only rarely.
//! RESTART, not TRUNCATE: the next commits write the log from its start again, over file
//! blocks and page-cache pages that exist already, where a truncated log is extended block by
//! block (the file system allocates, the kernel takes fresh pages). The log file is truncated
//! to `journal_size_limit` (the same bound) after a restart. `examples/store_bench` at the
//! `normal` level shows the difference.
//!
//! The restart does not wait for this thread. While a passive checkpoint is in progress (it
//! holds SQLite's checkpoint lock, and its fsync of the file can take tens of milliseconds)
//! a RESTART can only wait, and SQLite's busy handler waits by sleeping 1, 2, 5, 10, 15, 20,
//! 25... ms: the commit that waited stalled the whole stream (its writers' histories filled
//! while their samples went unacknowledged), many times a second on a fast PERSISTENT
//! stream. So a commit past the bound tries the RESTART without waiting
//! (busy timeout zero): if this thread is checkpointing, the log grows a little more and the
//! next commit tries again; when this thread is idle, the restart only has what was
//! committed since its last pass to copy. Past twice the bound (this thread cannot keep up,
//! or a restart was deferred) every commit runs a TRUNCATE checkpoint, waiting if need be,
//! which empties the log itself: so the log stays bounded.
//!
//! Each restart still copies and syncs what this thread had not, and the commit that runs it
//! holds up the stream meanwhile: the fewer restarts the better, hence a bound of hundreds
//! of megabytes rather than tens (a fast stream of large samples would otherwise restart the
//! log several times a second; see also the larger flow-control window of a writer read by a
//! service, `halyard_core`'s writer, "Bounds").
//!
//! Crash safety is SQLite's: a checkpoint from any connection leaves the log authoritative
//! until the file holds and has synced its pages, so a kill -9 at any moment loses nothing
//! committed (the kill -9 tests run with this thread).

use crate::error::StoreError;
use crate::open::{classify, BUSY_TIMEOUT};
use crate::types::StoreOptions;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Log growth between two passive checkpoints: about SQLite's own automatic cadence (1000
/// pages of 4 KiB).
pub(crate) const SIGNAL_BYTES: u64 = 4 << 20;
/// How often the checkpoint thread looks at the log without being woken: it checkpoints what
/// was committed since its last pass, or empties the log of a store idle since then.
pub(crate) const IDLE_CHECKPOINT: std::time::Duration = std::time::Duration::from_secs(1);
/// Passes that follow a slow stream's checkpoint pass during which the store committed: each
/// copies only what came during the one before, so that the log is wholly copied when the
/// next commit begins and that commit restarts it (see the module).
const FOLLOW_UP_PASSES: usize = 3;
/// Longest the log may grow before commits try to checkpoint (and restart) it themselves,
/// without waiting for the checkpoint thread, in a store without a size cap.
pub(crate) const MAX_LOG_BYTES: u64 = 256 << 20;
/// The least bound on the log, whatever the cap.
const MIN_LOG_BYTES: u64 = 8 << 20;

/// The length past which the log of a store with `options` owes a restart: [`MAX_LOG_BYTES`],
/// or a quarter of the store's size cap if that is less (at least 8 MB). A commit past
/// twice that waits for the restart. It is also the store's `journal_size_limit`.
pub(crate) fn log_limit(options: &StoreOptions) -> u64 {
    options.max_bytes.map_or(MAX_LOG_BYTES, |cap| {
        (cap / 4).clamp(MIN_LOG_BYTES, MAX_LOG_BYTES)
    })
}

/// What a commit should do about the log's length ([`Checkpointer::committed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogRestart {
    /// Nothing: the log is short enough.
    No,
    /// Restart it if that needs no waiting.
    IfIdle,
    /// Restart it, waiting if need be.
    Now,
}

/// The checkpoint thread of one store file.
pub(crate) struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The log's file (`PATH-wal`), whose length the committing thread watches.
    log: PathBuf,
    /// The log file's length after the last commit.
    log_len: u64,
    /// The store committed since the thread's last pass (the thread clears it).
    dirty: Arc<AtomicBool>,
    /// Log growth since the thread was last woken.
    since_wake: u64,
    /// The log's length that owes a restart ([`log_limit`]).
    limit: u64,
    /// The log outgrew `limit` and was not restarted since.
    restart_owed: bool,
}

impl Checkpointer {
    /// Starts the thread for the store at `path` (open already, in WAL mode), whose log owes
    /// a restart past `limit` bytes.
    pub(crate) fn start(path: &Path, limit: u64) -> Result<Checkpointer, StoreError> {
        let name = path.display().to_string();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| classify(&name, "open the checkpoint connection", e))?;
        // The checkpoint syncs what the level says (synchronous is per connection).
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| classify(&name, "configure the checkpoint connection", e))?;
        let mut log = path.as_os_str().to_owned();
        log.push("-wal");
        let log = PathBuf::from(log);
        let dirty = Arc::new(AtomicBool::new(false));
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = {
            let (log, dirty) = (log.clone(), Arc::clone(&dirty));
            std::thread::Builder::new()
                .name("halyard-checkpoint".into())
                .spawn(move || checkpoint_loop(&conn, &woken, &log, &dirty))
                .map_err(|source| StoreError::Io {
                    path: name.clone(),
                    source,
                })?
        };
        Ok(Checkpointer {
            wake: Some(wake),
            thread: Some(thread),
            log_len: file_len(&log),
            log,
            dirty,
            since_wake: 0,
            limit,
            restart_owed: false,
        })
    }

    /// The store committed about `bytes`: wakes the thread every [`SIGNAL_BYTES`] of log
    /// growth (see the module), and says what the caller should do about the log's length.
    pub(crate) fn committed(&mut self, bytes: u64) -> LogRestart {
        self.dirty.store(true, Ordering::Relaxed);
        let len = file_len(&self.log);
        let grown = len.saturating_sub(self.log_len);
        self.log_len = len;
        self.since_wake = self.since_wake.saturating_add(bytes.max(grown));
        // Past twice the bound the log is restarted now, whatever an earlier restart said:
        // a RESTART that succeeded while a checkpoint pass still held frames leaves the log
        // growing from where it was (SQLite restarts it only at a write that finds it wholly
        // copied), so the length itself decides, at every commit.
        if len > self.limit.saturating_mul(2) {
            self.restart_owed = true;
            return LogRestart::Now;
        }
        if self.since_wake < SIGNAL_BYTES && !self.restart_owed {
            return LogRestart::No;
        }
        if self.since_wake >= SIGNAL_BYTES {
            self.since_wake = 0;
            if let Some(w) = &self.wake {
                // Full: a wake-up is pending already.
                if let Err(TrySendError::Disconnected(())) = w.try_send(()) {
                    self.wake = None;
                }
            }
        }
        self.restart_owed = len > self.limit;
        if self.restart_owed {
            LogRestart::IfIdle
        } else {
            LogRestart::No
        }
    }

    /// Checkpoints the log of `conn`'s store into the file and restarts it. `wait`: for the
    /// thread's checkpoint in progress (the connection's busy timeout, [`BUSY_TIMEOUT`]);
    /// otherwise a checkpoint in progress makes this return at once, having done nothing
    /// (the log's length then still owes a restart, tried at the next commit).
    pub(crate) fn restart(&mut self, conn: &Connection, wait: bool) -> rusqlite::Result<()> {
        if !wait {
            conn.busy_timeout(std::time::Duration::ZERO)?;
        }
        // (busy, log frames, frames checkpointed): busy = 1 when it could not finish. Past
        // twice the bound (`wait`) TRUNCATE: it empties the log itself, where a RESTART only
        // lets the next write start it over, which a checkpoint pass beginning meanwhile can
        // defer while the log keeps growing.
        let sql = if wait {
            "PRAGMA wal_checkpoint(TRUNCATE)"
        } else {
            "PRAGMA wal_checkpoint(RESTART)"
        };
        let done = conn.query_row(sql, [], |r| r.get::<_, i64>(0));
        if !wait {
            conn.busy_timeout(BUSY_TIMEOUT)?;
        }
        if done? == 0 {
            self.restart_owed = false;
        }
        Ok(())
    }
}

/// The length of file `path` (0 when there is none).
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The checkpoint thread (see the module): a PASSIVE checkpoint when woken (the log grew by
/// [`SIGNAL_BYTES`]); when [`IDLE_CHECKPOINT`] went by without that, a slow stream's pass if
/// the store committed since the last one ([`slow_stream_pass`]), else a TRUNCATE checkpoint
/// of a non-empty log. Ends when the store's [`Checkpointer`] is dropped.
fn checkpoint_loop(conn: &Connection, woken: &Receiver<()>, log: &Path, dirty: &AtomicBool) {
    loop {
        // Cleared before a pass: a commit during it marks the store again. A failed or busy
        // checkpoint is tried again at the next wake-up; the committing thread's bound on
        // the log stands behind it.
        match woken.recv_timeout(IDLE_CHECKPOINT) {
            Ok(()) => {
                dirty.store(false, Ordering::Relaxed);
                let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            }
            Err(RecvTimeoutError::Timeout) if dirty.load(Ordering::Relaxed) => {
                slow_stream_pass(conn, dirty);
            }
            Err(RecvTimeoutError::Timeout) if file_len(log) > 0 => {
                let _ = without_waiting(conn, "TRUNCATE");
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// The pass for a store that committed less than [`SIGNAL_BYTES`] of log in an
/// [`IDLE_CHECKPOINT`]: PASSIVE passes, each copying what came during the one before (up to
/// [`FOLLOW_UP_PASSES`] more), until one ends with no commit during it; if none did, a
/// RESTART checkpoint, which holds the store's next commit for the few frames left and
/// leaves the log to be restarted (unless the store is committing at that very moment: the
/// connection never waits). Either way the next commit writes the log from its start.
fn slow_stream_pass(conn: &Connection, dirty: &AtomicBool) {
    for _ in 0..=FOLLOW_UP_PASSES {
        dirty.store(false, Ordering::Relaxed);
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        if !dirty.load(Ordering::Relaxed) {
            return;
        }
    }
    let _ = without_waiting(conn, "RESTART");
}

/// Runs a `mode` checkpoint (RESTART or TRUNCATE, which wait for the store's writer and hold
/// its next commits meanwhile) only if the store is not writing: busy at once otherwise.
fn without_waiting(conn: &Connection, mode: &str) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::ZERO)?;
    let done = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()));
    conn.busy_timeout(BUSY_TIMEOUT)?;
    done
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped(cap: Option<u64>) -> u64 {
        log_limit(&StoreOptions {
            max_bytes: cap,
            ..StoreOptions::default()
        })
    }

    #[test]
    fn the_log_bound_is_a_quarter_of_the_cap_within_8_mb_and_256_mb() {
        assert_eq!(capped(None), 256 << 20);
        assert_eq!(capped(Some(4 << 30)), 256 << 20);
        assert_eq!(capped(Some(128 << 20)), 32 << 20);
        assert_eq!(capped(Some(1 << 20)), 8 << 20);
    }
}
