//! The service thread: channels from discovery and from the store, samples into the store,
//! commits by the policy, then relays and acknowledgments; cleanup of disposed instances.
//!
//! Order of a commit: the store commits first; only then are the newly stored samples written
//! to the relays and the acknowledgments released. A crash before the commit loses nothing a
//! writer was told is stored (it still holds those samples and sends them again); a crash
//! after it loses nothing at all.
//!
//! Cost per sample (it bounds PERSISTENT throughput): a sample's buffer, as received, goes to the
//! store (borrowed) and to its relay (shared), never copied; per sample the thread touches
//! its reader's entry, the store, the relay queue and the release map. The rest is per commit:
//! the relay writes, the acknowledgment releases and the credits (one lock of the
//! participant), and the statistics (one lock of [`ServiceStats`]). The clock is read once
//! per drained run of the channel, not per sample.

use super::channel::{self, Channel, ChannelKey};
use super::cleanup::Disposed;
use super::relay_type::RelayTypes;
use super::{CommitPolicy, DurabilityConfig, Input, ServiceStats, MAX_PROBLEMS};
use crate::clock::monotonic;
use crate::runtime::Shared;
use halyard_core::{ChangeKind, NewChange, ReaderSpec, ReceivedSample, WriterSpec};
use halyard_store::{Inserted, SampleId, SampleKind, SampleMeta, SampleRef, Store, StoreError};
use halyard_wire::discovery::EndpointData;
use halyard_wire::{EntityId, Guid, GuidPrefix, SequenceNumber, Time};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Samples a service reader may have handed over and not yet processed: its credit in the
/// core. Beyond it, samples wait unacknowledged at their writers.
pub(crate) const CREDIT: usize = 16_384;
/// Stored samples written to a relay per lock of the participant (loading a store), and
/// payloads read back for a relay per lock.
const LOAD_CHUNK: usize = 4096;
/// How often disposed instances are checked for cleanup.
pub(super) const CLEANUP_TICK: Duration = Duration::from_millis(100);

pub(super) struct Worker {
    pub(super) shared: Arc<Shared>,
    /// The service participant's own GUID prefix (its relays are not channels of their own).
    own_prefix: GuidPrefix,
    pub(super) persistent: Option<Store>,
    pub(super) transient: Store,
    config: DurabilityConfig,
    stats: Arc<Mutex<ServiceStats>>,
    pub(super) channels: BTreeMap<ChannelKey, Channel>,
    /// The service's readers: their channel, and samples processed since the last commit
    /// (their credit comes back then).
    by_reader: BTreeMap<EntityId, ReaderState>,
    /// Live writers (not relays) and their channels: a disposed instance one of them still
    /// has registered is not cleaned up.
    pub(super) writers: BTreeMap<Guid, ChannelKey>,
    /// Channels refused (a type conflict, no store for PERSISTENT): said once.
    refused: BTreeSet<ChannelKey>,
    /// Channels of the store an embedded service does not serve until its participant writes
    /// them (see [`Worker::load`]), with their store identity.
    dormant: BTreeMap<ChannelKey, halyard_store::ChannelId>,
    /// Newly stored samples to relay once committed, with where the store keeps them.
    pending_relay: Vec<(EntityId, NewChange, SampleId)>,
    /// Relays whose history is held back (`halyard_core`'s "Deferred history"): the lowest
    /// stored sample not written to each. The store has them all, committed, from there on.
    deferred: BTreeMap<EntityId, SampleId>,
    /// Relays whose held-back history could not be read, and when to try again.
    history_retry: BTreeSet<EntityId>,
    next_history_retry: Instant,
    /// Acknowledgments to release once committed: (reader, writer) -> highest sequence number.
    pending_release: BTreeMap<(EntityId, Guid), SequenceNumber>,
    /// The same for samples fed in memory, acknowledged to [`Worker::owner`].
    pending_fed: BTreeMap<(EntityId, Guid), SequenceNumber>,
    /// The participant that embeds the service, if it feeds it its writers' changes in
    /// memory (`halyard_core`'s `Participant::set_fed_service`).
    owner: Option<Arc<Shared>>,
    /// Counts since the last commit, published to [`ServiceStats`] at the commit (one lock
    /// of the statistics per batch, not per sample).
    stored_since: u64,
    duplicates_since: u64,
    fed_since: u64,
    /// (reader, writer) pairs no longer acknowledged: a sample of theirs was refused.
    blocked: BTreeSet<(EntityId, Guid)>,
    /// When the oldest uncommitted sample arrived, and how many arrived since the commit.
    first_pending_at: Option<Instant>,
    uncommitted: usize,
    last_commit: Instant,
    /// Disposed instances and when, per channel.
    pub(super) disposed: BTreeMap<(ChannelKey, [u8; 16]), Disposed>,
    pub(super) next_cleanup: Instant,
    /// The types the relays announce (`relay_type`).
    types: RelayTypes,
}

/// One of the service's readers.
struct ReaderState {
    key: Arc<ChannelKey>,
    /// Samples processed since the last commit.
    processed: usize,
}

impl Worker {
    pub(super) fn new(
        shared: Arc<Shared>,
        persistent: Option<Store>,
        transient: Store,
        config: DurabilityConfig,
        stats: Arc<Mutex<ServiceStats>>,
        owner: Option<Arc<Shared>>,
    ) -> Worker {
        let now = monotonic();
        let own_prefix = shared.lock().core.guid_prefix();
        Worker {
            shared,
            own_prefix,
            persistent,
            transient,
            config,
            stats,
            channels: BTreeMap::new(),
            by_reader: BTreeMap::new(),
            writers: BTreeMap::new(),
            refused: BTreeSet::new(),
            dormant: BTreeMap::new(),
            pending_relay: Vec::new(),
            deferred: BTreeMap::new(),
            history_retry: BTreeSet::new(),
            next_history_retry: now,
            pending_release: BTreeMap::new(),
            pending_fed: BTreeMap::new(),
            owner,
            stored_since: 0,
            duplicates_since: 0,
            fed_since: 0,
            blocked: BTreeSet::new(),
            first_pending_at: None,
            uncommitted: 0,
            last_commit: now,
            disposed: BTreeMap::new(),
            next_cleanup: now + CLEANUP_TICK,
            types: RelayTypes::new(),
        }
    }

    pub(super) fn stats(&self) -> std::sync::MutexGuard<'_, ServiceStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn problem(&self, what: String) {
        let mut s = self.stats();
        if s.problems.len() >= MAX_PROBLEMS {
            s.problems.remove(0);
        }
        s.problems.push(what);
    }

    /// The store of PERSISTENT (`true`) or TRANSIENT channels; `None`: no store file.
    pub(super) fn store(&self, persistent: bool) -> Option<&Store> {
        match persistent {
            true => self.persistent.as_ref(),
            false => Some(&self.transient),
        }
    }

    /// Whether relay `relay`'s channel is PERSISTENT, and its store channel.
    fn relay_channel(&self, relay: EntityId) -> Option<(bool, halyard_store::ChannelId)> {
        self.channels
            .iter()
            .find(|(_, ch)| ch.relay == relay)
            .map(|(key, ch)| (key.persistent, ch.store_id))
    }

    /// Serves every channel the stores hold, with their samples, before anything else. An
    /// embedded service (scoped to its participant's writers) serves a stored channel only
    /// once its participant writes it ([`Worker::on_writer`]): a process with a TRANSIENT
    /// writer does not serve, to everyone, what another process once stored in the same
    /// file for other topics or kinds (its relays would be peers of every reader of them,
    /// other vendors' included).
    pub(super) fn load(&mut self) {
        for persistent in [true, false] {
            let Some(store) = self.store(persistent) else {
                continue;
            };
            let specs = match store.channels() {
                Ok(v) => v,
                Err(e) => {
                    self.problem(format!("cannot list the store's channels: {e}"));
                    continue;
                }
            };
            for (id, spec) in specs {
                let key = ChannelKey::of_spec(&spec);
                if self.config.only_participant.is_some() {
                    self.dormant.insert(key, id);
                    continue;
                }
                let ed = match EndpointData::parse(&spec.writer_qos) {
                    Ok(ed) => ed,
                    Err(e) => {
                        self.problem(format!(
                            "{}: the stored writer QoS does not parse ({e:?}); not served",
                            key.describe()
                        ));
                        continue;
                    }
                };
                let store = match persistent {
                    true => self.persistent.as_ref(),
                    false => Some(&self.transient),
                };
                let typed = store.and_then(|store| {
                    self.types.load(
                        &self.shared,
                        store,
                        (persistent, id),
                        &key.type_name,
                        monotonic(),
                    )
                });
                if let Some(p) = typed {
                    self.problem(p);
                }
                let (reader, relay) = self.create_endpoints(&key, &ed);
                let loaded = self.load_samples(persistent, id, relay);
                self.stats().loaded += loaded;
                self.track_disposed(&key, id);
                self.add_channel(key, &ed, id, reader, relay);
            }
        }
    }

    /// Writes a stored channel's samples to its relay (not yet enabled: every reader that
    /// matches it later is owed them), without their payloads: the relay asks for those when
    /// a reader wants them (`Input::PayloadsWanted`).
    fn load_samples(
        &mut self,
        persistent: bool,
        id: halyard_store::ChannelId,
        relay: EntityId,
    ) -> u64 {
        let Some(store) = self.store(persistent) else {
            return 0;
        };
        let (result, refused, _) = relay_metadata(&self.shared, store, id, SampleId(0), relay);
        match result {
            Ok(n) => {
                if refused > 0 {
                    self.problem(format!(
                        "{refused} stored samples of {id} did not fit the relay's history"
                    ));
                }
                n as u64
            }
            Err(e) => {
                self.problem(format!("cannot read {id} from the store: {e}"));
                0
            }
        }
    }

    /// A durable writer was discovered: its channel is served from now on.
    pub(super) fn on_writer(&mut self, ed: &EndpointData) {
        if ed.guid.prefix == self.own_prefix {
            return;
        }
        let key = ChannelKey::of(ed);
        let relay = ed.entity_name.as_deref() == Some(halyard_core::RELAY_WRITER_NAME);
        if !relay {
            self.writers.insert(ed.guid, key.clone());
        }
        let in_scope = self
            .config
            .only_participant
            .is_none_or(|p| ed.guid.prefix == p);
        if in_scope && !self.refused.contains(&key) {
            self.types.on_writer(ed, monotonic());
        }
        if self.channels.contains_key(&key) || self.refused.contains(&key) {
            return;
        }
        if let Some(p) = self.config.only_participant {
            if ed.guid.prefix != p {
                return;
            }
        }
        if let Some(other) = self
            .channels
            .keys()
            .find(|k| k.topic == key.topic && k.type_name != key.type_name)
        {
            let why = format!(
                "writer {:?} of topic {:?} has type {:?}, but the samples stored for that topic have type {:?}: refused (the stored samples are kept; write the stored type or use another topic)",
                ed.guid, key.topic, key.type_name, other.type_name
            );
            self.refuse(key, why);
            return;
        }
        let spec = channel::store_spec(&key, ed);
        let store = match key.persistent {
            true => self.persistent.as_mut(),
            false => Some(&mut self.transient),
        };
        let Some(store) = store else {
            let why = format!(
                "{}: this service has no store file for PERSISTENT data (start it with --store PATH); not served",
                key.describe()
            );
            self.refuse(key, why);
            return;
        };
        let id = match store.channel(&spec) {
            Ok(id) => id,
            Err(e) => {
                let why = format!("{}: {e}", key.describe());
                self.refuse(key, why);
                return;
            }
        };
        let (reader, relay) = self.create_endpoints(&key, ed);
        if self.dormant.remove(&key).is_some() {
            // Stored by an earlier run: its history is served from now on.
            let loaded = self.load_samples(key.persistent, id, relay);
            self.stats().loaded += loaded;
            self.track_disposed(&key, id);
        }
        self.add_channel(key, ed, id, reader, relay);
    }

    fn refuse(&mut self, key: ChannelKey, why: String) {
        self.problem(why);
        self.refused.insert(key);
    }

    /// Creates a channel's reader (acknowledgments held) and relay, both disabled.
    fn create_endpoints(&mut self, key: &ChannelKey, ed: &EndpointData) -> (EntityId, EntityId) {
        let has_key = channel::is_keyed(&ed.guid);
        let rspec = ReaderSpec {
            topic_name: key.topic.clone(),
            type_name: key.type_name.clone(),
            qos: channel::reader_qos(key, &ed.qos),
            has_key,
        };
        let wspec = WriterSpec {
            topic_name: key.topic.clone(),
            type_name: key.type_name.clone(),
            qos: channel::relay_qos(key, &ed.qos),
            has_key,
        };
        let scope = self.config.only_participant;
        self.shared.drive(|st, now| {
            let reader = st.core.create_reader_disabled(now, rspec, None);
            st.core.hold_acknowledgments(now, reader);
            if scope.is_some() {
                // It keeps its own participant's writers' samples, which it gets from them;
                // other participants' Halyard writers do not send it theirs.
                st.core.set_reader_scope(now, reader, scope);
            }
            st.core.set_reader_credit(now, reader, Some(CREDIT));
            let relay = st.core.create_writer_disabled(now, wspec);
            st.core.set_writer_relay(relay);
            // Its history's bytes stay in the store; it holds their metadata.
            st.core.set_relay_releases_payloads(relay);
            if let Some(tap) = st.service.as_mut() {
                tap.readers.insert(reader);
            }
            (reader, relay)
        })
    }

    fn add_channel(
        &mut self,
        key: ChannelKey,
        ed: &EndpointData,
        store_id: halyard_store::ChannelId,
        reader: EntityId,
        relay: EntityId,
    ) {
        self.shared.drive(|st, now| {
            st.core.enable_writer(now, relay);
            st.core.enable_reader(now, reader);
        });
        self.types
            .on_channel(&key.type_name, relay, key.persistent, store_id, monotonic());
        self.by_reader.insert(
            reader,
            ReaderState {
                key: Arc::new(key.clone()),
                processed: 0,
            },
        );
        self.channels.insert(
            key,
            Channel {
                store_id,
                relay,
                has_key: channel::is_keyed(&ed.guid),
                cleanup_delay: channel::cleanup_delay(&ed.qos),
                warned_no_key: false,
            },
        );
        let n = self.channels.len();
        self.stats().channels = n;
    }

    /// [`Worker::on_sample`], then the commit if the batch is full: within a drained run
    /// only the count can make a commit due (the clock is read once per run).
    fn take_sample(&mut self, s: ReceivedSample, fed: bool) {
        self.on_sample(s, fed);
        if self.full_batch() {
            self.commit();
        }
    }

    /// A sample for one of the service's readers: from the wire, or `fed` in memory by a
    /// writer of the participant that embeds the service (its acknowledgment then goes to
    /// that participant, see [`Worker::owner`]).
    fn on_sample(&mut self, s: ReceivedSample, fed: bool) {
        let Some(reader) = self.by_reader.get_mut(&s.reader) else {
            return;
        };
        match fed {
            true => self.fed_since += 1,
            false => reader.processed += 1,
        }
        let key = Arc::clone(&reader.key);
        let pair = (s.reader, s.writer);
        let (writer, sn) = s.original.unwrap_or((s.writer, s.sn));
        let in_scope = self
            .config
            .only_participant
            .is_none_or(|p| writer.prefix == p);
        if in_scope && !self.store_sample(&key, &s, writer, sn) {
            self.blocked.insert(pair);
            return;
        }
        if self.blocked.is_empty() || !self.blocked.contains(&pair) {
            let pending = match fed {
                true => &mut self.pending_fed,
                false => &mut self.pending_release,
            };
            let e = pending.entry(pair).or_insert(s.sn);
            *e = (*e).max(s.sn);
        }
        if self.first_pending_at.is_none() {
            self.first_pending_at = Some(monotonic());
        }
        self.uncommitted += 1;
    }

    /// Stores a sample (once); false if the store refused it.
    fn store_sample(
        &mut self,
        key: &ChannelKey,
        s: &ReceivedSample,
        writer: Guid,
        sn: SequenceNumber,
    ) -> bool {
        let Some(ch) = self.channels.get_mut(key) else {
            return true;
        };
        if ch.has_key && s.key_hash.is_none() && !ch.warned_no_key {
            ch.warned_no_key = true;
            let what = format!(
                "{}: writer {writer:?} sends no key hash, so its instances cannot be told apart: the history depth applies to all of them together",
                key.describe()
            );
            self.problem(what);
        }
        let Some(ch) = self.channels.get(key) else {
            return true;
        };
        let kind = match s.kind {
            ChangeKind::Alive => SampleKind::Alive,
            ChangeKind::Disposed => SampleKind::Disposed,
            ChangeKind::Unregistered => SampleKind::Unregistered,
            ChangeKind::DisposedUnregistered => SampleKind::DisposedUnregistered,
        };
        let key_hash = s.key_hash.unwrap_or([0; 16]);
        let stored = SampleRef {
            writer: writer.to_bytes(),
            sn: sn.0,
            kind,
            key_hash,
            source_time: s.source_timestamp.map_or(i64::MIN, time_code),
            payload: &s.payload,
        };
        let (store_id, relay) = (ch.store_id, ch.relay);
        let store = match key.persistent {
            true => self.persistent.as_mut(),
            false => Some(&mut self.transient),
        };
        let Some(store) = store else {
            return false;
        };
        match store.insert_ref(store_id, &stored) {
            Ok(Inserted::Stored(at)) => {
                self.stored_since += 1;
                match kind {
                    SampleKind::Disposed | SampleKind::DisposedUnregistered => {
                        self.disposed.entry((key.clone(), key_hash)).or_default();
                    }
                    SampleKind::Alive if !self.disposed.is_empty() => {
                        self.disposed.remove(&(key.clone(), key_hash));
                    }
                    SampleKind::Alive | SampleKind::Unregistered => {}
                }
                // The relay holds the buffer the sample arrived in (no copy) until its
                // readers have it, then only where the store keeps it.
                let change = NewChange {
                    kind: s.kind,
                    key_hash,
                    payload: Arc::clone(&s.payload),
                    timestamp: s.source_timestamp,
                    original: Some((writer, sn)),
                };
                self.pending_relay.push((relay, change, at));
                true
            }
            Ok(Inserted::Duplicate) => {
                self.duplicates_since += 1;
                true
            }
            // A state change that would change nothing the store keeps: taken, not kept.
            Ok(Inserted::Obsolete) => true,
            Err(e) => {
                if matches!(e, StoreError::Full { .. }) {
                    self.stats().refused_full += 1;
                }
                self.problem(format!(
                    "{}: sample {} of writer {writer:?} not stored: {e}; that writer is no longer acknowledged (it keeps its samples)",
                    key.describe(),
                    sn.0
                ));
                false
            }
        }
    }

    /// True when the pending samples must be committed now.
    fn commit_due(&self, now: Instant) -> bool {
        self.commit_deadline(now)
            .is_some_and(|at| now >= at || self.full_batch())
    }

    /// When the pending samples must be committed by the policy's clock (a full batch may
    /// come sooner); `None` when nothing is pending.
    fn commit_deadline(&self, now: Instant) -> Option<Instant> {
        let first = self.first_pending_at?;
        Some(match self.config.commit {
            CommitPolicy::PerSample => now,
            CommitPolicy::Batch { max_delay, .. } => first + max_delay,
            CommitPolicy::Interval(d) => self.last_commit + d,
        })
    }

    /// When the thread must look again without input: the pending samples' commit, the next
    /// cleanup tick, the next retry of a relay's history.
    fn next_wake(&self, now: Instant) -> Instant {
        let mut at = self.next_cleanup;
        if let Some(due) = self.commit_deadline(now) {
            at = at.min(due);
        }
        if !self.history_retry.is_empty() {
            at = at.min(self.next_history_retry);
        }
        if let Some(t) = self.types.next_wake() {
            at = at.min(t);
        }
        at
    }

    /// True when the samples since the commit are a whole batch of the policy.
    fn full_batch(&self) -> bool {
        match self.config.commit {
            CommitPolicy::PerSample => self.uncommitted > 0,
            CommitPolicy::Batch { max_samples, .. } => self.uncommitted >= max_samples,
            CommitPolicy::Interval(_) => false,
        }
    }

    /// Commits what is pending, if anything is.
    pub(super) fn commit_if_pending(&mut self) {
        if self.uncommitted > 0 {
            self.commit();
        }
    }

    /// Commits the stores, then relays what was newly stored and releases acknowledgments.
    pub(super) fn commit(&mut self) {
        let mut ok = true;
        let mut removed = Vec::new();
        let stores = self
            .persistent
            .iter_mut()
            .map(|s| (true, s))
            .chain(std::iter::once((false, &mut self.transient)));
        for (persistent, store) in stores {
            if store.pending() > 0 {
                ok &= commit_store(store, &self.stats);
            }
            // What the inserts of committed transactions removed (this one's, or a purge's
            // commit of pending inserts).
            removed.extend(
                store
                    .take_removed()
                    .into_iter()
                    .map(|(ch, id, key)| (persistent, ch, id, key)),
            );
        }
        let removed = self.removed_from_relays(removed);
        let relays = std::mem::take(&mut self.pending_relay);
        let releases = std::mem::take(&mut self.pending_release);
        let fed = std::mem::take(&mut self.pending_fed);
        let processed: Vec<(EntityId, usize)> = self
            .by_reader
            .iter_mut()
            .filter(|(_, r)| r.processed > 0)
            .map(|(id, r)| (*id, std::mem::take(&mut r.processed)))
            .collect();
        if self.stored_since + self.duplicates_since + self.fed_since > 0 {
            let stored = std::mem::take(&mut self.stored_since);
            let duplicates = std::mem::take(&mut self.duplicates_since);
            let fed = std::mem::take(&mut self.fed_since);
            let mut s = self.stats();
            s.stored += stored;
            s.duplicates += duplicates;
            s.fed += fed;
        }
        self.first_pending_at = None;
        self.uncommitted = 0;
        self.last_commit = monotonic();
        let (relays, releases, fed) = if ok {
            (relays, releases, fed)
        } else {
            // Not durable: those writers are no longer acknowledged (a restarted service
            // gets the samples from them again).
            self.blocked.extend(releases.into_keys());
            self.blocked.extend(fed.into_keys());
            (Vec::new(), BTreeMap::new(), BTreeMap::new())
        };
        let deferred = &mut self.deferred;
        let refused = self.shared.drive(|st, now| {
            let mut refused = 0u64;
            // Whether the relay of the previous sample defers (a batch is mostly one relay).
            let mut last: Option<(EntityId, bool)> = None;
            let mut gone = removed;
            for (relay, change, at) in relays {
                if !gone.is_empty() && gone.remove(&(relay, locator(at))).is_some() {
                    // Stored and removed again within the batch: never relayed.
                    continue;
                }
                let defers = match last {
                    Some((r, d)) if r == relay => d,
                    _ => {
                        let d = deferred.contains_key(&relay) || st.core.defer_relay_history(relay);
                        last = Some((relay, d));
                        d
                    }
                };
                if defers {
                    // Its readers got it from its writer; the store keeps it for later ones.
                    // (The lowest: a store reloaded after purging its last rows may give
                    // identities below those held back before.)
                    deferred
                        .entry(relay)
                        .and_modify(|from| *from = (*from).min(at))
                        .or_insert(at);
                    continue;
                }
                let written = st.core.write_stored(now, relay, change, locator(at));
                refused += u64::from(written.is_err());
            }
            // Removed by the store after it was relayed (a relay holding it back has none).
            for ((relay, at), key) in gone {
                st.core.remove_stored(relay, &key, at);
            }
            for ((reader, writer), sn) in releases {
                st.core.release_acknowledgments(now, reader, writer, sn);
            }
            if let Some(tap) = st.service.as_mut() {
                for (reader, n) in processed {
                    let f = tap.in_flight.entry(reader).or_default();
                    *f = f.saturating_sub(n);
                    let credit = CREDIT.saturating_sub(*f);
                    st.core.set_reader_credit(now, reader, Some(credit));
                }
            }
            refused
        });
        // After the relays: what a writer fed it is acknowledged once the batch's payloads
        // are no longer shared here, so the writer can reuse the buffers it drops now.
        if let Some(owner) = self.owner.as_ref().filter(|_| !fed.is_empty()) {
            let own = self.own_prefix;
            owner.drive(|st, _| {
                for ((reader, writer), sn) in fed {
                    st.core
                        .fed_ack(writer.entity, Guid::new(own, reader), sn + 1);
                }
            });
        }
        if refused > 0 {
            self.problem(format!(
                "{refused} stored samples did not fit their relay's history"
            ));
        }
    }

    /// The relays and locators of stored samples the stores removed (KEEP_LAST evictions,
    /// state changes made obsolete), with their instances: their relays drop them too.
    fn removed_from_relays(
        &self,
        removed: Vec<(bool, halyard_store::ChannelId, SampleId, [u8; 16])>,
    ) -> BTreeMap<(EntityId, u64), [u8; 16]> {
        let mut out = BTreeMap::new();
        if removed.is_empty() {
            return out;
        }
        let relay_of: BTreeMap<(bool, halyard_store::ChannelId), EntityId> = self
            .channels
            .iter()
            .map(|(key, ch)| ((key.persistent, ch.store_id), ch.relay))
            .collect();
        for (persistent, ch, id, key) in removed {
            if let Some(&relay) = relay_of.get(&(persistent, ch)) {
                out.insert((relay, locator(id)), key);
            }
        }
        out
    }

    /// Writes to `relay` the history held back from it (metadata only: the relay asks for
    /// the payloads when readers want them), a chunk per lock of the participant, then
    /// matches the readers that waited. What is pending is committed first, so that the
    /// store's rows from the first one held back are exactly those the relay lacks.
    fn write_deferred(&mut self, relay: EntityId) {
        if self.uncommitted > 0 {
            self.commit();
        }
        let from = self.deferred.remove(&relay);
        let held = from
            .zip(self.relay_channel(relay))
            .and_then(|(from, (persistent, id))| {
                self.store(persistent).map(|store| (from, store, id))
            });
        let Some((from, store, store_id)) = held else {
            self.shared
                .drive(|st, now| st.core.complete_relay_history(now, relay));
            return;
        };
        let (result, refused, next) = relay_metadata(&self.shared, store, store_id, from, relay);
        if refused > 0 {
            self.problem(format!(
                "{refused} stored samples did not fit their relay's history"
            ));
        }
        if let Err(e) = result {
            // The readers keep waiting; what was written stays, the rest is read again.
            self.deferred.insert(relay, next);
            self.history_retry.insert(relay);
            self.problem(format!(
                "cannot read the history held back from a relay ({store_id}): {e}; readers that matched it wait, and it is read again"
            ));
            return;
        }
        self.shared
            .drive(|st, now| st.core.complete_relay_history(now, relay));
    }

    /// Reads the payloads `relay`'s readers wait for from the channel's store and hands them
    /// back, a chunk per lock of the participant, until none is wanted. A sample the store
    /// no longer has (evicted, purged) goes back as `None`: the relay drops it and its readers
    /// get a GAP. A read that fails is said in the problems and the samples stay wanted: the
    /// relay asks for them again later.
    fn serve_payloads(&mut self, relay: EntityId) {
        let Some((persistent, _)) = self.relay_channel(relay) else {
            return;
        };
        loop {
            let wanted = self
                .shared
                .drive(|st, _| st.core.take_wanted_payloads(relay, LOAD_CHUNK));
            if wanted.is_empty() {
                return;
            }
            let mut ids: Vec<SampleId> = wanted.iter().map(|&(_, at)| sample_id(at)).collect();
            ids.sort_unstable();
            let mut found: BTreeMap<SampleId, Arc<Vec<u8>>> = BTreeMap::new();
            let read = self.store(persistent).map(|store| {
                store.payloads(&ids, |id, p| {
                    if let Some(p) = p {
                        found.insert(id, Arc::new(p));
                    }
                })
            });
            if let Some(Err(e)) = read {
                self.problem(format!(
                    "cannot read {} stored samples back for a late reader: {e}; asked again later",
                    ids.len()
                ));
                let sns: Vec<SequenceNumber> = wanted.iter().map(|&(sn, _)| sn).collect();
                self.shared
                    .drive(|st, _| st.core.payloads_unavailable(relay, &sns));
                return;
            }
            let back: Vec<_> = wanted
                .into_iter()
                .map(|(sn, at)| (sn, found.remove(&sample_id(at))))
                .collect();
            self.shared
                .drive(|st, now| st.core.restore_payloads(now, relay, back));
        }
    }

    pub(super) fn run(mut self, rx: mpsc::Receiver<Input>) {
        loop {
            let now = monotonic();
            let wait = self
                .next_wake(now)
                .saturating_duration_since(now)
                .max(Duration::from_millis(1));
            let first = match rx.recv_timeout(wait) {
                Ok(i) => Some(i),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            let mut stop = false;
            let mut commit_asked = false;
            let mut next = first;
            let mut taken = 0;
            while let Some(input) = next.take() {
                match input {
                    Input::Stop => {
                        stop = true;
                        break;
                    }
                    Input::Writer(ed) => self.on_writer(&ed),
                    Input::WriterLost(g) => {
                        self.writers.remove(&g);
                    }
                    Input::PayloadsWanted(relay) => self.serve_payloads(relay),
                    Input::HistoryWanted(relay) => self.write_deferred(relay),
                    Input::Sample(s) => self.take_sample(s, false),
                    Input::Fed(s) => self.take_sample(s, true),
                    Input::Commit => commit_asked = true,
                }
                taken += 1;
                if taken < 8192 {
                    next = rx.try_recv().ok();
                }
            }
            let now = monotonic();
            if stop {
                self.commit();
                break;
            }
            if self.commit_due(now) || (commit_asked && self.first_pending_at.is_some()) {
                self.commit();
            }
            self.cleanup(now);
            let typed = self.types.poll(
                &self.shared,
                now,
                self.persistent.as_mut(),
                &mut self.transient,
            );
            for p in typed {
                self.problem(p);
            }
            if !self.history_retry.is_empty() && now >= self.next_history_retry {
                self.next_history_retry = now + CLEANUP_TICK;
                for relay in std::mem::take(&mut self.history_retry) {
                    self.write_deferred(relay);
                }
            }
        }
    }
}

/// Writes channel `id`'s stored samples from `from` on to `relay` as metadata (the relay
/// asks for their payloads when a reader wants them), a chunk per lock of the participant.
/// Returns the read's result, how many the relay refused (its history full), and the first
/// stored sample not written.
fn relay_metadata(
    shared: &Shared,
    store: &Store,
    id: halyard_store::ChannelId,
    from: SampleId,
    relay: EntityId,
) -> (Result<usize, StoreError>, u64, SampleId) {
    let mut chunk: Vec<SampleMeta> = Vec::with_capacity(LOAD_CHUNK);
    let (mut refused, mut next) = (0u64, from);
    let mut flush = |chunk: &mut Vec<SampleMeta>| {
        shared.drive(|st, now| {
            for m in chunk.drain(..) {
                let (change, at) = (relayed(&m), locator(m.id));
                let written = st
                    .core
                    .write_released(now, relay, change, at, m.payload_len);
                refused += u64::from(written.is_err());
                next = SampleId(m.id.0 + 1);
            }
        });
    };
    let result = store.for_each_sample_meta_from(id, from, |m| {
        chunk.push(m);
        if chunk.len() >= LOAD_CHUNK {
            flush(&mut chunk);
        }
    });
    flush(&mut chunk);
    (result, refused, next)
}

/// Commits `store`, counting the commit or the failure in `stats`; false if it failed
/// (nothing of it is acknowledged).
fn commit_store(store: &mut Store, stats: &Mutex<ServiceStats>) -> bool {
    let committed = store.commit();
    let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
    match committed {
        Ok(_) => {
            s.commits += 1;
            true
        }
        Err(e) => {
            if s.problems.len() >= MAX_PROBLEMS {
                s.problems.remove(0);
            }
            s.problems
                .push(format!("commit failed: {e}; nothing of it is acknowledged"));
            false
        }
    }
}

/// A relay's locator of a stored sample (store identities are not negative).
fn locator(id: SampleId) -> u64 {
    id.0 as u64
}

/// The stored sample a relay's locator names (the inverse of [`locator`]).
fn sample_id(at: u64) -> SampleId {
    SampleId(at as i64)
}

/// A stored sample as its relay holds it: metadata, its payload left in the store.
fn relayed(s: &SampleMeta) -> NewChange {
    let kind = match s.kind {
        SampleKind::Alive => ChangeKind::Alive,
        SampleKind::Disposed => ChangeKind::Disposed,
        SampleKind::Unregistered => ChangeKind::Unregistered,
        SampleKind::DisposedUnregistered => ChangeKind::DisposedUnregistered,
    };
    NewChange {
        kind,
        key_hash: s.key_hash,
        payload: Arc::new(Vec::new()),
        timestamp: (s.source_time != i64::MIN).then(|| time_of(s.source_time)),
        original: Some((Guid::from_bytes(s.writer), SequenceNumber(s.sn))),
    }
}

/// A source timestamp as the store keeps it: seconds and fraction, exactly.
fn time_code(t: Time) -> i64 {
    ((t.seconds as i64) << 32) | i64::from(t.fraction)
}

fn time_of(code: i64) -> Time {
    Time {
        seconds: (code >> 32) as i32,
        fraction: code as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_timestamps_are_kept_exactly() {
        for t in [
            Time {
                seconds: 0,
                fraction: 0,
            },
            Time {
                seconds: 1_700_000_000,
                fraction: 0xffff_ffff,
            },
            Time {
                seconds: -5,
                fraction: 17,
            },
        ] {
            assert_eq!(time_of(time_code(t)), t);
        }
    }
}
