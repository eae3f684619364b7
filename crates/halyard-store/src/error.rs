//! The one error type of the store: every failure says what, why and which store.

use crate::types::ChannelId;
use std::fmt;

/// Which limit a refused insert met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FullLimit {
    /// The channel's `max_samples`.
    Samples,
    /// The channel's `max_instances` (the sample would start a new instance).
    Instances,
    /// The channel's `max_samples_per_instance` under KEEP_ALL.
    PerInstance,
    /// The store's channel ids ran out (2^23 channels created).
    Channels,
    /// The store's `max_bytes` (SQLite's page cap) or the disk itself.
    Disk,
}

impl fmt::Display for FullLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FullLimit::Samples => "max_samples",
            FullLimit::Instances => "max_instances",
            FullLimit::PerInstance => "max_samples_per_instance",
            FullLimit::Channels => "the number of channels",
            FullLimit::Disk => "max_bytes (disk)",
        })
    }
}

/// Everything that can go wrong in the store. `path` is the store's file (or `:memory:`).
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The directory that should hold a new store does not exist.
    NoDirectory {
        /// The store file asked for.
        path: String,
    },
    /// The file could not be read before SQLite saw it.
    Io {
        /// The store file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file exists but is empty (0 bytes): a store truncated to nothing, or a file
    /// something else made. It is not taken as a new store (its samples would be lost
    /// silently) and was left untouched.
    Empty {
        /// The store file.
        path: String,
    },
    /// The file is not an SQLite database. It was left untouched.
    NotADatabase {
        /// The store file.
        path: String,
    },
    /// The database is damaged, or holds a value no version of the store writes.
    /// The file was left untouched.
    Corrupt {
        /// The store file.
        path: String,
        /// SQLite's first complaint, or what value was wrong.
        detail: String,
    },
    /// An SQLite database of another application or with tables the store does not know.
    /// The file was left untouched.
    Foreign {
        /// The store file.
        path: String,
        /// What gave it away.
        reason: String,
    },
    /// The store was written by a newer version of this crate. The file was left untouched.
    NewerSchema {
        /// The store file.
        path: String,
        /// Schema version in the file.
        found: i64,
        /// Newest schema version this crate reads.
        supported: i64,
    },
    /// A limit refused the sample. Nothing was removed; the pending transaction is intact.
    Full {
        /// The store file.
        path: String,
        /// The channel (`None` for a disk-full outside an insert).
        channel: Option<ChannelId>,
        /// Which limit.
        limit: FullLimit,
        /// The limit's value (samples, instances, or bytes for [`FullLimit::Disk`]; 0 when the
        /// disk itself, not the cap, is full).
        max: u64,
    },
    /// The channel holds samples of another type identity.
    TypeChanged {
        /// Topic name.
        topic: String,
        /// Type name.
        type_name: String,
    },
    /// The channel id is not in this store.
    UnknownChannel {
        /// The store file.
        path: String,
        /// The id asked for.
        channel: ChannelId,
    },
    /// Rows appeared in the channel behind this store's back (another connection writes
    /// the same file); the insert was not done.
    Conflict {
        /// The store file.
        path: String,
        /// The channel.
        channel: ChannelId,
    },
    /// The spec's limits cannot be honoured (e.g. KEEP_LAST 0).
    InvalidLimits {
        /// Topic name.
        topic: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// SQLite rolled back the whole pending transaction after an error: `lost` inserts that
    /// were not yet committed are gone (they were never reported durable).
    TransactionLost {
        /// The store file.
        path: String,
        /// Pending inserts rolled back.
        lost: usize,
        /// The error that caused it.
        source: rusqlite::Error,
    },
    /// Any other SQLite failure, with the operation that met it.
    Sqlite {
        /// The store file.
        path: String,
        /// What the store was doing.
        op: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NoDirectory { path } => {
                write!(
                    f,
                    "cannot create store {path}: its directory does not exist"
                )
            }
            StoreError::Io { path, source } => write!(f, "cannot read store {path}: {source}"),
            StoreError::Empty { path } => write!(
                f,
                "store {path} is empty (0 bytes): truncated, or not made by a store; refused \
                 and left untouched (remove it to start a new, empty store)"
            ),
            StoreError::NotADatabase { path } => write!(
                f,
                "{path} is not an SQLite database; refused and left untouched"
            ),
            StoreError::Corrupt { path, detail } => write!(
                f,
                "store {path} is damaged ({detail}); refused and left untouched"
            ),
            StoreError::Foreign { path, reason } => write!(
                f,
                "{path} is not a Halyard store ({reason}); refused and left untouched"
            ),
            StoreError::NewerSchema {
                path,
                found,
                supported,
            } => write!(
                f,
                "store {path} has schema version {found}, newer than {supported} which this \
                 version reads; refused and left untouched (use a newer Halyard)"
            ),
            StoreError::Full {
                path,
                channel,
                limit,
                max,
            } => {
                write!(f, "store {path} full: ")?;
                if let Some(ch) = channel {
                    write!(f, "{ch} ")?;
                }
                if *limit == FullLimit::Disk && *max == 0 {
                    write!(f, "the disk is full")?;
                } else {
                    write!(f, "reached {limit} = {max}")?;
                }
                write!(f, "; the sample was not stored, nothing was removed")
            }
            StoreError::TypeChanged { topic, type_name } => write!(
                f,
                "topic {topic:?} with type {type_name:?} is stored with another type identity; \
                 the stored samples are kept: the writer must use the stored type or a new topic"
            ),
            StoreError::UnknownChannel { path, channel } => {
                write!(f, "store {path} has no {channel}")
            }
            StoreError::Conflict { path, channel } => write!(
                f,
                "store {path}: {channel} is written by another connection at the same time; \
                 one store file takes one Store"
            ),
            StoreError::InvalidLimits { topic, reason } => {
                write!(f, "limits of topic {topic:?} refused: {reason}")
            }
            StoreError::TransactionLost { path, lost, source } => write!(
                f,
                "store {path}: SQLite rolled back the pending transaction ({source}); \
                 {lost} uncommitted samples are lost"
            ),
            StoreError::Sqlite { path, op, source } => {
                write!(f, "store {path}: {op} failed: {source}")
            }
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io { source, .. } => Some(source),
            StoreError::TransactionLost { source, .. } | StoreError::Sqlite { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}

/// Whether an SQLite error says the database or disk is full.
pub(crate) fn is_full(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
}
