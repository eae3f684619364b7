//! The sample store under Halyard's durability service (TRANSIENT and PERSISTENT durability,
//! DDS 1.4 §2.2.3.4 DURABILITY and §2.2.3.5 DURABILITY_SERVICE).
//!
//! # Design
//!
//! One [`Store`] is one SQLite database: a file for PERSISTENT data, an in-memory database
//! for TRANSIENT data, through the same code. It knows nothing of DDS entities: a *channel*
//! is a topic, type name and partition set; a sample carries its original writer's GUID and
//! sequence number, its instance's key hash, its kind (write, dispose, unregister) and its
//! source time. The durability service owns the DDS side and decides when to commit.
//!
//! * **Transactions.** Inserts join one open transaction until [`Store::commit`], so the
//!   service chooses the durability cadence: commit per sample, per batch or per interval. The store reads no clock; the service passes time in and calls commit.
//!   A sample is durable, and may be acknowledged as stored, only once `commit` returned.
//! * **Idempotence.** (channel, writer GUID, sequence number) is unique: a sample seen again
//!   (a service restart, two services, a writer's resend) is [`Inserted::Duplicate`].
//! * **Limits before writes.** The HISTORY and RESOURCE_LIMITS of a channel are decided from
//!   cached counts before anything is written ([`FullLimit`]), so a refusal writes nothing.
//!   Nothing is ever dropped silently: a full store is an error.
//! * **The size cap.** `max_bytes` is SQLite's `max_page_count`. Far from it, an insert is
//!   plain statements (fast). Within 64 pages plus twice the payload of the cap, an insert
//!   runs in its own SAVEPOINT with statements SQLite journals one by one, so reaching the
//!   cap undoes that insert alone and the pending ones stay. A *physical* disk full on the
//!   fast path makes SQLite cancel the whole pending transaction: that is reported as
//!   [`StoreError::TransactionLost`] with the count (those samples were never committed,
//!   so never acknowledged). The journal comes on top of `max_bytes`: a rollback journal
//!   holds the original pages the largest transaction changed (not those it appended),
//!   truncated to 64 MB after a commit; the write-ahead log up to a quarter of the cap
//!   (8 MB to 256 MB, see the `checkpoint` module), twice that at worst. Far from the cap the pages in use are not counted per insert: an
//!   estimate from the bytes inserted since the last count (doubled) decides when to count.
//! * **Payloads in segments.** In a file store without a size cap, payloads of 512 bytes
//!   and more live in append-only segment files beside the database (`PATH-payloads/`),
//!   written with `O_DIRECT` a commit at a time, and the row says where (schema version 3;
//!   the `segments` module has the design). A 1 KB sample then costs no write into fresh
//!   page-cache pages (on machines whose freed memory goes back to a hypervisor, that copy
//!   costs about as much as all of a VOLATILE sample's work), and its row is much smaller. At `Normal` and `Full` the
//!   payloads are fdatasynced before SQLite's COMMIT: a row never reaches the disk ahead of
//!   its payload. Smaller payloads, and every payload a capped or in-memory store is given,
//!   stay in their rows (a capped store still reads the segments an uncapped run wrote).
//! * **Rows of segment payloads, 32 to a statement.** Such a row is INSERTed later with 31
//!   others, before anything reads or deletes samples and before the commit (`DeferredRow`
//!   in the `store` module), `INSERT OR FAIL` (no statement journal); a failure to write them
//!   rolls the whole transaction back and reports its inserts lost.
//! * **Row order.** A sample's row id is `channel << 40 | n`, n counting the channel's
//!   inserts: a channel streams in insertion order straight from the table's b-tree.
//! * **Indexes.** The samples table is the only b-tree an insert writes (schema version 2).
//!   Duplicates, KEEP_LAST eviction and purges are answered by an in-memory index per channel
//!   (stored sequence numbers per writer as ranges, row ids per instance: a few bytes per
//!   stored sample), built by one scan of the channel's rows on first use (`index` module).
//!   Version 1's two SQLite indexes cost more than the row itself on small samples; a
//!   version-1 store is converted when opened (its indexes dropped).
//! * **Instance rows once per commit.** An insert updates its instance's row (last kind and
//!   source time, sample count) in memory; the rows are written once per commit (and
//!   before anything reads the `instances` table), one upsert per instance and batch
//!   instead of one per sample. Near the size cap they are written at once, inside the
//!   insert's savepoint.
//! * **Journal, by [`SyncLevel`].** [`SyncLevel::Normal`] (the default) keeps a write-ahead
//!   log with `synchronous = NORMAL`: fsync only at checkpoints, so a power loss may lose the
//!   commits since the last one but never damages the file. [`SyncLevel::Process`] and
//!   [`SyncLevel::Full`] keep a rollback journal between transactions (`journal_mode =
//!   PERSIST`). Samples are appended: a commit writes its new pages once, into the file, and
//!   journals only the few existing pages it changes (the last leaf and the interior pages of
//!   the table and its indexes), where the log writes every page twice (log, then checkpoint
//!   into the file) and checksums it, so a rollback journal costs a sample about half what
//!   the log does (`examples/store_bench` compares them). `Process` is `synchronous = OFF`:
//!   a commit has handed every byte to the kernel, which is what survives a kill -9, but a
//!   power loss may damage the file (refused at open as corrupt): an explicit choice, never
//!   the default. `Full` is `synchronous = FULL` (journal and file fsynced per commit). The
//!   journal file (`PATH-journal`) stays beside a rollback-journal store between
//!   transactions, its header zeroed (PERSIST saves creating and deleting it per commit); the
//!   log (`PATH-wal`, `PATH-shm`) beside a WAL store, and the payload segments
//!   (`PATH-payloads/`, [`Store::payload_dir`]) beside any file store: they belong to the
//!   store, copy or remove them together (a store whose segments are missing is refused). A process killed within a transaction leaves a *hot* journal: the
//!   next open rolls it back (SQLite's own recovery; it needs a read-write connection, taken
//!   only once the file's header says it is a Halyard store). Opening a store with another
//!   level converts it (SQLite switches the journal mode). With the log, checkpoints run on
//!   a thread of the store's own (`checkpoint` module): SQLite's automatic checkpoint ran in
//!   the commit that crossed 1000 pages, on the service thread, and cost it a large share of
//!   its time on a stream of small samples.
//! * **The type of a channel.** [`Store::set_channel_type`] keeps the XTypes TypeInformation
//!   and TypeObjects its writers announced (schema version 4, table `channel_types`), so a
//!   restarted service announces and serves the type although no writer of it is alive.
//! * **Refuse, never repair.** An existing file is inspected read-only first (magic bytes,
//!   application_id, schema version, table list, `PRAGMA quick_check`); a file that is not
//!   ours or is damaged is refused with a typed error and not written to.
//!
//! # Why SQLite (through rusqlite, bundled) rather than redb
//!
//! SQLite's file format is stable and documented, backward compatible since 2004 and
//! readable by the `sqlite3` shell and countless tools, which matters for a file operators
//! keep for years and must be able to inspect when something goes wrong. Its journal modes
//! and `synchronous` levels give exactly the configurable durability levels a user needs
//! (survive a kill -9; also a power loss without damage; also every commit), and
//! batching many inserts per commit gives the throughput. `PRAGMA max_page_count` gives a
//! hard bound on the database size that turns into an ordinary SQLITE_FULL error, so the
//! DURABILITY_SERVICE limits can hold on disk too. Fast DDS's persistence plugin stores its
//! samples in SQLite as well, so the benchmark comparison the issue asks for is like for
//! like. redb is pure Rust and pleasant, but younger, its file format has changed between
//! releases, it has no size cap, and no outside tool reads its files. The bundled SQLite
//! build removes any dependence on the host's library version.
//!
//! # Threads
//!
//! A `Store` owns one `rusqlite::Connection`: it is `Send` but not `Sync`. The service
//! keeps it on one thread (or behind a mutex). Several `Store`s may share a file (two
//! processes whose embedded services use the same default store path): SQLite serialises
//! their transactions, and a store that sees, when it begins one, that another connection
//! committed (`PRAGMA data_version`) reloads its cached channel states and indexes from the
//! file. That reload scans the channels used: a file shared by busy writers is correct but
//! slower than one store per file.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod checkpoint;
mod error;
mod index;
mod limits;
mod open;
mod partitions;
mod segments;
mod store;
mod types;

pub use error::{FullLimit, StoreError};
pub use open::{APPLICATION_ID, SCHEMA_VERSION};
pub use store::channel_types::ChannelType;
pub use store::Store;
pub use types::{
    ChannelId, ChannelSpec, Inserted, Limits, SampleId, SampleKind, SampleMeta, SampleRef,
    StoreOptions, StoreStats, StoredSample, SyncLevel,
};
