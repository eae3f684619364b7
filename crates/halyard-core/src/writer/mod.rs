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
//! Repair is reader-driven: HEARTBEATs announce [first, last]; ACKNACKs name missing changes,
//! which are resent directed at that reader (or answered with a GAP when no longer held).
//! Large samples are fragmented; a reliable writer sends only `fragment_burst_bytes` of a
//! sample's fragments at once, then a HEARTBEAT; the reader pulls the rest with NACK_FRAG. This
//! is the flow control that keeps a 100 MB sample from overrunning socket buffers.
//!
//! Batching (optional, [`BatchPolicy`]): new samples that fit one datagram are appended to a
//! pending message instead of being sent one datagram each, like Cyclone's WriteBatch or RTI's
//! BATCH QoS; the message goes out when the next sample would overflow `max_bytes`, when
//! `max_flush_delay` has passed since its first sample, on an explicit flush, and before this
//! writer sends anything else (repairs, heartbeats, fragments), so a HEARTBEAT never announces
//! a sample still held back. Each sample keeps its own DATA submessage and INFO_TS, so readers
//! need no batching support.
//!
//! Bounds: the WHC is limited by ResourceLimits (or `writer_max_samples_default`) and by a
//! window of unacknowledged bytes: [`WINDOW_SAMPLES`] of the largest sample written, within
//! `writer_window_floor_bytes ..= writer_high_water_bytes`; past either, `write` reports
//! [`WriteError::Full`] and the API blocks up to max_blocking_time.

use crate::config::{ParticipantConfig, WINDOW_SAMPLES};
use crate::event::ChangeKind;
use crate::outbox::Outbox;
use crate::reader::CountFilter;
use crate::time::Instant;
use halyard_wire::param::{pid, ParameterListWriter};
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, ReliabilityKind};
use halyard_wire::{
    AckNack, EntityId, Gap, Guid, GuidPrefix, Heartbeat, Locator, MessageBuilder, NackFrag,
    SequenceNumber, SequenceNumberSet, Time,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
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

/// Why a write was not accepted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
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
}

/// Writer batching: how much to gather into one datagram and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPolicy {
    /// Largest datagram a batch grows to (capped by the participant's maximum message size).
    pub max_bytes: usize,
    /// Longest a sample waits in a batch before the batch is sent.
    pub max_flush_delay: std::time::Duration,
}

/// The datagram being gathered and where it goes (fixed when it was started, so readers
/// matched later are not sent samples written before they matched).
struct PendingBatch {
    mb: MessageBuilder,
    empty_len: usize,
    dests: Vec<Locator>,
    prefix: Option<GuidPrefix>,
    due: Instant,
}

pub(crate) struct CacheChange {
    pub(crate) sn: i64,
    pub(crate) change: NewChange,
}

pub(crate) struct ReaderProxy {
    pub(crate) guid: Guid,
    /// Unicast locators: everything directed at this reader, and new data unless...
    pub(crate) locators: Vec<Locator>,
    /// ... readers of other participants share this multicast locator.
    pub(crate) multicast: Option<Locator>,
    pub(crate) reliable: bool,
    pub(crate) acked_below: i64,
    pub(crate) start_sn: i64,
    pub(crate) requested: BTreeSet<i64>,
    pub(crate) acknack_counts: CountFilter,
    pub(crate) nackfrag_counts: CountFilter,
    /// Consecutive ACKNACKs acknowledging beyond what was ever written.
    pub(crate) acks_ahead: u8,
}

impl ReaderProxy {
    pub(crate) fn new(guid: Guid, locators: Vec<Locator>, reliable: bool, start_sn: i64) -> Self {
        ReaderProxy {
            guid,
            locators,
            multicast: None,
            reliable,
            acked_below: start_sn,
            start_sn,
            requested: BTreeSet::new(),
            acknack_counts: CountFilter::default(),
            nackfrag_counts: CountFilter::default(),
            acks_ahead: 0,
        }
    }
}

/// Bytes reserved in each datagram for headers around a DATA payload.
const DATA_OVERHEAD: usize = 20 + 16 + 12 + 24 + 64 + 32;
/// Maximum requested sequence numbers remembered per reader.
const MAX_REQUESTED: usize = 4096;

pub(crate) struct Writer {
    pub(crate) guid: Guid,
    pub(crate) spec: WriterSpec,
    changes: BTreeMap<i64, CacheChange>,
    instances: HashMap<[u8; 16], VecDeque<i64>>,
    unacked_bytes_cache: usize,
    /// The largest payload written so far: it sizes the flow-control window.
    largest_sample: usize,
    /// Payload bytes of all changes held.
    history_bytes: usize,
    pub(crate) last_sn: i64,
    pub(crate) proxies: BTreeMap<Guid, ReaderProxy>,
    fanout: Vec<Locator>,
    fanout_prefix: Option<GuidPrefix>,
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
    pending: Option<PendingBatch>,
    /// Readers sent fragment repairs (NACK_FRAG answers) since the last
    /// [`Writer::send_repair_heartbeats`]: each gets one HEARTBEAT after all the repairs a
    /// datagram asked for, not one per NACK_FRAG (a reader NACKs up to 64 windows at once, and
    /// a HEARTBEAT per window made every repair round multiply the next one's requests).
    repaired: Vec<Guid>,
}

impl Writer {
    pub(crate) fn new(guid: Guid, spec: WriterSpec, builtin: bool) -> Self {
        Writer {
            guid,
            spec,
            changes: BTreeMap::new(),
            instances: HashMap::new(),
            unacked_bytes_cache: 0,
            largest_sample: 0,
            history_bytes: 0,
            last_sn: 0,
            proxies: BTreeMap::new(),
            fanout: Vec::new(),
            fanout_prefix: None,
            hb_count: 0,
            hb_due: None,
            hb_interval: std::time::Duration::ZERO,
            bytes_since_hb: 0,
            last_hb_at: Instant::default(),
            builtin,
            batch_policy: None,
            pending: None,
            repaired: Vec::new(),
        }
    }

    fn is_reliable(&self) -> bool {
        self.spec.qos.reliability.kind == ReliabilityKind::Reliable
    }

    fn keeps_history(&self) -> bool {
        self.spec.qos.durability >= DurabilityKind::TransientLocal
    }

    /// Adds a matched reader. Volatile readers start after what is already written.
    pub(crate) fn add_proxy(&mut self, now: Instant, mut proxy: ReaderProxy, durable: bool) {
        proxy.reliable &= self.is_reliable();
        let start = if durable && self.keeps_history() {
            1
        } else {
            self.last_sn + 1
        };
        proxy.start_sn = start;
        proxy.acked_below = if durable && self.keeps_history() {
            1
        } else {
            start
        };
        self.proxies.insert(proxy.guid, proxy);
        self.recompute_fanout();
        if self.is_reliable() {
            self.hb_due = Some(now);
        }
    }

    pub(crate) fn remove_proxy(&mut self, guid: &Guid) -> bool {
        let removed = self.proxies.remove(guid).is_some();
        if removed {
            self.recompute_fanout();
            self.collect_acked();
        }
        removed
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
        for p in self.proxies.values() {
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
        for p in self.proxies.values() {
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
        let mut prefixes = self.proxies.keys().map(|g| g.prefix);
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

    fn has_reliable_proxy(&self) -> bool {
        self.proxies.values().any(|p| p.reliable)
    }

    /// True if a change of `len` bytes can be added without exceeding a limit.
    pub(crate) fn can_accept(&self, cfg: &ParticipantConfig, len: usize) -> bool {
        let keep_all = self.spec.qos.history == History::KeepAll;
        if keep_all && self.changes.len() >= self.max_samples(cfg) {
            return false;
        }
        let unacked = self.unacked_bytes_cache;
        !(self.has_reliable_proxy() && unacked > 0 && unacked + len > self.window(cfg, len))
    }

    /// Unacknowledged bytes allowed when the next sample has `len` bytes.
    fn window(&self, cfg: &ParticipantConfig, len: usize) -> usize {
        (WINDOW_SAMPLES * self.largest_sample.max(len))
            .max(cfg.writer_window_floor_bytes)
            .min(cfg.writer_high_water_bytes)
    }

    /// Adds a change to the history and sends it to all matched readers.
    pub(crate) fn write(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        change: NewChange,
    ) -> Result<SequenceNumber, WriteError> {
        let len = change.payload.len();
        if len > cfg.max_sample_size {
            return Err(WriteError::TooLarge);
        }
        if !self.can_accept(cfg, len) {
            // What is held back cannot be acknowledged: send it so room frees up.
            self.flush_batch(out);
            return Err(WriteError::Full);
        }
        self.largest_sample = self.largest_sample.max(len);
        self.last_sn += 1;
        let sn = self.last_sn;
        self.insert_change(sn, change);
        self.send_new(now, out, cfg, sn);
        if !self.has_reliable_proxy() {
            self.collect_acked();
        }
        Ok(SequenceNumber(sn))
    }

    fn insert_change(&mut self, sn: i64, change: NewChange) {
        if let History::KeepLast(depth) = self.spec.qos.history {
            let depth = depth.max(1) as usize;
            let q = self.instances.entry(change.key_hash).or_default();
            q.push_back(sn);
            while q.len() > depth {
                if let Some(old) = q.pop_front() {
                    if let Some(c) = self.changes.remove(&old) {
                        let len = c.change.payload.len();
                        self.unacked_bytes_cache = self.unacked_bytes_cache.saturating_sub(len);
                        self.history_bytes -= len;
                    }
                }
            }
        }
        self.unacked_bytes_cache += change.payload.len();
        self.history_bytes += change.payload.len();
        self.changes.insert(sn, CacheChange { sn, change });
    }

    /// Drops changes every reliable reader acknowledged (unless durability keeps them).
    pub(crate) fn collect_acked(&mut self) {
        let min_acked = self
            .proxies
            .values()
            .filter(|p| p.reliable)
            .map(|p| p.acked_below)
            .min()
            .unwrap_or(self.last_sn + 1);
        if self.keeps_history() {
            // KEEP_ALL TRANSIENT_LOCAL retains everything up to its limits; KEEP_LAST is
            // bounded by the per-instance queues.
            self.unacked_bytes_cache = self
                .changes
                .range(min_acked..)
                .map(|(_, c)| c.change.payload.len())
                .sum();
            return;
        }
        while let Some((&sn, _)) = self.changes.first_key_value() {
            if sn >= min_acked {
                break;
            }
            if let Some(c) = self.changes.remove(&sn) {
                self.history_bytes -= c.change.payload.len();
                self.forget_instance_entry(&c);
            }
        }
        // What is left is exactly what some reliable reader has not acknowledged.
        self.unacked_bytes_cache = self.history_bytes;
    }

    fn forget_instance_entry(&mut self, c: &CacheChange) {
        if let Some(q) = self.instances.get_mut(&c.change.key_hash) {
            q.retain(|&s| s != c.sn);
            if q.is_empty() {
                self.instances.remove(&c.change.key_hash);
            }
        }
    }

    fn first_available(&self) -> i64 {
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
            first_sn: SequenceNumber(self.first_available()),
            last_sn: SequenceNumber(self.last_sn),
            count: self.hb_count,
            final_flag,
            liveliness_flag: false,
        }
    }

    fn inline_qos(&self, change: &NewChange, buf: &mut Vec<u8>) -> bool {
        let with_key = self.builtin || change.kind != ChangeKind::Alive;
        if !with_key {
            return false;
        }
        buf.clear();
        let mut pl = ParameterListWriter::new(buf);
        if self.spec.has_key || self.builtin {
            pl.raw(pid::KEY_HASH, &change.key_hash);
        }
        if change.kind != ChangeKind::Alive {
            pl.raw(pid::STATUS_INFO, &change.kind.status_info().to_be_bytes());
        }
        pl.finish();
        true
    }

    /// Sends a new change to every matched reader (one datagram per fragment group).
    fn send_new(&mut self, now: Instant, out: &mut Outbox, cfg: &ParticipantConfig, sn: i64) {
        if self.fanout.is_empty() {
            return;
        }
        let dests = std::mem::take(&mut self.fanout);
        let prefix = self.fanout_prefix;
        let len = self.changes.get(&sn).map_or(0, |c| c.change.payload.len());
        self.bytes_since_hb += len;
        let want_hb = self.has_reliable_proxy()
            && (self.bytes_since_hb >= 256 * 1024
                || now.saturating_duration_since(self.last_hb_at) >= cfg.heartbeat_period / 10
                || len + DATA_OVERHEAD > cfg.max_message_size);
        self.send_change(
            now,
            out,
            cfg,
            sn,
            EntityId::UNKNOWN,
            prefix,
            &dests,
            want_hb,
            None,
        );
        self.fanout = dests;
        if self.has_reliable_proxy() {
            self.hurry_heartbeat(now, cfg);
        }
    }

    /// Back to the fast heartbeat interval after progress, with a HEARTBEAT due within it.
    fn hurry_heartbeat(&mut self, now: Instant, cfg: &ParticipantConfig) {
        self.hb_interval = fast_heartbeat(cfg);
        let due = now + self.hb_interval;
        self.hb_due = Some(self.hb_due.map_or(due, |d| d.min(due)));
    }

    /// Sends change `sn` (whole or its first burst of fragments, or the given fragments),
    /// followed by a HEARTBEAT when `with_hb`.
    #[allow(clippy::too_many_arguments)]
    fn send_change(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        sn: i64,
        reader_id: EntityId,
        prefix: Option<GuidPrefix>,
        dests: &[Locator],
        with_hb: bool,
        frags: Option<&[u32]>,
    ) {
        let Some(cc) = self.changes.get(&sn) else {
            return;
        };
        let change = cc.change.clone();
        let mut qos = Vec::new();
        let has_qos = self.inline_qos(&change, &mut qos);
        let qos_ref = has_qos.then_some(&qos[..]);
        let key_flag = change.kind != ChangeKind::Alive;
        let fits = change.payload.len() + qos.len() + DATA_OVERHEAD <= cfg.max_message_size;
        if fits && frags.is_none() && reader_id == EntityId::UNKNOWN && self.batch_policy.is_some()
        {
            self.append_to_batch(now, out, cfg, sn, &change, qos_ref, dests, with_hb);
            return;
        }
        self.flush_batch(out);
        if fits && frags.is_none() {
            let mut mb = out.start(prefix);
            mb.info_ts(change.timestamp);
            mb.data(
                reader_id,
                self.guid.entity,
                SequenceNumber(sn),
                qos_ref,
                Some(&change.payload),
                key_flag,
            );
            if with_hb {
                let hb = self.heartbeat(reader_id, false);
                mb.heartbeat(&hb);
                self.note_hb_sent(now);
            }
            out.push(mb, 0, dests);
            return;
        }
        self.send_fragments(
            now,
            out,
            cfg,
            sn,
            &change,
            (reader_id, prefix, dests),
            qos_ref,
            frags,
            with_hb,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn send_fragments(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        sn: i64,
        change: &NewChange,
        target: (EntityId, Option<GuidPrefix>, &[Locator]),
        qos: Option<&[u8]>,
        frags: Option<&[u32]>,
        with_hb: bool,
    ) {
        let (reader_id, prefix, dests) = target;
        let frag_size = cfg.fragment_size.clamp(512, 65_535);
        let total = change.payload.len().div_ceil(frag_size) as u32;
        let per_msg = ((cfg
            .max_message_size
            .saturating_sub(DATA_OVERHEAD + qos.map_or(0, |q| q.len())))
            / frag_size)
            .max(1) as u32;
        let reliable = self.has_reliable_proxy();
        let budget_frags = if reliable {
            (cfg.fragment_burst_bytes / frag_size).max(per_msg as usize) as u32
        } else {
            total
        };
        let wanted: Vec<u32> = match frags {
            Some(f) => f
                .iter()
                .copied()
                .filter(|&n| n >= 1 && n <= total)
                .collect(),
            None => (1..=total.min(budget_frags)).collect(),
        };
        let mut sent = 0u32;
        let mut i = 0usize;
        while i < wanted.len() && sent < budget_frags {
            // A run of consecutive fragment numbers, at most per_msg long.
            let start = wanted[i];
            let mut n = 1u32;
            while i + (n as usize) < wanted.len()
                && wanted[i + n as usize] == start + n
                && n < per_msg
            {
                n += 1;
            }
            let lo = (start as usize - 1) * frag_size;
            let hi = ((start + n - 1) as usize * frag_size).min(change.payload.len());
            let mut mb = out.start(prefix);
            mb.info_ts(change.timestamp);
            mb.data_frag(
                reader_id,
                self.guid.entity,
                SequenceNumber(sn),
                start,
                n as u16,
                frag_size as u16,
                change.payload.len() as u32,
                if start == 1 { qos } else { None },
                &change.payload[lo..hi],
                change.kind != ChangeKind::Alive,
            );
            out.push(mb, 0, dests);
            i += n as usize;
            sent += n;
        }
        if reliable && with_hb {
            let mut mb = out.start(prefix);
            let hb = self.heartbeat(reader_id, false);
            mb.heartbeat(&hb);
            self.note_hb_sent(now);
            out.push(mb, 0, dests);
        }
    }

    /// Turns batching on (or off, sending what is pending).
    pub(crate) fn set_batching(&mut self, out: &mut Outbox, policy: Option<BatchPolicy>) {
        if policy.is_none() {
            self.flush_batch(out);
        }
        self.batch_policy = policy;
    }

    /// When the pending batch must be sent, if there is one.
    pub(crate) fn batch_due(&self) -> Option<Instant> {
        self.pending.as_ref().map(|b| b.due)
    }

    /// Sends the pending batch, if any.
    pub(crate) fn flush_batch(&mut self, out: &mut Outbox) {
        if let Some(b) = self.pending.take() {
            out.push(b.mb, b.empty_len, &b.dests);
        }
    }

    /// Appends INFO_TS + DATA of change `sn` (and a HEARTBEAT when `with_hb`) to the pending
    /// batch, starting one (or sending a full one first) as needed.
    #[allow(clippy::too_many_arguments)]
    fn append_to_batch(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        sn: i64,
        change: &NewChange,
        qos: Option<&[u8]>,
        dests: &[Locator],
        with_hb: bool,
    ) {
        let Some(policy) = self.batch_policy else {
            return;
        };
        let limit = policy.max_bytes.clamp(512, cfg.max_message_size);
        let need = change.payload.len() + qos.map_or(0, |q| q.len()) + DATA_OVERHEAD;
        if self.pending.as_ref().is_some_and(|b| {
            b.mb.len() + need > limit || b.dests != dests || b.prefix != self.fanout_prefix
        }) {
            self.flush_batch(out);
        }
        let prefix = self.fanout_prefix;
        let b = self.pending.get_or_insert_with(|| {
            let mb = out.start(prefix);
            PendingBatch {
                empty_len: mb.len(),
                mb,
                dests: dests.to_vec(),
                prefix,
                due: now + policy.max_flush_delay,
            }
        });
        b.mb.info_ts(change.timestamp);
        b.mb.data(
            EntityId::UNKNOWN,
            self.guid.entity,
            SequenceNumber(sn),
            qos,
            Some(&change.payload),
            change.kind != ChangeKind::Alive,
        );
        let full = b.mb.len() + DATA_OVERHEAD >= limit;
        if with_hb {
            let hb = self.heartbeat(EntityId::UNKNOWN, false);
            if let Some(b) = self.pending.as_mut() {
                b.mb.heartbeat(&hb);
            }
            self.note_hb_sent(now);
        }
        if full {
            self.flush_batch(out);
        }
    }

    fn note_hb_sent(&mut self, now: Instant) {
        self.bytes_since_hb = 0;
        self.last_hb_at = now;
    }

    /// Handles an ACKNACK from `reader` (RTPS 2.5 §8.4.15.4). Returns true if acknowledgments
    /// advanced.
    pub(crate) fn on_acknack(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        reader: Guid,
        an: &AckNack,
    ) -> bool {
        self.flush_batch(out);
        let (set, count, final_flag) = (&an.reader_sn_state, an.count, an.final_flag);
        let last_sn = self.last_sn;
        let Some(p) = self.proxies.get_mut(&reader) else {
            return false;
        };
        // An ACKNACK acknowledging beyond what was ever written is damaged (a bit flip in its
        // base: RTPS has no checksum of its own), unless the reader really is ahead (it skipped
        // to a damaged HEARTBEAT's or GAP's end), in which case it says so again every time.
        // Taking one such ACKNACK at its word acknowledges changes the reader never received;
        // once all is acknowledged no HEARTBEAT ever asks it again (seed 0xcbdc8571e728e503:
        // a SEDP announcement lost for good, no match). So it counts only once confirmed; until
        // then a HEARTBEAT asks the reader to say again where it is.
        if set.base.0 > last_sn + 1 {
            p.acks_ahead = p.acks_ahead.saturating_add(1);
            if p.acks_ahead < 2 {
                self.serve_requests(now, out, cfg, reader, true);
                return false;
            }
        } else {
            p.acks_ahead = 0;
        }
        // A reader's first ACKNACK proves it matched us: answer with a HEARTBEAT at once so it
        // synchronises on our sequence numbers before data flows (otherwise a volatile reader
        // syncs on the first heartbeat piggy-backed on data and skips what was lost before it).
        let first_contact = !p.acknack_counts.seen();
        if !p.acknack_counts.accept(count) {
            return false;
        }
        let base = set.base.0.min(last_sn + 1);
        // The reader is behind what it acknowledged before: it lost its state for us (a new
        // proxy after its lease on us expired, or a restart) and knows nothing to ask for.
        let went_back = base < p.acked_below;
        let advanced = base > p.acked_below;
        if advanced {
            p.acked_below = base;
            p.requested = p.requested.split_off(&base);
        }
        for sn in set.iter() {
            if sn.0 <= last_sn && p.requested.len() < MAX_REQUESTED {
                p.requested.insert(sn.0);
            }
        }
        let wants_hb =
            first_contact || (set.num_bits == 0 && (!final_flag || went_back) && base <= last_sn);
        if advanced {
            self.collect_acked();
            // As hurry_heartbeat, but only brings forward a HEARTBEAT already due: with
            // everything acknowledged none is.
            self.hb_interval = fast_heartbeat(cfg);
            self.hb_due = self.hb_due.map(|d| d.min(now + self.hb_interval));
        }
        self.serve_requests(now, out, cfg, reader, wants_hb);
        advanced
    }

    /// Handles a NACK_FRAG: resends the named fragments (at most one burst).
    pub(crate) fn on_nackfrag(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        reader: Guid,
        nf: &NackFrag,
    ) {
        self.flush_batch(out);
        let (sn, frags, count) = (nf.writer_sn.0, &nf.fragment_number_state, nf.count);
        let Some(p) = self.proxies.get_mut(&reader) else {
            return;
        };
        if !p.nackfrag_counts.accept(count) {
            return;
        }
        let list: Vec<u32> = frags.iter().collect();
        let (dests, prefix) = (p.locators.clone(), p.guid.prefix);
        if self.changes.contains_key(&sn) && sn >= p.start_sn {
            self.send_change(
                now,
                out,
                cfg,
                sn,
                reader.entity,
                Some(prefix),
                &dests,
                false,
                Some(&list),
            );
            if !self.repaired.contains(&reader) {
                self.repaired.push(reader);
            }
            // The reader is repairing: if the repairs or their HEARTBEAT are lost, ask again
            // soon rather than after an interval that has backed off meanwhile.
            self.hurry_heartbeat(now, cfg);
        } else {
            self.send_gap(out, reader, sn, sn + 1);
        }
    }

    /// Resends what `reader` asked for: DATA when held, GAP otherwise, then a HEARTBEAT.
    fn serve_requests(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        reader: Guid,
        force_hb: bool,
    ) {
        let Some(p) = self.proxies.get_mut(&reader) else {
            return;
        };
        let requested = std::mem::take(&mut p.requested);
        let (dests, start_sn) = (p.locators.clone(), p.start_sn);
        let prefix = Some(reader.prefix);
        let mut mb = out.start(prefix);
        let empty = mb.len();
        let mut gap: Option<(i64, i64)> = None;
        let mut sent_fragmented = false;
        for sn in requested {
            let held = sn >= start_sn && self.changes.contains_key(&sn);
            if !held {
                gap = match gap {
                    Some((s, e)) if e == sn => Some((s, sn + 1)),
                    Some((s, e)) => {
                        push_gap(&mut mb, reader.entity, self.guid.entity, s, e);
                        Some((sn, sn + 1))
                    }
                    None => Some((sn, sn + 1)),
                };
                continue;
            }
            let len = self.changes.get(&sn).map_or(0, |c| c.change.payload.len());
            if len + DATA_OVERHEAD > cfg.max_message_size {
                self.send_change(
                    now,
                    out,
                    cfg,
                    sn,
                    reader.entity,
                    prefix,
                    &dests,
                    false,
                    None,
                );
                sent_fragmented = true;
                continue;
            }
            if mb.len() + len + DATA_OVERHEAD > cfg.max_message_size {
                out.push(mb, empty, &dests);
                mb = out.start(prefix);
            }
            if let Some(c) = self.changes.get(&sn) {
                let mut qos = Vec::new();
                let has_qos = self.inline_qos(&c.change, &mut qos);
                mb.info_ts(c.change.timestamp);
                let key_flag = c.change.kind != ChangeKind::Alive;
                mb.data(
                    reader.entity,
                    self.guid.entity,
                    SequenceNumber(sn),
                    has_qos.then_some(&qos[..]),
                    Some(&c.change.payload),
                    key_flag,
                );
            }
        }
        if let Some((s, e)) = gap {
            push_gap(&mut mb, reader.entity, self.guid.entity, s, e);
        }
        let sent_something = mb.len() > empty || sent_fragmented;
        if sent_something || force_hb {
            let hb = self.heartbeat(reader.entity, false);
            mb.heartbeat(&hb);
            self.note_hb_sent(now);
        }
        out.push(mb, empty, &dests);
    }

    /// Sends one HEARTBEAT to each reader repaired since the last call (see `repaired`); the
    /// participant calls this once it has handled a whole datagram.
    pub(crate) fn send_repair_heartbeats(&mut self, now: Instant, out: &mut Outbox) {
        for g in std::mem::take(&mut self.repaired) {
            let Some(p) = self.proxies.get(&g) else {
                continue;
            };
            let dests = p.locators.clone();
            let mut mb = out.start(Some(g.prefix));
            let empty = mb.len();
            let hb = self.heartbeat(g.entity, false);
            mb.heartbeat(&hb);
            self.note_hb_sent(now);
            out.push(mb, empty, &dests);
        }
    }

    /// True if repairs were sent that still owe their HEARTBEAT.
    pub(crate) fn owes_repair_heartbeat(&self) -> bool {
        !self.repaired.is_empty()
    }

    fn send_gap(&mut self, out: &mut Outbox, reader: Guid, start: i64, end: i64) {
        let Some(p) = self.proxies.get(&reader) else {
            return;
        };
        let dests = p.locators.clone();
        let mut mb = out.start(Some(reader.prefix));
        let empty = mb.len();
        push_gap(&mut mb, reader.entity, self.guid.entity, start, end);
        out.push(mb, empty, &dests);
    }

    /// Periodic duties: a HEARTBEAT while any reliable reader has not acknowledged everything.
    pub(crate) fn on_timeout(&mut self, now: Instant, out: &mut Outbox, cfg: &ParticipantConfig) {
        if self.pending.as_ref().is_some_and(|b| now >= b.due) {
            self.flush_batch(out);
        }
        let Some(due) = self.hb_due else { return };
        if now < due {
            return;
        }
        self.flush_batch(out);
        let last = self.last_sn;
        let unacked: Vec<Guid> = self
            .proxies
            .values()
            .filter(|p| p.reliable && (p.acked_below <= last || !p.acknack_counts.seen()))
            .map(|p| p.guid)
            .collect();
        if unacked.is_empty() {
            self.hb_due = None;
            return;
        }
        if unacked.len() == self.proxies.len() && self.fanout.len() <= unacked.len() {
            let dests = self.fanout.clone();
            let mut mb = out.start(self.fanout_prefix);
            let empty = mb.len();
            let hb = self.heartbeat(EntityId::UNKNOWN, false);
            mb.heartbeat(&hb);
            out.push(mb, empty, &dests);
        } else {
            for g in unacked {
                let dests = self
                    .proxies
                    .get(&g)
                    .map(|p| p.locators.clone())
                    .unwrap_or_default();
                let mut mb = out.start(Some(g.prefix));
                let empty = mb.len();
                let hb = self.heartbeat(g.entity, false);
                mb.heartbeat(&hb);
                out.push(mb, empty, &dests);
            }
        }
        self.note_hb_sent(now);
        self.hb_interval = self
            .hb_interval
            .max(fast_heartbeat(cfg))
            .min(cfg.heartbeat_period);
        self.hb_due = Some(now + self.hb_interval);
        self.hb_interval = (self.hb_interval * 2).min(cfg.heartbeat_period);
    }

    /// True when every reliable reader acknowledged everything written so far.
    pub(crate) fn all_acked(&self) -> bool {
        self.proxies
            .values()
            .filter(|p| p.reliable)
            .all(|p| p.acked_below > self.last_sn)
    }

    /// Readers known to have matched us (reliable ones acknowledged at least once).
    pub(crate) fn synced_readers(&self) -> usize {
        self.proxies
            .values()
            .filter(|p| !p.reliable || p.acknack_counts.seen())
            .count()
    }

    /// Number of changes held.
    pub(crate) fn history_len(&self) -> usize {
        self.changes.len()
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

fn push_gap(
    mb: &mut MessageBuilder,
    reader_id: EntityId,
    writer_id: EntityId,
    start: i64,
    end: i64,
) {
    mb.gap(&Gap {
        reader_id,
        writer_id,
        gap_start: SequenceNumber(start),
        gap_list: SequenceNumberSet::new(SequenceNumber(end), 0),
    });
}
