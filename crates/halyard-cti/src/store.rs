//! The node's database (SQLite, one file): every object version it received or produced, with
//! a full-text index; the review queue; the audit log; local accounts and API tokens; TAXII
//! status resources; the bookmarks of polled TAXII collections.
//!
//! (Types and signatures fixed; bodies being written.)

use halyard_stix::marking::Tlp;
use std::fmt;
use std::path::Path;

/// Why a database operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum DbError {
    /// SQLite said no (I/O error, full disk, locked, corrupt file ...).
    Sqlite(rusqlite::Error),
    /// The file is not this node's database, or of a newer schema.
    Schema(String),
    /// A review decision that does not apply (already decided, unknown item).
    Review(String),
    /// A user or token that already exists, or does not.
    Account(String),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "database: {e}"),
            DbError::Schema(s) => write!(f, "database: {s}"),
            DbError::Review(s) => write!(f, "review: {s}"),
            DbError::Account(s) => write!(f, "account: {s}"),
        }
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DbError::Sqlite(e) => Some(e),
            _ => None,
        }
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

/// Where an object version is visible: a sector (shared there, or received from there) or the
/// node alone (`None`: not shared, AMBER+STRICT, or a sector-less local copy).
pub type Sector = Option<String>;

/// A TAXII collection of this node: the objects of one sector (or the node's own local ones)
/// under one TLP level.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CollectionKey {
    /// The sector, or `None` for the node's local collection.
    pub sector: Sector,
    /// The marking.
    pub tlp: Tlp,
}

/// One version of an object as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredObject {
    /// Row id: unique, increasing with `added_us` (the order of `date_added`).
    pub row: i64,
    /// STIX id.
    pub id: String,
    /// STIX type.
    pub stix_type: String,
    /// `spec_version`.
    pub spec_version: String,
    /// The version (`modified`, else `created`, else `""`).
    pub version: String,
    /// Its marking.
    pub tlp: Tlp,
    /// Where it is visible.
    pub sector: Sector,
    /// The organisation that shared it (this node's own name for what it produced).
    pub origin: String,
    /// When this node stored it: microseconds since the Unix epoch, unique per node and
    /// increasing (TAXII `date_added`).
    pub added_us: i64,
    /// When the origin node shared it, nanoseconds since the Unix epoch (0 if unknown).
    pub shared_at_ns: i64,
    /// The object's JSON text.
    pub json: String,
    /// `revoked: true` in this version.
    pub revoked: bool,
    /// The object was deleted (a DDS dispose received, or deleted here): kept for the
    /// record, hidden from TAXII.
    pub deleted: bool,
}

/// A version to store.
#[derive(Clone, Debug, PartialEq)]
pub struct NewObject {
    /// STIX id.
    pub id: String,
    /// STIX type.
    pub stix_type: String,
    /// `spec_version`.
    pub spec_version: String,
    /// The version (see [`StoredObject::version`]).
    pub version: String,
    /// Its marking.
    pub tlp: Tlp,
    /// Where it is visible.
    pub sector: Sector,
    /// Who shared it.
    pub origin: String,
    /// When the origin shared it (ns since the epoch, 0 if unknown).
    pub shared_at_ns: i64,
    /// JSON text.
    pub json: String,
    /// `revoked: true`.
    pub revoked: bool,
    /// This node shares the version and has yet to see it acknowledged by the community's
    /// readers and durability services: it is written again to DDS after a restart until
    /// [`Db::mark_shared`] clears the flag.
    pub pending_share: bool,
}

/// What storing one version did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOutcome {
    /// A version this node had nowhere: stored.
    New,
    /// The version was known in another sector (or locally): stored in this one too.
    NewInSector,
    /// Already stored in this sector: nothing changed.
    Duplicate,
}

/// Which versions of each object a query returns (TAXII `match[version]`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum VersionMatch {
    /// The latest version (TAXII's default).
    #[default]
    Last,
    /// The earliest.
    First,
    /// Every version.
    All,
    /// These versions (timestamps as written in `modified`).
    Specific(Vec<String>),
}

/// A TAXII objects/manifest query on one collection.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ObjectQuery {
    /// The collection (required).
    pub collection: Option<CollectionKey>,
    /// Only versions added strictly after this time (µs since the epoch).
    pub added_after_us: Option<i64>,
    /// `match[id]`: any of these ids (empty: any).
    pub ids: Vec<String>,
    /// `match[type]`: any of these types (empty: any).
    pub types: Vec<String>,
    /// `match[version]`.
    pub versions: VersionMatch,
    /// `match[spec_version]`: any of these (empty: any).
    pub spec_versions: Vec<String>,
    /// Most rows returned (≥ 1; the caller caps it).
    pub limit: usize,
    /// Resume after this row (the `next` of a previous page).
    pub after_row: Option<i64>,
}

/// One page of a query, in `added_us` order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ObjectPage {
    /// The versions.
    pub objects: Vec<StoredObject>,
    /// More rows match: resume after the last row of this page.
    pub more: bool,
}

/// A dashboard/REST search.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SearchQuery {
    /// Full-text terms (words, matched as prefixes; FTS5 syntax is not interpreted: every
    /// term is quoted), or empty for any.
    pub text: String,
    /// Types (empty: any).
    pub types: Vec<String>,
    /// Markings (empty: any).
    pub tlps: Vec<Tlp>,
    /// Sectors (`None` inside: the local collection; empty: any).
    pub sectors: Vec<Sector>,
    /// Origin organisations (empty: any).
    pub origins: Vec<String>,
    /// Added at or after (µs).
    pub since_us: Option<i64>,
    /// Added before (µs).
    pub until_us: Option<i64>,
    /// What the caller may see: only these collections (always applied).
    pub visible: Vec<CollectionKey>,
    /// Most results.
    pub limit: usize,
    /// Results to skip.
    pub offset: usize,
}

/// Roles of local accounts, from most to least powerful.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Everything, including accounts.
    Admin,
    /// Approves, edits and rejects queued objects (never their own submissions).
    Reviewer,
    /// Reads, searches and submits intelligence.
    Analyst,
    /// Reads and searches.
    ReadOnly,
}

impl Role {
    /// `admin`, `reviewer`, `analyst`, `read-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Reviewer => "reviewer",
            Role::Analyst => "analyst",
            Role::ReadOnly => "read-only",
        }
    }

    /// The inverse of [`Role::as_str`].
    pub fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "admin" => Role::Admin,
            "reviewer" => Role::Reviewer,
            "analyst" => Role::Analyst,
            "read-only" | "readonly" => Role::ReadOnly,
            _ => return None,
        })
    }
}

/// A local account.
#[derive(Clone, Debug, PartialEq)]
pub struct User {
    /// Login name.
    pub name: String,
    /// Role.
    pub role: Role,
    /// PHC string of the password hash (argon2id).
    pub password_hash: String,
    /// Sectors the user may see and publish to (`None`: all of the node's).
    pub sectors: Option<Vec<String>>,
    /// The most restrictive marking the user may see.
    pub max_tlp: Tlp,
    /// A disabled account cannot log in or use its tokens.
    pub disabled: bool,
}

/// States of a review item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewState {
    /// Waiting for a second person.
    Pending,
    /// Approved (possibly edited) and shared.
    Approved,
    /// Rejected: never shared.
    Rejected,
}

impl ReviewState {
    /// `pending`, `approved`, `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Pending => "pending",
            ReviewState::Approved => "approved",
            ReviewState::Rejected => "rejected",
        }
    }
}

/// An object submitted for review.
#[derive(Clone, Debug, PartialEq)]
pub struct NewReview {
    /// STIX id of the object.
    pub object_id: String,
    /// Its version.
    pub version: String,
    /// STIX type.
    pub stix_type: String,
    /// Its marking.
    pub tlp: Tlp,
    /// The sectors it is to be shared with once approved.
    pub sectors: Vec<String>,
    /// Who submitted it (a user name, or `file:…`, `watch`, `poll:<name>`, `misp`).
    pub submitted_by: String,
    /// The object as submitted (JSON).
    pub original_json: String,
    /// The object after sanitisation (JSON): what will be shared if approved unedited.
    pub sanitized_json: String,
    /// The sanitiser's changes (JSON array of `halyard_stix::sanitize::Change`).
    pub changes_json: String,
    /// Why it needs review (`"marking amber"`, `"type sighting"`, `"sanitised"` ...).
    pub reasons: Vec<String>,
}

/// A review item as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewItem {
    /// Its number.
    pub id: i64,
    /// When submitted (µs since the epoch).
    pub submitted_us: i64,
    /// State.
    pub state: ReviewState,
    /// What was submitted.
    pub item: NewReview,
    /// Who decided, when (µs), the final JSON shared (approved: the sanitised or edited
    /// object), and the reviewer's note.
    pub decided_by: Option<String>,
    /// When decided.
    pub decided_us: Option<i64>,
    /// The object as shared, when approved.
    pub final_json: Option<String>,
    /// The reviewer's note.
    pub note: Option<String>,
}

/// One line of the audit log.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    /// Who acted (a user name, `dds:<origin>`, `watch`, `poll:<name>`, `node`).
    pub actor: String,
    /// What happened (`ingest`, `share`, `receive`, `queue`, `approve`, `edit`, `reject`,
    /// `refuse`, `login-failed`, `delete`, `user-add` ...).
    pub action: String,
    /// The object concerned, if any.
    pub object_id: Option<String>,
    /// Details (JSON object text).
    pub detail: String,
}

/// An audit line as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditRecord {
    /// Its number (increasing).
    pub seq: i64,
    /// When (µs since the epoch).
    pub at_us: i64,
    /// The entry.
    pub entry: AuditEntry,
}

/// A TAXII 2.1 status resource (the result of a POST of objects).
#[derive(Clone, Debug, PartialEq)]
pub struct TaxiiStatus {
    /// Its UUID.
    pub id: String,
    /// `complete` (the node decides synchronously).
    pub status: String,
    /// When the request was received (µs).
    pub request_us: i64,
    /// Objects accepted: (id, version, message).
    pub successes: Vec<(String, String, Option<String>)>,
    /// Objects refused: (id, version, message).
    pub failures: Vec<(String, String, Option<String>)>,
    /// Objects waiting (in review): (id, version, message).
    pub pendings: Vec<(String, String, Option<String>)>,
    /// Who posted it (only they, and admins, may read it).
    pub owner: String,
}

/// The node's database.
pub struct Db {
    #[allow(dead_code)]
    conn: rusqlite::Connection,
}

#[allow(unused_variables)]
impl Db {
    /// Opens (creating if absent) the database at `path`, in WAL mode with full
    /// synchronisation (a commit survives kill -9 and power loss), migrating its schema.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        todo!()
    }

    /// Stores versions in one transaction: all are stored or, on error, none.
    pub fn insert_objects(&mut self, items: &[NewObject]) -> Result<Vec<InsertOutcome>, DbError> {
        todo!()
    }

    /// This version of this object is stored (in any sector, or locally).
    pub fn has_version(&self, id: &str, version: &str) -> Result<bool, DbError> {
        todo!()
    }

    /// Every stored version of `id` visible in `visible`, oldest first (deleted included,
    /// flagged).
    pub fn versions_of(
        &self,
        id: &str,
        visible: &[CollectionKey],
    ) -> Result<Vec<StoredObject>, DbError> {
        todo!()
    }

    /// A TAXII page.
    pub fn query_objects(&self, q: &ObjectQuery) -> Result<ObjectPage, DbError> {
        todo!()
    }

    /// Full-text search with filters, newest first.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<StoredObject>, DbError> {
        todo!()
    }

    /// Marks every version of `id` in `sector` deleted; returns how many rows changed.
    pub fn mark_deleted(&mut self, id: &str, sector: &Sector) -> Result<usize, DbError> {
        todo!()
    }

    /// Versions with `pending_share` set, oldest first, at most `limit`.
    pub fn pending_shares(&self, limit: usize) -> Result<Vec<StoredObject>, DbError> {
        todo!()
    }

    /// Clears `pending_share` on these rows.
    pub fn mark_shared(&mut self, rows: &[i64]) -> Result<(), DbError> {
        todo!()
    }

    /// Number of stored versions (all sectors).
    pub fn object_count(&self) -> Result<u64, DbError> {
        todo!()
    }

    /// Queues an object for review; returns its number.
    pub fn enqueue_review(&mut self, item: &NewReview) -> Result<i64, DbError> {
        todo!()
    }

    /// Review items, newest first, in `state` (or all), at most `limit`.
    pub fn review_items(
        &self,
        state: Option<ReviewState>,
        limit: usize,
    ) -> Result<Vec<ReviewItem>, DbError> {
        todo!()
    }

    /// One review item.
    pub fn review_item(&self, id: i64) -> Result<Option<ReviewItem>, DbError> {
        todo!()
    }

    /// Items pending.
    pub fn pending_reviews(&self) -> Result<usize, DbError> {
        todo!()
    }

    /// Decides a pending item (Approved with the final JSON, or Rejected): refused with
    /// [`DbError::Review`] when it is not pending or does not exist. The item's decision and
    /// the object versions to store (`store`, the approved object in each of its sectors) are
    /// written in one transaction.
    pub fn decide_review(
        &mut self,
        id: i64,
        state: ReviewState,
        by: &str,
        final_json: Option<&str>,
        note: Option<&str>,
        store: &[NewObject],
    ) -> Result<ReviewItem, DbError> {
        todo!()
    }

    /// Appends to the audit log.
    pub fn audit(&mut self, entry: &AuditEntry) -> Result<i64, DbError> {
        todo!()
    }

    /// Audit lines after `after_seq` (or from the start), oldest first, at most `limit`.
    pub fn audit_log(
        &self,
        after_seq: Option<i64>,
        limit: usize,
    ) -> Result<Vec<AuditRecord>, DbError> {
        todo!()
    }

    /// Creates an account ([`DbError::Account`] if the name is taken).
    pub fn create_user(&mut self, user: &User) -> Result<(), DbError> {
        todo!()
    }

    /// Replaces an account's role, hash, sectors, max_tlp and disabled flag.
    pub fn update_user(&mut self, user: &User) -> Result<(), DbError> {
        todo!()
    }

    /// An account.
    pub fn user(&self, name: &str) -> Result<Option<User>, DbError> {
        todo!()
    }

    /// Every account, by name.
    pub fn users(&self) -> Result<Vec<User>, DbError> {
        todo!()
    }

    /// Stores an API token of `user` by its hash (SHA-256 hex of the token; the token itself
    /// is never stored), with a label and an optional expiry (µs).
    pub fn create_token(
        &mut self,
        user: &str,
        token_sha256_hex: &str,
        label: &str,
        expires_us: Option<i64>,
    ) -> Result<(), DbError> {
        todo!()
    }

    /// The account a token belongs to, if the token exists and has not expired at `now_us`.
    pub fn user_by_token(
        &self,
        token_sha256_hex: &str,
        now_us: i64,
    ) -> Result<Option<User>, DbError> {
        todo!()
    }

    /// Stores a TAXII status resource.
    pub fn put_status(&mut self, s: &TaxiiStatus) -> Result<(), DbError> {
        todo!()
    }

    /// A TAXII status resource.
    pub fn status(&self, id: &str) -> Result<Option<TaxiiStatus>, DbError> {
        todo!()
    }

    /// The bookmark of a polled collection (the last `X-TAXII-Date-Added-Last` seen).
    pub fn bookmark(&self, name: &str) -> Result<Option<String>, DbError> {
        todo!()
    }

    /// Sets a bookmark.
    pub fn set_bookmark(&mut self, name: &str, value: &str) -> Result<(), DbError> {
        todo!()
    }
}
