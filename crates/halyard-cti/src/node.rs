//! The node: one organisation's sharing pipeline. Every way intelligence enters (HTTP and
//! TAXII POST, `halyard-cti publish`, the watched directory, MISP events, polled TAXII
//! collections) ends in [`Node::ingest`]; everything received from the community over DDS
//! ends in [`Node::receive`].
//!
//! (Signatures fixed; bodies being written.)

use crate::config::Config;
use crate::store::{CollectionKey, Db, ReviewItem, User};
use halyard_stix::marking::Tlp;
use halyard_stix::object::StixObject;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Where objects came from (recorded in the audit log and the review queue).
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A user of the REST API, TAXII POST or the CLI's `publish` (its account name).
    User(String),
    /// A file of the watched directory.
    Watch(PathBuf),
    /// A polled TAXII collection (the poll's name).
    Poll(String),
}

impl Source {
    /// The actor's name in the audit log: the user name, `watch:<file>`, `poll:<name>`.
    pub fn actor(&self) -> String {
        match self {
            Source::User(u) => u.clone(),
            Source::Watch(p) => format!("watch:{}", p.display()),
            Source::Poll(n) => format!("poll:{n}"),
        }
    }
}

/// Objects to take in, all or none.
#[derive(Clone, Debug)]
pub struct IngestRequest {
    /// The objects, validated.
    pub objects: Vec<StixObject>,
    /// Who sent them.
    pub source: Source,
    /// Share only with these sectors (a TAXII collection's sector; `None`: the sharing
    /// policy's sectors for each object's marking; `Some(empty)`: keep local).
    pub sectors: Option<Vec<String>>,
    /// The marking of objects that carry no TLP marking (`None`: the configuration's
    /// default).
    pub default_tlp: Option<Tlp>,
}

/// What became of one object.
#[derive(Clone, Debug, PartialEq)]
pub enum Disposition {
    /// Stored and shared with these sectors.
    Shared {
        /// The sectors.
        sectors: Vec<String>,
    },
    /// Waiting in the review queue.
    Queued {
        /// The review item's number.
        review: i64,
        /// Why it needs review.
        reasons: Vec<String>,
    },
    /// This version was known already: not stored or shared again.
    Duplicate,
    /// Stored on this node only (AMBER+STRICT, or no sector to share it with).
    Local,
}

/// The outcome of an ingest, one entry per object in input order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngestReport {
    /// (id, version, what became of it).
    pub results: Vec<(String, String, Disposition)>,
}

/// A reviewer's decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Share the sanitised object, or this edited one (validated again; same id).
    Approve {
        /// The edited object, if edited.
        edited: Option<serde_json::Map<String, serde_json::Value>>,
        /// A note for the audit log.
        note: Option<String>,
    },
    /// Never share it.
    Reject {
        /// Why.
        note: Option<String>,
    },
}

/// Why the node refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum NodeError {
    /// The input is not acceptable (invalid STIX, marking above what the caller may use,
    /// a sector the caller is not in ...): the reason, for the caller.
    Refused(String),
    /// The caller's role or clearance does not allow it.
    Forbidden(String),
    /// A bound was reached (review queue full ...): try later; nothing was stored.
    Full(String),
    /// Not found.
    NotFound(String),
    /// The database failed: nothing was stored.
    Db(crate::store::DbError),
    /// DDS failed.
    Dds(String),
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeError::Refused(s) => write!(f, "refused: {s}"),
            NodeError::Forbidden(s) => write!(f, "forbidden: {s}"),
            NodeError::Full(s) => write!(f, "full: {s}"),
            NodeError::NotFound(s) => write!(f, "not found: {s}"),
            NodeError::Db(e) => write!(f, "{e}"),
            NodeError::Dds(s) => write!(f, "DDS: {s}"),
        }
    }
}

impl std::error::Error for NodeError {}

impl From<crate::store::DbError> for NodeError {
    fn from(e: crate::store::DbError) -> Self {
        NodeError::Db(e)
    }
}

/// Counters of what the node did and refused (monotonic since start).
#[derive(Debug, Default)]
pub struct Counters {
    /// Objects taken in from any source (new versions).
    pub ingested: AtomicU64,
    /// Object versions written to DDS (one per sector).
    pub shared: AtomicU64,
    /// Object versions received from DDS and stored.
    pub received: AtomicU64,
    /// Received or ingested versions already known.
    pub duplicates: AtomicU64,
    /// Objects queued for review.
    pub queued: AtomicU64,
    /// Requests or files refused as invalid input (bad JSON, invalid STIX, over a limit).
    pub refused_input: AtomicU64,
    /// Samples received from DDS that were not valid (counted and dropped).
    pub refused_samples: AtomicU64,
    /// Failed authentications (wrong password, unknown or expired token).
    pub auth_failures: AtomicU64,
    /// Requests refused for lack of permission.
    pub forbidden: AtomicU64,
}

impl Counters {
    /// Adds one to a counter.
    pub fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// One object version to write to the community.
#[derive(Clone, Debug, PartialEq)]
pub struct Outgoing {
    /// The object.
    pub object: StixObject,
    /// Its marking (the topic).
    pub tlp: Tlp,
    /// The sector (the partition).
    pub sector: String,
    /// When it was shared (ns since the epoch).
    pub shared_at_ns: i64,
}

/// The node's way out to the community: DDS in production ([`crate::dds`]), a recorder in
/// tests. Writes must be in the community's hands (in the writers' histories) when they
/// return.
pub trait Sharer: Send + Sync {
    /// Writes these versions.
    fn share(&self, out: &[Outgoing]) -> Result<(), String>;
    /// Disposes of an object (revocation or deletion) in a sector under a marking.
    fn dispose(&self, id: &str, tlp: Tlp, sector: &str) -> Result<(), String>;
}

/// The node.
pub struct Node {
    cfg: Config,
    db: Mutex<Db>,
    counters: Counters,
    #[allow(dead_code)]
    sharer: std::sync::Arc<dyn Sharer>,
}

#[allow(unused_variables)]
impl Node {
    /// A node over an open database, sharing through `sharer`. Versions this node shared
    /// that the community had not acknowledged before it stopped are written again.
    pub fn new(cfg: Config, db: Db, sharer: std::sync::Arc<dyn Sharer>) -> Result<Node, NodeError> {
        todo!()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The database (held briefly: every request and the DDS receiver share it).
    pub fn db(&self) -> MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The collections `user` may read: each (sector, marking) of the node within the user's
    /// sectors and clearance, and the local collection's markings within its clearance.
    pub fn visible_collections(&self, user: &User) -> Vec<CollectionKey> {
        todo!()
    }

    /// Takes objects in: checks the caller may use their markings and sectors, drops known
    /// versions, sanitises, queues what the review policy says, stores and shares the rest.
    /// All or none: on any refusal nothing is stored.
    pub fn ingest(&self, req: IngestRequest) -> Result<IngestReport, NodeError> {
        todo!()
    }

    /// Decides a review item (four eyes: never by its submitter; reviewers and admins only).
    pub fn decide(
        &self,
        review: i64,
        decision: Decision,
        by: &User,
    ) -> Result<ReviewItem, NodeError> {
        todo!()
    }
}
