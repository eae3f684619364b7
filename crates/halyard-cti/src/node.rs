//! The node: one organisation's sharing pipeline. Every way intelligence enters (HTTP and
//! TAXII POST, `halyard-cti publish`, the watched directory, MISP events, polled TAXII
//! collections) ends in [`Node::ingest`]; everything received from the community over DDS
//! ends in [`Node::receive`].
//!
//! The order of work for one ingest: check the markings and sectors asked for against the
//! sharing policy; drop versions the node has (the same id and `modified`: a replayed request
//! or a re-sent file shares nothing twice); sanitise a copy of each object for sharing,
//! keeping the original in the node's local collection; queue what the review policy says;
//! store everything in one transaction; then write what is to be shared to DDS. A version is
//! stored with `pending_share` until every reader and durability service of the community
//! acknowledged it ([`Node::confirm_shares`]); a node killed before that writes it again when
//! it starts, and receivers drop the duplicate. Receiving ([`Node::receive`]) validates every
//! sample again: a peer is never trusted to send valid STIX or to respect markings.

use crate::config::Config;
use crate::store::{
    AuditEntry, CollectionKey, Db, InsertOutcome, NewObject, NewReview, ReviewItem, ReviewState,
    Role, User,
};
use halyard_stix::marking::Tlp;
use halyard_stix::object::StixObject;
use halyard_stix::sanitize::{Change, Sanitizer};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// Waits up to `timeout` until every matched reader and durability service acknowledged
    /// all that was written; true if they did.
    fn acknowledged(&self, timeout: std::time::Duration) -> bool {
        let _ = timeout;
        true
    }
    /// The other members of the community as discovery sees them now (none without DDS).
    fn presence(&self) -> Vec<crate::presence::Member> {
        Vec::new()
    }
}

/// One sample received from the community.
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    /// The instance key (must equal the object's id).
    pub key: String,
    /// The sample's `stix_type` field.
    pub stix_type: String,
    /// The sample's `tlp` field.
    pub tlp_field: String,
    /// The marking of the topic it came on.
    pub tlp: Tlp,
    /// The sector of the reader that took it.
    pub sector: String,
    /// The organisation that shared it.
    pub origin: String,
    /// When it was shared (ns since the epoch).
    pub shared_at_ns: i64,
    /// The object's JSON text.
    pub json: String,
    /// The DDS instance it came as (its key's hash), by which a later disposal names it.
    pub instance: [u8; 16],
}

/// The node.
pub struct Node {
    cfg: Config,
    db: Mutex<Db>,
    counters: Counters,
    sanitizer: Sanitizer,
    sharer: Arc<dyn Sharer>,
    /// What was written to DDS and not yet known acknowledged, and how far the outbox got.
    outbox: Mutex<Outbox>,
    /// Wakes the outbox's thread.
    outbox_wake: std::sync::Condvar,
    /// The latest end-to-end latencies of received objects (ns), bounded.
    latencies: Mutex<std::collections::VecDeque<i64>>,
    /// Every version stored, for whoever watches.
    feed: crate::feed::Feed,
}

/// The most versions a request writes to DDS from its own thread; a larger batch is left to
/// the outbox's thread.
const INLINE_SHARE_MAX: usize = 256;

/// The rows written to DDS and not yet confirmed, and the last pending row looked at.
#[derive(Debug, Default)]
struct Outbox {
    sent: std::collections::BTreeSet<i64>,
    cursor: i64,
    woken: bool,
}

/// How many received latencies are kept for figures.
const LATENCY_WINDOW: usize = 10_000;

/// Wall-clock time, microseconds since the Unix epoch.
pub fn now_us() -> i64 {
    now_ns() / 1000
}

/// Wall-clock time, nanoseconds since the Unix epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Node {
    /// A node over an open database, sharing through `sharer`. Versions this node shared
    /// that the community had not acknowledged before it stopped are written again.
    pub fn new(cfg: Config, db: Db, sharer: Arc<dyn Sharer>) -> Result<Node, NodeError> {
        let sanitizer = Sanitizer::new(&cfg.sanitize)
            .map_err(|e| NodeError::Refused(format!("sanitize rules: {e}")))?;
        let node = Node {
            cfg,
            db: Mutex::new(db),
            counters: Counters::default(),
            sanitizer,
            sharer,
            outbox: Mutex::new(Outbox::default()),
            outbox_wake: std::sync::Condvar::new(),
            latencies: Mutex::new(std::collections::VecDeque::new()),
            feed: crate::feed::Feed::default(),
        };
        while node.pump_outbox(4096)? > 0 {}
        Ok(node)
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The other members of the community, as DDS discovery sees them now.
    pub fn presence(&self) -> Vec<crate::presence::Member> {
        self.sharer.presence()
    }

    /// The live feed of what the node stores.
    pub fn feed(&self) -> &crate::feed::Feed {
        &self.feed
    }

    /// Sends the stored ones of `rows` (per `outcomes`) to the feed's watchers, if any.
    fn announce(&self, rows: &[NewObject], outcomes: Option<&[InsertOutcome]>, received: bool) {
        if !self.feed.watched() {
            return;
        }
        let stored = now_ns();
        // A version shared with sectors is also kept as the node's local copy: the feed shows
        // it once per sector, and the local copy only of what stays here.
        let in_sector: std::collections::BTreeSet<(&str, &str)> = rows
            .iter()
            .filter(|r| r.sector.is_some())
            .map(|r| (r.id.as_str(), r.version.as_str()))
            .collect();
        let events = rows.iter().enumerate().filter_map(|(i, row)| {
            let dup = outcomes.and_then(|o| o.get(i)) == Some(&InsertOutcome::Duplicate);
            let copy = row.sector.is_none()
                && in_sector.contains(&(row.id.as_str(), row.version.as_str()));
            (!dup && !copy).then(|| crate::feed::FeedEvent::of(row, received, stored))
        });
        self.feed.publish(events);
    }

    /// The database (held briefly: every request and the DDS receiver share it).
    pub fn db(&self) -> MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// End-to-end latencies (ns, from the origin's sharing to this node's storing) of the
    /// latest received objects, oldest first.
    pub fn latencies_ns(&self) -> Vec<i64> {
        self.latencies
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .copied()
            .collect()
    }

    /// The collections `user` may read: each (sector, marking) of the node within the user's
    /// sectors and clearance, and the local collection's markings within its clearance.
    pub fn visible_collections(&self, user: &User) -> Vec<CollectionKey> {
        let mut out = Vec::new();
        for sector in &self.cfg.sectors {
            if let Some(allowed) = &user.sectors {
                if !allowed.contains(sector) {
                    continue;
                }
            }
            for tlp in crate::config::SHARED_TLPS {
                if tlp <= user.max_tlp {
                    out.push(CollectionKey {
                        sector: Some(sector.clone()),
                        tlp,
                    });
                }
            }
        }
        for tlp in [
            Tlp::Clear,
            Tlp::Green,
            Tlp::Amber,
            Tlp::AmberStrict,
            Tlp::Red,
        ] {
            if tlp <= user.max_tlp {
                out.push(CollectionKey { sector: None, tlp });
            }
        }
        out
    }

    /// The marking an object is handled under.
    fn marking_of(&self, obj: &StixObject, default: Option<Tlp>) -> Tlp {
        obj.tlp
            .or(default)
            .unwrap_or_else(|| self.cfg.default_tlp())
    }

    /// The sectors an object is shared with: those asked for (each allowed by the sharing
    /// policy for its marking) or the policy's.
    fn sectors_of(&self, tlp: Tlp, asked: &Option<Vec<String>>) -> Result<Vec<String>, NodeError> {
        let policy = self.cfg.sectors_for(tlp);
        match asked {
            None => Ok(policy),
            Some(list) => {
                for s in list {
                    if !self.cfg.sectors.contains(s) {
                        return Err(NodeError::Refused(format!(
                            "sector {s:?} is not one of this node's sectors {:?}",
                            self.cfg.sectors
                        )));
                    }
                    if !policy.contains(s) {
                        return Err(NodeError::Refused(format!(
                            "the sharing policy does not share TLP:{} with sector {s:?}",
                            tlp.as_str().to_uppercase()
                        )));
                    }
                }
                Ok(list.clone())
            }
        }
    }

    /// Why an object to be shared needs review (empty: it does not).
    fn review_reasons(&self, obj: &StixObject, tlp: Tlp, changes: &[Change]) -> Vec<String> {
        let r = &self.cfg.review;
        let mut reasons = Vec::new();
        if r.all {
            reasons.push("policy: everything is reviewed".to_string());
        }
        if let Some(min) = self.cfg.review_min_tlp() {
            if tlp >= min {
                reasons.push(format!("marking TLP:{}", tlp.as_str().to_uppercase()));
            }
        }
        if r.types.iter().any(|t| t == &obj.stix_type) {
            reasons.push(format!("type {}", obj.stix_type));
        }
        if r.on_sanitized && !changes.is_empty() {
            reasons.push(format!("sanitised: {} change(s)", changes.len()));
        }
        reasons
    }

    /// Takes objects in: checks the markings and sectors asked for against the sharing
    /// policy, drops known versions, sanitises, queues what the review policy says, stores
    /// and shares the rest. All or none: on any refusal nothing is stored.
    pub fn ingest(&self, req: IngestRequest) -> Result<IngestReport, NodeError> {
        let me = self.cfg.node.organisation.clone();
        let actor = req.source.actor();
        let shared_at_ns = now_ns();
        // Decide everything before touching the database.
        struct Plan {
            obj: StixObject,
            tlp: Tlp,
            sectors: Vec<String>,
            sanitized: StixObject,
            changes: Vec<Change>,
            reasons: Vec<String>,
        }
        let mut plans = Vec::with_capacity(req.objects.len());
        let mut results = Vec::with_capacity(req.objects.len());
        let mut seen = std::collections::BTreeSet::new();
        {
            let db = self.db();
            for obj in req.objects {
                let version = obj.version().to_string();
                if !seen.insert((obj.id.clone(), version.clone()))
                    || db.has_version(&obj.id, &version)?
                {
                    results.push((obj.id.clone(), version, Disposition::Duplicate));
                    continue;
                }
                let tlp = self.marking_of(&obj, req.default_tlp);
                let sectors = if tlp == Tlp::AmberStrict {
                    Vec::new()
                } else {
                    self.sectors_of(tlp, &req.sectors)?
                };
                let mut json = obj.json.clone();
                let changes = if sectors.is_empty() {
                    Vec::new()
                } else {
                    self.sanitizer.sanitize(&mut json)
                };
                let sanitized = if changes.is_empty() {
                    obj.clone()
                } else {
                    halyard_stix::validate::object(&serde_json::Value::Object(json)).map_err(|e| {
                        NodeError::Refused(format!(
                            "{}: the sanitised object is not valid STIX ({e}); fix the object or the rule",
                            obj.id
                        ))
                    })?
                };
                let reasons = if sectors.is_empty() {
                    Vec::new()
                } else {
                    self.review_reasons(&obj, tlp, &changes)
                };
                results.push((obj.id.clone(), version, Disposition::Local));
                plans.push((
                    results.len() - 1,
                    Plan {
                        obj,
                        tlp,
                        sectors,
                        sanitized,
                        changes,
                        reasons,
                    },
                ));
            }
            let queued = plans.iter().filter(|(_, p)| !p.reasons.is_empty()).count();
            if queued > 0 {
                let pending = db.pending_reviews()?;
                if pending + queued > self.cfg.limits.max_review_queue {
                    return Err(NodeError::Full(format!(
                        "the review queue holds {pending} of at most {} objects; {queued} more need review",
                        self.cfg.limits.max_review_queue
                    )));
                }
            }
        }
        // Store: the original in the local collection; the sanitised copy in each sector it
        // is shared with now; the review items.
        let mut rows = Vec::new();
        let mut outgoing = Vec::new();
        for (_, p) in &plans {
            rows.push(new_object(&p.obj, p.tlp, None, &me, 0, false));
            if p.reasons.is_empty() {
                for s in &p.sectors {
                    rows.push(new_object(
                        &p.sanitized,
                        p.tlp,
                        Some(s.clone()),
                        &me,
                        shared_at_ns,
                        true,
                    ));
                    outgoing.push(Outgoing {
                        object: p.sanitized.clone(),
                        tlp: p.tlp,
                        sector: s.clone(),
                        shared_at_ns,
                    });
                }
            }
        }
        let mut db = self.db();
        let outcomes = db.insert_objects(&rows)?;
        self.announce(&rows, Some(&outcomes), false);
        let mut shared_n = 0usize;
        let mut queued_n = 0usize;
        for (i, p) in &plans {
            let (id, version, disposition) = &mut results[*i];
            if !p.reasons.is_empty() {
                let review = db.enqueue_review(&NewReview {
                    object_id: id.clone(),
                    version: version.clone(),
                    stix_type: p.obj.stix_type.clone(),
                    tlp: p.tlp,
                    sectors: p.sectors.clone(),
                    submitted_by: actor.clone(),
                    original_json: p.obj.to_json_string(),
                    sanitized_json: p.sanitized.to_json_string(),
                    changes_json: serde_json::to_string(&p.changes).unwrap_or_else(|_| "[]".into()),
                    reasons: p.reasons.clone(),
                })?;
                queued_n += 1;
                *disposition = Disposition::Queued {
                    review,
                    reasons: p.reasons.clone(),
                };
            } else if !p.sectors.is_empty() {
                shared_n += 1;
                *disposition = Disposition::Shared {
                    sectors: p.sectors.clone(),
                };
            }
            if !p.changes.is_empty() && p.reasons.is_empty() {
                db.audit(&AuditEntry {
                    actor: actor.clone(),
                    action: "sanitise".into(),
                    object_id: Some(id.clone()),
                    detail: serde_json::json!({ "changes": p.changes }).to_string(),
                })?;
            }
        }
        let duplicates = results
            .iter()
            .filter(|r| r.2 == Disposition::Duplicate)
            .count();
        db.audit(&AuditEntry {
            actor: actor.clone(),
            action: "ingest".into(),
            object_id: None,
            detail: serde_json::json!({
                "objects": results.len(), "new": plans.len(), "shared": shared_n,
                "queued": queued_n, "duplicates": duplicates,
            })
            .to_string(),
        })?;
        let rows = if outgoing.len() <= INLINE_SHARE_MAX {
            Self::rows_of(&db, &outgoing)?
        } else {
            Vec::new()
        };
        drop(db);
        self.counters
            .ingested
            .fetch_add(plans.len() as u64, Ordering::Relaxed);
        self.counters
            .duplicates
            .fetch_add(duplicates as u64, Ordering::Relaxed);
        self.counters
            .queued
            .fetch_add(queued_n as u64, Ordering::Relaxed);
        self.share_now(&outgoing, &rows);
        Ok(IngestReport { results })
    }

    /// Writes a small batch to DDS at once, from the request's thread (the latency path); the
    /// rows become candidates for confirmation. A larger batch, or a failed write, is left to
    /// the outbox ([`Node::pump_outbox`]), which the server runs on a thread of its own so that
    /// a request never waits for the community's flow control.
    fn share_now(&self, out: &[Outgoing], rows: &[i64]) {
        if out.is_empty() {
            return;
        }
        if out.len() > INLINE_SHARE_MAX {
            self.wake_outbox();
            return;
        }
        let mut ob = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        match self.sharer.share(out) {
            Ok(()) => {
                self.counters
                    .shared
                    .fetch_add(out.len() as u64, Ordering::Relaxed);
                ob.sent.extend(rows.iter().copied());
            }
            Err(e) => {
                // The outbox takes them again from the first of them.
                if let Some(first) = rows.iter().min() {
                    ob.cursor = ob.cursor.min(first - 1);
                }
                drop(ob);
                eprintln!("halyard-cti: sharing failed, will retry: {e}");
                self.wake_outbox();
            }
        }
    }

    /// The rows of what `out` wrote (the versions stored in their sectors).
    fn rows_of(db: &Db, out: &[Outgoing]) -> Result<Vec<i64>, NodeError> {
        let mut rows = Vec::with_capacity(out.len());
        for o in out {
            if let Some(r) = db.row_of(&o.object.id, o.object.version(), Some(&o.sector))? {
                rows.push(r);
            }
        }
        Ok(rows)
    }

    fn wake_outbox(&self) {
        let mut ob = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        ob.woken = true;
        self.outbox_wake.notify_all();
    }

    /// Waits up to `timeout` for work for the outbox (a batch left to it).
    pub fn wait_for_outbox(&self, timeout: std::time::Duration) {
        let ob = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        let (mut ob, _) = self
            .outbox_wake
            .wait_timeout_while(ob, timeout, |o| !o.woken)
            .unwrap_or_else(|p| p.into_inner());
        ob.woken = false;
    }

    /// Writes up to `max` pending versions not written yet (oldest first) and returns how
    /// many it wrote: what a large ingest or a review decision left to it, what a failed write
    /// left, and at start what the node had not seen acknowledged before it stopped.
    pub fn pump_outbox(&self, max: usize) -> Result<usize, NodeError> {
        let mut ob = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        let rows = self.db().pending_shares_after(ob.cursor, max)?;
        let Some(last) = rows.last().map(|r| r.row) else {
            return Ok(0);
        };
        let restart = ob.cursor;
        let mut out = Vec::with_capacity(rows.len());
        let mut ids = Vec::with_capacity(rows.len());
        let mut local = Vec::new();
        for r in rows {
            if ob.sent.contains(&r.row) {
                continue;
            }
            let Some(sector) = r.sector.clone() else {
                local.push(r.row); // a local copy is never shared
                continue;
            };
            let parsed = serde_json::from_str::<serde_json::Value>(&r.json)
                .ok()
                .and_then(|v| halyard_stix::validate::object(&v).ok());
            match parsed {
                Some(object) => {
                    out.push(Outgoing {
                        object,
                        tlp: r.tlp,
                        sector,
                        shared_at_ns: r.shared_at_ns,
                    });
                    ids.push(r.row);
                }
                None => {
                    eprintln!(
                        "halyard-cti: stored object {} is no longer valid; not shared",
                        r.id
                    );
                    local.push(r.row);
                }
            }
        }
        if !local.is_empty() {
            self.db().mark_shared(&local)?;
        }
        if out.is_empty() {
            ob.cursor = last;
            return Ok(0);
        }
        match self.sharer.share(&out) {
            Ok(()) => {
                ob.cursor = last;
                ob.sent.extend(ids);
                self.counters
                    .shared
                    .fetch_add(out.len() as u64, Ordering::Relaxed);
                Ok(out.len())
            }
            Err(e) => {
                ob.cursor = restart;
                Err(NodeError::Dds(e))
            }
        }
    }

    /// Waits up to `timeout` for the community to acknowledge what was written, then clears
    /// `pending_share` on the rows written before the wait. Run periodically by the server.
    pub fn confirm_shares(&self, timeout: std::time::Duration) -> Result<(), NodeError> {
        let rows: Vec<i64> = {
            let ob = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
            ob.sent.iter().copied().collect()
        };
        if rows.is_empty() || !self.sharer.acknowledged(timeout) {
            return Ok(());
        }
        self.db().mark_shared(&rows)?;
        let mut ob = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        for r in &rows {
            ob.sent.remove(r);
        }
        Ok(())
    }

    /// Stores what the community sent, after validating each sample again; invalid samples
    /// are counted and dropped.
    pub fn receive(&self, batch: Vec<Incoming>) {
        let limits = self.cfg.limits.stix();
        let mut rows = Vec::with_capacity(batch.len());
        let mut instances = Vec::with_capacity(batch.len());
        for s in &batch {
            match self.check_incoming(s, &limits) {
                Ok(obj) => {
                    instances.push((s.instance, obj.id.clone()));
                    rows.push(new_object(
                        &obj,
                        s.tlp,
                        Some(s.sector.clone()),
                        &s.origin,
                        s.shared_at_ns,
                        false,
                    ));
                }
                Err(reason) => {
                    Counters::bump(&self.counters.refused_samples);
                    eprintln!(
                        "halyard-cti: dropped a sample from {} in {} (TLP:{}): {reason}",
                        s.origin,
                        s.sector,
                        s.tlp.as_str().to_uppercase()
                    );
                }
            }
        }
        if rows.is_empty() {
            return;
        }
        let outcome = self.db().insert_received(&rows, &instances);
        match outcome {
            Ok(outcomes) => {
                self.announce(&rows, Some(&outcomes), true);
                let stored = now_ns();
                let mut lat = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
                for (row, o) in rows.iter().zip(outcomes) {
                    if o == InsertOutcome::Duplicate {
                        Counters::bump(&self.counters.duplicates);
                        continue;
                    }
                    Counters::bump(&self.counters.received);
                    if row.shared_at_ns > 0 && row.shared_at_ns <= stored {
                        if lat.len() == LATENCY_WINDOW {
                            lat.pop_front();
                        }
                        lat.push_back(stored - row.shared_at_ns);
                    }
                }
            }
            Err(e) => eprintln!("halyard-cti: could not store received objects: {e}"),
        }
    }

    fn check_incoming(
        &self,
        s: &Incoming,
        limits: &halyard_stix::validate::Limits,
    ) -> Result<StixObject, String> {
        let objs =
            halyard_stix::bundle::parse(s.json.as_bytes(), limits).map_err(|e| e.to_string())?;
        let [obj] = <[StixObject; 1]>::try_from(objs)
            .map_err(|v| format!("{} objects in one sample", v.len()))?;
        if obj.id != s.key {
            return Err(format!(
                "key {} differs from the object's id {}",
                s.key, obj.id
            ));
        }
        if obj.stix_type != s.stix_type {
            return Err(format!(
                "type field {} differs from the object's {}",
                s.stix_type, obj.stix_type
            ));
        }
        if Tlp::parse(&s.tlp_field) != Some(s.tlp) {
            return Err(format!(
                "tlp field {:?} differs from the topic's",
                s.tlp_field
            ));
        }
        if let Some(marked) = obj.tlp {
            if marked > s.tlp {
                return Err(format!(
                    "marked TLP:{} but sent on the TLP:{} topic",
                    marked.as_str().to_uppercase(),
                    s.tlp.as_str().to_uppercase()
                ));
            }
        }
        if !self.cfg.sectors.contains(&s.sector) {
            return Err(format!("sector {} is not this node's", s.sector));
        }
        Ok(obj)
    }

    /// A disposal received over DDS, naming only the instance: applied to the object received
    /// as that instance ([`Node::receive_dispose`]). A disposal of an instance never received
    /// here (this node's own, or one whose data it refused) changes nothing.
    pub fn receive_dispose_instance(&self, instance: &[u8; 16], tlp: Tlp, sector: &str) {
        let id = self.db().id_of_instance(instance);
        match id {
            Ok(Some(id)) => self.receive_dispose(&id, tlp, sector),
            Ok(None) => {}
            Err(e) => eprintln!("halyard-cti: could not look up a disposed instance: {e}"),
        }
    }

    /// A disposal received. After a revoked version it is the revocation: the object stays
    /// served, revoked, so that consumers learn of it. Otherwise the object was deleted by its
    /// origin and is marked deleted in that sector.
    pub fn receive_dispose(&self, id: &str, tlp: Tlp, sector: &str) {
        let mut db = self.db();
        let here = [CollectionKey {
            sector: Some(sector.to_string()),
            tlp,
        }];
        let revoked = db
            .versions_of(id, &here)
            .map(|v| v.last().is_some_and(|last| last.revoked))
            .unwrap_or(false);
        if revoked {
            let _ = db.audit(&AuditEntry {
                actor: "dds".into(),
                action: "revoke".into(),
                object_id: Some(id.to_string()),
                detail: serde_json::json!({ "sector": sector, "tlp": tlp.as_str() }).to_string(),
            });
            return;
        }
        if let Err(e) = db.mark_deleted(id, &Some(sector.to_string())) {
            eprintln!("halyard-cti: could not record the deletion of {id}: {e}");
            return;
        }
        let _ = db.audit(&AuditEntry {
            actor: "dds".into(),
            action: "delete".into(),
            object_id: Some(id.to_string()),
            detail: serde_json::json!({ "sector": sector, "tlp": tlp.as_str() }).to_string(),
        });
    }

    /// Deletes an object this node shared: disposes of it in every sector it was shared with
    /// and marks it deleted here. Admins only.
    pub fn delete(&self, id: &str, by: &User) -> Result<usize, NodeError> {
        if by.role != Role::Admin {
            return Err(NodeError::Forbidden(format!(
                "{} may not delete objects (admin only)",
                by.name
            )));
        }
        let all: Vec<CollectionKey> = self.visible_collections(&User {
            max_tlp: Tlp::Red,
            sectors: None,
            ..by.clone()
        });
        let versions = self.db().versions_of(id, &all)?;
        if versions.is_empty() {
            return Err(NodeError::NotFound(format!("object {id}")));
        }
        let me = &self.cfg.node.organisation;
        let mut done = std::collections::BTreeSet::new();
        for v in versions.iter().filter(|v| &v.origin == me) {
            if let Some(s) = &v.sector {
                if done.insert((v.tlp, s.clone())) {
                    self.sharer.dispose(id, v.tlp, s).map_err(NodeError::Dds)?;
                }
            }
        }
        let mut db = self.db();
        let mut n = db.mark_deleted(id, &None)?;
        for (_, s) in &done {
            n += db.mark_deleted(id, &Some(s.clone()))?;
        }
        db.audit(&AuditEntry {
            actor: by.name.clone(),
            action: "delete".into(),
            object_id: Some(id.to_string()),
            detail:
                serde_json::json!({ "sectors": done.iter().map(|(_, s)| s).collect::<Vec<_>>() })
                    .to_string(),
        })?;
        Ok(n)
    }

    /// Decides a review item (four eyes: never by its submitter; reviewers and admins only).
    pub fn decide(
        &self,
        review: i64,
        decision: Decision,
        by: &User,
    ) -> Result<ReviewItem, NodeError> {
        if by.role > Role::Reviewer {
            Counters::bump(&self.counters.forbidden);
            return Err(NodeError::Forbidden(format!(
                "{} is {} and may not decide reviews (reviewer or admin only)",
                by.name,
                by.role.as_str()
            )));
        }
        let item = self
            .db()
            .review_item(review)?
            .ok_or_else(|| NodeError::NotFound(format!("review {review}")))?;
        if item.item.submitted_by == by.name {
            Counters::bump(&self.counters.forbidden);
            return Err(NodeError::Forbidden(format!(
                "four eyes: {} submitted review {review} and may not decide it",
                by.name
            )));
        }
        let me = self.cfg.node.organisation.clone();
        let shared_at_ns = now_ns();
        let (state, final_obj, note, action) = match decision {
            Decision::Reject { note } => (ReviewState::Rejected, None, note, "reject"),
            Decision::Approve { edited, note } => {
                let (obj, action) = match edited {
                    Some(map) => {
                        let obj = halyard_stix::validate::object(&serde_json::Value::Object(map))
                            .map_err(|e| {
                            NodeError::Refused(format!("the edited object: {e}"))
                        })?;
                        if obj.id != item.item.object_id {
                            return Err(NodeError::Refused(format!(
                                "the edited object's id {} differs from {}",
                                obj.id, item.item.object_id
                            )));
                        }
                        (obj, "edit")
                    }
                    None => {
                        let v: serde_json::Value = serde_json::from_str(&item.item.sanitized_json)
                            .map_err(|e| NodeError::Refused(format!("stored object: {e}")))?;
                        let obj = halyard_stix::validate::object(&v)
                            .map_err(|e| NodeError::Refused(format!("stored object: {e}")))?;
                        (obj, "approve")
                    }
                };
                (ReviewState::Approved, Some(obj), note, action)
            }
        };
        let tlp = item.item.tlp;
        let mut rows = Vec::new();
        let mut outgoing = Vec::new();
        if let Some(obj) = &final_obj {
            if let Some(m) = obj.tlp {
                if m > tlp {
                    return Err(NodeError::Refused(format!(
                        "the edited object is marked TLP:{}, above the TLP:{} it was submitted under",
                        m.as_str().to_uppercase(),
                        tlp.as_str().to_uppercase()
                    )));
                }
            }
            for s in &item.item.sectors {
                rows.push(new_object(
                    obj,
                    tlp,
                    Some(s.clone()),
                    &me,
                    shared_at_ns,
                    true,
                ));
                outgoing.push(Outgoing {
                    object: obj.clone(),
                    tlp,
                    sector: s.clone(),
                    shared_at_ns,
                });
            }
        }
        let final_json = final_obj.as_ref().map(StixObject::to_json_string);
        let mut db = self.db();
        let decided = db.decide_review(
            review,
            state,
            &by.name,
            final_json.as_deref(),
            note.as_deref(),
            &rows,
        )?;
        self.announce(&rows, None, false);
        db.audit(&AuditEntry {
            actor: by.name.clone(),
            action: action.into(),
            object_id: Some(item.item.object_id.clone()),
            detail:
                serde_json::json!({ "review": review, "note": note, "sectors": item.item.sectors })
                    .to_string(),
        })?;
        let rows = Self::rows_of(&db, &outgoing)?;
        drop(db);
        self.share_now(&outgoing, &rows);
        Ok(decided)
    }
}

fn new_object(
    obj: &StixObject,
    tlp: Tlp,
    sector: Option<String>,
    origin: &str,
    shared_at_ns: i64,
    pending_share: bool,
) -> NewObject {
    NewObject {
        id: obj.id.clone(),
        stix_type: obj.stix_type.clone(),
        spec_version: obj.spec_version.clone(),
        version: obj.version().to_string(),
        tlp,
        sector,
        origin: origin.to_string(),
        shared_at_ns,
        json: obj.to_json_string(),
        revoked: obj.revoked,
        pending_share,
    }
}
