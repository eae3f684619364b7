//! The reader history cache (DDS 1.4 §2.2.2.5.3, §2.2.3.19 HISTORY, §2.2.3.18 RESOURCE_LIMITS).
//!
//! Design. Samples are kept in arrival order in one queue, with per-instance bookkeeping
//! beside it: the instance state (ALIVE, NOT_ALIVE_DISPOSED, NOT_ALIVE_NO_WRITERS), whether the
//! application has viewed it, the writers alive for it and how many samples it holds.
//! KEEP_LAST(n) keeps the newest n data samples of each instance (the oldest one of the
//! instance is replaced); a dispose or an unregistration (a sample without data) takes no
//! data sample's place: the instance holds at most one such sample besides, the latest (its
//! instance state is what the application reads), so a late reader that gets an instance's
//! last value and its writer's unregistration back to back keeps both. KEEP_ALL is bounded by
//! RESOURCE_LIMITS (max_samples, and max_samples_per_instance, which counts data samples),
//! and a sample beyond them is rejected and counted. A reliable KEEP_ALL reader never gets to
//! reject: it grants the protocol core only as many samples as it has room for
//! ([`ReaderCache::credit`]), so the rest stay unacknowledged and their writer blocks.
//!
//! Read marks samples READ and their instances NOT_NEW; take removes them. A sample that
//! arrives for an instance that was not alive starts a new generation: its view state is NEW
//! again.

use crate::filter::SampleQuery;
use crate::status::{InstanceHandle, InstanceState, SampleInfo, SampleState, StateMask, ViewState};
use halyard_core::{ChangeKind, ReceivedSample, SeededMap};
use halyard_wire::qos::{EndpointQos, History, PresentationAccessScope, ReliabilityKind};
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
    /// The instance's (disposed, no-writers) generation counts when it arrived.
    generations: (u32, u32),
    /// Its publisher and group sequence number (GROUP ordered access).
    pub(crate) group_seq: Option<(Guid, halyard_wire::SequenceNumber)>,
}

/// Puts the items of each publisher, among `items` (in arrival order), in the order the
/// publisher made them (group sequence number) on the positions they hold: GROUP ordered
/// access. Items without a group sequence number keep their place.
pub(crate) fn group_order<T>(
    items: &mut [T],
    seq: impl Fn(&T) -> Option<(Guid, halyard_wire::SequenceNumber)>,
) {
    let mut by_publisher: std::collections::BTreeMap<Guid, Vec<usize>> = Default::default();
    for (pos, it) in items.iter().enumerate() {
        if let Some((p, _)) = seq(it) {
            by_publisher.entry(p).or_default().push(pos);
        }
    }
    for positions in by_publisher.values() {
        let mut order = positions.clone();
        order.sort_by_key(|&pos| seq(&items[pos]).map(|(_, gsn)| gsn));
        // Apply the permutation `positions[k] <- order[k]` by cycles.
        let mut target: std::collections::BTreeMap<usize, usize> = positions
            .iter()
            .zip(&order)
            .map(|(&dst, &src)| (dst, src))
            .collect();
        let mut done = std::collections::BTreeSet::new();
        for &start in positions {
            if done.contains(&start) {
                continue;
            }
            let mut cur = start;
            loop {
                done.insert(cur);
                let src = target.remove(&cur).unwrap_or(cur);
                if src == start {
                    break;
                }
                items.swap(cur, src);
                cur = src;
            }
        }
    }
}

/// The writers alive for an instance. Almost every instance has one writer, kept inline: a
/// reader of many instances then holds no set per instance.
#[derive(Debug, PartialEq)]
enum WriterSet {
    Empty,
    One(Guid),
    Many(BTreeSet<Guid>),
}

impl WriterSet {
    fn insert(&mut self, w: Guid) {
        match self {
            WriterSet::Empty => *self = WriterSet::One(w),
            WriterSet::One(x) if *x == w => {}
            WriterSet::One(x) => *self = WriterSet::Many(BTreeSet::from([*x, w])),
            WriterSet::Many(set) => {
                set.insert(w);
            }
        }
    }

    /// Removes `w`; true if it was there.
    fn remove(&mut self, w: &Guid) -> bool {
        match self {
            WriterSet::Empty => false,
            WriterSet::One(x) if x == w => {
                *self = WriterSet::Empty;
                true
            }
            WriterSet::One(_) => false,
            WriterSet::Many(set) => {
                let removed = set.remove(w);
                if set.is_empty() {
                    *self = WriterSet::Empty;
                }
                removed
            }
        }
    }

    fn is_empty(&self) -> bool {
        *self == WriterSet::Empty
    }
}

/// What the cache knows of one instance.
struct Instance {
    state: InstanceState,
    viewed: bool,
    writers: WriterSet,
    /// Data samples held.
    count: usize,
    /// Samples without data held (a dispose, an unregistration): at most one under
    /// KEEP_LAST.
    states: usize,
    /// When it stopped being alive (READER_DATA_LIFECYCLE autopurge delays run from here).
    not_alive_since: Option<Time>,
    /// Times it came back to life after being disposed, and after having no writers.
    disposed_generation: u32,
    no_writers_generation: u32,
}

impl Instance {
    fn new() -> Self {
        Instance {
            state: InstanceState::Alive,
            viewed: false,
            writers: WriterSet::Empty,
            count: 0,
            states: 0,
            not_alive_since: None,
            disposed_generation: 0,
            no_writers_generation: 0,
        }
    }

    /// A sample of `kind` left the cache.
    fn forget(&mut self, kind: ChangeKind) {
        match kind {
            ChangeKind::Alive => self.count = self.count.saturating_sub(1),
            _ => self.states = self.states.saturating_sub(1),
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
#[derive(Clone)]
pub(crate) struct Visit {
    /// At most this many.
    pub(crate) max: usize,
    /// Remove them (take) rather than mark them read.
    pub(crate) take: bool,
    /// Only samples in these states.
    pub(crate) states: StateMask,
    /// Only this instance.
    pub(crate) instance: Option<[u8; 16]>,
    /// Only the instance with the smallest handle above this one that has samples selected
    /// (read/take_next_instance); `Some([0; 16])`-like starts use `first_instance`.
    pub(crate) next_after: Option<[u8; 16]>,
    /// With `next_after`: start from the first instance.
    pub(crate) first_instance: bool,
    /// Only samples this query selects, in its ORDER BY order if it has one (a
    /// QueryCondition's).
    pub(crate) query: Option<SampleQuery>,
}

/// True if `c` passes `query` (its condition tests data samples only).
fn passes(c: &Cached, query: Option<&SampleQuery>) -> bool {
    query.is_none_or(|q| q.accepts((c.kind == ChangeKind::Alive).then_some(&c.payload[..])))
}

/// Both generation counts together: the number of times the instance came back to life.
fn generation_sum(g: (u32, u32)) -> u32 {
    g.0 + g.1
}

impl Default for Visit {
    /// Read every sample in every state.
    fn default() -> Self {
        Visit {
            max: usize::MAX,
            take: false,
            states: StateMask::ANY,
            instance: None,
            next_after: None,
            first_instance: false,
            query: None,
        }
    }
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

/// An unread sample as `Subscriber::get_datareaders` orders them: when it arrived, and its
/// publisher's group sequence number.
pub(crate) type Unread = (Time, Option<(Guid, halyard_wire::SequenceNumber)>);

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

    /// The reader's QoS.
    pub(crate) fn qos(&self) -> &EndpointQos {
        &self.qos
    }

    /// Takes a changed QoS (only changeable policies differ; READER_DATA_LIFECYCLE is the one
    /// the cache applies).
    pub(crate) fn set_qos(&mut self, qos: EndpointQos) {
        self.qos = qos;
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

    /// The unread samples, in arrival order (for `Subscriber::get_datareaders`).
    pub(crate) fn unread(&self) -> impl Iterator<Item = Unread> + '_ {
        self.samples
            .iter()
            .filter(|c| !c.read)
            .map(|c| (c.reception_ts, c.group_seq))
    }

    /// True while samples not yet read are held.
    pub(crate) fn has_unread(&self) -> bool {
        self.samples.iter().any(|c| !c.read)
    }

    /// True while samples in `states` are held.
    pub(crate) fn has_matching(&self, states: StateMask, query: Option<&SampleQuery>) -> bool {
        self.samples
            .iter()
            .any(|c| self.selected(c, states) && passes(c, query))
    }

    fn selected(&self, c: &Cached, states: StateMask) -> bool {
        let (view, instance) = self.states_of(&c.key);
        let sample = if c.read {
            SampleState::Read
        } else {
            SampleState::NotRead
        };
        states.matches(sample, view, instance)
    }

    fn states_of(&self, key: &[u8; 16]) -> (ViewState, InstanceState) {
        let inst = self.instances.get(key);
        let view = if inst.is_some_and(|i| i.viewed) {
            ViewState::NotNew
        } else {
            ViewState::New
        };
        (view, inst.map_or(InstanceState::Alive, |i| i.state))
    }

    /// Stores a received sample, received at wall-clock time `now`.
    pub(crate) fn insert(&mut self, s: ReceivedSample, now: Time) -> Result<(), Rejected> {
        if s.lifespan_expiry.is_some_and(|e| e <= now) {
            // Expired on the way: as if it had been purged the moment it arrived.
            return Err(Rejected::Expired);
        }
        let key = match (s.key_hash, &self.key_fn) {
            (Some(k), _) => k,
            (None, Some(f)) => f(&s.payload, s.kind != ChangeKind::Alive).ok_or(Rejected::NoKey)?,
            (None, None) => [0; 16],
        };
        let max_samples = self.max_samples();
        let inst = self.instances.entry(key).or_insert_with(Instance::new);
        match s.kind {
            ChangeKind::Alive => {
                match inst.state {
                    InstanceState::Alive => {}
                    InstanceState::NotAliveDisposed => inst.disposed_generation += 1,
                    InstanceState::NotAliveNoWriters => inst.no_writers_generation += 1,
                }
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
        let data = s.kind == ChangeKind::Alive;
        // Under KEEP_LAST, the sample of the instance this one replaces: its oldest data
        // sample once the depth is reached; for a sample without data, the one it holds.
        let replaces = match (data, self.qos.history) {
            (true, History::KeepLast(depth)) => inst.count >= depth.max(1) as usize,
            (false, History::KeepLast(_)) => inst.states > 0,
            (_, History::KeepAll) => false,
        };
        if replaces {
            if let Some(pos) = self
                .samples
                .iter()
                .position(|c| c.key == key && (c.kind == ChangeKind::Alive) == data)
            {
                if self.samples.remove(pos).is_some_and(|c| c.expiry.is_some()) {
                    self.expiring = self.expiring.saturating_sub(1);
                }
                match data {
                    true => inst.count -= 1,
                    false => inst.states -= 1,
                }
            }
        }
        if self.qos.history == History::KeepAll {
            let per_inst = self.qos.resource_limits.max_samples_per_instance;
            if self.samples.len() >= max_samples
                || (data && per_inst > 0 && inst.count >= per_inst as usize)
            {
                return Err(Rejected::Full);
            }
        }
        match data {
            true => inst.count += 1,
            false => inst.states += 1,
        }
        let generations = (inst.disposed_generation, inst.no_writers_generation);
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
            generations,
            group_seq: s.group_seq,
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
                inst.forget(c.kind);
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
        let (view_state, instance_state) = self.states_of(&c.key);
        let current = self.instances.get(&c.key).map_or(c.generations, |i| {
            (i.disposed_generation, i.no_writers_generation)
        });
        SampleInfo {
            sample_state: if c.read {
                SampleState::Read
            } else {
                SampleState::NotRead
            },
            view_state,
            instance_state,
            source_timestamp: c.source_ts,
            reception_timestamp: c.reception_ts,
            instance_handle: InstanceHandle(c.key),
            publication_handle: c.writer.into(),
            valid_data: c.kind == ChangeKind::Alive,
            sequence_number: c.sn,
            disposed_generation_count: c.generations.0,
            no_writers_generation_count: c.generations.1,
            sample_rank: 0,
            generation_rank: 0,
            absolute_generation_rank: generation_sum(current) - generation_sum(c.generations),
        }
    }

    /// The indices of the samples `v` selects, in the order they are returned: the cache's
    /// (arrival) order, or the query's ORDER BY, or instance by instance for PRESENTATION
    /// ordered access at INSTANCE scope. `None` when read/take_next_instance finds no
    /// instance.
    fn choose(&self, v: &Visit) -> Option<Vec<usize>> {
        let query = v.query.as_ref();
        let instance = if v.next_after.is_some() || v.first_instance {
            let after = v.next_after;
            let next = self
                .samples
                .iter()
                .filter(|c| after.is_none_or(|a| c.key > a) && self.selected(c, v.states))
                .filter(|c| passes(c, query))
                .map(|c| c.key)
                .min()?;
            Some(next)
        } else {
            v.instance
        };
        let candidates = (0..self.samples.len()).filter(|&i| {
            let c = &self.samples[i];
            instance.is_none_or(|k| k == c.key) && self.selected(c, v.states) && passes(c, query)
        });
        let group_ordered = self.qos.presentation.ordered_access
            && self.qos.presentation.access_scope == PresentationAccessScope::Group;
        let mut chosen: Vec<usize> = match query.filter(|q| q.sorts()) {
            Some(q) => {
                // ORDER BY picks the first `max` of all selected, in its order.
                let mut all: Vec<usize> = candidates.collect();
                q.sort(&mut all, |i| &self.samples[i].payload[..]);
                all.truncate(v.max);
                all
            }
            None if group_ordered => {
                // GROUP ordered access: each publisher's samples in the order it made them.
                let mut all: Vec<usize> = candidates.collect();
                group_order(&mut all, |&i| self.samples[i].group_seq);
                all.truncate(v.max);
                all
            }
            None => candidates.take(v.max).collect(),
        };
        let grouped = self.qos.presentation.ordered_access
            && self.qos.presentation.access_scope == PresentationAccessScope::Instance;
        if grouped && !query.is_some_and(|q| q.sorts()) {
            // PRESENTATION ordered access at INSTANCE scope: order is kept within each
            // instance only, and the samples come instance by instance (instances in the order
            // their first sample came). At TOPIC scope they come as written, across instances.
            // A query's ORDER BY, asked for explicitly, prevails.
            let mut first: std::collections::BTreeMap<[u8; 16], usize> = Default::default();
            for (pos, &i) in chosen.iter().enumerate() {
                first.entry(self.samples[i].key).or_insert(pos);
            }
            chosen.sort_by_key(|&i| first.get(&self.samples[i].key).copied());
        }
        Some(chosen)
    }

    /// The SampleInfos of the samples at `chosen`, ranks computed over that collection: per
    /// instance, the samples after each in it (sample_rank), and the generations between
    /// each and the instance's most recent sample in it (generation_rank; the most recent
    /// has the highest generation, wherever ORDER BY put it).
    fn infos(&self, chosen: &[usize]) -> Vec<SampleInfo> {
        let mut newest: std::collections::BTreeMap<[u8; 16], u32> = Default::default();
        for &i in chosen {
            let c = &self.samples[i];
            let g = newest.entry(c.key).or_insert(0);
            *g = (*g).max(generation_sum(c.generations));
        }
        let mut infos: Vec<SampleInfo> = chosen
            .iter()
            .map(|&i| self.info(&self.samples[i]))
            .collect();
        let mut later: std::collections::BTreeMap<[u8; 16], u32> = Default::default();
        for (info, &i) in infos.iter_mut().zip(chosen).rev() {
            let c = &self.samples[i];
            let after = later.entry(c.key).or_insert(0);
            info.sample_rank = *after;
            *after += 1;
            let most_recent = newest.get(&c.key).copied().unwrap_or(0);
            info.generation_rank = most_recent.saturating_sub(generation_sum(c.generations));
        }
        infos
    }

    /// Removes (take) or marks read up to `v.max` samples `v` selects; `f` sees each, with
    /// its SampleInfo (ranks computed over the returned collection). The payload buffers of
    /// large samples taken are returned, for reuse by the core.
    pub(crate) fn visit(
        &mut self,
        v: Visit,
        mut f: impl FnMut(&Cached, SampleInfo),
    ) -> Vec<Vec<u8>> {
        let Some(mut chosen) = self.choose(&v) else {
            return Vec::new();
        };
        let infos = self.infos(&chosen);
        let mut viewed: Vec<[u8; 16]> = Vec::new();
        for (info, &i) in infos.into_iter().zip(&chosen) {
            let c = &self.samples[i];
            f(c, info);
            if viewed.last() != Some(&c.key) {
                viewed.push(c.key);
            }
        }
        let mut spent = Vec::new();
        if v.take {
            // Removed from the back, so the indices of those still to remove hold.
            chosen.sort_unstable();
            for &i in chosen.iter().rev() {
                let Some(c) = self.samples.remove(i) else {
                    continue;
                };
                if c.expiry.is_some() {
                    self.expiring = self.expiring.saturating_sub(1);
                }
                if let Some(inst) = self.instances.get_mut(&c.key) {
                    inst.forget(c.kind);
                }
                if c.payload.len() >= REUSABLE_PAYLOAD_BYTES {
                    // Unless a local writer's history still shares it.
                    if let Ok(buf) = std::sync::Arc::try_unwrap(c.payload) {
                        spent.push(buf);
                    }
                }
            }
        } else {
            for &i in &chosen {
                self.samples[i].read = true;
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

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::{EntityId, GuidPrefix, SequenceNumber};
    use std::sync::Arc;

    fn writer(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    #[test]
    fn an_instance_has_no_writers_only_once_every_writer_left() {
        let mut set = WriterSet::Empty;
        set.insert(writer(1));
        set.insert(writer(1));
        assert_eq!(set, WriterSet::One(writer(1)));
        set.insert(writer(2));
        assert!(!set.remove(&writer(3)));
        assert!(set.remove(&writer(1)));
        assert!(!set.is_empty());
        assert!(!set.remove(&writer(1)));
        assert!(set.remove(&writer(2)));
        assert!(set.is_empty());
        assert!(!set.remove(&writer(2)));
    }

    fn sample(w: Guid, key: u8, kind: ChangeKind, sn: i64) -> ReceivedSample {
        ReceivedSample {
            reader: EntityId([0, 0, 1, 7]),
            writer: w,
            sn: SequenceNumber(sn),
            kind,
            key_hash: Some([key; 16]),
            payload: Arc::new(vec![0, 1, 0, 0]),
            source_timestamp: None,
            lifespan_expiry: None,
            group: None,
            group_seq: None,
            original: None,
        }
    }

    fn cache() -> ReaderCache {
        let mut q = EndpointQos::reader_default();
        q.history = History::KeepAll;
        ReaderCache::new(q, None, 1)
    }

    fn infos(c: &mut ReaderCache, v: Visit) -> Vec<SampleInfo> {
        let mut out = Vec::new();
        c.visit(v, |_, i| out.push(i));
        out
    }

    #[test]
    fn group_order_puts_each_publishers_items_in_its_order_on_their_places() {
        let (p, q) = (writer(1), writer(2));
        // (label, publisher, gsn): p's items arrived 3, 1, 2; q's 2, 1; "x" has no GSN.
        let mut items = vec![
            ("p3", Some((p, 3))),
            ("q2", Some((q, 2))),
            ("x", None),
            ("p1", Some((p, 1))),
            ("q1", Some((q, 1))),
            ("p2", Some((p, 2))),
        ];
        group_order(&mut items, |(_, s)| s.map(|(g, n)| (g, SequenceNumber(n))));
        let labels: Vec<&str> = items.iter().map(|(l, _)| *l).collect();
        assert_eq!(labels, ["p1", "q1", "x", "p2", "q2", "p3"]);
    }

    #[test]
    fn generation_counts_and_ranks_follow_the_instance_lifecycle() {
        let mut c = cache();
        let t = Time::from_nanos(0);
        let w = writer(1);
        // Instance 1: alive, disposed, alive again (disposed generation 1), unregistered by
        // its only writer, alive again (no-writers generation 1).
        for (sn, kind) in [
            (1, ChangeKind::Alive),
            (2, ChangeKind::Disposed),
            (3, ChangeKind::Alive),
            (4, ChangeKind::Unregistered),
            (5, ChangeKind::Alive),
        ] {
            c.insert(sample(w, 1, kind, sn), t).unwrap();
        }
        c.insert(sample(w, 2, ChangeKind::Alive, 6), t).unwrap();
        let all = infos(&mut c, Visit::default());
        let one: Vec<&SampleInfo> = all
            .iter()
            .filter(|i| i.instance_handle.0 == [1; 16])
            .collect();
        let gens: Vec<(u32, u32)> = one
            .iter()
            .map(|i| (i.disposed_generation_count, i.no_writers_generation_count))
            .collect();
        assert_eq!(gens, [(0, 0), (0, 0), (1, 0), (1, 0), (1, 1)]);
        let ranks: Vec<(u32, u32, u32)> = one
            .iter()
            .map(|i| (i.sample_rank, i.generation_rank, i.absolute_generation_rank))
            .collect();
        assert_eq!(
            ranks,
            [(4, 2, 2), (3, 2, 2), (2, 1, 1), (1, 1, 1), (0, 0, 0)]
        );
        // A collection holding only the first two: ranks are relative to it, the absolute
        // rank to the cache.
        let first_two = infos(
            &mut c,
            Visit {
                max: 2,
                ..Visit::default()
            },
        );
        assert_eq!(
            first_two
                .iter()
                .map(|i| (i.sample_rank, i.generation_rank, i.absolute_generation_rank))
                .collect::<Vec<_>>(),
            [(1, 0, 2), (0, 0, 2)]
        );
    }

    #[test]
    fn ordered_access_at_instance_scope_groups_samples_by_instance() {
        let t = Time::from_nanos(0);
        let w = writer(1);
        let keys = [1u8, 2, 1, 3, 2, 1];
        let order = |scope: PresentationAccessScope| {
            let mut q = EndpointQos::reader_default();
            q.history = History::KeepAll;
            q.presentation.ordered_access = true;
            q.presentation.access_scope = scope;
            let mut c = ReaderCache::new(q, None, 1);
            for (sn, key) in keys.iter().enumerate() {
                c.insert(sample(w, *key, ChangeKind::Alive, sn as i64 + 1), t)
                    .unwrap();
            }
            let mut got = Vec::new();
            c.visit(
                Visit {
                    take: true,
                    max: usize::MAX,
                    ..Visit::default()
                },
                |s, _| got.push((s.key[0], s.sn.0)),
            );
            assert!(c.samples.is_empty(), "take removed every sample");
            got
        };
        // INSTANCE: instance by instance, each in order.
        assert_eq!(
            order(PresentationAccessScope::Instance),
            [(1, 1), (1, 3), (1, 6), (2, 2), (2, 5), (3, 4)]
        );
        // TOPIC: as written.
        assert_eq!(
            order(PresentationAccessScope::Topic),
            [(1, 1), (2, 2), (1, 3), (3, 4), (2, 5), (1, 6)]
        );
    }

    #[derive(halyard_derive::Topic, Clone, Debug, Default)]
    struct Tick {
        #[key]
        id: u8,
        rank: i32,
    }

    fn tick(w: Guid, sn: i64, id: u8, rank: Option<i32>) -> ReceivedSample {
        let Some(rank) = rank else {
            return sample(w, id, ChangeKind::Disposed, sn);
        };
        let mut payload = Vec::new();
        halyard_cdr::serialize(
            &Tick { id, rank },
            halyard_cdr::DataRepresentation::Xcdr2,
            &mut payload,
        )
        .unwrap();
        ReceivedSample {
            payload: Arc::new(payload),
            ..sample(w, id, ChangeKind::Alive, sn)
        }
    }

    #[test]
    fn a_query_with_order_by_sorts_before_max_and_ranks_over_the_sorted_collection() {
        let mut c = cache();
        let t = Time::from_nanos(0);
        let w = writer(1);
        // (sn, instance, rank; None: a disposal). Instance 1 is disposed, then alive again.
        for (sn, id, rank) in [
            (1, 1, Some(30)),
            (2, 2, Some(10)),
            (3, 1, None),
            (4, 1, Some(10)),
            (5, 3, Some(60)),
            (6, 3, Some(20)),
        ] {
            c.insert(tick(w, sn, id, rank), t).unwrap();
        }
        let query = |expr: &str| {
            let f = crate::filter::Filter::new_query::<Tick>(expr, &[]).unwrap();
            SampleQuery::new::<Tick>(f).0
        };
        let sorted = query("rank < 50 ORDER BY rank");
        let mut got = Vec::new();
        c.visit(
            Visit {
                query: Some(sorted.clone()),
                ..Visit::default()
            },
            |s, i| got.push((s.key[0], s.sn.0, i.sample_rank, i.generation_rank)),
        );
        // Sorted by rank, equal ranks (sn 2 and 4) as they came, the disposal left out.
        // Instance 1's most recent sample (sn 4, after its disposal) comes first.
        assert_eq!(
            got,
            [(2, 2, 0, 0), (1, 4, 1, 0), (3, 6, 0, 0), (1, 1, 0, 1)]
        );
        assert!(c.has_matching(StateMask::ANY, Some(&sorted)));
        // max applies to the sorted samples.
        let mut taken = Vec::new();
        c.visit(
            Visit {
                max: 2,
                take: true,
                query: Some(sorted.clone()),
                ..Visit::default()
            },
            |s, _| taken.push(s.sn.0),
        );
        assert_eq!(taken, [2, 4]);
        // Without ORDER BY: arrival order, and the disposal passes the query.
        let mut rest = Vec::new();
        c.visit(
            Visit {
                query: Some(query("rank < 50")),
                ..Visit::default()
            },
            |s, _| rest.push(s.sn.0),
        );
        assert_eq!(rest, [1, 3, 6]);
        let only_disposal = StateMask {
            instance_states: StateMask::NOT_ALIVE_DISPOSED,
            ..StateMask::ANY
        };
        c.insert(tick(w, 7, 2, None), t).unwrap();
        assert!(!c.has_matching(only_disposal, Some(&sorted)));
        assert!(c.has_matching(only_disposal, Some(&query("rank < 50"))));
    }

    #[test]
    fn state_masks_and_next_instance_select_what_dds_says() {
        let mut c = cache();
        let t = Time::from_nanos(0);
        let w = writer(1);
        for key in [3u8, 1, 2] {
            c.insert(sample(w, key, ChangeKind::Alive, key as i64), t)
                .unwrap();
        }
        c.insert(sample(w, 2, ChangeKind::Disposed, 10), t).unwrap();
        // Only disposed instances.
        let disposed = StateMask {
            instance_states: StateMask::NOT_ALIVE_DISPOSED,
            ..StateMask::ANY
        };
        let got = infos(
            &mut c,
            Visit {
                states: disposed,
                ..Visit::default()
            },
        );
        assert!(got.len() == 2 && got.iter().all(|i| i.instance_handle.0 == [2; 16]));
        assert!(c.has_matching(disposed, None));
        // Those were read: NOT_READ now selects the other instances' samples only.
        let unread = infos(
            &mut c,
            Visit {
                states: StateMask::NOT_READ_ONLY,
                ..Visit::default()
            },
        );
        assert_eq!(unread.len(), 2);
        // Instance 1 and 3 were viewed by that read; 2 was too: NEW selects nothing.
        let new = StateMask {
            view_states: StateMask::NEW,
            ..StateMask::ANY
        };
        assert!(!c.has_matching(new, None));
        // next_instance walks the instances in handle order.
        let mut order = Vec::new();
        let mut prev: Option<[u8; 16]> = None;
        loop {
            let got = infos(
                &mut c,
                Visit {
                    next_after: prev,
                    first_instance: prev.is_none(),
                    ..Visit::default()
                },
            );
            let Some(k) = got.first().map(|i| i.instance_handle.0) else {
                break;
            };
            assert!(got.iter().all(|i| i.instance_handle.0 == k));
            order.push(k[0]);
            prev = Some(k);
        }
        assert_eq!(order, [1, 2, 3]);
    }

    #[test]
    fn keep_last_keeps_the_last_data_sample_beside_the_instance_state() {
        let mut q = EndpointQos::reader_default();
        q.history = History::KeepLast(1);
        let mut c = ReaderCache::new(q, None, 1);
        let t = Time::from_nanos(0);
        let w = writer(1);
        // A late reader gets the last value and the unregistration back to back, then a
        // dispose and another unregistration of a second instance.
        c.insert(sample(w, 1, ChangeKind::Alive, 1), t).unwrap();
        c.insert(sample(w, 1, ChangeKind::Alive, 2), t).unwrap();
        c.insert(sample(w, 1, ChangeKind::Unregistered, 3), t)
            .unwrap();
        c.insert(sample(w, 2, ChangeKind::Alive, 4), t).unwrap();
        c.insert(sample(w, 2, ChangeKind::Disposed, 5), t).unwrap();
        c.insert(sample(w, 2, ChangeKind::Unregistered, 6), t)
            .unwrap();
        let all = infos(&mut c, Visit::default());
        let seen: Vec<(u8, bool, InstanceState)> = all
            .iter()
            .map(|i| (i.instance_handle.0[0], i.valid_data, i.instance_state))
            .collect();
        assert_eq!(
            seen,
            [
                (1, true, InstanceState::NotAliveNoWriters),
                (1, false, InstanceState::NotAliveNoWriters),
                (2, true, InstanceState::NotAliveDisposed),
                (2, false, InstanceState::NotAliveDisposed),
            ],
            "the last value of each instance, and one sample without data: the latest"
        );
    }

    #[test]
    fn keep_all_limits_per_instance_count_data_samples() {
        let mut q = EndpointQos::reader_default();
        q.history = History::KeepAll;
        q.resource_limits.max_samples_per_instance = 1;
        let mut c = ReaderCache::new(q, None, 1);
        let t = Time::from_nanos(0);
        let w = writer(1);
        c.insert(sample(w, 1, ChangeKind::Alive, 1), t).unwrap();
        assert_eq!(
            c.insert(sample(w, 1, ChangeKind::Alive, 2), t),
            Err(Rejected::Full)
        );
        c.insert(sample(w, 1, ChangeKind::Unregistered, 3), t)
            .expect("a state change is not refused by the per-instance limit");
    }
}
