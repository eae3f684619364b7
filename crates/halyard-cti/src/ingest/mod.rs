//! Automatic ingestion: a watched directory ([`watch`]) and polled TAXII 2.1 collections
//! ([`poll`]), each a thread that feeds [`Node::ingest`].
//!
//! Both sources sort the outcome of an ingest the same way ([`Outcome::of`]): the node's
//! refusal of the input (invalid STIX, a marking or sector the policy does not allow) is
//! final — the file moves to `refused/`, the TAXII page is skipped — and is counted in
//! `refused_input`; a failure of the node itself (database, a full review queue, DDS) is
//! transient — the same input is tried again later, and nothing is lost. The node drops
//! versions it already has, so trying again never shares anything twice.
//!
//! Threads wait in short slices ([`sleep_unless_stopped`]) and look at the stop flag between
//! units of work (a file, a page), so they end promptly once it is set. A TAXII request in
//! flight is not waited for: it runs on a helper thread of its own (see [`poll`]).

pub mod poll;
pub mod watch;

use crate::node::{Node, NodeError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest a thread sleeps before it looks at the stop flag again.
pub const STOP_SLICE: Duration = Duration::from_millis(50);

/// Starts the watcher (when the configuration has `[watch]`) and one poller per `[[poll]]`
/// entry. Each thread ends soon after `stop` is set; join the handles to wait for them.
/// A poller whose configuration cannot be used (its password variable unset) is reported
/// and not started.
pub fn start(node: &Arc<Node>, stop: Arc<AtomicBool>) -> Vec<JoinHandle<()>> {
    let mut handles = Vec::new();
    if let Some(cfg) = node.config().watch.clone() {
        let watcher = watch::Watcher::new(node.clone(), cfg);
        let stop = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("cti-watch".into())
            .spawn(move || watcher.run(&stop));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => log(&format!("watch: cannot start its thread: {e}")),
        }
    }
    for cfg in node.config().polls.clone() {
        let name = cfg.name.clone();
        let poller = match poll::Poller::new(node.clone(), cfg) {
            Ok(p) => p,
            Err(e) => {
                log(&format!("poll {name}: not started: {e}"));
                continue;
            }
        };
        let stop = stop.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("cti-poll-{name}"))
            .spawn(move || poller.run(&stop));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => log(&format!("poll {name}: cannot start its thread: {e}")),
        }
    }
    handles
}

/// Sleeps `total`, waking every [`STOP_SLICE`] to look at `stop`; false if it was set.
pub fn sleep_unless_stopped(stop: &AtomicBool, total: Duration) -> bool {
    let mut left = total;
    while !left.is_zero() {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let step = left.min(STOP_SLICE);
        std::thread::sleep(step);
        left -= step;
    }
    !stop.load(Ordering::Relaxed)
}

/// How an ingest attempt ended, for a source that must decide what to do with its input.
#[derive(Debug)]
pub enum Outcome {
    /// Taken in (stored, queued, or known already).
    Ingested,
    /// Refused for good: the input will not become acceptable by trying again.
    Refused(String),
    /// The node could not take it now; the same input should be tried again.
    Transient(String),
}

impl Outcome {
    /// Sorts a node's answer: [`NodeError::Db`], [`NodeError::Full`] and [`NodeError::Dds`]
    /// (and any kind this code does not know) are transient; the rest refuse the input.
    pub fn of<T>(result: &Result<T, NodeError>) -> Outcome {
        match result {
            Ok(_) => Outcome::Ingested,
            Err(e @ (NodeError::Refused(_) | NodeError::Forbidden(_) | NodeError::NotFound(_))) => {
                Outcome::Refused(e.to_string())
            }
            Err(e) => Outcome::Transient(e.to_string()),
        }
    }
}

/// Wall-clock time in milliseconds since the Unix epoch (for MISP conversion).
pub fn now_millis() -> i64 {
    crate::node::now_ns() / 1_000_000
}

/// One line on standard error, prefixed like the rest of the node's messages.
pub(crate) fn log(message: &str) {
    eprintln!("halyard-cti: {message}");
}
