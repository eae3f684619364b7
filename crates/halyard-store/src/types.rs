//! The values the store keeps and hands back: channels, their limits, samples, statistics.

/// DURABILITY_SERVICE history and resource limits of one channel (DDS 1.4 §2.2.3.5).
///
/// Checked on every [`crate::Store::insert`]; `None` means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// `None` = KEEP_ALL; `Some(n)` = KEEP_LAST n per instance (n ≥ 1). When
    /// `max_samples_per_instance` is smaller than n, the smaller value is the depth kept.
    pub history_depth: Option<u32>,
    /// Most samples the channel holds, all instances together.
    pub max_samples: Option<u64>,
    /// Most instances the channel holds.
    pub max_instances: Option<u64>,
    /// Most samples one instance holds (KEEP_ALL refuses beyond it; KEEP_LAST evicts).
    pub max_samples_per_instance: Option<u64>,
}

/// One durable channel: a topic with its type and partition set.
///
/// The store finds a channel by (topic, type_name, sorted and deduplicated partitions).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChannelSpec {
    /// Topic name.
    pub topic: String,
    /// Registered type name.
    pub type_name: String,
    /// Partition names as given; the store keys on the sorted, deduplicated list and gives
    /// this list back unchanged from [`crate::Store::channels`].
    pub partitions: Vec<String>,
    /// Opaque type identity (e.g. a TypeObject hash); empty = unknown and then not compared.
    pub type_identity: Vec<u8>,
    /// DURABILITY kind: PERSISTENT (`true`) or TRANSIENT (`false`).
    pub persistent: bool,
    /// History and resource limits.
    pub limits: Limits,
    /// Opaque writer QoS bytes the service stores and gets back.
    pub writer_qos: Vec<u8>,
}

/// What a stored sample says about its instance (DDS 1.4 §2.2.2.5.1 instance states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SampleKind {
    /// A write: data for a live instance.
    Alive,
    /// A dispose.
    Disposed,
    /// An unregister.
    Unregistered,
    /// A dispose and unregister in one sample.
    DisposedUnregistered,
}

impl SampleKind {
    /// The small integer the database holds for this kind.
    pub(crate) fn code(self) -> i64 {
        match self {
            SampleKind::Alive => 0,
            SampleKind::Disposed => 1,
            SampleKind::Unregistered => 2,
            SampleKind::DisposedUnregistered => 3,
        }
    }

    /// The kind for a database integer; `None` for a value no version of the store writes.
    pub(crate) fn from_code(code: i64) -> Option<SampleKind> {
        match code {
            0 => Some(SampleKind::Alive),
            1 => Some(SampleKind::Disposed),
            2 => Some(SampleKind::Unregistered),
            3 => Some(SampleKind::DisposedUnregistered),
            _ => None,
        }
    }
}

/// One sample as the durability service received it from its original writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSample {
    /// GUID of the original writer.
    pub writer: [u8; 16],
    /// The original writer's sequence number.
    pub sn: i64,
    /// Write, dispose, unregister or both.
    pub kind: SampleKind,
    /// The instance's key hash.
    pub key_hash: [u8; 16],
    /// Source timestamp (the caller's wall-clock unit, e.g. nanoseconds since the epoch).
    pub source_time: i64,
    /// Serialized payload (for a dispose or unregister usually the key only).
    pub payload: Vec<u8>,
}

/// A sample to store, borrowing its payload ([`crate::Store::insert_ref`]): the caller
/// keeps its buffer (the durability service hands the same buffer to its relay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRef<'a> {
    /// GUID of the original writer.
    pub writer: [u8; 16],
    /// The original writer's sequence number.
    pub sn: i64,
    /// Write, dispose, unregister or both.
    pub kind: SampleKind,
    /// The instance's key hash.
    pub key_hash: [u8; 16],
    /// Source timestamp.
    pub source_time: i64,
    /// Serialized payload.
    pub payload: &'a [u8],
}

impl StoredSample {
    /// The sample as a [`SampleRef`] borrowing its payload.
    pub fn as_ref(&self) -> SampleRef<'_> {
        SampleRef {
            writer: self.writer,
            sn: self.sn,
            kind: self.kind,
            key_hash: self.key_hash,
            source_time: self.source_time,
            payload: &self.payload,
        }
    }
}

/// A channel's identity within one store (its row id; stable across reopen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChannelId(pub(crate) i64);

impl ChannelId {
    /// The row id, for logs.
    pub fn raw(self) -> i64 {
        self.0
    }
}

impl std::fmt::Display for ChannelId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "channel {}", self.0)
    }
}

/// A stored sample's identity in its store: what [`crate::Store::payloads`] reads it back
/// by. It stays the same while the sample is stored (across restarts too), and a removed
/// sample's identity is never given to another of its channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SampleId(pub i64);

/// A stored sample without its payload ([`crate::Store::for_each_sample_meta`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleMeta {
    /// Where the sample is stored.
    pub id: SampleId,
    /// GUID of the original writer.
    pub writer: [u8; 16],
    /// The original writer's sequence number.
    pub sn: i64,
    /// Write, dispose, unregister or both.
    pub kind: SampleKind,
    /// The instance's key hash.
    pub key_hash: [u8; 16],
    /// Source timestamp.
    pub source_time: i64,
    /// Bytes of its payload.
    pub payload_len: usize,
}

/// Outcome of a successful [`crate::Store::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Inserted {
    /// The sample joined the pending transaction (durable after [`crate::Store::commit`]),
    /// stored as this.
    Stored(SampleId),
    /// (channel, writer, sn) is already stored; nothing changed.
    Duplicate,
    /// A dispose or unregistration that would change nothing the store keeps (its instance
    /// holds nothing, or an unregistering writer has no data in it): not stored, nothing
    /// changed (see [`crate::Store::insert`]).
    Obsolete,
}

/// How hard a commit pushes data to the disk, and which journal the store keeps (SQLite
/// `PRAGMA synchronous` and `PRAGMA journal_mode`).
///
/// Every level survives a crash of the process (kill -9): a commit has handed every byte to
/// the kernel before it returns. They differ in what a power loss or an OS crash does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncLevel {
    /// Rollback journal, no fsync (`synchronous = OFF`): the fastest level, for stores that
    /// need survive only process crashes. A power loss or an OS crash may lose recent commits
    /// **or leave the file damaged**; a damaged file is then refused at open
    /// ([`crate::StoreError::Corrupt`]), never silently used, but its samples are out of
    /// reach until it is repaired. Choose it knowingly (`--sync process`).
    Process,
    /// Write-ahead log, fsynced at its checkpoints (`synchronous = NORMAL` in WAL mode): a
    /// power loss or an OS crash may lose the commits since the last checkpoint, never
    /// damages the file. The default. Payloads in segments (see the crate documentation)
    /// are fdatasynced at each commit, before it, so that no row can outlive its payload;
    /// the rows themselves wait for the checkpoints.
    #[default]
    Normal,
    /// Rollback journal, journal and file fsynced at each commit (`synchronous = FULL`): a
    /// committed transaction also survives a power loss or an OS crash. Each commit waits
    /// for its fsyncs (three per batch), and the service's writers wait for its
    /// acknowledgments meanwhile.
    Full,
}

impl std::str::FromStr for SyncLevel {
    type Err = String;

    /// `process`, `normal` or `full`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "process" => Ok(SyncLevel::Process),
            "normal" => Ok(SyncLevel::Normal),
            "full" => Ok(SyncLevel::Full),
            other => Err(format!(
                "bad sync level {other:?}: use process (survives kill -9), normal (and power \
                 loss without damage, recent commits may be lost) or full (every commit survives \
                 power loss)"
            )),
        }
    }
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreOptions {
    /// Durability of each commit.
    pub sync: SyncLevel,
    /// Hard cap on the database size in bytes (`PRAGMA max_page_count`); `None` = no cap.
    /// The journal comes on top of it. A rollback journal holds the pages the largest
    /// transaction changed (not those it appended), truncated to 64 MB after a commit; the
    /// write-ahead log of [`SyncLevel::Normal`] grows up to a quarter of the cap (at least
    /// 8 MB, at most 256 MB, also without a cap) before a commit restarts it, twice that at
    /// worst, and is truncated to that quarter afterwards.
    pub max_bytes: Option<u64>,
}

/// Counts over the whole store, from [`crate::Store::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreStats {
    /// Samples stored (pending ones included).
    pub samples: u64,
    /// Instances with state.
    pub instances: u64,
    /// Channels.
    pub channels: u64,
    /// Sum of payload lengths.
    pub payload_bytes: u64,
    /// Database size: page_count × page_size (0 for an in-memory store).
    pub file_bytes: u64,
}
