//! The node's database (SQLite, one file): every object version it received or produced, with
//! a full-text index; the review queue; the audit log; local accounts and API tokens; TAXII
//! status resources; the bookmarks of polled TAXII collections.
//!
//! # Design
//!
//! One connection to one file, in WAL mode. When a writing method returns, its transaction
//! survives kill -9 (the write is in the operating system's hands); with [`Sync::Full`] it
//! also survives a power loss (each commit waits for the disk). With [`Sync::Normal`] a power
//! loss may lose the latest commits but never damages the file. The file is recognised by its
//! `application_id` and versioned by `user_version`; [`Db::open`] runs the migrations in order,
//! each in its own transaction, refuses a file written by a newer program, and refuses a file
//! that is not SQLite or belongs to another program before anything is written to it.
//!
//! **Objects.** One row per (id, version, sector), the local copy being the NULL sector; a
//! unique index on those three makes a repeated insert a no-op that is reported as
//! [`InsertOutcome::Duplicate`]. Rows are never removed (deletion is a flag), row ids are
//! never reused (`AUTOINCREMENT`), and `added_us` is assigned inside the write transaction as
//! `max(now, last + 1)`, so row order, `added_us` order and TAXII `date_added` order are one
//! order, even when the clock steps back or the node restarts. TAXII pages are therefore
//! resumed by row id. Versions (RFC 3339 timestamps of any precision) are compared through a
//! `version_key` column that pads the fractional seconds to nine digits.
//!
//! **Search.** A contentless FTS5 table indexes, under the object's row id, its id, type and
//! every string value of its JSON. Tokenizing costs about as much as storing the row, so
//! storing does not index: rows are indexed in row order, up to a watermark kept in the same
//! transactions, by [`Db::index_pending`] (for an idle moment) and, for what is left, at the
//! start of every text search, which therefore always sees every committed row. The user's
//! words are each quoted and matched as prefixes; every query is fixed SQL text with `?`
//! placeholders, lists included, so no input is ever read as SQL or as FTS5 syntax.
//! Visibility (sector, marking) is applied in the same query.
//!
//! **Audit.** Append-only (triggers refuse updates and deletes) and chained: each line stores
//! the SHA-256 of the previous line's hash and its own fields, so [`Db::verify_audit`] finds
//! a line altered or removed behind the program's back (short of the whole tail being cut
//! and the sequence counter rewritten, which an outside copy of the last hash would reveal).
//!
//! **Reading.** Nothing read from the file is trusted: a value of the wrong type, an unknown
//! marking or role, or malformed JSON in a list column is a [`DbError::Schema`] naming the
//! table and the row.

use halyard_stix::marking::Tlp;
use std::fmt;
use std::path::Path;

mod accounts;
mod audit;
mod fts;
mod objects;
mod query;
mod review;
mod schema;
mod taxii;
#[cfg(test)]
mod testutil;

/// What a commit survives (SQLite's `synchronous` in WAL mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sync {
    /// A crash of the process (kill -9); a power loss may lose the latest commits, never
    /// damages the file. Commits do not wait for the disk.
    #[default]
    Normal,
    /// A power loss too: each commit waits until the disk has it.
    Full,
}

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
    /// Any of these (TAXII's comma-separated values are alternatives): the first, the last
    /// and the versions listed.
    AnyOf {
        /// The earliest version.
        first: bool,
        /// The latest version.
        last: bool,
        /// Versions as written in `modified`.
        versions: Vec<String>,
    },
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
    conn: rusqlite::Connection,
}

impl Db {
    /// Opens (creating if absent) the database at `path`, in WAL mode with full
    /// synchronisation (a commit survives kill -9 and power loss), migrating its schema.
    ///
    /// A file that is not SQLite, or is another program's database, is refused with
    /// [`DbError::Schema`] and left untouched; so is a database of a newer schema.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        Db::open_with(path, Sync::Full)
    }

    /// Bounds the memory every SQLite database of the process may use for its page caches
    /// (SQLite's process-wide soft heap limit): the node's and its durability service's stores
    /// recycle cache pages beyond it instead of growing. The operating system's file cache
    /// still holds the files.
    pub fn limit_process_heap(&self, bytes: u64) -> Result<(), DbError> {
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        let _: i64 =
            self.conn
                .query_row(&format!("PRAGMA soft_heap_limit = {bytes}"), [], |r| {
                    r.get(0)
                })?;
        Ok(())
    }

    /// [`Db::open`] with a choice of what a commit survives.
    pub fn open_with(path: &Path, sync: Sync) -> Result<Db, DbError> {
        let conn = schema::open(path, sync)?;
        Ok(Db { conn })
    }
}

/// Now, in microseconds since the Unix epoch (0 before it, saturating far after it).
fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A count or limit as an SQL integer (saturating: no table holds `i64::MAX` rows).
fn sql_int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Reads the columns of one row of `table`, turning any value that does not decode into a
/// [`DbError::Schema`] naming the table, the row (its first column) and the column.
struct Reader<'r, 's> {
    row: &'r rusqlite::Row<'s>,
    table: &'static str,
}

impl<'r, 's> Reader<'r, 's> {
    fn new(row: &'r rusqlite::Row<'s>, table: &'static str) -> Self {
        Reader { row, table }
    }

    /// Column `idx` (named `name` in messages) as a `T`.
    fn get<T: rusqlite::types::FromSql>(&self, idx: usize, name: &str) -> Result<T, DbError> {
        self.row
            .get::<_, T>(idx)
            .map_err(|e| self.corrupt(&format!("column {name}: {e}")))
    }

    /// A marking column.
    fn tlp(&self, idx: usize, name: &str) -> Result<Tlp, DbError> {
        let s: String = self.get(idx, name)?;
        Tlp::parse(&s).ok_or_else(|| self.corrupt(&format!("column {name}: unknown marking {s:?}")))
    }

    /// A JSON column decoded as a `T`.
    fn json<T: serde::de::DeserializeOwned>(&self, idx: usize, name: &str) -> Result<T, DbError> {
        let s: String = self.get(idx, name)?;
        serde_json::from_str(&s).map_err(|e| self.corrupt(&format!("column {name}: {e}")))
    }

    /// An optional JSON column.
    fn json_opt<T: serde::de::DeserializeOwned>(
        &self,
        idx: usize,
        name: &str,
    ) -> Result<Option<T>, DbError> {
        match self.get::<Option<String>>(idx, name)? {
            None => Ok(None),
            Some(s) => serde_json::from_str(&s)
                .map(Some)
                .map_err(|e| self.corrupt(&format!("column {name}: {e}"))),
        }
    }

    /// The error for this row: table, key and what is wrong.
    fn corrupt(&self, what: &str) -> DbError {
        use rusqlite::types::ValueRef;
        let key = match self.row.get_ref(0) {
            Ok(ValueRef::Integer(i)) => i.to_string(),
            Ok(ValueRef::Text(t)) => format!("{:?}", String::from_utf8_lossy(t)),
            _ => "?".to_string(),
        };
        DbError::Schema(format!("corrupt row {key} of table {}: {what}", self.table))
    }
}
