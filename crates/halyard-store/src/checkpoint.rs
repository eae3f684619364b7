//! Checkpoints of a write-ahead-log store ([`crate::SyncLevel::Normal`]) on a thread of their
//! own.
//!
//! # Design
//!
//! In WAL mode every committed page is appended to the log, and a *checkpoint* later copies
//! the log's pages into the database file and fsyncs it (`synchronous = NORMAL`). SQLite runs
//! that checkpoint inside the commit that takes the log past 1000 pages, on the committing
//! thread: for a stream of 1 KB samples a quarter of the durability service thread's time went
//! there (copying pages into the file's fresh page-cache pages, then the fsync). So the store
//! turns automatic checkpoints off on its connection and gives them to this thread, which has
//! a connection of its own and runs a PASSIVE checkpoint each time the store has committed
//! [`SIGNAL_BYTES`] more: a passive checkpoint never waits for, nor blocks, the writer (the
//! WAL design lets one checkpointer copy frames while a writer appends).
//!
//! A passive checkpoint cannot restart the log: SQLite restarts it when a writer begins a
//! transaction after every frame was copied, which a checkpointer racing a steady stream of
//! commits may seldom leave it. So the committing thread bounds the log itself: once it is
//! longer than [`MAX_LOG_BYTES`], the commit runs a RESTART checkpoint (waiting for this
//! thread's current one to finish), as SQLite's own automatic checkpoint would have, only
//! rarely. RESTART, not TRUNCATE: the next commits write the log from its start again, over
//! file blocks and page-cache pages that exist already, where a truncated log is extended
//! block by block (the file system allocates, the kernel takes fresh pages). The log file
//! then stays at most `journal_size_limit` (64 MB) long. Measured with `examples/store_bench`
//! (500 000 × 1 KB, Normal, 3 alternating runs): 367–376 k samples/s with TRUNCATE, 427–442 k
//! with RESTART.
//!
//! Crash safety is SQLite's: a checkpoint from any connection leaves the log authoritative
//! until the file holds and has synced its pages, so a kill -9 at any moment loses nothing
//! committed (the kill -9 tests run with this thread).

use crate::error::StoreError;
use crate::open::classify;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

/// Bytes committed between two passive checkpoints: about SQLite's own automatic cadence
/// (1000 pages of 4 KiB).
pub(crate) const SIGNAL_BYTES: u64 = 4 << 20;
/// Longest the log may grow before a commit checkpoints (and restarts) it itself.
pub(crate) const MAX_LOG_BYTES: u64 = 64 << 20;

/// The checkpoint thread of one store file.
pub(crate) struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The log's file (`PATH-wal`), whose length the committing thread watches.
    log: PathBuf,
    /// Bytes committed since the thread was last woken.
    since_wake: u64,
}

impl Checkpointer {
    /// Starts the thread for the store at `path` (open already, in WAL mode).
    pub(crate) fn start(path: &Path) -> Result<Checkpointer, StoreError> {
        let name = path.display().to_string();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| classify(&name, "open the checkpoint connection", e))?;
        // The checkpoint syncs what the level says (synchronous is per connection).
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| classify(&name, "configure the checkpoint connection", e))?;
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("halyard-checkpoint".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    // A failed or busy checkpoint is tried again at the next wake-up; the
                    // committing thread's bound on the log stands behind it.
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .map_err(|source| StoreError::Io {
                path: name.clone(),
                source,
            })?;
        let mut log = path.as_os_str().to_owned();
        log.push("-wal");
        Ok(Checkpointer {
            wake: Some(wake),
            thread: Some(thread),
            log: PathBuf::from(log),
            since_wake: 0,
        })
    }

    /// The store committed about `bytes`: wakes the thread every [`SIGNAL_BYTES`]. Returns
    /// whether the log outgrew [`MAX_LOG_BYTES`] (the caller then restarts it).
    pub(crate) fn committed(&mut self, bytes: u64) -> bool {
        self.since_wake = self.since_wake.saturating_add(bytes);
        if self.since_wake < SIGNAL_BYTES {
            return false;
        }
        self.since_wake = 0;
        if let Some(w) = &self.wake {
            // Full: a wake-up is pending already.
            if let Err(TrySendError::Disconnected(())) = w.try_send(()) {
                self.wake = None;
            }
        }
        std::fs::metadata(&self.log).is_ok_and(|m| m.len() > MAX_LOG_BYTES)
    }

    /// Checkpoints the log of `conn`'s store into the file and restarts it, waiting (the
    /// connection's busy timeout, rusqlite's 5 s) for the thread's checkpoint in progress.
    pub(crate) fn restart(conn: &Connection) -> rusqlite::Result<()> {
        conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
