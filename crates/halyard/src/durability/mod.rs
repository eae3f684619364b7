//! The durability service: TRANSIENT and PERSISTENT data beyond their writers' lifetime
//! (DDS 1.4 §2.2.3.4 DURABILITY, §2.2.3.5 DURABILITY_SERVICE).
//!
//! Design. A service is a participant of its own. For every durable *channel* it discovers (a
//! topic, its type, a partition set and a kind, TRANSIENT or PERSISTENT; learnt from the SEDP
//! announcements of durable writers, other services' relays included, and from its store at
//! start) it creates:
//!
//! - a reliable KEEP_ALL reader whose acknowledgments are held (`halyard_core`'s `relay`
//!   module): what it receives goes to the service thread, which inserts it in the store
//!   (TRANSIENT: an in-memory SQLite database; PERSISTENT: the store file), commits by the
//!   [`CommitPolicy`], and only then releases the acknowledgments. A writer's
//!   `wait_for_acknowledgments` therefore returns once every service stored its samples; a
//!   kill -9 of the service loses nothing it acknowledged, and what it had not acknowledged
//!   the writer still holds and sends again to the restarted service;
//! - a relay writer holding the stored samples, each sent with its original writer and
//!   sequence number (PID_ORIGINAL_WRITER_INFO), its source timestamp and its kind (alive,
//!   disposed, unregistered). A reader that matches it gets the history stored so far, in
//!   order; what is stored later reaches that reader from the original writer. Readers of
//!   Halyard deliver each original sample once, however many services and writers send it.
//!   While no reader needs a relay's history (its readers got the samples from their
//!   writers, and no other service catches up from it) the history stays in the store only;
//!   a reader that matches then waits until the service wrote it to the relay (the
//!   metadata; payloads are read back as readers ask for them).
//!
//! The store is keyed by the original writer and sequence number, so a sample received from
//! its writer and from another service is stored once. The DURABILITY_SERVICE history and
//! resource limits of the first writer seen apply to a channel, in the store (on disk too) and
//! in the relay; a full store refuses the sample, counts it in [`ServiceStats::refused_full`],
//! says why in [`ServiceStats::problems`] and stops acknowledging that writer (it keeps the
//! samples and blocks when its own history fills): never silent loss. An instance disposed
//! while its channel has no live writer is purged SERVICE_CLEANUP_DELAY later. A writer whose
//! type differs from the one stored for its topic is refused with a message.
//!
//! Where it runs: `DurabilityService::start` for a standalone service (`halyard durability
//! --store PATH`), and embedded, started by a participant whose options ask for it when it
//! creates its first TRANSIENT or PERSISTENT writer (scope: that participant's writers; see
//! [`crate::ParticipantOptions::durability`]). The service and its store (SQLite) are the
//! cargo feature `durability`; without it this module keeps only what a writer knows of the
//! services of other processes ([`ServiceMatch`]) and the options' types. An embedded service's readers are *fed*: that
//! participant's reliable writers hand them their changes in memory instead of sending them,
//! and take the service's commits as their acknowledgments (`Input::Fed`; ARCHITECTURE,
//! "Fed readers").

// Without the cargo feature `durability`, the service's hook in the runtime (`Tap`, `Input`)
// stays and is never set.
#![cfg_attr(not(feature = "durability"), allow(dead_code))]

#[cfg(feature = "durability")]
mod channel;
#[cfg(feature = "durability")]
mod cleanup;
#[cfg(feature = "durability")]
mod relay_type;
mod services;
#[cfg(feature = "durability")]
mod worker;

#[cfg(feature = "durability")]
use crate::error::{Error, Result};
#[cfg(feature = "durability")]
use crate::participant::{DomainParticipant, ParticipantOptions};
use halyard_core::{Event, ReceivedSample};
#[cfg(feature = "durability")]
use halyard_store::{Store, StoreOptions};
use halyard_wire::discovery::EndpointData;
use halyard_wire::qos::DurabilityKind;
#[cfg(feature = "durability")]
use halyard_wire::GuidPrefix;
use halyard_wire::{EntityId, Guid};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::mpsc;
#[cfg(feature = "durability")]
use std::sync::{Arc, Mutex};
#[cfg(feature = "durability")]
use std::thread::JoinHandle;
use std::time::Duration;

pub use halyard_core::is_service_endpoint;
#[cfg(feature = "durability")]
pub use halyard_store::{StoreError, StoreStats, SyncLevel};
pub use services::ServiceMatch;

/// The directory beside a store file that holds its payload segments (`PATH-payloads`). It
/// belongs to the store, as its `-wal`, `-shm` and `-journal` files do: copy, move or remove
/// them together.
#[cfg(feature = "durability")]
pub fn payload_dir(store: &std::path::Path) -> PathBuf {
    Store::payload_dir(store)
}

/// When the service commits what it received (and then acknowledges it to the writers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitPolicy {
    /// One transaction per sample: the lowest latency to "stored", the lowest throughput.
    PerSample,
    /// One transaction per `max_samples` samples, or once the first uncommitted one waited
    /// `max_delay`.
    Batch {
        /// Samples per transaction at most.
        max_samples: usize,
        /// Longest a received sample waits for its commit.
        max_delay: Duration,
    },
    /// One transaction per interval (whatever arrived meanwhile).
    Interval(Duration),
}

/// Samples per transaction of the default policy.
pub const DEFAULT_BATCH_SAMPLES: usize = 4096;

/// Longest wait for a commit under the default policy (and `batch:N` without a delay).
pub const DEFAULT_BATCH_DELAY: Duration = Duration::from_millis(10);

impl Default for CommitPolicy {
    fn default() -> Self {
        CommitPolicy::Batch {
            max_samples: DEFAULT_BATCH_SAMPLES,
            max_delay: DEFAULT_BATCH_DELAY,
        }
    }
}

impl std::str::FromStr for CommitPolicy {
    type Err = String;

    /// `sample`, `batch` (4096 samples / 10 ms), `batch:N[:MS]`, or `interval:MS`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad =
            || format!("bad commit policy {s:?}: use sample, batch, batch:N[:MS] or interval:MS");
        let num = |v: &str| v.parse::<u64>().ok().filter(|&n| n > 0);
        let mut parts = s.split(':');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("sample"), None, None, None) => Ok(CommitPolicy::PerSample),
            (Some("batch"), None, None, None) => Ok(CommitPolicy::default()),
            (Some("batch"), Some(n), ms, None) => Ok(CommitPolicy::Batch {
                max_samples: num(n).ok_or_else(bad)? as usize,
                max_delay: match ms {
                    Some(ms) => Duration::from_millis(num(ms).ok_or_else(bad)?),
                    None => DEFAULT_BATCH_DELAY,
                },
            }),
            (Some("interval"), Some(ms), None, None) => Ok(CommitPolicy::Interval(
                Duration::from_millis(num(ms).ok_or_else(bad)?),
            )),
            _ => Err(bad()),
        }
    }
}

/// The environment variable that turns the embedded durability service off (`off`), read by
/// [`crate::ParticipantOptions::from_env`].
pub const DURABILITY_ENV: &str = "HALYARD_DURABILITY";
/// The environment variable naming the embedded service's store file, read by
/// [`crate::ParticipantOptions::from_env`].
pub const DURABILITY_STORE_ENV: &str = "HALYARD_DURABILITY_STORE";
/// The environment variable choosing the embedded service's `SyncLevel`, read by
/// [`crate::ParticipantOptions::from_env`].
pub const DURABILITY_SYNC_ENV: &str = "HALYARD_DURABILITY_SYNC";
/// The environment variable choosing the embedded service's [`CommitPolicy`], read by
/// [`crate::ParticipantOptions::from_env`].
pub const DURABILITY_COMMIT_ENV: &str = "HALYARD_DURABILITY_COMMIT";

/// Whether a participant runs an embedded durability service for its own TRANSIENT and
/// PERSISTENT writers (started with the first of them), and where it keeps PERSISTENT data.
/// Its store's sync level and commit policy are `ParticipantOptions::durability_sync` and
/// `durability_commit`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EmbeddedDurability {
    /// No embedded service (the default): durable samples outlive their writer only in a
    /// standalone service (`halyard durability`).
    #[default]
    Off,
    /// On, with the store file `$XDG_STATE_HOME/halyard/durability-domain<D>.sqlite` for
    /// domain `D` (`XDG_STATE_HOME` defaults to `~/.local/state`; the directory is created;
    /// without either variable PERSISTENT data are not kept beyond their writer). What
    /// [`crate::ParticipantOptions::from_env`] chooses unless told otherwise.
    StateDirectory,
    /// On, with this store file for PERSISTENT data (`None`: PERSISTENT data are not kept
    /// beyond their writer, and the service says so in its problems).
    On {
        /// The store file.
        store: Option<PathBuf>,
    },
}

impl EmbeddedDurability {
    /// `None`: no embedded service; otherwise its store file, if any.
    #[cfg(feature = "durability")]
    pub(crate) fn resolve(&self, domain_id: u32) -> Option<Option<PathBuf>> {
        match self {
            EmbeddedDurability::Off => None,
            EmbeddedDurability::On { store } => Some(store.clone()),
            EmbeddedDurability::StateDirectory => Some(default_store(domain_id)),
        }
    }
}

/// `$XDG_STATE_HOME/halyard/durability-domain<D>.sqlite` (the directory created), if there is
/// a home for it.
#[cfg(feature = "durability")]
fn default_store(domain_id: u32) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    let dir = base.join("halyard");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(format!("durability-domain{domain_id}.sqlite")))
}

/// How a durability service runs.
#[cfg(feature = "durability")]
#[derive(Clone, Debug, Default)]
pub struct DurabilityConfig {
    /// The store file of PERSISTENT data (created if absent; a file that is not a Halyard
    /// store, or is damaged, is refused and left untouched). `None`: PERSISTENT channels are
    /// refused (and said so in [`ServiceStats::problems`]); TRANSIENT ones are kept in memory.
    pub store: Option<PathBuf>,
    /// When received samples are committed and acknowledged.
    pub commit: CommitPolicy,
    /// What a commit survives (a process crash; a power loss without damage to the file, the
    /// default; every commit a power loss): see [`SyncLevel`].
    pub sync: SyncLevel,
    /// The most bytes the store file may take (`None`: unbounded).
    pub max_store_bytes: Option<u64>,
    /// Options of the service's own participant.
    pub participant: ParticipantOptions,
    /// Keep the samples of this participant's writers only (an embedded service); `None`:
    /// every durable writer of the domain.
    pub only_participant: Option<GuidPrefix>,
}

/// What a service did so far.
#[cfg(feature = "durability")]
#[derive(Clone, Debug, Default)]
pub struct ServiceStats {
    /// Durable channels served (topic, type, partitions, kind).
    pub channels: usize,
    /// Samples loaded from the store at start.
    pub loaded: u64,
    /// Samples stored since start.
    pub stored: u64,
    /// Samples received again (from another service, or resent) and not stored twice.
    pub duplicates: u64,
    /// Samples the writers of the participant that embeds the service handed it in memory
    /// (the others came through the network).
    pub fed: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Samples a full store refused (see [`ServiceStats::problems`]).
    pub refused_full: u64,
    /// Instances purged after their SERVICE_CLEANUP_DELAY.
    pub purged_instances: u64,
    /// Payload bytes the relays hold in memory now: samples sent to readers that have not
    /// acknowledged them yet, or read back for late readers. The stored history's bytes are
    /// in the store.
    pub relay_payload_bytes: u64,
    /// Stored samples the relays hold an entry for now (their metadata, about 300 bytes
    /// each). While no reader needs the history from a relay (every reader got the samples
    /// from their writers, and no other service catches up from it) the service holds back
    /// what it stores, and this does not grow; a reader that matches then gets the held-back
    /// history written to the relay first, which this then counts (`halyard_core`'s relay
    /// module, "Deferred history").
    pub relay_held_samples: u64,
    /// What went wrong, and why (the latest [`MAX_PROBLEMS`]).
    pub problems: Vec<String>,
}

/// Problems a service remembers (the oldest are dropped beyond).
#[cfg(feature = "durability")]
pub const MAX_PROBLEMS: usize = 32;

/// What the participant's driver hands the service thread.
pub(crate) enum Input {
    /// A durable writer was discovered (or announced again).
    Writer(Box<EndpointData>),
    /// A writer left.
    WriterLost(Guid),
    /// A sample for one of the service's readers.
    Sample(ReceivedSample),
    /// A change a writer of the participant that embeds the service handed one of its
    /// readers in memory (`halyard_core`'s `Participant::set_fed_service`).
    Fed(ReceivedSample),
    /// A relay's readers wait for payloads it released (read them from the store).
    PayloadsWanted(EntityId),
    /// A reader matches a relay whose history the service held back (write it to the relay).
    HistoryWanted(EntityId),
    /// A writer of the participant that embeds the service waits on its acknowledgment
    /// (a write blocked, a wait for acknowledgments): commit now, not at the batch's end.
    Commit,
    /// Commit what is pending and end.
    Stop,
}

/// The service's hook in its participant's driver (`runtime::State::service`): samples of the
/// service's readers and the domain's durable writers go to the service thread.
pub(crate) struct Tap {
    tx: mpsc::Sender<Input>,
    /// The service's readers.
    pub(crate) readers: BTreeSet<EntityId>,
    /// Samples handed to the service thread and not yet processed, per reader (the reader's
    /// credit in the core is what is left of [`worker::CREDIT`]).
    pub(crate) in_flight: BTreeMap<EntityId, usize>,
}

impl Tap {
    pub(crate) fn on_event(&mut self, e: &Event) {
        let input = match e {
            Event::PublicationDiscovered(ed) if ed.qos.durability >= DurabilityKind::Transient => {
                Input::Writer(ed.clone())
            }
            Event::PublicationLost(g) => Input::WriterLost(*g),
            Event::PayloadsWanted { writer } => Input::PayloadsWanted(*writer),
            Event::RelayHistoryWanted { writer } => Input::HistoryWanted(*writer),
            _ => return,
        };
        // The thread ends only after the participant stopped feeding it.
        let _ = self.tx.send(input);
    }

    pub(crate) fn on_sample(&mut self, s: ReceivedSample) {
        if self.readers.contains(&s.reader) {
            *self.in_flight.entry(s.reader).or_default() += 1;
            let _ = self.tx.send(Input::Sample(s));
        }
    }
}

/// A running durability service (see the module). Dropping it commits what is pending and
/// stops it.
#[cfg(feature = "durability")]
pub struct DurabilityService {
    participant: DomainParticipant,
    tx: mpsc::Sender<Input>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<Mutex<ServiceStats>>,
}

#[cfg(feature = "durability")]
impl DurabilityService {
    /// Opens the stores, starts the service's participant in `domain_id`, serves what the
    /// store holds at once and stores what durable writers write from now on. A store file
    /// that cannot be used is [`Error::Store`] (nothing is written to it).
    pub fn start(domain_id: u32, config: DurabilityConfig) -> Result<DurabilityService> {
        Self::start_for(domain_id, config, None)
    }

    /// [`DurabilityService::start`], embedded in participant `owner`: its writers then hand
    /// their changes to the service's readers in memory, not through the network, and the
    /// service acknowledges them to it once stored.
    pub(crate) fn start_embedded(
        domain_id: u32,
        config: DurabilityConfig,
        owner: &Arc<crate::runtime::Shared>,
    ) -> Result<DurabilityService> {
        let service = Self::start_for(domain_id, config, Some(Arc::clone(owner)))?;
        let prefix = service.participant.guid_prefix();
        let mut st = owner.lock();
        st.fed = Some(service.tx.clone());
        st.core.set_fed_service(Some(prefix));
        drop(st);
        Ok(service)
    }

    fn start_for(
        domain_id: u32,
        config: DurabilityConfig,
        owner: Option<Arc<crate::runtime::Shared>>,
    ) -> Result<DurabilityService> {
        let options = StoreOptions {
            sync: config.sync,
            max_bytes: config.max_store_bytes,
        };
        let persistent = match &config.store {
            Some(path) => Some(Store::open(path, options).map_err(Error::Store)?),
            None => None,
        };
        let transient = Store::in_memory(options).map_err(Error::Store)?;
        let participant = DomainParticipant::with_options(domain_id, config.participant.clone())?;
        let (tx, rx) = mpsc::channel();
        participant.shared.lock().service = Some(Tap {
            tx: tx.clone(),
            readers: BTreeSet::new(),
            in_flight: BTreeMap::new(),
        });
        let stats = Arc::new(Mutex::new(ServiceStats::default()));
        let mut worker = worker::Worker::new(
            Arc::clone(&participant.shared),
            persistent,
            transient,
            config,
            Arc::clone(&stats),
            owner,
        );
        worker.load();
        // Writers discovered before the tap was in place.
        for ed in participant.discovered_publications() {
            if ed.qos.durability >= DurabilityKind::Transient {
                worker.on_writer(&ed);
            }
        }
        let thread = std::thread::Builder::new()
            .name("halyard-durability".into())
            .spawn(move || worker.run(rx))
            .map_err(Error::Thread)?;
        Ok(DurabilityService {
            participant,
            tx,
            thread: Some(thread),
            stats,
        })
    }

    /// The service's own participant.
    pub fn participant(&self) -> &DomainParticipant {
        &self.participant
    }

    /// What the service did so far.
    pub fn stats(&self) -> ServiceStats {
        let mut stats = self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let st = self.participant.shared.lock();
        let relays = st.core.releasing_relays();
        stats.relay_payload_bytes = relays
            .iter()
            .map(|&w| st.core.writer_history_bytes(w) as u64)
            .sum();
        stats.relay_held_samples = relays
            .iter()
            .map(|&w| st.core.writer_history_len(w) as u64)
            .sum();
        stats
    }

    /// Commits what is pending, stops and returns the final statistics.
    pub fn stop(mut self) -> ServiceStats {
        self.halt();
        self.stats()
    }

    fn halt(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = self.tx.send(Input::Stop);
            let _ = t.join();
            self.participant.shared.lock().service = None;
        }
    }
}

#[cfg(feature = "durability")]
impl Drop for DurabilityService {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_policies_parse_and_bad_ones_say_why() {
        assert_eq!(
            "sample".parse::<CommitPolicy>(),
            Ok(CommitPolicy::PerSample)
        );
        assert_eq!("batch".parse::<CommitPolicy>(), Ok(CommitPolicy::default()));
        assert_eq!(
            "batch:64:20".parse::<CommitPolicy>(),
            Ok(CommitPolicy::Batch {
                max_samples: 64,
                max_delay: Duration::from_millis(20)
            })
        );
        assert_eq!(
            "interval:100".parse::<CommitPolicy>(),
            Ok(CommitPolicy::Interval(Duration::from_millis(100)))
        );
        for bad in [
            "",
            "batch:0",
            "interval",
            "interval:x",
            "always",
            "batch:1:2:3",
        ] {
            let e = bad.parse::<CommitPolicy>().unwrap_err();
            assert!(e.contains("bad commit policy"), "{bad}: {e}");
        }
    }
}
