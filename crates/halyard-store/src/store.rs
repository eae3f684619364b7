//! The store: channels, inserts in one pending transaction, reads, purges, statistics.

use crate::checkpoint::{log_limit, Checkpointer, LogRestart};
use crate::error::{is_full, FullLimit, StoreError};
use crate::index::ChannelIndex;
use crate::limits::plan;
use crate::open::{classify, open_file, open_memory, sql};
use crate::partitions::{decode_partitions, encode_partitions, partition_key};
use crate::segments::{Location, Segments, SEGMENT_MIN_PAYLOAD};
use crate::types::{
    ChannelId, ChannelSpec, Inserted, Limits, SampleId, SampleKind, SampleMeta, SampleRef,
    StoreOptions, StoreStats, StoredSample, SyncLevel,
};
use rusqlite::types::ValueRef;
use rusqlite::{ffi, params, Connection, OptionalExtension, Row};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

pub(crate) mod channel_types;

/// A store of DDS samples: one SQLite file (PERSISTENT) or one in-memory database (TRANSIENT).
///
/// Writes join one open transaction, begun by the first write after a commit, until
/// [`Store::commit`]; dropping the store rolls back what was not committed. `Store` is `Send`,
/// not `Sync` (it owns one SQLite connection): give it to one thread.
pub struct Store {
    conn: Connection,
    path: String,
    max_bytes: Option<u64>,
    /// The cap in pages, and the page size, when there is a cap.
    max_pages: Option<i64>,
    page_size: i64,
    pending: usize,
    /// Limits, next row and index of the channels used since open (or since a lost
    /// transaction, or another connection's commit).
    channels: BTreeMap<ChannelId, ChannelState>,
    /// Instance rows changed by the pending inserts, not yet written (see [`InstanceDelta`]).
    instances: RefCell<BTreeMap<(i64, [u8; 16]), InstanceDelta>>,
    /// Pages in use when last counted, and bytes inserted since (size cap only).
    used_pages: i64,
    bytes_since_count: i64,
    /// The checkpoint thread of a store with a write-ahead log (see [`crate::checkpoint`]).
    checkpointer: Option<Checkpointer>,
    /// Bytes the pending inserts wrote, about (for the checkpoint cadence).
    uncommitted_bytes: u64,
    /// `PRAGMA data_version` when last looked at: it changes when another connection (another
    /// `Store` on the file, in this process or another) commits, and the cached states and
    /// indexes are then reloaded.
    data_version: i64,
    /// The payload segments of a file store (see [`crate::segments`]): written only without
    /// a size cap, read always. `None` in memory, where every payload stays in its row.
    segments: Option<RefCell<Segments>>,
    /// Rows of inserts whose payloads are in segments, not yet INSERTed (see
    /// [`DeferredRow`]).
    deferred: RefCell<Vec<DeferredRow>>,
    /// Samples the pending inserts removed (KEEP_LAST evictions, state changes made
    /// obsolete), with their instances: reported by [`Store::take_removed`] once committed.
    pending_removed: Vec<(ChannelId, SampleId, [u8; 16])>,
    /// Samples committed transactions removed, not yet taken.
    removed: Vec<(ChannelId, SampleId, [u8; 16])>,
}

/// The row of an insert whose payload went to a segment, INSERTed later with others: one
/// statement of [`DEFERRED_ROWS`] rows costs less than as many one-row statements once the
/// payload is out of the row (the statement's own cost is then a large part of an insert). Deferred rows are written when there are that many,
/// and before anything reads or deletes samples, and before the commit. The row id was
/// chosen by the store and is free (the same check as for an immediate insert: the cached
/// next row id, kept current by `PRAGMA data_version`); should it be taken anyway, the
/// transaction is rolled back and its inserts reported lost, never taken for committed.
#[derive(Debug, Clone, Copy)]
struct DeferredRow {
    id: i64,
    channel: i64,
    writer: [u8; 16],
    sn: i64,
    kind: i64,
    key_hash: [u8; 16],
    source_time: i64,
    loc: Location,
}

/// Rows per deferred INSERT statement.
const DEFERRED_ROWS: usize = 32;

/// `INSERT OR FAIL INTO samples COLUMNS VALUES (..), ..` for `n` rows of 11 parameters.
///
/// `OR FAIL`, not SQLite's default `OR ABORT`: a multi-row statement that may abort gets a
/// statement journal (a copy of every page it touches, to undo it alone), a noticeable share
/// of the service thread's time on small samples. A failed flush rolls the whole transaction back
/// ([`Store::flush_rows`]), so rows a failing statement left are never committed.
fn deferred_insert(columns: &str, n: usize) -> String {
    let one = "(?,?,?,?,?,?,?,X'',?,?,?)";
    let values = vec![one; n].join(",");
    format!("INSERT OR FAIL INTO samples {columns} VALUES {values}")
}

/// Binds `rows` to a statement from [`deferred_insert`] (10 parameters a row; the payload
/// column is the literal empty blob).
fn bind_rows(
    stmt: &mut rusqlite::CachedStatement<'_>,
    rows: &[DeferredRow],
) -> rusqlite::Result<()> {
    for (i, r) in rows.iter().enumerate() {
        let b = i * 10;
        stmt.raw_bind_parameter(b + 1, r.id)?;
        stmt.raw_bind_parameter(b + 2, r.channel)?;
        stmt.raw_bind_parameter(b + 3, &r.writer[..])?;
        stmt.raw_bind_parameter(b + 4, r.sn)?;
        stmt.raw_bind_parameter(b + 5, r.kind)?;
        stmt.raw_bind_parameter(b + 6, &r.key_hash[..])?;
        stmt.raw_bind_parameter(b + 7, r.source_time)?;
        stmt.raw_bind_parameter(b + 8, i64::from(r.loc.seg))?;
        stmt.raw_bind_parameter(b + 9, r.loc.off as i64)?;
        stmt.raw_bind_parameter(b + 10, r.loc.len as i64)?;
    }
    Ok(())
}

/// What the pending inserts did to one instance's row. The `instances` table is updated
/// from these once per commit (and before anything reads it) instead of once per sample:
/// one upsert per instance and batch rather than per sample.
#[derive(Debug, Clone, Copy)]
struct InstanceDelta {
    /// Kind and source time of the instance's last sample.
    kind: i64,
    source_time: i64,
    /// Samples added minus samples evicted.
    added: i64,
}

/// Where an insert puts the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// In the row.
    Row,
    /// In the row, near the size cap: the insert must be able to fail alone (see
    /// [`Store::write_sample`]).
    Guarded,
    /// Appended to a segment already, at this location (the row says where).
    Segment(Location),
}

/// What one attempt to write a sample did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    /// As this row.
    Stored(i64),
    Duplicate,
    /// A state change that changes nothing the store keeps: not stored.
    Obsolete,
    /// The row id from the cache is in use: the cache is stale.
    RowTaken,
}

#[derive(Debug)]
struct ChannelState {
    limits: Limits,
    /// Sequence part of the next row id in this channel.
    next_seq: i64,
    /// What the channel stores (see [`crate::index`]).
    index: ChannelIndex,
}

/// A sample's row id is `channel << SEQ_BITS | seq`, seq counting inserts into the channel
/// from 1: row order is (channel, insertion order), so a channel's samples stream in order
/// from a range of the table's own b-tree, with no index to maintain.
const SEQ_BITS: u32 = 40;
/// First sequence number that no longer fits (2^40 inserts into one channel).
const SEQ_LIMIT: i64 = 1 << SEQ_BITS;
/// Channel ids must keep `channel << SEQ_BITS` within i63.
const CHANNEL_LIMIT: i64 = 1 << (63 - SEQ_BITS);
/// Below this many free pages (plus twice the payload's) before the cap, inserts take the
/// guarded path that can fail alone.
const NEAR_CAP_PAGES: i64 = 64;
/// Bytes a sample row and its index entries take besides the payload, at most (for the
/// estimate of the pages in use).
const ROW_BYTES: i64 = 256;

impl Store {
    /// Opens the store at `path`, creating it when absent (its directory must exist).
    ///
    /// Refuses, without writing to it, a file that is not SQLite, an SQLite file of another
    /// application or with unknown tables, a newer schema, or a damaged database.
    pub fn open(path: &Path, options: StoreOptions) -> Result<Store, StoreError> {
        let conn = open_file(path, &options)?;
        let name = path.display().to_string();
        // A write-ahead log is checkpointed by a thread of its own (see `checkpoint`).
        let checkpointer = match options.sync {
            SyncLevel::Normal => {
                conn.pragma_update(None, "wal_autocheckpoint", 0)
                    .map_err(|e| sql(&name, "configure checkpoints", e))?;
                Some(Checkpointer::start(path, log_limit(&options))?)
            }
            SyncLevel::Process | SyncLevel::Full => None,
        };
        let mut store = Store::with(conn, name.clone(), options)?;
        store.checkpointer = checkpointer;
        // Every file store reads segments; only one without a size cap writes them (see
        // `insert_once`).
        store.segments = Some(RefCell::new(Segments::new(path, &name, options.sync)));
        store.open_segments()?;
        Ok(store)
    }

    /// Opens an empty in-memory store (TRANSIENT durability); it ends with the value.
    pub fn in_memory(options: StoreOptions) -> Result<Store, StoreError> {
        let conn = open_memory(&options)?;
        Store::with(conn, ":memory:".to_string(), options)
    }

    fn with(conn: Connection, path: String, options: StoreOptions) -> Result<Store, StoreError> {
        let page_size: i64 = conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .map_err(|e| sql(&path, "read page_size", e))?;
        let max_pages: Option<i64> = match options.max_bytes {
            Some(_) => Some(
                conn.pragma_query_value(None, "max_page_count", |r| r.get(0))
                    .map_err(|e| sql(&path, "read max_page_count", e))?,
            ),
            None => None,
        };
        let data_version: i64 = conn
            .pragma_query_value(None, "data_version", |r| r.get(0))
            .map_err(|e| sql(&path, "read data_version", e))?;
        Ok(Store {
            conn,
            path,
            max_bytes: options.max_bytes,
            max_pages,
            page_size,
            pending: 0,
            channels: BTreeMap::new(),
            instances: RefCell::new(BTreeMap::new()),
            used_pages: 0,
            bytes_since_count: i64::MAX / 4,
            checkpointer: None,
            uncommitted_bytes: 0,
            data_version,
            segments: None,
            deferred: RefCell::new(Vec::new()),
            pending_removed: Vec::new(),
            removed: Vec::new(),
        })
    }

    /// At open: checks that the segments the store names are there, and removes files it
    /// does not name (see [`crate::segments`], "Reclaim"), holding the write lock.
    fn open_segments(&mut self) -> Result<(), StoreError> {
        if self.segments.is_none() {
            return Ok(());
        }
        self.exec("BEGIN IMMEDIATE", None)?;
        let swept = match &self.segments {
            Some(segments) => segments.borrow_mut().verify_and_sweep(&self.conn),
            None => Ok(0),
        };
        let ended = self.exec("COMMIT", None);
        swept?;
        ended
    }

    /// The directory beside the store file `path` that holds its payload segments
    /// (`PATH-payloads`): it belongs to the store; copy, move or remove the two together.
    pub fn payload_dir(path: &Path) -> std::path::PathBuf {
        Segments::dir_of(path)
    }

    /// The store's file name (`:memory:` in memory), as error messages name it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Finds or creates the channel of (topic, type_name, sorted partitions) and updates its
    /// limits, persistence kind and writer QoS to `spec`.
    ///
    /// Refuses with [`StoreError::TypeChanged`] when both the stored and the new type identity
    /// are non-empty and differ; an empty stored identity takes the new one. The change joins
    /// the pending transaction if one is open, else it is committed at once.
    pub fn channel(&mut self, spec: &ChannelSpec) -> Result<ChannelId, StoreError> {
        if spec.limits.history_depth == Some(0) {
            return Err(StoreError::InvalidLimits {
                topic: spec.topic.clone(),
                reason: "KEEP_LAST depth 0 keeps nothing",
            });
        }
        let key = partition_key(&spec.partitions);
        let found: Option<(i64, Vec<u8>)> = self
            .conn
            .prepare_cached(
                "SELECT id, type_identity FROM channels \
                 WHERE topic = ?1 AND type_name = ?2 AND partition_key = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![spec.topic, spec.type_name, key], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
            })
            .map_err(|e| self.err("find channel", e))?;
        let id = match found {
            Some((id, stored)) => {
                if !stored.is_empty()
                    && !spec.type_identity.is_empty()
                    && stored != spec.type_identity
                {
                    return Err(StoreError::TypeChanged {
                        topic: spec.topic.clone(),
                        type_name: spec.type_name.clone(),
                    });
                }
                self.update_channel(id, spec)?;
                id
            }
            None => self.create_channel(spec, &key)?,
        };
        let ch = ChannelId(id);
        match self.channels.get_mut(&ch) {
            Some(st) => st.limits = spec.limits,
            None => {
                self.state(ch)?;
            }
        }
        Ok(ch)
    }

    fn update_channel(&mut self, id: i64, spec: &ChannelSpec) -> Result<(), StoreError> {
        let l = &spec.limits;
        self.conn
            .prepare_cached(
                "UPDATE channels SET partitions = ?2, \
                 type_identity = CASE WHEN length(?3) = 0 THEN type_identity ELSE ?3 END, \
                 persistent = ?4, history_depth = ?5, max_samples = ?6, max_instances = ?7, \
                 max_samples_per_instance = ?8, writer_qos = ?9 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    encode_partitions(&spec.partitions),
                    spec.type_identity,
                    spec.persistent,
                    l.history_depth,
                    to_sql(l.max_samples),
                    to_sql(l.max_instances),
                    to_sql(l.max_samples_per_instance),
                    spec.writer_qos
                ])
            })
            .map_err(|e| self.write_err(None, "update channel", e))?;
        Ok(())
    }

    fn create_channel(&mut self, spec: &ChannelSpec, key: &str) -> Result<i64, StoreError> {
        let l = &spec.limits;
        self.conn
            .prepare_cached(
                "INSERT INTO channels (topic, type_name, partition_key, partitions, \
                 type_identity, persistent, history_depth, max_samples, max_instances, \
                 max_samples_per_instance, writer_qos) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    spec.topic,
                    spec.type_name,
                    key,
                    encode_partitions(&spec.partitions),
                    spec.type_identity,
                    spec.persistent,
                    l.history_depth,
                    to_sql(l.max_samples),
                    to_sql(l.max_instances),
                    to_sql(l.max_samples_per_instance),
                    spec.writer_qos
                ])
            })
            .map_err(|e| self.write_err(None, "create channel", e))?;
        let id = self.conn.last_insert_rowid();
        if id >= CHANNEL_LIMIT {
            self.conn
                .execute("DELETE FROM channels WHERE id = ?1", [id])
                .map_err(|e| self.write_err(None, "create channel", e))?;
            return Err(StoreError::Full {
                path: self.path.clone(),
                channel: None,
                limit: FullLimit::Channels,
                max: CHANNEL_LIMIT as u64,
            });
        }
        Ok(id)
    }

    /// Every channel with its spec (partitions as last given), in creation order.
    pub fn channels(&self) -> Result<Vec<(ChannelId, ChannelSpec)>, StoreError> {
        let op = "list channels";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, topic, type_name, partitions, type_identity, persistent, \
                 history_depth, max_samples, max_instances, max_samples_per_instance, writer_qos \
                 FROM channels ORDER BY id",
            )
            .map_err(|e| self.err(op, e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err(op, e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(op, e))? {
            out.push(self.channel_row(row).map_err(|e| self.err(op, e))??);
        }
        Ok(out)
    }

    fn channel_row(
        &self,
        row: &Row<'_>,
    ) -> rusqlite::Result<Result<(ChannelId, ChannelSpec), StoreError>> {
        let id: i64 = row.get(0)?;
        let encoded: String = row.get(3)?;
        let Some(partitions) = decode_partitions(&encoded) else {
            return Ok(Err(
                self.corrupt(format!("channel {id} has partitions {encoded:?}"))
            ));
        };
        let spec = ChannelSpec {
            topic: row.get(1)?,
            type_name: row.get(2)?,
            partitions,
            type_identity: row.get(4)?,
            persistent: row.get(5)?,
            limits: Limits {
                history_depth: row.get(6)?,
                max_samples: from_sql(row.get(7)?),
                max_instances: from_sql(row.get(8)?),
                max_samples_per_instance: from_sql(row.get(9)?),
            },
            writer_qos: row.get(10)?,
        };
        Ok(Ok((ChannelId(id), spec)))
    }

    /// Stores `s` in channel `ch` within the pending transaction.
    ///
    /// [`Inserted::Duplicate`] when (ch, writer, sn) is already stored. KEEP_LAST evicts the
    /// instance's oldest data samples to make room; the other limits refuse with
    /// [`StoreError::Full`], as does the size cap. A refusal removes nothing and leaves the
    /// earlier pending inserts in place.
    ///
    /// The history depth and the sample limits count data samples (writes) only. A dispose
    /// or an unregistration changes its instance's state and evicts no data: it is kept
    /// beside the data while a late reader needs it to end with the instance's state, and
    /// removed once a later change makes it obsolete (a later write or dispose of the
    /// instance; for an unregistration, a later write or unregistration by its writer, or
    /// no data of that writer left in the instance). One that would change nothing the
    /// store keeps (its instance holds nothing; an unregistration by a writer with no data
    /// in it) is [`Inserted::Obsolete`] and not stored. What inserts removed is reported by
    /// [`Store::take_removed`] once committed.
    pub fn insert(&mut self, ch: ChannelId, s: &StoredSample) -> Result<Inserted, StoreError> {
        self.insert_ref(ch, &s.as_ref())
    }

    /// [`Store::insert`] of a sample whose payload the caller keeps.
    pub fn insert_ref(&mut self, ch: ChannelId, s: &SampleRef<'_>) -> Result<Inserted, StoreError> {
        match self.insert_once(ch, s)? {
            Written::Stored(row) => Ok(Inserted::Stored(SampleId(row))),
            Written::Duplicate => Ok(Inserted::Duplicate),
            Written::Obsolete => Ok(Inserted::Obsolete),
            Written::RowTaken => {
                // The cached next row id was stale (the file changed behind the store's
                // back, which the data_version check should have seen): reload the channel
                // and try once more.
                self.forget(ch);
                match self.insert_once(ch, s)? {
                    Written::Stored(row) => Ok(Inserted::Stored(SampleId(row))),
                    Written::Duplicate => Ok(Inserted::Duplicate),
                    Written::Obsolete => Ok(Inserted::Obsolete),
                    Written::RowTaken => Err(StoreError::Conflict {
                        path: self.path.clone(),
                        channel: ch,
                    }),
                }
            }
        }
    }

    fn insert_once(&mut self, ch: ChannelId, s: &SampleRef<'_>) -> Result<Written, StoreError> {
        // The transaction first: it decides whether the cached index is current.
        let opened = self.conn.is_autocommit();
        self.begin()?;
        let state = self.state(ch)?;
        let (index, next_seq) = (&state.index, state.next_seq);
        let duplicate = index.has(&s.writer, s.sn);
        let data = s.kind == SampleKind::Alive;
        // A state change is never refused by the limits: it evicts no data.
        let planned = match data {
            true => plan(
                &state.limits,
                index.samples(),
                index.instance_count(),
                index.in_instance(&s.key_hash),
            ),
            false => Ok(crate::limits::Plan {
                evict: 0,
                new_instance: false,
            }),
        };
        let evict = match &planned {
            Ok(p) if p.evict > 0 => index.oldest(&s.key_hash, p.evict),
            _ => Vec::new(),
        };
        let obsolete = !data && index.obsolete_states(&s.key_hash, &s.writer, s.kind, &[]).1;
        if duplicate || obsolete {
            self.end_if_idle(opened)?;
            return Ok(match duplicate {
                true => Written::Duplicate,
                false => Written::Obsolete,
            });
        }
        match planned {
            Ok(_) if next_seq < SEQ_LIMIT => {}
            refused => {
                let (limit, max) = refused
                    .err()
                    .unwrap_or((FullLimit::Samples, SEQ_LIMIT as u64));
                self.end_if_idle(opened)?;
                return Err(self.full(ch, limit, max));
            }
        }
        let guarded = self.near_cap(s.payload.len())?;
        if guarded {
            self.exec("SAVEPOINT insert_one", Some(ch))?;
        }
        let row = ch.0 << SEQ_BITS | next_seq;
        let mut evicted = Vec::with_capacity(evict.len());
        let mut in_segment = false;
        // Near the cap every row is written at once, within the savepoint, so that reaching
        // the cap undoes this insert alone.
        let written = match guarded {
            true => {
                // The savepoint may undo the pending instance rows too: keep them to put back.
                let unwritten = self.instances.borrow().clone();
                let written = self.write_instances(true).and_then(|_| {
                    self.write_sample(ch, row, s, &evict, &mut evicted, Placement::Guarded)
                });
                if written.is_err() {
                    *self.instances.borrow_mut() = unwritten;
                }
                written
            }
            false => {
                // A larger payload goes to a segment first (the row then says where).
                let appended = match &self.segments {
                    // A capped store keeps new payloads in rows: SQLite's page cap is then
                    // the bound on what it adds to the disk.
                    Some(segments)
                        if s.payload.len() >= SEGMENT_MIN_PAYLOAD && self.max_bytes.is_none() =>
                    {
                        Some(segments.borrow_mut().append(row, s.payload))
                    }
                    _ => None,
                };
                let located = match appended {
                    Some(Ok(l)) => Some(l),
                    Some(Err(e)) => return Err(self.abort_transaction(e)),
                    None => None,
                };
                in_segment = located.is_some();
                let placed = located.map_or(Placement::Row, Placement::Segment);
                let written = self.write_sample(ch, row, s, &evict, &mut evicted, placed);
                if !matches!(written, Ok(Written::Stored(_))) {
                    // The record belongs to no row: it is not live.
                    if let (Some(l), Some(segments)) = (located, &self.segments) {
                        segments.borrow_mut().removed(l);
                    }
                }
                written
            }
        };
        if guarded && !self.conn.is_autocommit() {
            if written.is_err() {
                self.exec("ROLLBACK TO insert_one", Some(ch))?;
            }
            self.exec("RELEASE insert_one", Some(ch))?;
        }
        let written = match written {
            Ok(w) => w,
            Err(e) => {
                // What the failed statements did is not known here: reload on next use.
                self.forget(ch);
                return Err(self.write_err(Some(ch), "insert", e));
            }
        };
        if let Written::Stored(row) = written {
            self.bytes_since_count = self
                .bytes_since_count
                .saturating_add(ROW_BYTES + i64::try_from(s.payload.len()).unwrap_or(i64::MAX));
            if let Some(st) = self.channels.get_mut(&ch) {
                for (gone, writer, sn) in evicted {
                    st.index.remove(gone, &writer, sn, &s.key_hash);
                    self.pending_removed.push((ch, SampleId(gone), s.key_hash));
                }
                st.index.add(row, s.writer, s.sn, s.key_hash, s.kind);
                st.next_seq += 1;
            }
            self.pending += 1;
            // What the database file gets (a payload in a segment is not checkpointed).
            let in_row = if in_segment {
                0
            } else {
                s.payload.len() as u64
            };
            self.uncommitted_bytes = self
                .uncommitted_bytes
                .saturating_add(ROW_BYTES as u64 + in_row);
        }
        Ok(written)
    }

    /// Writes the sample as row `row`, removes rows `evict` (the instance's oldest data,
    /// KEEP_LAST) and the instance's state changes that this one makes obsolete (see
    /// [`Store::insert`]), pushing each row removed on `evicted` with its writer and sequence
    /// number, and updates the instance. Nothing is written when the row id is taken.
    ///
    /// `placed` says where the payload goes: in the row, or in a segment where it was
    /// appended already. [`Placement::Guarded`] (near the size cap) keeps it in the row and
    /// writes each INSERT as `INSERT .. SELECT`: SQLite then
    /// gives the statement a statement journal and a SQLITE_FULL undoes that statement alone
    /// (the caller's savepoint undoes the rest). A single-row `INSERT .. VALUES` has no
    /// statement journal and a SQLITE_FULL there cancels the whole transaction, but it is
    /// markedly faster, so it is the path far from the cap.
    fn write_sample(
        &self,
        ch: ChannelId,
        row: i64,
        s: &SampleRef<'_>,
        evict: &[i64],
        evicted: &mut Vec<(i64, [u8; 16], i64)>,
        placed: Placement,
    ) -> rusqlite::Result<Written> {
        let guarded = placed == Placement::Guarded;
        // A taken row id fails the INSERT before it writes anything; SQLite then undoes that
        // statement only (OE_Abort), the transaction stays.
        let insert = if guarded {
            "INSERT INTO samples \
             (id, channel, writer, sn, kind, key_hash, source_time, payload, seg, seg_off, \
             seg_len) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11"
        } else {
            "INSERT INTO samples \
             (id, channel, writer, sn, kind, key_hash, source_time, payload, seg, seg_off, \
             seg_len) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
        };
        let (payload, seg, off, len) = match placed {
            Placement::Segment(l) => (&[][..], Some(l.seg), Some(l.off as i64), Some(l.len as i64)),
            Placement::Row | Placement::Guarded => (s.payload, None, None, None),
        };
        if let Placement::Segment(loc) = placed {
            // Deferred: written with others in one statement (see `DeferredRow`).
            let mut deferred = self.deferred.borrow_mut();
            deferred.push(DeferredRow {
                id: row,
                channel: ch.0,
                writer: s.writer,
                sn: s.sn,
                kind: s.kind.code(),
                key_hash: s.key_hash,
                source_time: s.source_time,
                loc,
            });
            let full = deferred.len() >= DEFERRED_ROWS;
            drop(deferred);
            if full {
                self.flush_rows()?;
            }
        } else {
            let inserted = self.conn.prepare_cached(insert)?.execute(params![
                row,
                ch.0,
                &s.writer[..],
                s.sn,
                s.kind.code(),
                &s.key_hash[..],
                s.source_time,
                payload,
                seg,
                off,
                len
            ]);
            match inserted
                .as_ref()
                .map_err(|e| e.sqlite_error().map(|f| f.extended_code))
            {
                Err(Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY)) => return Ok(Written::RowTaken),
                _ => {
                    inserted?;
                }
            }
        }
        self.delete_rows(evict, evicted)?;
        let writers: Vec<[u8; 16]> = evicted.iter().map(|&(_, w, _)| w).collect();
        let obsolete = self.channels.get(&ch).map_or_else(Vec::new, |st| {
            st.index
                .obsolete_states(&s.key_hash, &s.writer, s.kind, &writers)
                .0
        });
        self.delete_rows(&obsolete, evicted)?;
        let delta = InstanceDelta {
            kind: s.kind.code(),
            source_time: s.source_time,
            added: 1 - evicted.len() as i64,
        };
        if guarded {
            self.upsert_instance(ch.0, &s.key_hash, delta, true)?;
        } else {
            let mut pending = self.instances.borrow_mut();
            let e = pending
                .entry((ch.0, s.key_hash))
                .or_insert(InstanceDelta { added: 0, ..delta });
            e.kind = delta.kind;
            e.source_time = delta.source_time;
            e.added += delta.added;
        }
        Ok(Written::Stored(row))
    }

    /// INSERTs the deferred rows: [`DEFERRED_ROWS`] per statement, the rest one by one. A
    /// failure rolls the transaction back (the rows taken from the list are not written, and
    /// a failed `OR FAIL` statement may have left some of its rows): the caller reports the
    /// transaction's inserts lost.
    fn flush_rows(&self) -> rusqlite::Result<()> {
        let rows = std::mem::take(&mut *self.deferred.borrow_mut());
        if rows.is_empty() {
            return Ok(());
        }
        let written = self.insert_rows(&rows);
        if written.is_err() {
            // A failing ROLLBACK means SQLite already ended the transaction.
            let _rollback_result = self.conn.execute_batch("ROLLBACK");
        }
        written
    }

    fn insert_rows(&self, rows: &[DeferredRow]) -> rusqlite::Result<()> {
        const COLUMNS: &str = "(id, channel, writer, sn, kind, key_hash, source_time, payload, \
                               seg, seg_off, seg_len)";
        let mut chunks = rows.chunks_exact(DEFERRED_ROWS);
        for chunk in &mut chunks {
            let mut stmt = self
                .conn
                .prepare_cached(&deferred_insert(COLUMNS, DEFERRED_ROWS))?;
            bind_rows(&mut stmt, chunk)?;
            stmt.raw_execute()?;
        }
        for row in chunks.remainder() {
            let mut stmt = self.conn.prepare_cached(&deferred_insert(COLUMNS, 1))?;
            bind_rows(&mut stmt, std::slice::from_ref(row))?;
            stmt.raw_execute()?;
        }
        Ok(())
    }

    /// [`Store::flush_rows`] before a read: a failure rolls the transaction back (its
    /// inserts are then reported lost by the next commit, [`StoreError::TransactionLost`]),
    /// so that a sample whose row was not written is never taken for committed.
    fn flush_before_read(&self, op: &'static str) -> Result<(), StoreError> {
        if self.deferred.borrow().is_empty() {
            return Ok(());
        }
        self.flush_rows().map_err(|e| {
            // The flush rolled the transaction back (and took the deferred rows).
            if let Some(segments) = &self.segments {
                segments.borrow_mut().invalidate();
            }
            self.err(op, e)
        })
    }

    /// Deletes sample rows `rows`, pushing each one deleted on `deleted` with its writer and
    /// sequence number (a row already gone is skipped).
    fn delete_rows(
        &self,
        rows: &[i64],
        deleted: &mut Vec<(i64, [u8; 16], i64)>,
    ) -> rusqlite::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.flush_rows()?;
        let mut stmt = self.conn.prepare_cached(
            "DELETE FROM samples WHERE id = ?1 RETURNING writer, sn, seg, seg_off, seg_len",
        )?;
        for &row in rows {
            let gone = stmt
                .query_row([row], |r| {
                    Ok((
                        r.get::<_, [u8; 16]>(0)?,
                        r.get::<_, i64>(1)?,
                        location(r.get(2)?, r.get(3)?, r.get(4)?),
                    ))
                })
                .optional()?;
            if let Some((writer, sn, loc)) = gone {
                if let (Some(loc), Some(segments)) = (loc, &self.segments) {
                    segments.borrow_mut().removed(loc);
                }
                deleted.push((row, writer, sn));
            }
        }
        Ok(())
    }

    /// Writes (upserts) one instance's row: `delta` on top of what the row holds.
    fn upsert_instance(
        &self,
        ch: i64,
        key_hash: &[u8; 16],
        delta: InstanceDelta,
        guarded: bool,
    ) -> rusqlite::Result<()> {
        let upsert = if guarded {
            "INSERT INTO instances (channel, key_hash, kind, source_time, samples) \
             SELECT ?1, ?2, ?3, ?4, max(?5, 1) WHERE true ON CONFLICT (channel, key_hash) \
             DO UPDATE SET kind = excluded.kind, source_time = excluded.source_time, \
             samples = max(samples + ?5, 1)"
        } else {
            "INSERT INTO instances (channel, key_hash, kind, source_time, samples) \
             VALUES (?1, ?2, ?3, ?4, max(?5, 1)) ON CONFLICT (channel, key_hash) \
             DO UPDATE SET kind = excluded.kind, source_time = excluded.source_time, \
             samples = max(samples + ?5, 1)"
        };
        self.conn.prepare_cached(upsert)?.execute(params![
            ch,
            &key_hash[..],
            delta.kind,
            delta.source_time,
            delta.added
        ])?;
        Ok(())
    }

    /// Writes the instance rows the pending inserts changed (into the open transaction).
    ///
    /// A row leaves the map once written: after a failure the others are still there (and
    /// a transaction SQLite rolled back meanwhile is reported by the next write or commit).
    fn write_instances(&self, guarded: bool) -> rusqlite::Result<()> {
        if self.conn.is_autocommit() {
            // No transaction: the inserts these rows were for are gone.
            self.instances.borrow_mut().clear();
            return Ok(());
        }
        // In key order: the upserts walk the table's b-tree forward.
        let keys: Vec<(i64, [u8; 16])> = self.instances.borrow().keys().copied().collect();
        for (ch, key) in keys {
            let delta = self.instances.borrow().get(&(ch, key)).copied();
            if let Some(delta) = delta {
                self.upsert_instance(ch, &key, delta, guarded)?;
                self.instances.borrow_mut().remove(&(ch, key));
            }
        }
        Ok(())
    }

    /// [`Store::write_instances`] before a read of the `instances` table.
    fn flush_instances(&self, op: &'static str) -> Result<(), StoreError> {
        if self.instances.borrow().is_empty() {
            return Ok(());
        }
        self.write_instances(false).map_err(|e| self.err(op, e))
    }

    /// Whether the database is within reach of its size cap, so that the next insert of a
    /// `payload_len` payload must be able to fail alone.
    ///
    /// The pages in use are counted (two PRAGMA queries) only when an estimate from the bytes
    /// inserted since the last count (doubled, for indexes and half-full pages) says the cap
    /// may be near; far from it an insert costs no query.
    fn near_cap(&mut self, payload_len: usize) -> Result<bool, StoreError> {
        let Some(max_pages) = self.max_pages else {
            return Ok(false);
        };
        let page = self.page_size.max(512);
        let payload_pages = i64::try_from(payload_len).unwrap_or(i64::MAX) / page;
        let margin = NEAR_CAP_PAGES + 2 * payload_pages;
        let estimate = self
            .used_pages
            .saturating_add(self.bytes_since_count.saturating_mul(2) / page + 1);
        if max_pages.saturating_sub(estimate) >= margin {
            return Ok(false);
        }
        let pages = |sql: &str| -> Result<i64, StoreError> {
            self.conn
                .prepare_cached(sql)
                .and_then(|mut s| s.query_row([], |r| r.get(0)))
                .map_err(|e| self.err("page count", e))
        };
        let used = pages("PRAGMA page_count")? - pages("PRAGMA freelist_count")?;
        self.used_pages = used;
        self.bytes_since_count = 0;
        Ok(max_pages - used < margin)
    }

    fn full(&self, ch: ChannelId, limit: FullLimit, max: u64) -> StoreError {
        StoreError::Full {
            path: self.path.clone(),
            channel: Some(ch),
            limit,
            max,
        }
    }

    /// Makes the pending inserts durable (as [`crate::SyncLevel`] says); returns how many.
    pub fn commit(&mut self) -> Result<usize, StoreError> {
        if self.conn.is_autocommit() {
            self.instances.borrow_mut().clear();
            self.lost_transaction()?;
            return Ok(0);
        }
        if let Err(e) = self.flush_rows() {
            let e = self.err("insert", e);
            return Err(self.abort_transaction(e));
        }
        if let Err(e) = self.segments_before_commit() {
            return Err(self.abort_transaction(e));
        }
        if let Err(e) = self.write_instances(false).and_then(|_| {
            self.conn
                .prepare_cached("COMMIT")
                .and_then(|mut s| s.execute([]))
        }) {
            self.uncommitted_bytes = 0;
            self.pending_removed.clear();
            if let Some(segments) = &self.segments {
                segments.borrow_mut().invalidate();
            }
            return Err(self.write_err(None, "commit", e));
        }
        if let Some(segments) = &self.segments {
            segments.borrow_mut().after_commit();
        }
        self.removed.append(&mut self.pending_removed);
        let bytes = std::mem::take(&mut self.uncommitted_bytes);
        if let Some(c) = self.checkpointer.as_mut() {
            let restart = c.committed(bytes);
            if restart != LogRestart::No {
                // A failure or a busy checkpointer leaves the log long (nothing committed is
                // at stake); the next commit tries again.
                let _ = c.restart(&self.conn, restart == LogRestart::Now);
            }
        }
        Ok(std::mem::take(&mut self.pending))
    }

    /// Rolls the pending transaction back after its payloads could not be written (`e`), so
    /// that no row whose payload is not in its segment can ever commit; the pending inserts
    /// are reported lost ([`StoreError::TransactionLost`]), never taken for committed.
    fn abort_transaction(&mut self, e: StoreError) -> StoreError {
        // A failing ROLLBACK means there was no transaction left to undo.
        let _rollback_result = self.conn.execute_batch("ROLLBACK");
        self.uncommitted_bytes = 0;
        self.pending_removed.clear();
        let lost = std::mem::take(&mut self.pending);
        self.channels.clear();
        self.instances.borrow_mut().clear();
        self.deferred.borrow_mut().clear();
        if let Some(segments) = &self.segments {
            segments.borrow_mut().invalidate();
        }
        match e {
            StoreError::Io { path, source } if lost > 0 => StoreError::TransactionLost {
                path,
                lost,
                source: rusqlite::Error::SqliteFailure(
                    ffi::Error::new(ffi::SQLITE_IOERR),
                    Some(source.to_string()),
                ),
            },
            StoreError::Sqlite { path, source, .. } if lost > 0 => {
                StoreError::TransactionLost { path, lost, source }
            }
            other => other,
        }
    }

    /// The segments' part of a commit: payloads written (and synced, by the level) and the
    /// `segments` rows updated, before SQLite's COMMIT.
    fn segments_before_commit(&self) -> Result<(), StoreError> {
        match &self.segments {
            Some(segments) => segments.borrow_mut().before_commit(&self.conn),
            None => Ok(()),
        }
    }

    /// Inserts stored since the last commit.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// The samples that committed inserts removed since the last call (KEEP_LAST evictions
    /// of data, state changes a later change made obsolete; see [`Store::insert`]), each with
    /// its channel and its instance's key hash, in the order removed. Purges ([`Store::purge_instance`]) are
    /// not among them. What a transaction that was lost removed is not reported: it is
    /// still stored.
    pub fn take_removed(&mut self) -> Vec<(ChannelId, SampleId, [u8; 16])> {
        std::mem::take(&mut self.removed)
    }

    /// Calls `f` with every sample of channel `ch` in insertion order; returns how many.
    /// Pending inserts of this store are included.
    pub fn for_each_sample(
        &self,
        ch: ChannelId,
        mut f: impl FnMut(StoredSample),
    ) -> Result<usize, StoreError> {
        // Samples whose payloads are in segments wait in `batch` to be read together.
        let mut batch: Vec<StoredSample> = Vec::new();
        let mut locs: Vec<(i64, Location)> = Vec::new();
        let mut slots: Vec<usize> = Vec::new();
        let n = self.scan_channel(
            ch,
            "writer, sn, kind, key_hash, source_time, payload, id, seg, seg_off, seg_len",
            |row| {
                let (sample, loc) = self.sample_row(row)?;
                if let Some(loc) = loc {
                    slots.push(batch.len());
                    locs.push(loc);
                }
                batch.push(sample);
                if batch.len() >= SCAN_BATCH {
                    self.read_segments(&mut locs, &mut slots, |at, p| batch[at].payload = p)?;
                    batch.drain(..).for_each(&mut f);
                }
                Ok(())
            },
        )?;
        self.read_segments(&mut locs, &mut slots, |at, p| batch[at].payload = p)?;
        batch.drain(..).for_each(&mut f);
        Ok(n)
    }

    /// Reads the segment payloads `locs`, giving the i-th to `put(slots[i], payload)`, then
    /// empties both lists.
    fn read_segments(
        &self,
        locs: &mut Vec<(i64, Location)>,
        slots: &mut Vec<usize>,
        mut put: impl FnMut(usize, Vec<u8>),
    ) -> Result<(), StoreError> {
        if locs.is_empty() {
            return Ok(());
        }
        let segments = self
            .segments
            .as_ref()
            .ok_or_else(|| self.corrupt(NO_SEGMENTS.into()))?;
        segments
            .borrow_mut()
            .read(locs, |k, payload| put(slots[k], payload))?;
        locs.clear();
        slots.clear();
        Ok(())
    }

    /// Calls `f` with every sample of channel `ch` in insertion order, without its payload
    /// (which is not read); returns how many. Pending inserts are included.
    pub fn for_each_sample_meta(
        &self,
        ch: ChannelId,
        f: impl FnMut(SampleMeta),
    ) -> Result<usize, StoreError> {
        self.for_each_sample_meta_from(ch, SampleId(0), f)
    }

    /// [`Store::for_each_sample_meta`] of the samples stored at `from` or after it (a
    /// [`SampleId`] the store gave; insertion order is identity order).
    pub fn for_each_sample_meta_from(
        &self,
        ch: ChannelId,
        from: SampleId,
        mut f: impl FnMut(SampleMeta),
    ) -> Result<usize, StoreError> {
        // length() of a blob reads its size from the record header, not its pages.
        self.scan_channel_from(
            ch,
            from,
            "id, writer, sn, kind, key_hash, source_time, coalesce(seg_len, length(payload))",
            |row| {
                f(self.meta_row(row)?);
                Ok(())
            },
        )
    }

    /// Runs `f` on each of channel `ch`'s sample rows, in insertion order, with `columns`
    /// selected; returns how many rows there were.
    fn scan_channel(
        &self,
        ch: ChannelId,
        columns: &str,
        f: impl FnMut(&Row<'_>) -> Result<(), StoreError>,
    ) -> Result<usize, StoreError> {
        self.scan_channel_from(ch, SampleId(0), columns, f)
    }

    /// [`Store::scan_channel`] from row `from` on (rows of the channel below it skipped).
    fn scan_channel_from(
        &self,
        ch: ChannelId,
        from: SampleId,
        columns: &str,
        mut f: impl FnMut(&Row<'_>) -> Result<(), StoreError>,
    ) -> Result<usize, StoreError> {
        let op = "read samples";
        self.known(ch)?;
        self.flush_before_read(op)?;
        let sql = format!(
            "SELECT {columns} FROM samples \
             WHERE id BETWEEN max(?1 << 40, ?2) AND ((?1 + 1) << 40) - 1 ORDER BY id"
        );
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| self.err(op, e))?;
        let mut rows = stmt
            .query(rusqlite::params![ch.0, from.0])
            .map_err(|e| self.err(op, e))?;
        let mut n = 0;
        while let Some(row) = rows.next().map_err(|e| self.err(op, e))? {
            f(row)?;
            n += 1;
        }
        Ok(n)
    }

    /// A sample from columns `writer, sn, kind, key_hash, source_time, payload, id, seg,
    /// seg_off, seg_len`; a payload in a segment is left empty and its location returned.
    fn sample_row(
        &self,
        row: &Row<'_>,
    ) -> Result<(StoredSample, Option<(i64, Location)>), StoreError> {
        let op = "read samples";
        let get = |i| row.get_ref(i).map_err(|e| self.err(op, e));
        let loc = self.row_location(row, 6)?;
        let sample = StoredSample {
            writer: self.guid(get(0)?, "writer")?,
            sn: self.int(get(1)?, "sn")?,
            kind: self.kind(get(2)?)?,
            key_hash: self.guid(get(3)?, "key_hash")?,
            source_time: self.int(get(4)?, "source_time")?,
            payload: match (get(5)?, loc) {
                (ValueRef::Blob(_), Some(_)) => Vec::new(),
                (ValueRef::Blob(b), None) => b.to_vec(),
                (other, _) => {
                    return Err(self.corrupt(format!("payload is {:?}", other.data_type())))
                }
            },
        };
        Ok((sample, loc))
    }

    /// The row id and segment location from columns `at` (id), `at + 1..=at + 3` (seg,
    /// seg_off, seg_len): `None` for a payload kept in its row.
    fn row_location(
        &self,
        row: &Row<'_>,
        at: usize,
    ) -> Result<Option<(i64, Location)>, StoreError> {
        let op = "read samples";
        let get = |i| row.get::<_, Option<i64>>(i).map_err(|e| self.err(op, e));
        let id = self.int(row.get_ref(at).map_err(|e| self.err(op, e))?, "id")?;
        match location(get(at + 1)?, get(at + 2)?, get(at + 3)?) {
            Some(l) => Ok(Some((id, l))),
            None if get(at + 1)?.is_none() => Ok(None),
            None => Err(self.corrupt(format!("row {id} has a bad payload location"))),
        }
    }

    fn meta_row(&self, row: &Row<'_>) -> Result<SampleMeta, StoreError> {
        let op = "read samples";
        let get = |i| row.get_ref(i).map_err(|e| self.err(op, e));
        Ok(SampleMeta {
            id: SampleId(self.int(get(0)?, "id")?),
            writer: self.guid(get(1)?, "writer")?,
            sn: self.int(get(2)?, "sn")?,
            kind: self.kind(get(3)?)?,
            key_hash: self.guid(get(4)?, "key_hash")?,
            source_time: self.int(get(5)?, "source_time")?,
            payload_len: usize::try_from(self.int(get(6)?, "payload length")?)
                .map_err(|_| self.corrupt("a payload has a negative length".into()))?,
        })
    }

    /// Reads the payloads of samples `ids` (ascending), calling `f` for each in that order
    /// with its bytes, or `None` if it is no longer stored (evicted, purged). Runs of
    /// consecutive identities are read with one range scan each.
    pub fn payloads(
        &self,
        ids: &[SampleId],
        mut f: impl FnMut(SampleId, Option<Vec<u8>>),
    ) -> Result<(), StoreError> {
        let op = "read payloads";
        self.flush_before_read(op)?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, payload, id, seg, seg_off, seg_len FROM samples \
                 WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
            )
            .map_err(|e| self.err(op, e))?;
        // One run's answers, in order; those in segments are read together at its end.
        let mut out: Vec<(SampleId, Option<Vec<u8>>)> = Vec::new();
        let mut locs: Vec<(i64, Location)> = Vec::new();
        let mut slots: Vec<usize> = Vec::new();
        let mut rest = ids;
        while let Some(first) = rest.first() {
            // The longest run of consecutive identities from `first`.
            let run = rest
                .iter()
                .zip(first.0..)
                .take_while(|(id, want)| id.0 == *want)
                .count();
            let (chunk, tail) = rest.split_at(run);
            rest = tail;
            let last = chunk[chunk.len() - 1];
            let mut rows = stmt.query([first.0, last.0]).map_err(|e| self.err(op, e))?;
            let mut next = chunk.iter().peekable();
            while let Some(row) = rows.next().map_err(|e| self.err(op, e))? {
                let id = self.int(row.get_ref(0).map_err(|e| self.err(op, e))?, "id")?;
                while let Some(gone) = next.next_if(|w| w.0 < id) {
                    out.push((*gone, None));
                }
                if next.next_if(|w| w.0 == id).is_none() {
                    continue;
                }
                match self.row_location(row, 2)? {
                    Some(loc) => {
                        slots.push(out.len());
                        locs.push(loc);
                        out.push((SampleId(id), Some(Vec::new())));
                    }
                    None => match row.get_ref(1).map_err(|e| self.err(op, e))? {
                        ValueRef::Blob(b) => out.push((SampleId(id), Some(b.to_vec()))),
                        other => {
                            return Err(self.corrupt(format!("payload is {:?}", other.data_type())))
                        }
                    },
                }
            }
            drop(rows);
            out.extend(next.map(|w| (*w, None)));
            self.read_segments(&mut locs, &mut slots, |at, p| out[at].1 = Some(p))?;
            for (id, payload) in out.drain(..) {
                f(id, payload);
            }
        }
        Ok(())
    }

    /// Removes instance `key_hash` of channel `ch`: its samples and its state (for
    /// service_cleanup_delay). Joins the pending transaction if one is open. Returns the
    /// number of samples removed.
    pub fn purge_instance(
        &mut self,
        ch: ChannelId,
        key_hash: [u8; 16],
    ) -> Result<usize, StoreError> {
        let joined = !self.conn.is_autocommit();
        self.begin()?;
        let rows = self.state(ch)?.index.rows_of(&key_hash);
        self.instances.borrow_mut().remove(&(ch.0, key_hash));
        let mut removed = Vec::with_capacity(rows.len());
        let deleted = self.delete_rows(&rows, &mut removed).and_then(|_| {
            self.conn
                .prepare_cached("DELETE FROM instances WHERE channel = ?1 AND key_hash = ?2")
                .and_then(|mut s| s.execute(params![ch.0, &key_hash[..]]))
        });
        if let Err(e) = deleted {
            self.forget(ch);
            return Err(self.write_err(Some(ch), "purge instance", e));
        }
        if let Some(st) = self.channels.get_mut(&ch) {
            for (row, writer, sn) in &removed {
                st.index.remove(*row, writer, *sn, &key_hash);
            }
        }
        if !joined {
            // No transaction was pending: the purge is committed at once, as before the
            // store kept its index in memory.
            self.commit()?;
        }
        Ok(removed.len())
    }

    /// The original writers that have data kept in instance `key_hash` of channel `ch` and
    /// have not unregistered it since: what the store knows of the instance's registrations
    /// (a writer whose data were all evicted is not among them).
    pub fn registered_writers(
        &mut self,
        ch: ChannelId,
        key_hash: [u8; 16],
    ) -> Result<Vec<[u8; 16]>, StoreError> {
        Ok(self.state(ch)?.index.registered(&key_hash))
    }

    /// The instances of channel `ch` by key hash: the kind of each one's last stored sample
    /// (its instance state) and that sample's source time.
    pub fn instances(&self, ch: ChannelId) -> Result<Vec<([u8; 16], SampleKind, i64)>, StoreError> {
        let op = "list instances";
        self.known(ch)?;
        self.flush_instances(op)?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT key_hash, kind, source_time FROM instances WHERE channel = ?1 \
                 ORDER BY key_hash",
            )
            .map_err(|e| self.err(op, e))?;
        let mut rows = stmt.query([ch.0]).map_err(|e| self.err(op, e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(op, e))? {
            let get = |i| row.get_ref(i).map_err(|e| self.err(op, e));
            out.push((
                self.guid(get(0)?, "key_hash")?,
                self.kind(get(1)?)?,
                self.int(get(2)?, "source_time")?,
            ));
        }
        Ok(out)
    }

    /// Counts over the whole store.
    pub fn stats(&self) -> Result<StoreStats, StoreError> {
        self.flush_instances("stats")?;
        self.flush_before_read("stats")?;
        let count = |sql: &str| -> Result<u64, StoreError> {
            let v: i64 = self
                .conn
                .query_row(sql, [], |r| r.get(0))
                .map_err(|e| self.err("stats", e))?;
            Ok(u64::try_from(v).unwrap_or(0))
        };
        let file_bytes = if self.path == ":memory:" {
            0
        } else {
            count("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")?
        };
        Ok(StoreStats {
            samples: count("SELECT count(*) FROM samples")?,
            instances: count("SELECT count(*) FROM instances")?,
            channels: count("SELECT count(*) FROM channels")?,
            payload_bytes: count(
                "SELECT coalesce(sum(coalesce(seg_len, length(payload))), 0) FROM samples",
            )?,
            file_bytes: file_bytes + self.segment_bytes()?,
        })
    }

    /// Bytes in payload segments (their committed ends, from the table).
    fn segment_bytes(&self) -> Result<u64, StoreError> {
        if self.segments.is_none() {
            return Ok(0);
        }
        let v: i64 = self
            .conn
            .query_row(
                "SELECT coalesce(sum(end_offset), 0) FROM segments",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err("stats", e))?;
        Ok(u64::try_from(v).unwrap_or(0))
    }

    /// Runs `PRAGMA quick_check`: `Ok` when SQLite finds the database sound.
    pub fn check(&self) -> Result<(), StoreError> {
        self.flush_before_read("quick_check")?;
        let first: String = self
            .conn
            .pragma_query_value(None, "quick_check", |r| r.get(0))
            .map_err(|e| classify(&self.path, "quick_check", e))?;
        if first == "ok" {
            Ok(())
        } else {
            Err(self.corrupt(format!("quick_check: {first}")))
        }
    }

    // --- helpers ---

    /// Opens the pending transaction if none is. Once it holds the write lock, it checks
    /// whether another connection committed since this store last looked: then what the store
    /// caches of its channels (states, indexes) is dropped, to be reloaded from the file.
    fn begin(&mut self) -> Result<(), StoreError> {
        if self.conn.is_autocommit() {
            self.lost_transaction()?;
            self.exec("BEGIN IMMEDIATE", None)?;
            self.check_data_version()?;
            if let Some(segments) = &self.segments {
                segments.borrow_mut().load(&self.conn)?;
            }
        }
        Ok(())
    }

    /// Ends the transaction [`Store::begin`] just `opened` when nothing was written in it (a
    /// duplicate, a refusal): the caller commits only when inserts are pending, and an idle
    /// transaction would keep the write lock from other connections to the file.
    fn end_if_idle(&mut self, opened: bool) -> Result<(), StoreError> {
        if opened && self.pending == 0 && !self.conn.is_autocommit() {
            self.exec("COMMIT", None)?;
        }
        Ok(())
    }

    /// Drops the cached states and indexes if another connection committed since the last
    /// look (`PRAGMA data_version`; this store's own commits do not change it).
    fn check_data_version(&mut self) -> Result<(), StoreError> {
        let version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(|e| self.err("read data_version", e))?;
        if version != self.data_version {
            self.data_version = version;
            self.channels.clear();
            if let Some(segments) = &self.segments {
                segments.borrow_mut().invalidate();
            }
        }
        Ok(())
    }

    /// With no transaction open: [`StoreError::TransactionLost`] if inserts were pending
    /// (SQLite rolled their transaction back after a failure that was not a write of ours,
    /// e.g. while a read wrote the pending instance rows), so that they are never taken
    /// for committed.
    fn lost_transaction(&mut self) -> Result<(), StoreError> {
        self.uncommitted_bytes = 0;
        self.pending_removed.clear();
        self.deferred.borrow_mut().clear();
        if self.pending > 0 {
            if let Some(segments) = &self.segments {
                segments.borrow_mut().invalidate();
            }
        }
        let lost = std::mem::take(&mut self.pending);
        if lost == 0 {
            return Ok(());
        }
        self.channels.clear();
        self.instances.borrow_mut().clear();
        Err(StoreError::TransactionLost {
            path: self.path.clone(),
            lost,
            source: rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_ABORT),
                Some("the pending transaction is no longer open".into()),
            ),
        })
    }

    fn exec(&mut self, sql_text: &str, ch: Option<ChannelId>) -> Result<(), StoreError> {
        match self
            .conn
            .prepare_cached(sql_text)
            .and_then(|mut s| s.execute([]))
        {
            Ok(_) => Ok(()),
            Err(e) => Err(self.write_err(ch, "transaction control", e)),
        }
    }

    /// The cached limits, next row and index of `ch`, loaded on first use.
    fn state(&mut self, ch: ChannelId) -> Result<&ChannelState, StoreError> {
        if !self.channels.contains_key(&ch) {
            let (_, spec) = self.known(ch)?;
            let (index, last) = self.load_index(ch)?;
            let st = ChannelState {
                limits: spec.limits,
                next_seq: last - (ch.0 << SEQ_BITS) + 1,
                index,
            };
            self.channels.insert(ch, st);
        }
        self.channels.get(&ch).ok_or(StoreError::UnknownChannel {
            path: self.path.clone(),
            channel: ch,
        })
    }

    /// Builds the index of channel `ch` from its rows (pending inserts included); also
    /// returns the channel's last row id (the channel's base when it has none).
    fn load_index(&self, ch: ChannelId) -> Result<(ChannelIndex, i64), StoreError> {
        let mut index = ChannelIndex::default();
        let mut last = ch.0 << SEQ_BITS;
        self.scan_channel(ch, "id, writer, sn, key_hash, kind", |row| {
            let get = |i| row.get_ref(i).map_err(|e| self.err("index channel", e));
            let id = self.int(get(0)?, "id")?;
            index.add(
                id,
                self.guid(get(1)?, "writer")?,
                self.int(get(2)?, "sn")?,
                self.guid(get(3)?, "key_hash")?,
                self.kind(get(4)?)?,
            );
            last = id;
            Ok(())
        })?;
        Ok((index, last))
    }

    /// Drops what the store caches of `ch`: the next use reloads it from the file.
    fn forget(&mut self, ch: ChannelId) {
        self.channels.remove(&ch);
    }

    /// The channel's row, or [`StoreError::UnknownChannel`].
    fn known(&self, ch: ChannelId) -> Result<(ChannelId, ChannelSpec), StoreError> {
        let op = "find channel";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, topic, type_name, partitions, type_identity, persistent, \
                 history_depth, max_samples, max_instances, max_samples_per_instance, writer_qos \
                 FROM channels WHERE id = ?1",
            )
            .map_err(|e| self.err(op, e))?;
        let mut rows = stmt.query([ch.0]).map_err(|e| self.err(op, e))?;
        match rows.next().map_err(|e| self.err(op, e))? {
            Some(row) => self.channel_row(row).map_err(|e| self.err(op, e))?,
            None => Err(StoreError::UnknownChannel {
                path: self.path.clone(),
                channel: ch,
            }),
        }
    }

    fn guid(&self, v: ValueRef<'_>, what: &str) -> Result<[u8; 16], StoreError> {
        match v {
            ValueRef::Blob(b) => <[u8; 16]>::try_from(b)
                .map_err(|_| self.corrupt(format!("{what} has {} bytes, not 16", b.len()))),
            other => Err(self.corrupt(format!("{what} is {:?}, not a blob", other.data_type()))),
        }
    }

    fn int(&self, v: ValueRef<'_>, what: &str) -> Result<i64, StoreError> {
        match v {
            ValueRef::Integer(i) => Ok(i),
            other => {
                Err(self.corrupt(format!("{what} is {:?}, not an integer", other.data_type())))
            }
        }
    }

    fn kind(&self, v: ValueRef<'_>) -> Result<SampleKind, StoreError> {
        let code = self.int(v, "kind")?;
        SampleKind::from_code(code)
            .ok_or_else(|| self.corrupt(format!("unknown sample kind {code}")))
    }

    fn corrupt(&self, detail: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            detail,
        }
    }

    fn err(&self, op: &'static str, e: rusqlite::Error) -> StoreError {
        classify(&self.path, op, e)
    }

    /// Maps a failed write: full → [`StoreError::Full`]; a transaction SQLite rolled back →
    /// [`StoreError::TransactionLost`] (and the cached counts are reloaded on next use).
    fn write_err(
        &mut self,
        ch: Option<ChannelId>,
        op: &'static str,
        e: rusqlite::Error,
    ) -> StoreError {
        if self.conn.is_autocommit() {
            // The transaction is gone, and with it what the pending instance rows were for
            // and the pending segment records.
            self.instances.borrow_mut().clear();
            self.deferred.borrow_mut().clear();
            if let Some(segments) = &self.segments {
                segments.borrow_mut().invalidate();
            }
        }
        if self.pending > 0 && self.conn.is_autocommit() {
            let lost = std::mem::take(&mut self.pending);
            self.channels.clear();
            return StoreError::TransactionLost {
                path: self.path.clone(),
                lost,
                source: e,
            };
        }
        if self.conn.is_autocommit() {
            self.channels.clear();
        }
        if is_full(&e) {
            return StoreError::Full {
                path: self.path.clone(),
                channel: ch,
                limit: FullLimit::Disk,
                max: self.max_bytes.unwrap_or(0),
            };
        }
        sql(&self.path, op, e)
    }
}

/// Samples a scan reads before it reads their segment payloads together.
const SCAN_BATCH: usize = 1024;

const NO_SEGMENTS: &str = "a row names a payload segment, and an in-memory store has none";

/// A payload location from a row's (seg, seg_off, seg_len); `None` unless all three are
/// there and in range.
fn location(seg: Option<i64>, off: Option<i64>, len: Option<i64>) -> Option<Location> {
    Some(Location {
        seg: u32::try_from(seg?).ok()?,
        off: u64::try_from(off?).ok()?,
        len: u64::try_from(len?).ok()?,
    })
}

fn to_sql(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

fn from_sql(v: Option<i64>) -> Option<u64> {
    v.map(|v| u64::try_from(v).unwrap_or(0))
}
