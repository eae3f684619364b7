//! Communication statuses (DDS 1.4 §2.2.4.1) and the reader history cache.
//!
//! The reader cache keeps samples in arrival order with per-instance bookkeeping: KEEP_LAST(n)
//! keeps the newest n per instance, KEEP_ALL is bounded by RESOURCE_LIMITS (samples beyond it
//! are rejected and counted). Instance states follow DDS: ALIVE, NOT_ALIVE_DISPOSED,
//! NOT_ALIVE_NO_WRITERS; view state NEW until a sample of the instance was read or taken.

use foldhash::HashMap;
use halyard_core::{ChangeKind, QosPolicyId, ReceivedSample};
use halyard_wire::qos::{EndpointQos, History};
use halyard_wire::{Guid, Time};
use std::collections::{BTreeSet, VecDeque};

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

/// LIVELINESS_CHANGED status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LivelinessChangedStatus {
    /// Matched writers currently alive.
    pub alive_count: u32,
    /// Writers that became not alive.
    pub not_alive_count: u32,
}

impl LivelinessChangedStatus {
    pub(crate) fn update(&mut self, alive: bool) {
        if alive {
            self.alive_count += 1;
        } else {
            self.alive_count = self.alive_count.saturating_sub(1);
            self.not_alive_count += 1;
        }
    }
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
    pub sequence_number: i64,
}

pub(crate) struct Cached {
    pub(crate) payload: Vec<u8>,
    pub(crate) key: [u8; 16],
    pub(crate) writer: Guid,
    pub(crate) kind: ChangeKind,
    pub(crate) source_ts: Option<Time>,
    pub(crate) reception_ts: Time,
    pub(crate) read: bool,
    pub(crate) sn: i64,
}

pub(crate) struct Instance {
    pub(crate) state: InstanceState,
    pub(crate) viewed: bool,
    pub(crate) writers: BTreeSet<Guid>,
    pub(crate) count: usize,
}

/// Computes the key hash of a serialized sample (set from the reader's type).
pub(crate) type KeyFn = fn(&[u8]) -> Option<[u8; 16]>;

pub(crate) struct ReaderState {
    pub(crate) qos: EndpointQos,
    pub(crate) samples: VecDeque<Cached>,
    pub(crate) instances: HashMap<[u8; 16], Instance>,
    pub(crate) matched: MatchedStatus,
    pub(crate) incompatible: IncompatibleQosStatus,
    pub(crate) liveliness: LivelinessChangedStatus,
    pub(crate) sample_lost: u64,
    pub(crate) sample_rejected: u64,
    pub(crate) listener: Option<std::sync::Arc<dyn crate::listener::DataReaderListener>>,
    pub(crate) key_fn: Option<KeyFn>,
    pub(crate) data_available: bool,
    /// Statuses changed since their last read (for StatusConditions).
    pub(crate) changes: crate::listener::StatusMask,
}

impl ReaderState {
    pub(crate) fn new(qos: EndpointQos, key_fn: Option<KeyFn>) -> Self {
        ReaderState {
            qos,
            samples: VecDeque::new(),
            instances: HashMap::default(),
            matched: MatchedStatus::default(),
            incompatible: IncompatibleQosStatus::default(),
            liveliness: LivelinessChangedStatus::default(),
            sample_lost: 0,
            sample_rejected: 0,
            listener: None,
            key_fn,
            data_available: false,
            changes: crate::listener::StatusMask::NONE,
        }
    }

    fn max_samples(&self) -> usize {
        match self.qos.resource_limits.max_samples {
            n if n > 0 => n as usize,
            _ => 1 << 22,
        }
    }

    /// Samples the core may still deliver: the free space of a reliable KEEP_ALL cache, so
    /// that a full cache back-pressures the writer instead of dropping acknowledged samples.
    /// `None` (unlimited) for KEEP_LAST and best-effort readers, which replace or may drop.
    pub(crate) fn credit(&self) -> Option<usize> {
        let reliable = self.qos.reliability.kind == halyard_wire::qos::ReliabilityKind::Reliable;
        (reliable && self.qos.history == History::KeepAll)
            .then(|| self.max_samples().saturating_sub(self.samples.len()))
    }

    /// Inserts a received sample; returns true if it was stored.
    pub(crate) fn insert(&mut self, s: ReceivedSample, now: Time) -> bool {
        let key = match (s.key_hash, self.key_fn) {
            (Some(k), _) => k,
            (None, Some(f)) => match f(&s.payload) {
                Some(k) => k,
                None => {
                    self.sample_rejected += 1;
                    return false;
                }
            },
            (None, None) => [0; 16],
        };
        let max_samples = self.max_samples();
        let inst = self.instances.entry(key).or_insert(Instance {
            state: InstanceState::Alive,
            viewed: false,
            writers: BTreeSet::new(),
            count: 0,
        });
        match s.kind {
            ChangeKind::Alive => {
                if inst.state != InstanceState::Alive {
                    inst.viewed = false;
                }
                inst.state = InstanceState::Alive;
                inst.writers.insert(s.writer);
            }
            ChangeKind::Disposed | ChangeKind::DisposedUnregistered => {
                inst.state = InstanceState::NotAliveDisposed
            }
            ChangeKind::Unregistered => {
                inst.writers.remove(&s.writer);
                if inst.writers.is_empty() && inst.state == InstanceState::Alive {
                    inst.state = InstanceState::NotAliveNoWriters;
                }
            }
        }
        match self.qos.history {
            History::KeepLast(depth) => {
                if inst.count >= depth.max(1) as usize {
                    if let Some(pos) = self.samples.iter().position(|c| c.key == key) {
                        self.samples.remove(pos);
                        inst.count -= 1;
                    }
                }
            }
            History::KeepAll => {
                let per_inst = self.qos.resource_limits.max_samples_per_instance;
                if self.samples.len() >= max_samples
                    || (per_inst > 0 && inst.count >= per_inst as usize)
                {
                    self.sample_rejected += 1;
                    self.changes |= crate::listener::StatusMask::SAMPLE_REJECTED;
                    return false;
                }
            }
        }
        inst.count += 1;
        self.samples.push_back(Cached {
            payload: s.payload,
            key,
            writer: s.writer,
            kind: s.kind,
            source_ts: s.source_timestamp,
            reception_ts: now,
            read: false,
            sn: s.sn.0,
        });
        self.data_available = true;
        self.changes |= crate::listener::StatusMask::DATA_AVAILABLE;
        true
    }

    /// A matched writer went away: its instances may become NOT_ALIVE_NO_WRITERS.
    pub(crate) fn writer_gone(&mut self, w: Guid) {
        for inst in self.instances.values_mut() {
            if inst.writers.remove(&w)
                && inst.writers.is_empty()
                && inst.state == InstanceState::Alive
            {
                inst.state = InstanceState::NotAliveNoWriters;
            }
        }
    }

    pub(crate) fn info(&self, c: &Cached) -> SampleInfo {
        let inst = self.instances.get(&c.key);
        SampleInfo {
            sample_state: if c.read {
                SampleState::Read
            } else {
                SampleState::NotRead
            },
            view_state: if inst.is_some_and(|i| i.viewed) {
                ViewState::NotNew
            } else {
                ViewState::New
            },
            instance_state: inst.map_or(InstanceState::Alive, |i| i.state),
            source_timestamp: c.source_ts,
            reception_timestamp: c.reception_ts,
            instance_handle: InstanceHandle(c.key),
            publication_handle: c.writer.into(),
            valid_data: c.kind == ChangeKind::Alive,
            sequence_number: c.sn,
        }
    }

    /// Removes (take) or marks (read) up to `max` samples matching `filter`; `f` sees each.
    pub(crate) fn collect(
        &mut self,
        max: usize,
        take: bool,
        only_unread: bool,
        instance: Option<[u8; 16]>,
        mut f: impl FnMut(&Cached, SampleInfo),
    ) {
        let mut n = 0;
        let mut i = 0;
        let mut viewed: Vec<[u8; 16]> = Vec::new();
        while i < self.samples.len() && n < max {
            let c = &self.samples[i];
            if (only_unread && c.read) || instance.is_some_and(|k| k != c.key) {
                i += 1;
                continue;
            }
            let info = self.info(c);
            f(c, info);
            if viewed.last() != Some(&c.key) {
                viewed.push(c.key);
            }
            n += 1;
            if take {
                if let Some(c) = self.samples.remove(i) {
                    if let Some(inst) = self.instances.get_mut(&c.key) {
                        inst.count = inst.count.saturating_sub(1);
                    }
                }
            } else {
                self.samples[i].read = true;
                i += 1;
            }
        }
        for k in viewed {
            if let Some(inst) = self.instances.get_mut(&k) {
                inst.viewed = true;
            }
        }
        self.data_available = self.samples.iter().any(|c| !c.read);
        self.changes.0 &= !crate::listener::StatusMask::DATA_AVAILABLE.0;
    }
}

#[derive(Default)]
pub(crate) struct WriterState {
    pub(crate) matched: MatchedStatus,
    pub(crate) incompatible: IncompatibleQosStatus,
    pub(crate) listener: Option<std::sync::Arc<dyn crate::listener::DataWriterListener>>,
    /// Statuses changed since their last read (for StatusConditions).
    pub(crate) changes: crate::listener::StatusMask,
}
