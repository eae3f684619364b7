//! Opening a store: refuse what is not ours without writing a byte, create what is new.
//!
//! An existing file is first inspected through a read-only connection (header bytes, then
//! application_id, user_version, the table list and `PRAGMA quick_check`); only a file that
//! passes is opened read-write. A read-only connection never checkpoints a write-ahead log
//! into the main file, so a refused file keeps its bytes. A read-only connection cannot roll
//! back a hot journal either (SQLITE_READONLY_ROLLBACK, left by a process killed within a
//! transaction): then the application_id in the file header (which no transaction changes)
//! decides; our store is opened read-write, which rolls the journal back, and inspected
//! through that connection; any other file is refused untouched.

use crate::error::StoreError;
// The table schema version 4 adds: the type of each channel.
use crate::store::channel_types::{CHANNEL_TYPES_SCHEMA, CHANNEL_TYPES_TABLE};
use crate::types::{StoreOptions, SyncLevel};
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::Path;

/// `PRAGMA application_id` of every Halyard store: "HYLD".
pub const APPLICATION_ID: i32 = 0x4859_4C44;
/// Schema version this crate writes and reads (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 4;

/// How long a statement waits for a lock another connection holds (another store on the
/// same file, or the checkpoint thread) before it fails with SQLITE_BUSY.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Length a rollback journal is truncated to after a commit.
const ROLLBACK_JOURNAL_LIMIT: u64 = 64 << 20;

/// Page size of new stores: a page holds whole rows, and 1 KB samples leave less of a 16 KB
/// page unused than of a 4 KB one.
const PAGE_SIZE: i64 = 16 * 1024;

/// Tables of schema versions 1 and 2, as they appear in `sqlite_master`.
const KNOWN_OBJECTS: [&str; 3] = ["channels", "instances", "samples"];

/// The table schema version 3 adds (payload segments, the `segments` module).
const SEGMENTS_TABLE: &str = "segments";

/// Indexes of schema version 1 on top of those tables, which version 2 drops (the store
/// keeps that index in memory: the crate's "Indexes").
const VERSION_1_INDEXES: [&str; 2] = ["samples_writer_sn", "samples_instance"];

const SCHEMA: &str = "
CREATE TABLE channels (
    id INTEGER PRIMARY KEY,
    topic TEXT NOT NULL,
    type_name TEXT NOT NULL,
    partition_key TEXT NOT NULL,
    partitions TEXT NOT NULL,
    type_identity BLOB NOT NULL,
    persistent INTEGER NOT NULL,
    history_depth INTEGER,
    max_samples INTEGER,
    max_instances INTEGER,
    max_samples_per_instance INTEGER,
    writer_qos BLOB NOT NULL,
    UNIQUE (topic, type_name, partition_key)
);
CREATE TABLE instances (
    channel INTEGER NOT NULL,
    key_hash BLOB NOT NULL,
    kind INTEGER NOT NULL,
    source_time INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    PRIMARY KEY (channel, key_hash)
) WITHOUT ROWID;
CREATE TABLE samples (
    id INTEGER PRIMARY KEY,
    channel INTEGER NOT NULL,
    writer BLOB NOT NULL,
    sn INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    key_hash BLOB NOT NULL,
    source_time INTEGER NOT NULL,
    payload BLOB NOT NULL,
    seg INTEGER,
    seg_off INTEGER,
    seg_len INTEGER
);
CREATE TABLE segments (
    seg INTEGER PRIMARY KEY,
    end_offset INTEGER NOT NULL,
    live INTEGER NOT NULL
);
";

/// What schema version 3 adds to a store of version 2: where a payload kept in a segment is
/// (`payload` is then empty), and the segments.
const VERSION_3_ADDITIONS: &str = "
ALTER TABLE samples ADD COLUMN seg INTEGER;
ALTER TABLE samples ADD COLUMN seg_off INTEGER;
ALTER TABLE samples ADD COLUMN seg_len INTEGER;
CREATE TABLE segments (
    seg INTEGER PRIMARY KEY,
    end_offset INTEGER NOT NULL,
    live INTEGER NOT NULL
);
";

/// Opens (or creates) the file at `path`, refusing anything that is not a sound Halyard store.
pub(crate) fn open_file(path: &Path, options: &StoreOptions) -> Result<Connection, StoreError> {
    let name = path.display().to_string();
    let exists = match std::fs::metadata(path) {
        // A store file is never empty once created (its first commit writes the schema): an
        // empty one lost its data (truncated), or is not ours. Never taken as a new store.
        Ok(meta) if meta.len() == 0 => return Err(StoreError::Empty { path: name }),
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(source) => return Err(StoreError::Io { path: name, source }),
    };
    if exists {
        let header = check_header(path, &name)?;
        let ro = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| classify(&name, "open read-only", e))?;
        let found = match inspect(&ro, &name) {
            Err(e) if hot_journal(&e) => {
                // A process died within a transaction: the rollback journal beside the file
                // holds the pages to put back, and only a read-write connection may. That is
                // SQLite's own recovery of our store, done only when the header (which no
                // transaction changes once the schema exists) says the file is ours.
                drop(ro);
                if header.application_id != APPLICATION_ID {
                    return Err(StoreError::Foreign {
                        path: name,
                        reason: format!(
                            "application_id is {:#x}, a Halyard store has {APPLICATION_ID:#x}",
                            header.application_id
                        ),
                    });
                }
                let conn = open_rw(path, &name)?;
                let found = inspect(&conn, &name)?;
                configure(&conn, &name, options, true)?;
                upgrade(&conn, &name, found)?;
                return Ok(conn);
            }
            other => other?,
        };
        drop(ro);
        let conn = open_rw(path, &name)?;
        configure(&conn, &name, options, true)?;
        upgrade(&conn, &name, found)?;
        Ok(conn)
    } else {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if parent.is_some_and(|p| !p.is_dir()) {
            return Err(StoreError::NoDirectory { path: name });
        }
        let conn = open_rw(path, &name)?;
        configure(&conn, &name, options, true)?;
        create_schema(&conn, &name)?;
        Ok(conn)
    }
}

/// Opens an in-memory store (TRANSIENT durability): the same schema and code path.
pub(crate) fn open_memory(options: &StoreOptions) -> Result<Connection, StoreError> {
    let name = ":memory:".to_string();
    let conn = Connection::open_in_memory().map_err(|e| sql(&name, "open in memory", e))?;
    configure(&conn, &name, options, false)?;
    create_schema(&conn, &name)?;
    Ok(conn)
}

fn open_rw(path: &Path, name: &str) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(path, flags).map_err(|e| classify(name, "open", e))
}

/// What the first 100 bytes of an SQLite file say (SQLite file format §1.3).
struct Header {
    /// `PRAGMA application_id`, big-endian at offset 68.
    application_id: i32,
}

/// Refuses a file whose first bytes are not SQLite's magic, before SQLite touches it.
fn check_header(path: &Path, name: &str) -> Result<Header, StoreError> {
    let io = |source| StoreError::Io {
        path: name.to_string(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut header = [0u8; 100];
    let mut got = 0;
    while got < header.len() {
        match file.read(&mut header[got..]).map_err(io)? {
            0 => break,
            n => got += n,
        }
    }
    if got < header.len() || !header.starts_with(b"SQLite format 3\0") {
        return Err(StoreError::NotADatabase {
            path: name.to_string(),
        });
    }
    let mut id = [0u8; 4];
    id.copy_from_slice(&header[68..72]);
    Ok(Header {
        application_id: i32::from_be_bytes(id),
    })
}

/// True for SQLITE_READONLY_ROLLBACK: a read-only connection met a hot rollback journal.
fn hot_journal(e: &StoreError) -> bool {
    match e {
        StoreError::Sqlite { source, .. } => source
            .sqlite_error()
            .is_some_and(|f| f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK),
        _ => false,
    }
}

/// What an existing database needs after [`inspect`] passed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Empty (no tables, no application id): the schema.
    Empty,
    /// A store of schema version 1: its indexes dropped, then as version 2.
    Version1,
    /// A store of schema version 2: the segment columns and table added.
    Version2,
    /// A store of schema version 3: the channel types table added.
    Version3,
    /// A store of this version: nothing.
    Current,
}

/// Checks an existing database read-only and says what it needs.
fn inspect(conn: &Connection, name: &str) -> Result<Found, StoreError> {
    let app: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(|e| classify(name, "read application_id", e))?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| classify(name, "read user_version", e))?;
    let objects = object_names(conn, name)?;
    let foreign = |reason: String| StoreError::Foreign {
        path: name.to_string(),
        reason,
    };
    if app != APPLICATION_ID {
        if app == 0 && version == 0 && objects.is_empty() {
            quick_check(conn, name)?;
            return Ok(Found::Empty);
        }
        return Err(foreign(format!(
            "application_id is {app:#x}, a Halyard store has {APPLICATION_ID:#x}"
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: name.to_string(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let known = |o: &String| {
        KNOWN_OBJECTS.contains(&o.as_str())
            || (version == 1 && VERSION_1_INDEXES.contains(&o.as_str()))
            || (version >= 3 && o == SEGMENTS_TABLE)
            || (version >= 4 && o == CHANNEL_TYPES_TABLE)
    };
    if let Some(unknown) = objects.iter().find(|o| !known(o)) {
        return Err(foreign(format!(
            "it holds an unknown table or index {unknown:?}"
        )));
    }
    let expected = match version {
        1 => KNOWN_OBJECTS.len() + VERSION_1_INDEXES.len(),
        2 => KNOWN_OBJECTS.len(),
        3 => KNOWN_OBJECTS.len() + 1,
        _ => KNOWN_OBJECTS.len() + 2,
    };
    if version < 1 || objects.len() != expected {
        return Err(foreign(format!(
            "schema version {version} with {} of the {expected} tables and indexes of \
             version {version}",
            objects.len(),
        )));
    }
    quick_check(conn, name)?;
    Ok(match version {
        1 => Found::Version1,
        2 => Found::Version2,
        3 => Found::Version3,
        _ => Found::Current,
    })
}

/// Brings a store inspected as `found` to this schema version (one transaction).
fn upgrade(conn: &Connection, name: &str, found: Found) -> Result<(), StoreError> {
    match found {
        Found::Current => Ok(()),
        Found::Empty => create_schema(conn, name),
        Found::Version1 | Found::Version2 | Found::Version3 => {
            let drops: String = match found {
                Found::Version1 => VERSION_1_INDEXES
                    .iter()
                    .map(|i| format!("DROP INDEX IF EXISTS {i};"))
                    .collect(),
                _ => String::new(),
            };
            let version_3 = match found {
                Found::Version3 => "",
                _ => VERSION_3_ADDITIONS,
            };
            // Adding nullable columns and a table rewrites no row: the conversion is quick at
            // any size.
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE;{drops}{version_3}{CHANNEL_TYPES_SCHEMA}\
                 PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
            ))
            .map_err(|e| {
                let _rollback_result = conn.execute_batch("ROLLBACK");
                classify(name, "convert the schema to version 4", e)
            })
        }
    }
}

fn object_names(conn: &Connection, name: &str) -> Result<Vec<String>, StoreError> {
    let op = "list tables";
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        .map_err(|e| classify(name, op, e))?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(|e| classify(name, op, e))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(|e| classify(name, op, e))
}

fn quick_check(conn: &Connection, name: &str) -> Result<(), StoreError> {
    let first: String = conn
        .pragma_query_value(None, "quick_check", |r| r.get(0))
        .map_err(|e| classify(name, "quick_check", e))?;
    if first != "ok" {
        return Err(StoreError::Corrupt {
            path: name.to_string(),
            detail: format!("quick_check: {first}"),
        });
    }
    Ok(())
}

/// Journal, sync level and size cap; these are per connection, set at every open.
fn configure(
    conn: &Connection,
    name: &str,
    options: &StoreOptions,
    file: bool,
) -> Result<(), StoreError> {
    let op = "configure";
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(name, op, e))?;
    // Takes effect only on a database without tables (a new store); ignored otherwise.
    conn.pragma_update(None, "page_size", PAGE_SIZE)
        .map_err(|e| classify(name, op, e))?;
    if file {
        // Process and Full: a rollback journal, kept between transactions (PERSIST): a
        // transaction writes the pages it appends once, into the file, and journals only the
        // few existing pages it changes (b-tree interior and last leaf pages). Normal: a
        // write-ahead log, which writes every page twice (log, then checkpoint) and checksums
        // it, more CPU per sample, but with `synchronous = NORMAL` a power
        // loss cannot damage the file (the crate documentation, "Journal"). SQLite converts a
        // store between the two when it is opened with another level.
        let want = match options.sync {
            SyncLevel::Normal => "wal",
            SyncLevel::Process | SyncLevel::Full => "persist",
        };
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", want, |r| r.get(0))
            .map_err(|e| classify(name, op, e))?;
        if !mode.eq_ignore_ascii_case(want) {
            return Err(StoreError::Foreign {
                path: name.to_string(),
                reason: format!("SQLite kept journal mode {mode} instead of {want}"),
            });
        }
        // The journal of the largest transaction (or the log between restarts) stays on
        // disk; beyond this it is truncated (the log's bound, see `checkpoint`).
        let limit = match options.sync {
            SyncLevel::Normal => crate::checkpoint::log_limit(options),
            SyncLevel::Process | SyncLevel::Full => ROLLBACK_JOURNAL_LIMIT,
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        conn.pragma_update(None, "journal_size_limit", limit)
            .map_err(|e| classify(name, op, e))?;
    }
    // Process: no fsync. Every write is in the kernel's page cache before the commit
    // returns, so a killed process loses nothing committed (the next open rolls a hot
    // journal back); a power loss may lose recent commits or leave the file damaged, which
    // the next open then refuses (StoreError::Corrupt). Normal (WAL): fsync at checkpoints
    // only. Full: the journal and the file are fsynced at each commit.
    let sync = match options.sync {
        SyncLevel::Process => "OFF",
        SyncLevel::Normal => "NORMAL",
        SyncLevel::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync)
        .map_err(|e| classify(name, op, e))?;
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(|e| classify(name, op, e))?;
    conn.pragma_update(None, "cache_size", -32 * 1024)
        .map_err(|e| classify(name, op, e))?;
    if let Some(max_bytes) = options.max_bytes {
        let page_size: i64 = conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .map_err(|e| classify(name, op, e))?;
        let pages = i64::try_from(max_bytes).unwrap_or(i64::MAX) / page_size.max(1);
        conn.pragma_update(None, "max_page_count", pages.max(1))
            .map_err(|e| classify(name, op, e))?;
    }
    conn.set_prepared_statement_cache_capacity(32);
    Ok(())
}

fn create_schema(conn: &Connection, name: &str) -> Result<(), StoreError> {
    let sql = format!(
        "BEGIN IMMEDIATE;{SCHEMA}{CHANNEL_TYPES_SCHEMA}PRAGMA application_id = {APPLICATION_ID};\
         PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
    );
    conn.execute_batch(&sql).map_err(|e| {
        // The schema error is the one to report; a failing ROLLBACK (no transaction left)
        // adds nothing, and the connection is dropped by the caller anyway.
        let _rollback_result = conn.execute_batch("ROLLBACK");
        classify(name, "create schema", e)
    })
}

/// Maps an SQLite error met while opening to the error saying what the file is.
pub(crate) fn classify(name: &str, op: &'static str, e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotADatabase {
            path: name.to_string(),
        },
        Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: name.to_string(),
            detail: e.to_string(),
        },
        Some(ErrorCode::DiskFull) => StoreError::Full {
            path: name.to_string(),
            channel: None,
            limit: crate::error::FullLimit::Disk,
            max: 0,
        },
        _ => sql(name, op, e),
    }
}

pub(crate) fn sql(name: &str, op: &'static str, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: name.to_string(),
        op,
        source,
    }
}
