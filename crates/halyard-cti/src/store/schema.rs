//! Opening the file: recognising it as this node's database, the connection's settings, and
//! the schema migrations.
//!
//! A file is ours when its `application_id` is [`APPLICATION_ID`]; a brand-new (empty)
//! database has no tables and an `application_id` of zero. Anything else is refused before
//! any statement that writes, so a file opened by mistake is left as it was. Migration `i`
//! takes the schema from version `i` to `i + 1`; each runs in an immediate transaction that
//! re-reads the version, so two processes opening a new file at once migrate it once.

use super::DbError;
use rusqlite::{Connection, TransactionBehavior};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// `PRAGMA application_id` of a halyard-cti database ("HCTI").
pub(super) const APPLICATION_ID: i32 = 0x4843_5449;

/// How long a statement waits for another connection's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Pages of cache, as SQLite's negative kibibyte count.
const CACHE_KIB: i64 = 8 * 1024;

/// The migrations, in order: entry `i` takes `user_version` from `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[V1, V2];

/// The version this program writes.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The first schema.
const V1: &str = r#"
CREATE TABLE objects (
    row INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL CHECK (id <> ''),
    stix_type TEXT NOT NULL CHECK (stix_type <> ''),
    spec_version TEXT NOT NULL,
    version TEXT NOT NULL,
    version_key TEXT NOT NULL,
    tlp TEXT NOT NULL,
    sector TEXT,
    origin TEXT NOT NULL,
    added_us INTEGER NOT NULL,
    shared_at_ns INTEGER NOT NULL,
    json TEXT NOT NULL,
    revoked INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    pending_share INTEGER NOT NULL
);
-- The local copy (NULL sector) must be unique too: a blob never equals a sector's text.
CREATE UNIQUE INDEX objects_version ON objects (id, version, coalesce(sector, X''));
CREATE INDEX objects_collection ON objects (sector, tlp, added_us);
CREATE INDEX objects_added ON objects (added_us);
CREATE INDEX objects_pending ON objects (row) WHERE pending_share <> 0;
CREATE VIRTUAL TABLE objects_fts USING fts5 (
    body, content = '', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2'
);
-- Rows up to `indexed_row` are in objects_fts; later ones are indexed before a search.
CREATE TABLE fts_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_row INTEGER NOT NULL
);
INSERT INTO fts_state (id, indexed_row) VALUES (1, 0);

CREATE TABLE reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    submitted_us INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
    object_id TEXT NOT NULL,
    version TEXT NOT NULL,
    stix_type TEXT NOT NULL,
    tlp TEXT NOT NULL,
    sectors TEXT NOT NULL,
    submitted_by TEXT NOT NULL,
    original_json TEXT NOT NULL,
    sanitized_json TEXT NOT NULL,
    changes_json TEXT NOT NULL,
    reasons TEXT NOT NULL,
    decided_by TEXT,
    decided_us INTEGER,
    final_json TEXT,
    note TEXT
);
CREATE INDEX reviews_state ON reviews (state, id);

CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at_us INTEGER NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    object_id TEXT,
    detail TEXT NOT NULL,
    hash BLOB NOT NULL
);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

CREATE TABLE users (
    name TEXT PRIMARY KEY NOT NULL,
    role TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    sectors TEXT,
    max_tlp TEXT NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE tokens (
    sha256 TEXT PRIMARY KEY NOT NULL,
    user TEXT NOT NULL REFERENCES users (name) ON UPDATE CASCADE ON DELETE CASCADE,
    label TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    expires_us INTEGER
);
CREATE INDEX tokens_user ON tokens (user);

CREATE TABLE taxii_status (
    id TEXT PRIMARY KEY NOT NULL,
    status TEXT NOT NULL,
    request_us INTEGER NOT NULL,
    successes TEXT NOT NULL,
    failures TEXT NOT NULL,
    pendings TEXT NOT NULL,
    owner TEXT NOT NULL
);

CREATE TABLE bookmarks (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
"#;

/// The DDS instance of each object received: a disposal names only its instance (the key's
/// hash), and this finds the object it disposes of, across restarts.
const V2: &str = r#"
CREATE TABLE instance_ids (
    handle BLOB PRIMARY KEY NOT NULL CHECK (length(handle) = 16),
    id TEXT NOT NULL
) WITHOUT ROWID;
"#;

/// Opens, checks, configures and migrates the database at `path`.
pub(super) fn open(path: &Path, sync: super::Sync) -> Result<Connection, DbError> {
    check_header(path)?;
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    identify(&conn, path)?;
    // Only now does anything write to the file.
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(DbError::Schema(format!(
            "{}: cannot use WAL mode (journal mode stays {mode})",
            path.display()
        )));
    }
    let level = match sync {
        super::Sync::Full => "FULL",
        super::Sync::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", level)?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Refuses an existing, non-empty file that does not start with SQLite's magic string,
/// without letting SQLite near it.
fn check_header(path: &Path) -> Result<(), DbError> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Ok(()); // Absent (created below) or unreadable (SQLite will say why).
    };
    let mut header = [0u8; 16];
    let mut got = 0;
    while got < header.len() {
        match file.read(&mut header[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Ok(()),
        }
    }
    if got == 0 || &header[..got] == b"SQLite format 3\0" {
        Ok(())
    } else {
        Err(DbError::Schema(format!(
            "{} is not a SQLite database: refusing to touch it",
            path.display()
        )))
    }
}

/// The schema version of an open file: 0 for a new one, refused unless it is ours and not
/// newer than this program.
fn identify(conn: &Connection, path: &Path) -> Result<i64, DbError> {
    let not_ours = |what: String| DbError::Schema(format!("{}: {what}", path.display()));
    let read = |sql: &str| {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::NotADatabase =>
                {
                    not_ours("not a SQLite database: refusing to touch it".into())
                }
                e => DbError::Sqlite(e),
            })
    };
    let app = read("PRAGMA application_id")?;
    let version = read("PRAGMA user_version")?;
    let tables = read("SELECT count(*) FROM sqlite_master")?;
    if app == 0 && version == 0 && tables == 0 {
        return Ok(0);
    }
    if app != i64::from(APPLICATION_ID) {
        return Err(not_ours(format!(
            "not a halyard-cti database (application id {app:#x}, {tables} schema objects): \
             refusing to touch it"
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(not_ours(format!(
            "database schema version {version} is newer than this program's \
             ({SCHEMA_VERSION}): use a newer halyard-cti"
        )));
    }
    Ok(version)
}

/// Runs the migrations the file lacks, each in its own transaction.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), DbError> {
    for (from, sql) in MIGRATIONS.iter().enumerate() {
        let from = from as i64;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if current > from {
            continue; // Dropping `tx` ends the empty transaction.
        }
        if current < from {
            return Err(DbError::Schema(format!(
                "{}: schema version {current} where {from} was expected",
                path.display()
            )));
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", from + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Opening refuses what is not ours or too new, leaves such files untouched, and sets the
    //! promised connection modes.
    use super::*;
    use crate::store::testutil::TempDir;
    use crate::store::Db;

    #[test]
    fn store_open_new_sets_wal_full_fk_and_version() {
        let dir = TempDir::new("open-new");
        let db = Db::open(&dir.file("n.db")).unwrap();
        let get = |p: &str| -> String {
            db.conn
                .query_row(&format!("PRAGMA {p}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0)
                })
                .map(|v| format!("{v:?}"))
                .unwrap()
        };
        assert_eq!(get("journal_mode"), "Text(\"wal\")");
        assert_eq!(get("synchronous"), "Integer(2)");
        assert_eq!(get("foreign_keys"), "Integer(1)");
        assert_eq!(get("user_version"), format!("Integer({SCHEMA_VERSION})"));
        assert_eq!(get("application_id"), format!("Integer({APPLICATION_ID})"));
        drop(db);
        // Reopening an up-to-date file migrates nothing and works.
        Db::open(&dir.file("n.db")).unwrap();
    }

    #[test]
    fn store_bundled_sqlite_has_fts5() {
        let dir = TempDir::new("fts5");
        let db = Db::open(&dir.file("f.db")).unwrap();
        let on: i64 = db
            .conn
            .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(on, 1);
    }

    #[test]
    fn store_open_refuses_non_sqlite_file_untouched() {
        let dir = TempDir::new("open-junk");
        let path = dir.file("junk.db");
        let junk = b"this is a text file, not a database\n".repeat(200);
        std::fs::write(&path, &junk).unwrap();
        let err = Db::open(&path).err().unwrap();
        assert!(matches!(&err, DbError::Schema(m) if m.contains("not a SQLite database")));
        assert_eq!(std::fs::read(&path).unwrap(), junk);
        assert!(!dir.file("junk.db-wal").exists());
    }

    #[test]
    fn store_open_refuses_other_programs_database_untouched() {
        let dir = TempDir::new("open-other");
        let path = dir.file("other.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
                .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let err = Db::open(&path).err().unwrap();
        assert!(
            matches!(&err, DbError::Schema(m) if m.contains("not a halyard-cti database")),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn store_open_refuses_newer_schema() {
        let dir = TempDir::new("open-newer");
        let path = dir.file("newer.db");
        drop(Db::open(&path).unwrap());
        {
            let c = Connection::open(&path).unwrap();
            c.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let err = Db::open(&path).err().unwrap();
        let DbError::Schema(m) = &err else {
            panic!("{err}")
        };
        assert!(m.contains("newer than this program"), "{m}");
    }

    #[test]
    fn store_open_accepts_empty_file() {
        let dir = TempDir::new("open-empty");
        let path = dir.file("empty.db");
        std::fs::write(&path, b"").unwrap();
        Db::open(&path).unwrap();
    }
}
