//! Writer side of RTPS reliability (RTPS 2.5 §8.4.7 StatefulWriter, §8.4.15).
//!
//! Design. A writer owns its history cache (WHC) of serialized changes, ordered by sequence
//! number, with per-instance queues for KEEP_LAST eviction. New samples go out once, as one
//! datagram with `readerId = UNKNOWN` to the union of the matched readers' locators (INFO_DST
//! when they all belong to one participant); readers of several participants that listen on
//! one multicast locator get it there, in one datagram (`data_multicast`). Each reliable
//! reader has a proxy recording what it acknowledged (`acked_below`), what it asked for again,
//! and the first sequence number relevant to it (`start_sn`: volatile readers are not owed the
//! past and get a GAP for it).
//!
//! First synchronisation. A volatile reliable reader may take the first HEARTBEAT it receives
//! as the start of the stream and treat whatever it has not received below that HEARTBEAT's
//! last sequence number as not owed to it, acknowledging it: Cyclone DDS does (its proxy writer
//! turns the first HEARTBEAT [first, last] into a GAP [1, last]), and so do Halyard's readers
//! of other vendors' writers. A HEARTBEAT announcing samples the reader lost would thus have
//! them acknowledged without ever being delivered. So a reliable reader that starts after the
//! writer's past (`start_sn` = last + 1 when matched) is not `synced` at first: it gets no DATA
//! and only directed HEARTBEATs announcing nothing before its start ([start, start - 1]) until
//! an ACKNACK proves it heard one of them ([`acknack_proves_sync`]); then what was written for
//! it since it matched is sent to it, with a HEARTBEAT.
//!
//! Repair is reader-driven ([`repair`]): HEARTBEATs announce [first, last]; ACKNACKs name
//! missing changes, which are resent directed at that reader (or answered with a GAP when no
//! longer held). Large samples are fragmented ([`send`]); a reliable writer sends only
//! `fragment_burst_bytes` of a sample's fragments at once, then a HEARTBEAT; the reader pulls
//! the rest with NACK_FRAG. This is the flow control that keeps a 100 MB sample from
//! overrunning socket buffers.
//!
//! Batching (optional, [`BatchPolicy`]): new samples that fit one datagram are appended to a
//! pending message instead of being sent one datagram each, like Cyclone's WriteBatch or RTI's
//! BATCH QoS; the message goes out when the next sample would overflow `max_bytes`, when
//! `max_flush_delay` has passed since its first sample, on an explicit flush, and before this
//! writer sends anything else (repairs, heartbeats, fragments), so a HEARTBEAT never announces
//! a sample still held back. Each sample keeps its own DATA submessage and INFO_TS, so readers
//! need no batching support.
//!
//! Content filters of readers (announced in SEDP) are applied on the writer side when the
//! writer can compile them ([`filter`]), and so are the TIME_BASED_FILTERs of Halyard readers
//! ([`time_filter`]): a sample a reader's filter rejects goes to it as a GAP, not as DATA.
//!
//! Bounds: the WHC is limited by ResourceLimits (or `writer_max_samples_default`) and by a
//! window of unacknowledged bytes: [`WINDOW_SAMPLES`] of the largest sample written, within
//! `writer_window_floor_bytes ..= writer_high_water_bytes`; past either, `write` reports
//! [`WriteError::Full`] and the API blocks up to max_blocking_time. A writer that a durability
//! service's reader matched has the whole `writer_high_water_bytes`: that reader acknowledges
//! only what its service committed (a batch waits up to the commit delay, see
//! [`crate::relay`]), so the stream needs more bytes in flight than to an ordinary reader;
//! with the floor alone, a PERSISTENT stream of medium-sized samples would spend much of its
//! time waiting for the window, its cores idle.

pub(crate) mod delivery;
mod filter;
mod pace;
mod release;
mod repair;
mod send;
mod time_filter;

pub use filter::{FilterCompiler, SampleFilter};
pub(crate) use time_filter::TimeFilter;

use crate::admission::finite;
use crate::config::{ParticipantConfig, MAX_REQUESTED_PER_READER, WINDOW_SAMPLES};
use crate::deadline::DeadlineQueue;
use crate::event::ChangeKind;
use crate::outbox::Outbox;
use crate::pacing::TokenBucket;
use crate::reader::CountFilter;
use crate::time::Instant;
use crate::{seeded_map, SeededMap};
use halyard_wire::param::{pid, ParameterListWriter};
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, ReliabilityKind};
use halyard_wire::{
    EntityId, Gap, Guid, GuidPrefix, Heartbeat, Locator, MessageBuilder, SequenceNumber,
    SequenceNumberSet, Time,
};
use pace::Pacer;
use send::PendingBatch;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// What a local writer publishes and how.
#[derive(Clone, Debug)]
pub struct WriterSpec {
    /// Topic name.
    pub topic_name: String,
    /// Registered type name.
    pub type_name: String,
    /// QoS (already validated by the API layer).
    pub qos: EndpointQos,
    /// True if the type has key fields.
    pub has_key: bool,
}

/// The group marks of a change (see [`crate::group_coherent`]): the GROUP coherent set it
/// belongs to (the GSN of the set's first change), if any, and its group sequence number.
pub(crate) type GroupMarkOut = (Option<SequenceNumber>, SequenceNumber);

/// What a writer's end-of-set marker of a GROUP coherent set carries (see
/// [`crate::group_coherent`]).
#[derive(Clone, Debug)]
pub(crate) struct GroupEnd {
    /// The set's first and last group sequence numbers.
    pub(crate) mark: GroupMarkOut,
    /// The publisher's writers that end a part of the set (each writes such a marker), sent
    /// as [`halyard_wire::param::pid::HALYARD_GROUP_MEMBERS`]; `None` for a publisher with
    /// more than [`crate::group_coherent::MAX_GROUP_MEMBERS`] of them.
    pub(crate) members: Option<Arc<[EntityId]>>,
}

/// Why a write was not accepted. Exhaustive: the API maps each variant to its own error, so a
/// new one must be given its meaning there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WriteError {
    /// No such local writer.
    UnknownWriter,
    /// History or flow-control limit reached; retry after acknowledgments arrive.
    Full,
    /// The sample exceeds the configured maximum sample size.
    TooLarge,
}

/// A change as handed to [`crate::Participant::write`].
#[derive(Clone, Debug)]
pub struct NewChange {
    /// Alive, disposed, unregistered.
    pub kind: ChangeKind,
    /// Key hash of the instance (zeros for keyless topics).
    pub key_hash: [u8; 16],
    /// Serialized data (Alive) or serialized key, with encapsulation header.
    pub payload: Arc<Vec<u8>>,
    /// Source timestamp to send in INFO_TS.
    pub timestamp: Option<Time>,
    /// The writer and sequence number the change was first written with, when this writer
    /// relays it (a durability service serving stored samples): sent as
    /// PID_ORIGINAL_WRITER_INFO, so readers that got it from its original writer, or from
    /// another service, recognise it and deliver it once.
    pub original: Option<(Guid, SequenceNumber)>,
}

/// Writer batching: how much to gather into one datagram and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPolicy {
    /// Largest datagram a batch grows to (capped by the participant's maximum message size).
    pub max_bytes: usize,
    /// Longest a sample waits in a batch before the batch is sent.
    pub max_flush_delay: std::time::Duration,
}

/// What every sending method of a writer works with: the time, the participant's outbox and
/// its configuration.
pub(crate) struct Ctx<'a> {
    pub(crate) now: Instant,
    pub(crate) out: &'a mut Outbox,
    pub(crate) cfg: &'a ParticipantConfig,
}

pub(crate) struct CacheChange {
    pub(crate) sn: SequenceNumber,
    pub(crate) change: NewChange,
    /// Where the driver keeps the change's bytes, when the writer releases payloads (see
    /// [`release`]).
    pub(crate) stored_at: Option<u64>,
    /// `Some(len)` while the payload is released: `change.payload` is then empty.
    pub(crate) released_len: Option<usize>,
}

pub(crate) struct ReaderProxy {
    pub(crate) guid: Guid,
    /// Unicast locators: everything directed at this reader, and new data unless...
    pub(crate) locators: Vec<Locator>,
    /// ... readers of other participants share this multicast locator.
    pub(crate) multicast: Option<Locator>,
    pub(crate) reliable: bool,
    /// Everything below was acknowledged (or is not owed to this reader).
    pub(crate) acked_below: SequenceNumber,
    /// The first change relevant to this reader.
    pub(crate) start_sn: SequenceNumber,
    pub(crate) requested: BTreeSet<SequenceNumber>,
    pub(crate) acknack_counts: CountFilter,
    pub(crate) nackfrag_counts: CountFilter,
    /// Consecutive ACKNACKs acknowledging beyond what was ever written.
    pub(crate) acks_ahead: u8,
    /// The reader knows where its stream starts (see "First synchronisation" above): until
    /// then it gets no DATA, and HEARTBEATs that announce nothing before `start_sn`.
    pub(crate) synced: bool,
    /// How many samples past its first missing one the reader keeps (its reorder buffer):
    /// while it reports a gap, samples written further ahead would be thrown away and sent
    /// again, so the writer waits instead. `None`: as many as the writer's window allows.
    pub(crate) reorder_window: Option<usize>,
    /// The reader's last ACKNACK named missing samples.
    pub(crate) reported_gap: bool,
    /// Counts of this (best-effort) reader's reception reports.
    pub(crate) report_counts: CountFilter,
    /// The rate its reports say it absorbs, in bytes per second (`None`: not limiting).
    pub(crate) path_rate: Option<f64>,
    /// The writer's bytes sent, and when, at this reader's last reception report.
    pub(crate) sent_mark: Option<(u64, Instant)>,
    /// Sent and received rates to this reader, smoothed over its reports.
    pub(crate) smoothed: crate::pacing::Smoothed,
    /// The reader's content filter, when the writer applies it (see [`filter`]).
    pub(crate) filter: Option<filter::InstalledFilter>,
    /// The reader's TIME_BASED_FILTER, when the writer applies it (see [`time_filter`]).
    pub(crate) time_filter: Option<TimeFilter>,
    /// A relay writer's first change written after this reader matched (see
    /// [`Writer::set_relay`]): it and the later ones go to the reader as GAPs.
    pub(crate) snapshot_end: SequenceNumber,
    /// The reader is a durability service's (see [`crate::relay`]): a TRANSIENT or
    /// PERSISTENT KEEP_ALL writer drops what it acknowledged instead of blocking.
    pub(crate) durability_service: bool,
    /// The reader is a service's that catches up from relays: a relay sends it everything,
    /// so that services that missed a writer catch up from each other.
    pub(crate) catches_up: bool,
    /// The reader is this process's embedded durability service's, fed in memory (see
    /// [`crate::Participant::set_fed_service`]): nothing is sent to it, it is handed each
    /// change, and its acknowledgments come from the service's commits, never from the wire.
    pub(crate) fed: bool,
}

impl ReaderProxy {
    /// A proxy for reader `guid`, reached at `locators` (the writer sets where it starts).
    pub(crate) fn new(guid: Guid, locators: Vec<Locator>, reliable: bool) -> Self {
        ReaderProxy {
            guid,
            locators,
            multicast: None,
            reliable,
            acked_below: SequenceNumber::FIRST,
            start_sn: SequenceNumber::FIRST,
            requested: BTreeSet::new(),
            acknack_counts: CountFilter::default(),
            nackfrag_counts: CountFilter::default(),
            acks_ahead: 0,
            synced: true,
            reorder_window: None,
            reported_gap: false,
            report_counts: CountFilter::default(),
            path_rate: None,
            sent_mark: None,
            smoothed: crate::pacing::Smoothed::default(),
            filter: None,
            time_filter: None,
            snapshot_end: SequenceNumber(i64::MAX),
            durability_service: false,
            catches_up: false,
            fed: false,
        }
    }

    /// Notes the changes `missing` names (those written, from what the reader acknowledged)
    /// as asked for, up to [`MAX_REQUESTED_PER_READER`]; true if any was not already.
    pub(crate) fn request(&mut self, missing: &SequenceNumberSet, last_sn: SequenceNumber) -> bool {
        let mut added = false;
        for sn in missing.iter() {
            if sn >= self.acked_below
                && sn <= last_sn
                && self.requested.len() < MAX_REQUESTED_PER_READER
            {
                added |= self.requested.insert(sn);
            }
        }
        added
    }
}

/// Bytes reserved in each datagram for headers around a DATA payload.
const DATA_OVERHEAD: usize = 20 + 16 + 12 + 24 + 64 + 32;

pub(crate) struct Writer {
    pub(crate) guid: Guid,
    pub(crate) spec: WriterSpec,
    changes: BTreeMap<SequenceNumber, CacheChange>,
    instances: SeededMap<[u8; 16], VecDeque<SequenceNumber>>,
    unacked_bytes_cache: usize,
    /// A writer that keeps acknowledged changes (TRANSIENT_LOCAL and above, not a relay):
    /// the lowest sequence number some reliable reader had not acknowledged at the last
    /// [`Writer::collect_acked`], and the payload bytes of the changes held below it. Its
    /// unacknowledged bytes are then the history's less these, and an ACKNACK costs the
    /// changes it newly acknowledges, not every change still unacknowledged.
    acked_floor: SequenceNumber,
    acked_bytes: usize,
    /// Some reader is fed (see [`ReaderProxy::fed`]).
    feeds: bool,
    /// The largest payload written so far: it sizes the flow-control window.
    largest_sample: usize,
    /// Payload bytes of all changes held.
    history_bytes: usize,
    pub(crate) last_sn: SequenceNumber,
    pub(crate) proxies: BTreeMap<Guid, ReaderProxy>,
    fanout: Vec<Locator>,
    fanout_prefix: Option<GuidPrefix>,
    /// Never address several participants in one datagram (heartbeats go per reader): the
    /// volatile secure writer, whose submessages are protected per participant.
    pub(crate) per_reader: bool,
    hb_count: i32,
    pub(crate) hb_due: Option<Instant>,
    /// Wait before the next periodic HEARTBEAT: a tenth of the heartbeat period (at least
    /// 1 ms) after new data, acknowledgment progress or a fragment repair, doubling while a
    /// reader stays behind, up to the period. A lost repair or acknowledgment thus stalls a
    /// stream for milliseconds, not a period.
    hb_interval: std::time::Duration,
    bytes_since_hb: usize,
    last_hb_at: Instant,
    pub(crate) builtin: bool,
    batch_policy: Option<BatchPolicy>,
    /// Octets the security plugin adds to each DATA and DATA_FRAG payload (data
    /// protection), left free in every datagram; 0 without.
    pub(crate) payload_room: usize,
    pending: Option<PendingBatch>,
    /// GAPs of new changes that rejecting readers do not get, not yet sent: consecutive
    /// changes to the same readers make one GAP of a range (see [`filter`]).
    pending_gaps: Vec<filter::GapRun>,
    /// The inline QoS of the change being sent, kept between sends so that a writer whose
    /// every DATA carries some (a durable keyed writer's key hash) allocates it once.
    inline_scratch: Vec<u8>,
    /// Readers sent fragment repairs (NACK_FRAG answers) since the last
    /// [`Writer::send_repair_heartbeats`]: each gets one HEARTBEAT after all the repairs a
    /// datagram asked for, not one per NACK_FRAG (a reader NACKs up to 64 windows at once, and
    /// a HEARTBEAT per window made every repair round multiply the next one's requests).
    repaired: Vec<Guid>,
    /// Deleted but lingering until its reliable readers acknowledged everything, at most until
    /// then (see `Participant::delete_writer`).
    pub(crate) linger_until: Option<Instant>,
    /// Best-effort pacing (see [`crate::pacing`]).
    pacer: Pacer,
    /// A reader with a reported rate left: the pace is recomputed before the next send.
    pace_stale: bool,
    /// Where payloads dropped from the history go for reuse (`None`: nowhere).
    buffers: Option<crate::buffers::BufferPool>,
    /// The coherent set being written (PRESENTATION coherent_access, see
    /// [`Writer::begin_coherent`]): `Some(None)` while open with nothing written yet,
    /// `Some(Some(first))` once its first change is.
    coherent: Option<Option<SequenceNumber>>,
    /// What PID_COHERENT_SET each held change in a set carries: `Some(first)` for a member,
    /// `None` for the end-of-set marker. Empty unless coherent sets are written.
    coherence: BTreeMap<SequenceNumber, Option<SequenceNumber>>,
    /// The publisher it belongs to (announced as PID_GROUP_ENTITYID), if any.
    pub(crate) group: Option<EntityId>,
    /// What PID_GROUP_COHERENT_SET (if in a GROUP coherent set) and PID_GROUP_SEQ_NUM each
    /// held change carries (see [`crate::group_coherent`]). Empty unless the publisher has
    /// GROUP coherent or ordered access.
    group_marks: BTreeMap<SequenceNumber, GroupMarkOut>,
    /// The member writers each held end-of-set marker of a GROUP coherent set names (see
    /// [`GroupEnd::members`]). Empty unless GROUP coherent sets are written.
    group_members: BTreeMap<SequenceNumber, Arc<[EntityId]>>,
    /// The group mark the next change written takes (set by the participant per write).
    pub(crate) next_group_mark: Option<GroupMarkOut>,
    /// Offered DEADLINE per instance (`None`: infinite).
    deadlines: Option<DeadlineQueue>,
    /// LIFESPAN (`None`: infinite) and when each change held expires, in write order.
    lifespan: Option<std::time::Duration>,
    expiries: VecDeque<(Instant, SequenceNumber)>,
    /// Its own liveliness (MANUAL kinds; see [`crate::liveliness`]).
    pub(crate) own_liveliness: crate::liveliness::OwnLiveliness,
    /// Its readers' content filters (see [`filter`]).
    filters: filter::WriterFilters,
    /// A relay (a durability service's writer, see [`Writer::set_relay`]).
    pub(crate) relay: bool,
    /// Payloads released once acknowledged and fetched back on request (see [`release`]).
    release: Option<release::Release>,
    /// A relay whose driver holds its history back ([`crate::relay`], "Deferred history"):
    /// readers that match meanwhile wait in `waiting_readers`.
    pub(crate) history_deferred: bool,
    /// Remote readers matched while the history was deferred, in the order they came.
    pub(crate) waiting_readers: Vec<Guid>,
    /// When readers waiting for the deferred history were last seen still waiting on a
    /// timeout (see `Participant::remind_relay_history`).
    pub(crate) history_wanted_at: Option<Instant>,
    /// The readers that left, as they stood then (see [`delivery`]).
    pub(crate) departed: delivery::Departed,
}

impl Writer {
    /// Bytes a datagram needs beyond a DATA's (or DATA_FRAG's) payload and inline QoS:
    /// headers, and what data protection adds.
    pub(super) fn data_overhead(&self) -> usize {
        DATA_OVERHEAD + self.payload_room
    }

    /// The writer as matching sees it.
    pub(crate) fn side(&self) -> crate::matching::Side<'_> {
        crate::matching::Side {
            topic: &self.spec.topic_name,
            type_name: &self.spec.type_name,
            qos: &self.spec.qos,
        }
    }

    /// A writer with an empty history; `hash_seed` seeds its instance map.
    pub(crate) fn new(guid: Guid, spec: WriterSpec, builtin: bool, hash_seed: u64) -> Self {
        let deadlines = finite(spec.qos.deadline).map(|p| DeadlineQueue::new(p, hash_seed));
        let lifespan = finite(spec.qos.lifespan);
        Writer {
            guid,
            spec,
            changes: BTreeMap::new(),
            instances: seeded_map(hash_seed),
            unacked_bytes_cache: 0,
            acked_floor: SequenceNumber(0),
            acked_bytes: 0,
            feeds: false,
            largest_sample: 0,
            history_bytes: 0,
            last_sn: SequenceNumber(0),
            proxies: BTreeMap::new(),
            fanout: Vec::new(),
            fanout_prefix: None,
            per_reader: false,
            hb_count: 0,
            hb_due: None,
            hb_interval: std::time::Duration::ZERO,
            bytes_since_hb: 0,
            last_hb_at: Instant::default(),
            builtin,
            batch_policy: None,
            payload_room: 0,
            pending: None,
            pending_gaps: Vec::new(),
            inline_scratch: Vec::new(),
            repaired: Vec::new(),
            linger_until: None,
            pacer: Pacer::default(),
            pace_stale: false,
            buffers: None,
            coherent: None,
            coherence: BTreeMap::new(),
            group: None,
            group_marks: BTreeMap::new(),
            group_members: BTreeMap::new(),
            next_group_mark: None,
            deadlines,
            lifespan,
            expiries: VecDeque::new(),
            own_liveliness: Default::default(),
            filters: Default::default(),
            relay: false,
            release: None,
            history_deferred: false,
            waiting_readers: Vec::new(),
            history_wanted_at: None,
            departed: delivery::Departed::default(),
        }
    }

    /// Makes this writer a relay, as a durability service's writers are: each reader gets
    /// the history held when it matched (stored samples, with their original writer) and
    /// none of the changes written after, which it gets from their original writers; those
    /// go to it as GAPs. Writing is not held back by the acknowledgment window: what a relay
    /// holds is bounded by its HISTORY and RESOURCE_LIMITS alone.
    pub(crate) fn set_relay(&mut self) {
        self.relay = true;
        let next = self.last_sn + 1;
        for p in self.proxies.values_mut().filter(|p| !p.catches_up) {
            p.snapshot_end = next;
        }
        self.recount_filters();
    }

    /// Matched reader `guid` announced again whether it is a durability service's, and
    /// whether it catches up from relays. A relay's reader that no longer catches up gets
    /// what is written from now on as GAPs; one that starts to gets it all from now on.
    pub(crate) fn refresh_service_reader(&mut self, guid: &Guid, service: bool, catches_up: bool) {
        let (relay, next) = (self.relay, self.last_sn + 1);
        let Some(p) = self.proxies.get_mut(guid) else {
            return;
        };
        p.durability_service = service;
        if p.catches_up != catches_up {
            p.catches_up = catches_up;
            if relay {
                p.snapshot_end = if catches_up {
                    SequenceNumber(i64::MAX)
                } else {
                    next
                };
            }
        }
    }

    /// Payloads dropped from the history go to `pool` for reuse.
    pub(crate) fn set_buffer_pool(&mut self, pool: crate::buffers::BufferPool) {
        self.buffers = Some(pool);
    }

    pub(crate) fn is_reliable(&self) -> bool {
        self.spec.qos.reliability.kind == ReliabilityKind::Reliable
    }

    /// True if acknowledged changes stay for readers that come later (TRANSIENT_LOCAL and
    /// above; see [`Self::make_room_for_durable`] for TRANSIENT and PERSISTENT).
    fn keeps_history(&self) -> bool {
        self.spec.qos.durability >= DurabilityKind::TransientLocal
    }

    /// A TRANSIENT or PERSISTENT KEEP_ALL writer whose history is full drops its oldest
    /// change once every reliable reader, a durability service's among them, acknowledged
    /// it, instead of blocking: a service acknowledges only what it stored (see
    /// [`crate::relay`]) and serves it to readers that come later. Without a service it
    /// blocks as TRANSIENT_LOCAL does. A relay (a service's own writer) never drops any.
    fn make_room_for_durable(&mut self, cfg: &ParticipantConfig) {
        if self.relay
            || self.spec.qos.durability < DurabilityKind::Transient
            || self.spec.qos.history != History::KeepAll
            || self.changes.len() < self.max_samples(cfg)
            || !self.proxies.values().any(|p| p.durability_service)
        {
            return;
        }
        if let Some((&oldest, _)) = self.changes.first_key_value() {
            if oldest < self.min_acked() {
                self.drop_change(oldest);
            }
        }
    }

    /// The lowest sequence number some reliable reader has not acknowledged (the next one to
    /// be written if every reader has everything).
    fn min_acked(&self) -> SequenceNumber {
        self.proxies
            .values()
            .filter(|p| p.reliable)
            .map(|p| p.acked_below)
            .min()
            .unwrap_or(self.last_sn + 1)
    }

    /// Removes change `sn` from the history (and its instance's entry), returning its buffer.
    fn drop_change(&mut self, sn: SequenceNumber) {
        if let Some(c) = self.changes.remove(&sn) {
            self.forget_bytes(sn, c.change.payload.len());
            self.forget_instance_entry(&c);
            release(self.buffers.as_ref(), c);
        }
    }

    /// Adds a matched reader. Volatile readers start after what is already written.
    pub(crate) fn add_proxy(&mut self, now: Instant, mut proxy: ReaderProxy, durable: bool) {
        proxy.reliable &= self.is_reliable();
        let start = if durable && self.keeps_history() {
            SequenceNumber::FIRST
        } else {
            self.last_sn + 1
        };
        proxy.start_sn = start;
        proxy.acked_below = start;
        if self.relay && !proxy.catches_up {
            proxy.snapshot_end = self.last_sn + 1;
        }
        // A reliable reader that is not owed the past must first learn where its stream
        // starts (the module's "First synchronisation"). Discovery's own writers are exempt:
        // their readers are durable or Halyard's own secure volatile one.
        proxy.synced = proxy.fed || !(proxy.reliable && !self.builtin && start == self.last_sn + 1);
        let (guid, time_filtered) = (proxy.guid, proxy.time_filter.is_some());
        self.departed.returned(&guid);
        self.feeds |= proxy.fed;
        self.proxies.insert(guid, proxy);
        self.recompute_fanout();
        self.recount_filters();
        if time_filtered {
            // A late joiner's history is decided before anything of it is sent.
            self.decide_history(&guid);
        }
        if self.is_reliable() {
            // A HEARTBEAT now, then at the fast interval (doubling) until the new reader
            // answers: on a lossy link one lost exchange must not cost a backed-off period.
            self.hb_due = Some(now);
            self.hb_interval = std::time::Duration::ZERO;
        }
    }

    /// Test support: reader `guid` knows where its stream starts, as once it answered the
    /// HEARTBEAT announcing it.
    #[cfg(test)]
    pub(crate) fn assume_synced(&mut self, guid: &Guid) {
        if let Some(p) = self.proxies.get_mut(guid) {
            p.synced = true;
        }
        self.recompute_fanout();
    }

    pub(crate) fn remove_proxy(&mut self, guid: &Guid) -> bool {
        let Some(p) = self.proxies.remove(guid) else {
            return false;
        };
        self.departed.record(&p, self.last_sn + 1);
        if p.fed {
            self.feeds = self.proxies.values().any(|p| p.fed);
        }
        self.recompute_fanout();
        if p.filter.is_some() || p.time_filter.is_some() {
            self.recount_filters();
        }
        self.collect_acked();
        self.pace_stale |= p.path_rate.is_some();
        true
    }

    /// Points the proxy of `guid` at `locators` and `multicast` (and the fanout with it).
    /// Returns false if there is no such proxy.
    pub(crate) fn set_proxy_locators(
        &mut self,
        guid: &Guid,
        locators: &[Locator],
        multicast: Option<Locator>,
    ) -> bool {
        let Some(p) = self.proxies.get_mut(guid) else {
            return false;
        };
        if p.locators != locators || p.multicast != multicast {
            p.locators = locators.to_vec();
            p.multicast = multicast;
            self.recompute_fanout();
        }
        true
    }

    /// Where new data goes: a multicast locator shared by readers of two or more participants
    /// stands for all those readers; every other reader gets it at its unicast locators.
    fn recompute_fanout(&mut self) {
        let mut first_seen: Vec<(Locator, GuidPrefix)> = Vec::new();
        let mut shared: Vec<Locator> = Vec::new();
        for p in self.proxies.values().filter(|p| p.synced) {
            let Some(m) = p.multicast else { continue };
            match first_seen.iter().find(|(l, _)| *l == m) {
                None => first_seen.push((m, p.guid.prefix)),
                Some((_, prefix)) if *prefix != p.guid.prefix && !shared.contains(&m) => {
                    shared.push(m)
                }
                Some(_) => {}
            }
        }
        let mut dests = shared.clone();
        for p in self.proxies.values().filter(|p| p.synced) {
            if p.multicast.is_some_and(|m| shared.contains(&m)) {
                continue;
            }
            for l in &p.locators {
                if !dests.contains(l) {
                    dests.push(*l);
                }
            }
        }
        self.fanout = dests;
        let mut prefixes = self
            .proxies
            .values()
            .filter(|p| p.synced)
            .map(|p| p.guid.prefix);
        let first = prefixes.next();
        self.fanout_prefix = match first {
            Some(p) if prefixes.all(|q| q == p) => Some(p),
            _ => None,
        };
    }

    fn max_samples(&self, cfg: &ParticipantConfig) -> usize {
        let rl = self.spec.qos.resource_limits.max_samples;
        if rl > 0 {
            rl as usize
        } else {
            cfg.writer_max_samples_default
        }
    }

    pub(super) fn has_reliable_proxy(&self) -> bool {
        self.proxies.values().any(|p| p.reliable)
    }

    /// True if a change of `len` bytes can be added without exceeding a limit.
    pub(crate) fn can_accept(&self, cfg: &ParticipantConfig, len: usize) -> bool {
        let keep_all = self.spec.qos.history == History::KeepAll;
        if keep_all && self.changes.len() >= self.max_samples(cfg) {
            return false;
        }
        if self.pacer_full() {
            return false;
        }
        if self.relay {
            return true;
        }
        let unacked = self.unacked_bytes_cache;
        if self.has_reliable_proxy() && unacked > 0 && unacked + len > self.window(cfg, len) {
            return false;
        }
        // A reader repairing a gap keeps only so many samples past it.
        let next = self.last_sn + 1;
        !self.proxies.values().any(|p| {
            p.reliable
                && p.reported_gap
                && p.reorder_window
                    .is_some_and(|w| next - p.acked_below >= w as i64)
        })
    }

    /// Unacknowledged bytes allowed when the next sample has `len` bytes (the module
    /// documentation, "Bounds": a durability service's reader gets the high-water mark).
    pub(super) fn window(&self, cfg: &ParticipantConfig, len: usize) -> usize {
        let floor = if self.proxies.values().any(|p| p.durability_service) {
            cfg.writer_high_water_bytes
        } else {
            cfg.writer_window_floor_bytes
        };
        (WINDOW_SAMPLES * self.largest_sample.max(len))
            .max(floor)
            .min(cfg.writer_high_water_bytes)
    }

    /// Adds a change to the history and sends it to all matched readers (a paced best-effort
    /// writer queues it, see [`crate::pacing`]; `shared` is the participant's bucket, if it has
    /// a bandwidth limit).
    pub(crate) fn write(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        change: NewChange,
        shared: Option<&mut TokenBucket>,
    ) -> Result<SequenceNumber, WriteError> {
        let len = change.payload.len();
        if len > cfg.max_sample_size {
            return Err(WriteError::TooLarge);
        }
        self.make_room_for_durable(cfg);
        if !self.can_accept(cfg, len) {
            // What is held back cannot be acknowledged: send it so room frees up.
            self.flush_batch(out);
            return Err(WriteError::Full);
        }
        self.largest_sample = self.largest_sample.max(len);
        self.last_sn += 1;
        let sn = self.last_sn;
        if let Some(d) = self.deadlines.as_mut() {
            match change.kind {
                ChangeKind::Alive => d.arm(now, change.key_hash),
                _ => d.disarm(&change.key_hash),
            }
        }
        if let Some(life) = self.lifespan {
            self.expiries.push_back((now + life, sn));
        }
        if let Some(first) = self.coherent.as_mut() {
            self.coherence.insert(sn, Some(*first.get_or_insert(sn)));
        }
        if let Some(mark) = self.next_group_mark.take() {
            self.group_marks.insert(sn, mark);
        }
        self.insert_change(sn, change);
        self.send_new(&mut Ctx { now, out, cfg }, sn, shared);
        if !self.has_reliable_proxy() {
            self.collect_acked();
        }
        self.check_history();
        Ok(sn)
    }

    /// True while a coherent set is open.
    pub(crate) fn in_coherent_set(&self) -> bool {
        self.coherent.is_some()
    }

    /// Opens a coherent set: the changes written until [`Writer::end_coherent`] carry
    /// PID_COHERENT_SET (the sequence number of the first), and readers that asked for
    /// coherent access take them all or none (RTPS 2.5 §8.7.6). Already open: nothing changes.
    pub(crate) fn begin_coherent(&mut self) {
        if self.coherent.is_none() {
            self.coherent = Some(None);
        }
    }

    /// Closes the coherent set: if anything was written in it, an end-of-set marker follows
    /// (a DATA without payload whose PID_COHERENT_SET is SEQUENCENUMBER_UNKNOWN, with its own
    /// sequence number, so readers learn the set is complete without waiting for the next
    /// write), with a HEARTBEAT so a reader that lost a member asks for it at once.
    ///
    /// The end of a GROUP coherent set (`group`: the set's first and last group sequence
    /// numbers, and its member writers) is marked by every writer of the publisher, even one
    /// that wrote nothing in it: a subscriber then knows each writer's part is complete.
    pub(crate) fn end_coherent(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        group: Option<GroupEnd>,
    ) {
        match self.coherent.take() {
            Some(Some(_)) => {}
            Some(None) if group.is_some() => {}
            _ => return,
        }
        self.last_sn += 1;
        let sn = self.last_sn;
        self.coherence.insert(sn, None);
        if let Some(end) = group {
            self.group_marks.insert(sn, end.mark);
            if let Some(members) = end.members {
                self.group_members.insert(sn, members);
            }
        }
        let marker = NewChange {
            kind: ChangeKind::Alive,
            key_hash: [0; 16],
            payload: Arc::new(Vec::new()),
            timestamp: None,
            original: None,
        };
        self.insert_change(sn, marker);
        self.send_new(&mut Ctx { now, out, cfg }, sn, None);
        self.hb_due = Some(now);
        if !self.has_reliable_proxy() {
            self.collect_acked();
        }
        self.check_history();
    }

    /// Forgets the coherence of changes no longer held.
    fn trim_coherence(&mut self) {
        if self.coherence.is_empty() && self.group_marks.is_empty() {
            return;
        }
        let first = self
            .changes
            .first_key_value()
            .map_or(self.last_sn + 1, |(&sn, _)| sn);
        if !self.coherence.is_empty() {
            self.coherence = self.coherence.split_off(&first);
        }
        if !self.group_marks.is_empty() {
            self.group_marks = self.group_marks.split_off(&first);
        }
        if !self.group_members.is_empty() {
            self.group_members = self.group_members.split_off(&first);
        }
    }

    /// The PID_COHERENT_SET a change carries, if it is in a set (`Some(None)`: the end marker).
    pub(crate) fn coherence_of(&self, sn: SequenceNumber) -> Option<Option<SequenceNumber>> {
        if self.coherence.is_empty() {
            return None;
        }
        self.coherence.get(&sn).copied()
    }

    fn insert_change(&mut self, sn: SequenceNumber, change: NewChange) {
        // An end-of-set marker belongs to no instance: it must not push a sample out.
        let marker = change.payload.is_empty() && self.coherence.get(&sn) == Some(&None);
        if self.relay && !marker {
            // A relay's history is what its service stored: the store decides what goes
            // (its depth counts data samples, a dispose or an unregistration takes no data
            // sample's place) and the driver removes it (`remove_stored`), found through the
            // instance's queue.
            self.instances
                .entry(change.key_hash)
                .or_default()
                .push_back(sn);
        } else if let (History::KeepLast(depth), false) = (self.spec.qos.history, marker) {
            let depth = depth.max(1) as usize;
            let q = self.instances.entry(change.key_hash).or_default();
            q.push_back(sn);
            while q.len() > depth {
                if let Some(old) = q.pop_front() {
                    if let Some(c) = self.changes.remove(&old) {
                        let len = c.change.payload.len();
                        // As `forget_bytes` (the queue borrows the instance map).
                        self.history_bytes -= len;
                        if old < self.acked_floor {
                            self.acked_bytes -= len;
                        } else {
                            self.unacked_bytes_cache = self.unacked_bytes_cache.saturating_sub(len);
                        }
                        release(self.buffers.as_ref(), c);
                    }
                }
            }
        }
        self.unacked_bytes_cache += change.payload.len();
        self.history_bytes += change.payload.len();
        self.changes.insert(
            sn,
            CacheChange {
                sn,
                change,
                stored_at: None,
                released_len: None,
            },
        );
        self.trim_coherence();
    }

    /// The fed readers (see [`ReaderProxy::fed`]) a change `sn` goes to.
    pub(crate) fn fed_readers(&self, sn: SequenceNumber) -> impl Iterator<Item = Guid> + '_ {
        self.proxies
            .values()
            .filter(move |p| p.fed && sn >= p.start_sn)
            .map(|p| p.guid)
    }

    /// True when a fed reader has not acknowledged a change that every other reliable reader
    /// has (see [`crate::Participant::writer_waits_on_fed`]).
    pub(crate) fn waits_on_fed(&self) -> bool {
        if !self.feeds {
            return false;
        }
        let oldest = self.min_acked();
        oldest <= self.last_sn
            && self
                .proxies
                .values()
                .any(|p| p.fed && p.reliable && p.acked_below == oldest)
    }

    /// True if some reader is fed (one branch per write for every other writer).
    pub(crate) fn feeds(&self) -> bool {
        self.feeds
    }

    /// The changes held for fed reader `reader` from where it starts: what it is handed when
    /// it matches.
    pub(crate) fn fed_history(
        &self,
        reader: &Guid,
    ) -> impl Iterator<Item = (SequenceNumber, &NewChange)> + '_ {
        let start = self
            .proxies
            .get(reader)
            .filter(|p| p.fed)
            .map_or(SequenceNumber(i64::MAX), |p| p.start_sn);
        self.changes
            .range(start..)
            .filter(|(sn, c)| !c.change.payload.is_empty() || self.coherence_of(**sn) != Some(None))
            .map(|(sn, c)| (*sn, &c.change))
    }

    /// Fed reader `reader` stored every change below `next`: as an ACKNACK of that base,
    /// without repairs (nothing is ever resent to it). False if nothing moved.
    pub(crate) fn fed_ack(&mut self, reader: &Guid, next: SequenceNumber) -> bool {
        let next = next.min(self.last_sn + 1);
        let Some(p) = self.proxies.get_mut(reader).filter(|p| p.fed) else {
            return false;
        };
        if next <= p.acked_below {
            return false;
        }
        p.acked_below = next;
        self.collect_acked();
        self.check_history();
        true
    }

    /// Drops changes every reliable reader acknowledged (unless durability keeps them).
    pub(crate) fn collect_acked(&mut self) {
        if self.relay {
            // A relay keeps everything and has no window (see `can_accept`): summing what is
            // unacknowledged would cost the whole history, a million changes, per ACKNACK.
            self.unacked_bytes_cache = 0;
            self.release_acked();
            return;
        }
        let min_acked = self.min_acked();
        if self.keeps_history() {
            // KEEP_ALL TRANSIENT_LOCAL retains everything up to its limits; KEEP_LAST is
            // bounded by the per-instance queues. The bytes acknowledged grow by the changes
            // between the old floor and the new; a floor that went back (a reader matched)
            // is summed again from the start.
            if min_acked >= self.acked_floor {
                self.acked_bytes += self.payload_bytes(self.acked_floor..min_acked);
            } else {
                self.acked_bytes = self.payload_bytes(..min_acked);
            }
            self.acked_floor = min_acked;
            self.unacked_bytes_cache = self.history_bytes - self.acked_bytes;
            return;
        }
        while let Some((&sn, _)) = self.changes.first_key_value() {
            if sn >= min_acked {
                break;
            }
            self.drop_change(sn);
        }
        // What is left is exactly what some reliable reader has not acknowledged.
        self.unacked_bytes_cache = self.history_bytes;
    }

    /// Removes the changes whose LIFESPAN ended by `now`: they are sent to nobody any more
    /// (a reader that asks for one gets a GAP).
    pub(crate) fn expire_lifespan(&mut self, now: Instant) {
        while let Some(&(due, sn)) = self.expiries.front() {
            if due > now {
                break;
            }
            self.expiries.pop_front();
            self.drop_change(sn);
        }
        self.unacked_bytes_cache = self.unacked_bytes_cache.min(self.history_bytes);
        self.check_history();
    }

    /// Drops relay change of instance `key` written with locator `stored_at` (its service's
    /// store removed that sample): readers that ask for it get a GAP. False if not held.
    pub(crate) fn remove_stored(&mut self, key: &[u8; 16], stored_at: u64) -> bool {
        let Some(sn) = self.instances.get(key).and_then(|q| {
            q.iter()
                .copied()
                .find(|sn| self.changes.get(sn).and_then(|c| c.stored_at) == Some(stored_at))
        }) else {
            return false;
        };
        self.drop_change(sn);
        self.unacked_bytes_cache = self.unacked_bytes_cache.min(self.history_bytes);
        self.check_history();
        true
    }

    /// Drops every held change of instance `key` (a durability service's cleanup: readers
    /// that ask for them get GAPs). Returns how many were held.
    pub(crate) fn remove_instance(&mut self, key: &[u8; 16]) -> usize {
        let sns: Vec<SequenceNumber> = self
            .changes
            .iter()
            .filter(|(_, c)| c.change.key_hash == *key)
            .map(|(&sn, _)| sn)
            .collect();
        for &sn in &sns {
            self.drop_change(sn);
        }
        self.unacked_bytes_cache = self.unacked_bytes_cache.min(self.history_bytes);
        self.check_history();
        sns.len()
    }

    /// Instances not written within the offered DEADLINE by `now` (each once per period).
    pub(crate) fn expire_deadlines(&mut self, now: Instant, missed: &mut Vec<[u8; 16]>) {
        if let Some(d) = self.deadlines.as_mut() {
            d.expire(now, missed);
        }
    }

    /// Takes changeable QoS at run time (the caller checked that nothing else changed): a new
    /// DEADLINE re-times the instances' due times (a newly finite one counts from `now` for
    /// every instance in the history), a new LIFESPAN applies to later writes.
    pub(crate) fn set_qos(&mut self, now: Instant, qos: EndpointQos, hash_seed: u64) {
        match (finite(qos.deadline), self.deadlines.as_mut()) {
            (None, _) => self.deadlines = None,
            (Some(period), Some(d)) => d.set_period(now, period),
            (Some(period), None) if self.linger_until.is_none() => {
                let mut d = DeadlineQueue::new(period, hash_seed);
                for key in self.instances.keys() {
                    d.arm(now, *key);
                }
                self.deadlines = Some(d);
            }
            (Some(_), None) => {}
        }
        self.lifespan = finite(qos.lifespan);
        self.spec.qos = qos;
    }

    /// A deleted writer offers no deadline any more.
    pub(crate) fn stop_deadlines(&mut self) {
        self.deadlines = None;
    }

    /// The earliest of this writer's deadlines (heartbeat, batch, lingering, pacing with the
    /// participant's `shared` bucket, offered deadline, lifespan), if it has any.
    pub(crate) fn next_due(&self, shared: Option<&TokenBucket>) -> Option<Instant> {
        [
            self.hb_due,
            self.batch_due(),
            self.linger_until,
            self.paced_due(shared),
            self.qos_due(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// When the next offered deadline or lifespan expiry falls due.
    pub(crate) fn qos_due(&self) -> Option<Instant> {
        let d = self.deadlines.as_ref().and_then(DeadlineQueue::next);
        let l = self.expiries.front().map(|&(t, _)| t);
        crate::time::earliest(d, l)
    }

    /// The history's invariants (checked in debug builds after every change to it).
    fn check_history(&self) {
        // Summing the history is linear: only small ones are checked (tests stay fast).
        #[cfg(debug_assertions)]
        if self.changes.len() <= 512 {
            let below = self.payload_bytes(..self.acked_floor);
            assert_eq!(
                below, self.acked_bytes,
                "the bytes counted as acknowledged differ from the history's below {:?}",
                self.acked_floor
            );
        }
        debug_assert!(
            self.unacked_bytes_cache <= self.history_bytes,
            "unacknowledged bytes ({}) exceed the history's ({})",
            self.unacked_bytes_cache,
            self.history_bytes
        );
        debug_assert!(
            self.changes
                .last_key_value()
                .is_none_or(|(&sn, _)| sn <= self.last_sn),
            "the history holds a change beyond the last sequence number written"
        );
        debug_assert!(
            self.proxies
                .values()
                .all(|p| p.acked_below <= self.last_sn + 1 && p.start_sn <= self.last_sn + 1),
            "a reader proxy acknowledged or starts beyond what was written"
        );
    }

    /// Payload bytes of the changes held in `range`.
    fn payload_bytes(&self, range: impl std::ops::RangeBounds<SequenceNumber>) -> usize {
        self.changes
            .range(range)
            .map(|(_, c)| c.change.payload.len())
            .sum()
    }

    /// Accounts for change `sn`, of `len` payload bytes, leaving the history.
    fn forget_bytes(&mut self, sn: SequenceNumber, len: usize) {
        self.history_bytes -= len;
        if sn < self.acked_floor {
            self.acked_bytes -= len;
        }
    }

    fn forget_instance_entry(&mut self, c: &CacheChange) {
        if let Some(q) = self.instances.get_mut(&c.change.key_hash) {
            // The oldest goes first as a rule (a relay's queue may be long).
            if q.front() == Some(&c.sn) {
                q.pop_front();
            } else if let Some(at) = q.iter().position(|&s| s == c.sn) {
                q.remove(at);
            }
            if q.is_empty() {
                self.instances.remove(&c.change.key_hash);
            }
        }
    }

    fn first_available(&self) -> SequenceNumber {
        self.changes
            .keys()
            .next()
            .copied()
            .unwrap_or(self.last_sn + 1)
    }

    fn heartbeat(&mut self, reader_id: EntityId, final_flag: bool) -> Heartbeat {
        self.hb_count = self.hb_count.wrapping_add(1);
        Heartbeat {
            reader_id,
            writer_id: self.guid.entity,
            first_sn: self.first_available(),
            last_sn: self.last_sn,
            count: self.hb_count,
            final_flag,
            liveliness_flag: false,
        }
    }

    /// The HEARTBEAT directed at `reader`: the writer's range, or, while the reader is not
    /// synchronised, an empty range at its start ([start, start - 1]: nothing before `start`
    /// is owed to it, nothing from `start` on announced yet). Never final while unsynchronised:
    /// the reader must answer.
    fn heartbeat_to(&mut self, reader: &Guid, final_flag: bool) -> Heartbeat {
        let mut hb = self.heartbeat(reader.entity, final_flag);
        if let Some(p) = self.proxies.get(reader).filter(|p| !p.synced) {
            hb.first_sn = p.start_sn;
            hb.last_sn = p.start_sn - 1;
            hb.final_flag = false;
        }
        hb
    }

    /// Encodes the inline QoS a change needs (key hash, status info) into `buf`; false when it
    /// needs none.
    /// The inline QoS of `change` into `buf`; false if it has none. `fragmented`: the change
    /// goes out in DATA_FRAGs. Those carry the key hash even when alive: 24 bytes beside a
    /// sample that large, and a reader without it must decode the whole sample to find its
    /// instance (a full extra copy of a 10 MiB sample).
    fn inline_qos(
        &self,
        sn: SequenceNumber,
        change: &NewChange,
        fragmented: bool,
        buf: &mut Vec<u8>,
    ) -> bool {
        let coherence = self.coherence_of(sn);
        let group_mark = if self.group_marks.is_empty() {
            None
        } else {
            self.group_marks.get(&sn).copied()
        };
        let marker = coherence == Some(None);
        // Durable writers (TRANSIENT, PERSISTENT) and relays always send the key hash: a
        // durability service keeps samples per instance without knowing the type.
        let durable = self.spec.has_key
            && (self.spec.qos.durability >= DurabilityKind::Transient || change.original.is_some());
        let with_key = !marker
            && (self.builtin
                || change.kind != ChangeKind::Alive
                || durable
                || (fragmented && self.spec.has_key));
        if !with_key && coherence.is_none() && group_mark.is_none() && change.original.is_none() {
            return false;
        }
        buf.clear();
        let mut pl = ParameterListWriter::new(buf);
        if with_key && (self.spec.has_key || self.builtin) {
            pl.raw(pid::KEY_HASH, &change.key_hash);
        }
        if change.kind != ChangeKind::Alive {
            pl.raw(pid::STATUS_INFO, &change.kind.status_info().to_be_bytes());
        }
        if let Some(first) = coherence {
            pl.sequence_number(pid::COHERENT_SET, first);
        }
        if let Some((set, gsn)) = group_mark {
            if let Some(set) = set {
                pl.sequence_number(pid::GROUP_COHERENT_SET, Some(set));
            }
            pl.sequence_number(pid::GROUP_SEQ_NUM, Some(gsn));
        }
        if let Some(members) = self.group_members.get(&sn).filter(|_| marker) {
            pl.entity_ids(pid::HALYARD_GROUP_MEMBERS, members);
        }
        if let Some((writer, sn)) = change.original {
            pl.original_writer(writer, sn);
        }
        pl.finish();
        true
    }

    fn note_hb_sent(&mut self, now: Instant) {
        self.bytes_since_hb = 0;
        self.last_hb_at = now;
    }

    /// Starts lingering until `until`: a HEARTBEAT goes at once to every reader that has not
    /// acknowledged everything, so it learns of the tail now rather than at the next period.
    pub(crate) fn start_linger(
        &mut self,
        now: Instant,
        until: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
    ) {
        self.linger_until = Some(until);
        self.hb_interval = fast_heartbeat(cfg);
        self.hb_due = Some(now);
        self.on_timeout(now, out, cfg, None);
    }

    /// True when every reliable reader acknowledged everything written so far.
    pub(crate) fn all_acked(&self) -> bool {
        self.proxies
            .values()
            .filter(|p| p.reliable)
            .all(|p| p.acked_below > self.last_sn)
    }

    /// Every reader matched now, then those that left (see [`delivery`]).
    pub(crate) fn deliveries(&self) -> Vec<delivery::ReaderDelivery> {
        let next = self.last_sn + 1;
        self.proxies
            .values()
            .map(|p| delivery::of_proxy(p, next, true))
            .chain(self.departed.iter().copied())
            .collect()
    }

    /// Readers known to have matched us (reliable ones acknowledged at least once, and know
    /// where their stream starts; a fed reader is handed everything from its match on).
    /// Matched readers that showed they matched too, durability services' not counted
    /// (they are out of the application's sight, see [`crate::relay`]).
    pub(crate) fn synced_readers(&self) -> usize {
        self.proxies
            .values()
            .filter(|p| !p.durability_service)
            .filter(|p| !p.reliable || p.fed || (p.synced && p.acknack_counts.seen()))
            .count()
    }

    /// Number of changes held.
    pub(crate) fn history_len(&self) -> usize {
        self.changes.len()
    }

    /// Payload bytes held in memory.
    pub(crate) fn history_bytes(&self) -> usize {
        self.history_bytes
    }
}

/// A change leaves the history: its payload buffer goes back to `pool` if nothing else holds
/// it.
fn release(pool: Option<&crate::buffers::BufferPool>, c: CacheChange) {
    if let Some(pool) = pool {
        if c.change.payload.capacity() >= crate::buffers::MIN_POOLED_BYTES {
            if let Ok(buf) = Arc::try_unwrap(c.change.payload) {
                pool.put(buf);
            }
        }
    }
}

/// The first periodic HEARTBEAT interval after progress (see `Writer::hb_interval`): 10 ms
/// with the default 100 ms period (2 ms made Cyclone DDS readers fall behind a 2000 Hz
/// stream at 10 % loss: netns_faults::halyard_cyclone_10pct_loss_is_lossless). Each HEARTBEAT
/// is answered by at most one ACKNACK and the reader does not re-ask within a repair round
/// trip, so a short interval costs control datagrams, not duplicate data.
fn fast_heartbeat(cfg: &ParticipantConfig) -> std::time::Duration {
    (cfg.heartbeat_period / 10).max(std::time::Duration::from_millis(1))
}

/// Appends a GAP declaring `start..end` irrelevant to `reader_id`.
fn push_gap(
    mb: &mut MessageBuilder,
    reader_id: EntityId,
    writer_id: EntityId,
    start: SequenceNumber,
    end: SequenceNumber,
) {
    debug_assert!(start < end, "a GAP covers at least one sequence number");
    mb.gap(&Gap {
        reader_id,
        writer_id,
        gap_start: start,
        gap_list: SequenceNumberSet::new(end, 0),
    });
}
