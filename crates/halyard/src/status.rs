//! Communication statuses (DDS 1.4 §2.2.4.1), sample and instance states, and what each
//! DataReader and DataWriter keeps beside the core: statuses, listener, and a reader's
//! history cache (`crate::history`).

use crate::history::{Cached, ReaderCache, Visit};
use crate::listener::StatusMask;
use halyard_core::{QosPolicyId, ReceivedSample};
use halyard_wire::{Guid, SequenceNumber, Time};
use std::collections::BTreeSet;

/// An opaque handle naming an instance or a remote entity.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct InstanceHandle(pub [u8; 16]);

impl From<Guid> for InstanceHandle {
    fn from(g: Guid) -> Self {
        InstanceHandle(g.to_bytes())
    }
}

/// PUBLICATION_MATCHED / SUBSCRIPTION_MATCHED status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchedStatus {
    /// Total matches ever.
    pub total_count: u32,
    /// Matches now.
    pub current_count: u32,
    /// The last matched or unmatched peer.
    pub last_handle: InstanceHandle,
    peers: BTreeSet<Guid>,
}

impl MatchedStatus {
    /// The handles (GUIDs) of the peers matched now, in GUID order.
    pub fn matched_handles(&self) -> Vec<InstanceHandle> {
        self.peers
            .iter()
            .map(|g| InstanceHandle::from(*g))
            .collect()
    }

    pub(crate) fn update(&mut self, peer: Guid, matched: bool) {
        let changed = if matched {
            self.peers.insert(peer)
        } else {
            self.peers.remove(&peer)
        };
        if changed && matched {
            self.total_count += 1;
        }
        self.current_count = self.peers.len() as u32;
        self.last_handle = peer.into();
    }
}

/// OFFERED_ / REQUESTED_INCOMPATIBLE_QOS status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IncompatibleQosStatus {
    /// Times an incompatible peer was found.
    pub total_count: u32,
    /// The last policy found incompatible.
    pub last_policy_id: Option<QosPolicyId>,
}

impl IncompatibleQosStatus {
    pub(crate) fn record(&mut self, p: QosPolicyId) {
        self.total_count += 1;
        self.last_policy_id = Some(p);
    }
}

/// OFFERED_DEADLINE_MISSED / REQUESTED_DEADLINE_MISSED status (DDS 1.4 §2.2.4.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeadlineMissedStatus {
    /// Missed deadlines so far (every instance, every period).
    pub total_count: u32,
    /// Missed since the status was last read.
    pub total_count_change: u32,
    /// The instance that missed the last one.
    pub last_instance_handle: InstanceHandle,
}

impl DeadlineMissedStatus {
    pub(crate) fn record(&mut self, instance: [u8; 16]) {
        self.total_count += 1;
        self.total_count_change += 1;
        self.last_instance_handle = InstanceHandle(instance);
    }

    /// The status as read by the application: the change count starts again.
    pub(crate) fn read(&mut self) -> Self {
        let s = self.clone();
        self.total_count_change = 0;
        s
    }
}

/// LIVELINESS_CHANGED status (DDS 1.4 §2.2.4.1): the matched writers alive and not alive.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LivelinessChangedStatus {
    /// Matched writers currently alive.
    pub alive_count: u32,
    /// Matched writers currently not alive.
    pub not_alive_count: u32,
    /// Change of `alive_count` since the status was last read.
    pub alive_count_change: i32,
    /// Change of `not_alive_count` since the status was last read.
    pub not_alive_count_change: i32,
    /// The writer whose liveliness changed last.
    pub last_publication_handle: InstanceHandle,
    alive: BTreeSet<Guid>,
    not_alive: BTreeSet<Guid>,
}

impl LivelinessChangedStatus {
    /// `writer` became alive or not alive.
    pub(crate) fn update(&mut self, writer: Guid, alive: bool) {
        let (to, from) = if alive {
            (&mut self.alive, &mut self.not_alive)
        } else {
            (&mut self.not_alive, &mut self.alive)
        };
        from.remove(&writer);
        to.insert(writer);
        self.last_publication_handle = writer.into();
        self.recount();
    }

    /// `writer` was unmatched: it counts neither as alive nor as not alive.
    pub(crate) fn forget(&mut self, writer: Guid) {
        if self.alive.remove(&writer) || self.not_alive.remove(&writer) {
            self.recount();
        }
    }

    fn recount(&mut self) {
        let (a, n) = (self.alive.len() as u32, self.not_alive.len() as u32);
        self.alive_count_change += a as i32 - self.alive_count as i32;
        self.not_alive_count_change += n as i32 - self.not_alive_count as i32;
        self.alive_count = a;
        self.not_alive_count = n;
    }

    /// The status as read by the application: the change counts start again.
    pub(crate) fn read(&mut self) -> Self {
        let s = self.clone();
        self.alive_count_change = 0;
        self.not_alive_count_change = 0;
        s
    }
}

/// LIVELINESS_LOST status: times a writer failed to assert its liveliness within its lease.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LivelinessLostStatus {
    /// Losses so far.
    pub total_count: u32,
    /// Losses since the status was last read.
    pub total_count_change: u32,
}

impl LivelinessLostStatus {
    pub(crate) fn record(&mut self) {
        self.total_count += 1;
        self.total_count_change += 1;
    }

    /// The status as read by the application: the change count starts again.
    pub(crate) fn read(&mut self) -> Self {
        let s = self.clone();
        self.total_count_change = 0;
        s
    }
}

/// What a writer counted so far ([`crate::DataWriter::stats`]): one snapshot, taken under
/// one lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriterStats {
    /// Samples this best-effort writer dropped whole, before sending any of them, because a
    /// newer sample superseded them while they waited for the pace
    /// ([`crate::DataWriter::set_bandwidth_limit`]; KEEP_LAST only).
    pub paced_drops: u64,
    /// Samples not sent to a matched reader because the reader's content filter (announced
    /// by it) rejected them, counted once per sample and reader (repairs included): such a
    /// reader is sent a GAP instead, or nothing if it is best-effort.
    pub filtered_out: u64,
    /// Samples not sent to a matched Halyard reader of another participant because the
    /// reader's TIME_BASED_FILTER would have dropped them (less than its minimum_separation
    /// after the last sample of their instance sent to it, on source timestamps), counted once
    /// per sample and reader: such a reader is sent a GAP instead, or nothing if it is
    /// best-effort. Readers of other vendors, and readers of this writer's participant, filter
    /// on their side and are not counted.
    pub time_filtered_out: u64,
}

/// What a reader counted so far ([`crate::DataReader::stats`]): one snapshot, taken under
/// one lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReaderStats {
    /// SAMPLE_LOST total count.
    pub sample_lost: u64,
    /// SAMPLE_REJECTED total count.
    pub sample_rejected: u64,
    /// Data samples that arrived and that this reader's content filter rejected (a reader of
    /// a content-filtered topic). Writers that filter for the reader do not send those: what
    /// this counts is what writers of other vendors (or a writer that cannot compile the
    /// filter, or one not yet told of new parameters) sent anyway.
    pub filtered_samples: u64,
}

/// DDS sample state.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SampleState {
    /// Returned by an earlier read.
    Read,
    /// Not yet read.
    NotRead,
}

/// DDS view state.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ViewState {
    /// First samples of the instance (or of its new generation).
    New,
    /// Instance already seen.
    NotNew,
}

/// DDS instance state.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum InstanceState {
    /// Alive.
    Alive,
    /// Disposed by a writer.
    NotAliveDisposed,
    /// No writer is alive for it.
    NotAliveNoWriters,
}

/// Which samples a read, take or ReadCondition selects by their states (DDS 1.4
/// §2.2.2.5.1): a sample matches when its sample, view and instance states are each in the
/// corresponding set. Bits as in DDS (`READ` 1, `NOT_READ` 2; `NEW` 1, `NOT_NEW` 2; `ALIVE` 1,
/// `NOT_ALIVE_DISPOSED` 2, `NOT_ALIVE_NO_WRITERS` 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateMask {
    /// Sample states.
    pub sample_states: u32,
    /// View states.
    pub view_states: u32,
    /// Instance states.
    pub instance_states: u32,
}

impl StateMask {
    /// READ sample state.
    pub const READ: u32 = 1;
    /// NOT_READ sample state.
    pub const NOT_READ: u32 = 2;
    /// NEW view state.
    pub const NEW: u32 = 1;
    /// NOT_NEW view state.
    pub const NOT_NEW: u32 = 2;
    /// ALIVE instance state.
    pub const ALIVE: u32 = 1;
    /// NOT_ALIVE_DISPOSED instance state.
    pub const NOT_ALIVE_DISPOSED: u32 = 2;
    /// NOT_ALIVE_NO_WRITERS instance state.
    pub const NOT_ALIVE_NO_WRITERS: u32 = 4;
    /// Every state.
    pub const ANY: StateMask = StateMask {
        sample_states: 3,
        view_states: 3,
        instance_states: 7,
    };
    /// Samples not read yet, in any view and instance state.
    pub const NOT_READ_ONLY: StateMask = StateMask {
        sample_states: Self::NOT_READ,
        view_states: 3,
        instance_states: 7,
    };

    /// True if a sample in these states is selected.
    pub fn matches(&self, sample: SampleState, view: ViewState, instance: InstanceState) -> bool {
        let s = match sample {
            SampleState::Read => Self::READ,
            SampleState::NotRead => Self::NOT_READ,
        };
        let v = match view {
            ViewState::New => Self::NEW,
            ViewState::NotNew => Self::NOT_NEW,
        };
        let i = match instance {
            InstanceState::Alive => Self::ALIVE,
            InstanceState::NotAliveDisposed => Self::NOT_ALIVE_DISPOSED,
            InstanceState::NotAliveNoWriters => Self::NOT_ALIVE_NO_WRITERS,
        };
        self.sample_states & s != 0 && self.view_states & v != 0 && self.instance_states & i != 0
    }
}

impl Default for StateMask {
    /// [`StateMask::ANY`].
    fn default() -> Self {
        StateMask::ANY
    }
}

/// Information about a sample (DDS 1.4 §2.2.2.5.5).
#[derive(Clone, Debug)]
pub struct SampleInfo {
    /// Read or not read.
    pub sample_state: SampleState,
    /// New or not new.
    pub view_state: ViewState,
    /// Instance state at the time of the read.
    pub instance_state: InstanceState,
    /// Writer's timestamp.
    pub source_timestamp: Option<Time>,
    /// When it was received.
    pub reception_timestamp: Time,
    /// The instance.
    pub instance_handle: InstanceHandle,
    /// The writer.
    pub publication_handle: InstanceHandle,
    /// False for disposal/unregistration notices without data.
    pub valid_data: bool,
    /// The writer's sequence number.
    pub sequence_number: SequenceNumber,
    /// Times the instance went from NOT_ALIVE_DISPOSED to ALIVE before this sample.
    pub disposed_generation_count: u32,
    /// Times the instance went from NOT_ALIVE_NO_WRITERS to ALIVE before this sample.
    pub no_writers_generation_count: u32,
    /// Samples of the same instance that follow this one in the returned collection.
    pub sample_rank: u32,
    /// Generations between this sample and the instance's most recent sample in the
    /// returned collection.
    pub generation_rank: u32,
    /// Generations between this sample and the instance's most recent sample in the cache.
    pub absolute_generation_rank: u32,
}

/// What a DataReader keeps beside its history cache: its statuses and listener.
pub(crate) struct ReaderState {
    pub(crate) cache: ReaderCache,
    pub(crate) matched: MatchedStatus,
    pub(crate) incompatible: IncompatibleQosStatus,
    pub(crate) liveliness: LivelinessChangedStatus,
    pub(crate) deadline_missed: DeadlineMissedStatus,
    pub(crate) sample_lost: u64,
    pub(crate) sample_rejected: u64,
    pub(crate) listener: Option<std::sync::Arc<dyn crate::listener::DataReaderListener>>,
    /// Unread samples are held (DATA_AVAILABLE).
    pub(crate) data_available: bool,
    /// Statuses changed since their last read (for StatusConditions).
    pub(crate) changes: StatusMask,
    /// A content filter: data samples it rejects are not stored.
    pub(crate) filter: Option<crate::filter::SampleFilter>,
    /// Data samples the content filter rejected here (a writer that filters for the reader
    /// does not send them at all).
    pub(crate) filtered: u64,
    /// The subscriber it belongs to (see `Subscriber::set_qos`).
    pub(crate) group: halyard_wire::EntityId,
}

impl ReaderState {
    pub(crate) fn new(cache: ReaderCache, group: halyard_wire::EntityId) -> Self {
        ReaderState {
            group,
            cache,
            matched: MatchedStatus::default(),
            incompatible: IncompatibleQosStatus::default(),
            liveliness: LivelinessChangedStatus::default(),
            deadline_missed: DeadlineMissedStatus::default(),
            sample_lost: 0,
            sample_rejected: 0,
            listener: None,
            data_available: false,
            changes: StatusMask::NONE,
            filter: None,
            filtered: 0,
        }
    }

    /// Stores a received sample in the cache; returns true if it was stored (otherwise it
    /// counts as rejected: SAMPLE_REJECTED).
    pub(crate) fn insert(&mut self, s: ReceivedSample, now: Time) -> bool {
        if s.kind == halyard_core::ChangeKind::Alive
            && self.filter.as_ref().is_some_and(|f| !f(&s.payload))
        {
            self.filtered += 1;
            return false;
        }
        match self.cache.insert(s, now) {
            Ok(()) => {
                self.data_available = true;
                self.changes |= StatusMask::DATA_AVAILABLE;
                true
            }
            // Expired in transit: dropped as the cache would have purged it, not rejected.
            Err(crate::history::Rejected::Expired) => false,
            Err(_) => {
                self.sample_rejected += 1;
                self.changes |= StatusMask::SAMPLE_REJECTED;
                false
            }
        }
    }

    /// Reads or takes samples ([`ReaderCache::visit`]), then updates DATA_AVAILABLE; returns
    /// the large payload buffers taken.
    pub(crate) fn visit(&mut self, v: Visit, f: impl FnMut(&Cached, SampleInfo)) -> Vec<Vec<u8>> {
        self.cache.purge(crate::clock::wall_clock());
        let spent = self.cache.visit(v, f);
        self.data_available = self.cache.has_unread();
        self.changes.0 &= !StatusMask::DATA_AVAILABLE.0;
        spent
    }
}

/// What a DataWriter keeps beside the core: its QoS, statuses and listener.
pub(crate) struct WriterState {
    /// Its QoS as it stands (it changes with `set_qos`).
    pub(crate) qos: halyard_wire::qos::EndpointQos,
    /// The publisher it belongs to (see `Publisher::set_qos`).
    pub(crate) group: halyard_wire::EntityId,
    pub(crate) matched: MatchedStatus,
    pub(crate) incompatible: IncompatibleQosStatus,
    pub(crate) deadline_missed: DeadlineMissedStatus,
    pub(crate) liveliness_lost: LivelinessLostStatus,
    /// Registered instances of a keyed writer: key hash -> serialized key (to unregister
    /// them when the writer is deleted).
    pub(crate) instances: halyard_core::SeededMap<[u8; 16], Vec<u8>>,
    pub(crate) listener: Option<std::sync::Arc<dyn crate::listener::DataWriterListener>>,
    /// Statuses changed since their last read (for StatusConditions).
    pub(crate) changes: StatusMask,
}

impl WriterState {
    pub(crate) fn new(
        qos: halyard_wire::qos::EndpointQos,
        group: halyard_wire::EntityId,
        listener: Option<std::sync::Arc<dyn crate::listener::DataWriterListener>>,
    ) -> Self {
        WriterState {
            qos,
            group,
            matched: MatchedStatus::default(),
            incompatible: IncompatibleQosStatus::default(),
            deadline_missed: DeadlineMissedStatus::default(),
            liveliness_lost: LivelinessLostStatus::default(),
            instances: Default::default(),
            listener,
            changes: StatusMask::NONE,
        }
    }
}
