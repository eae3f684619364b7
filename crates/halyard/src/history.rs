//! The reader history cache (DDS 1.4 §2.2.2.5.3, §2.2.3.19 HISTORY, §2.2.3.18 RESOURCE_LIMITS).
//!
//! Design. Samples are kept in arrival order in one queue, with per-instance bookkeeping
//! beside it: the instance state (ALIVE, NOT_ALIVE_DISPOSED, NOT_ALIVE_NO_WRITERS), whether the
//! application has viewed it, the writers alive for it and how many samples it holds.
//! KEEP_LAST(n) keeps the newest n samples of each instance (the oldest one of the instance is
//! replaced); KEEP_ALL is bounded by RESOURCE_LIMITS (max_samples, max_samples_per_instance),
//! and a sample beyond them is rejected and counted. A reliable KEEP_ALL reader never gets to
//! reject: it grants the protocol core only as many samples as it has room for
//! ([`ReaderCache::credit`]), so the rest stay unacknowledged and their writer blocks.
//!
//! Read marks samples READ and their instances NOT_NEW; take removes them. A sample that
//! arrives for an instance that was not alive starts a new generation: its view state is NEW
//! again.

use crate::status::{InstanceHandle, InstanceState, SampleInfo, SampleState, ViewState};
use halyard_core::{ChangeKind, ReceivedSample, SeededMap};
use halyard_wire::qos::{EndpointQos, History, ReliabilityKind};
use halyard_wire::{Guid, Time};
use std::collections::{BTreeSet, VecDeque};

/// Samples a cache holds at most when RESOURCE_LIMITS.max_samples is unlimited.
pub const MAX_CACHED_SAMPLES_DEFAULT: usize = 1 << 22;

/// Payloads at least this large are handed back to the core when taken (see
/// `halyard_core::Participant::recycle_payload`).
const REUSABLE_PAYLOAD_BYTES: usize = 256 * 1024;

/// Computes the key hash of a serialized sample (set from the reader's type).
pub(crate) use halyard_core::KeyFn;

/// One sample in the cache.
pub(crate) struct Cached {
    pub(crate) payload: std::sync::Arc<Vec<u8>>,
    pub(crate) key: [u8; 16],
    pub(crate) writer: Guid,
    pub(crate) kind: ChangeKind,
    pub(crate) source_ts: Option<Time>,
    pub(crate) reception_ts: Time,
    pub(crate) read: bool,
    pub(crate) sn: halyard_wire::SequenceNumber,
    /// End of its writer's LIFESPAN (source timestamp + lifespan), if finite.
    pub(crate) expiry: Option<Time>,
}

/// What the cache knows of one instance.
struct Instance {
    state: InstanceState,
    viewed: bool,
    writers: BTreeSet<Guid>,
    count: usize,
    /// When it stopped being alive (READER_DATA_LIFECYCLE autopurge delays run from here).
    not_alive_since: Option<Time>,
}

impl Instance {
    fn new() -> Self {
        Instance {
            state: InstanceState::Alive,
            viewed: false,
            writers: BTreeSet::new(),
            count: 0,
            not_alive_since: None,
        }
    }

    fn set_state(&mut self, state: InstanceState, now: Time) {
        if state == InstanceState::Alive {
            self.not_alive_since = None;
        } else if self.state == InstanceState::Alive || self.state != state {
            self.not_alive_since = Some(now);
        }
        self.state = state;
    }
}

/// Why a sample was not stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Rejected {
    /// Its key could not be computed from its payload.
    NoKey,
    /// KEEP_ALL and a RESOURCE_LIMITS bound is reached.
    Full,
    /// Its LIFESPAN ended before it arrived.
    Expired,
}

/// Which samples a read or take visits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Visit {
    /// At most this many.
    pub(crate) max: usize,
    /// Remove them (take) rather than mark them read.
    pub(crate) take: bool,
    /// Only samples not read yet.
    pub(crate) only_unread: bool,
    /// Only this instance.
    pub(crate) instance: Option<[u8; 16]>,
}

/// A DataReader's history cache.
pub(crate) struct ReaderCache {
    qos: EndpointQos,
    samples: VecDeque<Cached>,
    instances: SeededMap<[u8; 16], Instance>,
    key_fn: Option<KeyFn>,
    /// Samples held with a finite lifespan (0: nothing to purge).
    expiring: usize,
}

impl ReaderCache {
    /// An empty cache for a reader with `qos`; `key_fn` computes keys of samples that arrive
    /// without a key hash (keyless types: `None`).
    pub(crate) fn new(qos: EndpointQos, key_fn: Option<KeyFn>, hash_seed: u64) -> Self {
        ReaderCache {
            qos,
            samples: VecDeque::new(),
            instances: halyard_core::seeded_map(hash_seed),
            key_fn,
            expiring: 0,
        }
    }

    fn max_samples(&self) -> usize {
        match self.qos.resource_limits.max_samples {
            n if n > 0 => n as usize,
            _ => MAX_CACHED_SAMPLES_DEFAULT,
        }
    }

    /// Samples the core may still deliver: the free space of a reliable KEEP_ALL cache, so
    /// that a full cache back-pressures the writer instead of dropping acknowledged samples.
    /// `None` (unlimited) for KEEP_LAST and best-effort readers, which replace or may drop.
    pub(crate) fn credit(&self) -> Option<usize> {
        let reliable = self.qos.reliability.kind == ReliabilityKind::Reliable;
        (reliable && self.qos.history == History::KeepAll)
            .then(|| self.max_samples().saturating_sub(self.samples.len()))
    }

    /// True while samples are held.
    pub(crate) fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// True while samples not yet read are held.
    pub(crate) fn has_unread(&self) -> bool {
        self.samples.iter().any(|c| !c.read)
    }

    /// Stores a received sample, received at wall-clock time `now`.
    pub(crate) fn insert(&mut self, s: ReceivedSample, now: Time) -> Result<(), Rejected> {
        if s.lifespan_expiry.is_some_and(|e| e <= now) {
            // Expired on the way: as if it had been purged the moment it arrived.
            return Err(Rejected::Expired);
        }
        let key = match (s.key_hash, self.key_fn) {
            (Some(k), _) => k,
            (None, Some(f)) => f(&s.payload).ok_or(Rejected::NoKey)?,
            (None, None) => [0; 16],
        };
        let max_samples = self.max_samples();
        let inst = self.instances.entry(key).or_insert_with(Instance::new);
        match s.kind {
            ChangeKind::Alive => {
                if inst.state != InstanceState::Alive {
                    inst.viewed = false;
                }
                inst.set_state(InstanceState::Alive, now);
                inst.writers.insert(s.writer);
            }
            ChangeKind::Disposed => inst.set_state(InstanceState::NotAliveDisposed, now),
            ChangeKind::DisposedUnregistered => {
                inst.writers.remove(&s.writer);
                inst.set_state(InstanceState::NotAliveDisposed, now);
            }
            ChangeKind::Unregistered => {
                inst.writers.remove(&s.writer);
                if inst.writers.is_empty() && inst.state == InstanceState::Alive {
                    inst.set_state(InstanceState::NotAliveNoWriters, now);
                }
            }
        }
        match self.qos.history {
            History::KeepLast(depth) => {
                if inst.count >= depth.max(1) as usize {
                    if let Some(pos) = self.samples.iter().position(|c| c.key == key) {
                        if self.samples.remove(pos).is_some_and(|c| c.expiry.is_some()) {
                            self.expiring = self.expiring.saturating_sub(1);
                        }
                        inst.count -= 1;
                    }
                }
            }
            History::KeepAll => {
                let per_inst = self.qos.resource_limits.max_samples_per_instance;
                if self.samples.len() >= max_samples
                    || (per_inst > 0 && inst.count >= per_inst as usize)
                {
                    return Err(Rejected::Full);
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
            sn: s.sn,
            expiry: s.lifespan_expiry,
        });
        if s.lifespan_expiry.is_some() {
            self.expiring += 1;
        }
        debug_assert!(
            self.qos.history != History::KeepAll || self.samples.len() <= max_samples,
            "a KEEP_ALL cache holds at most max_samples"
        );
        Ok(())
    }

    /// Removes what is due by `now`: samples whose LIFESPAN ended (DDS 1.4 §2.2.3.16), and
    /// the samples and instances READER_DATA_LIFECYCLE purges (§2.2.3.22): disposed ones, and
    /// ones with no writers, once their delay has passed since they became so. Returns how
    /// many samples were removed.
    pub(crate) fn purge(&mut self, now: Time) -> usize {
        let before = self.samples.len();
        let lc = self.qos.reader_data_lifecycle;
        let due = |d: halyard_wire::Duration, since: Time| {
            d != halyard_wire::Duration::INFINITE
                && since.to_nanos().saturating_add(d.to_nanos()) <= now.to_nanos()
        };
        let autopurge = lc != Default::default();
        let mut purged: BTreeSet<[u8; 16]> = BTreeSet::new();
        if autopurge {
            for (k, inst) in self.instances.iter() {
                let Some(since) = inst.not_alive_since else {
                    continue;
                };
                let delay = match inst.state {
                    InstanceState::NotAliveDisposed => lc.autopurge_disposed_samples_delay,
                    InstanceState::NotAliveNoWriters => lc.autopurge_nowriter_samples_delay,
                    InstanceState::Alive => continue,
                };
                if due(delay, since) {
                    purged.insert(*k);
                }
            }
        }
        if self.expiring == 0 && purged.is_empty() {
            return 0;
        }
        for k in &purged {
            self.instances.remove(k);
        }
        let instances = &mut self.instances;
        let mut expiring = 0;
        self.samples.retain(|c| {
            if purged.contains(&c.key) {
                return false;
            }
            let Some(e) = c.expiry else { return true };
            if e > now {
                expiring += 1;
                return true;
            }
            if let Some(inst) = instances.get_mut(&c.key) {
                inst.count = inst.count.saturating_sub(1);
            }
            false
        });
        self.expiring = expiring;
        before - self.samples.len()
    }

    /// A matched writer went away: its instances may become NOT_ALIVE_NO_WRITERS.
    pub(crate) fn writer_gone(&mut self, w: Guid, now: Time) {
        for inst in self.instances.values_mut() {
            if inst.writers.remove(&w)
                && inst.writers.is_empty()
                && inst.state == InstanceState::Alive
            {
                inst.set_state(InstanceState::NotAliveNoWriters, now);
            }
        }
    }

    fn info(&self, c: &Cached) -> SampleInfo {
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

    /// Removes (take) or marks read up to `v.max` samples `v` selects; `f` sees each. The
    /// payload buffers of large samples taken are returned, for reuse by the core.
    pub(crate) fn visit(
        &mut self,
        v: Visit,
        mut f: impl FnMut(&Cached, SampleInfo),
    ) -> Vec<Vec<u8>> {
        let mut spent = Vec::new();
        let mut n = 0;
        let mut i = 0;
        let mut viewed: Vec<[u8; 16]> = Vec::new();
        while i < self.samples.len() && n < v.max {
            let c = &self.samples[i];
            if (v.only_unread && c.read) || v.instance.is_some_and(|k| k != c.key) {
                i += 1;
                continue;
            }
            let info = self.info(c);
            f(c, info);
            if viewed.last() != Some(&c.key) {
                viewed.push(c.key);
            }
            n += 1;
            if v.take {
                if let Some(c) = self.samples.remove(i) {
                    if c.expiry.is_some() {
                        self.expiring = self.expiring.saturating_sub(1);
                    }
                    if let Some(inst) = self.instances.get_mut(&c.key) {
                        inst.count = inst.count.saturating_sub(1);
                    }
                    if c.payload.len() >= REUSABLE_PAYLOAD_BYTES {
                        // Unless a local writer's history still shares it.
                        if let Ok(buf) = std::sync::Arc::try_unwrap(c.payload) {
                            spent.push(buf);
                        }
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
        spent
    }
}
