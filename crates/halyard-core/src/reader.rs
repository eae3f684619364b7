//! Reader side of RTPS reliability (RTPS 2.5 §8.4.10 StatefulReader, §8.4.15).
//!
//! Design. Each matched writer has a proxy holding `next_sn`, the next sequence number to
//! deliver: everything below it was delivered or declared irrelevant (GAP) or lost. Reliable
//! proxies buffer out-of-order samples and GAP ranges in `pending` (bounded by
//! `reader_max_pending_samples`) and deliver strictly in order, exactly once; best-effort
//! proxies deliver anything newer than the last delivered sample and count the skipped ones as
//! lost. Fragmented samples are reassembled per sequence number (bounded count and size).
//!
//! Repair: a HEARTBEAT [first, last] moves `next_sn` up to `first` (what the writer no longer
//! has is lost) and, when something is missing or the writer asked for an answer, produces an
//! ACKNACK whose bitmap names the missing changes and, for partly received samples, NACK_FRAGs
//! naming the missing fragments. What was asked for is not asked for again within one repair
//! round trip (HEARTBEATs that crossed the NACK would duplicate the repairs), unless the NACK is
//! known to be answered; the round trip is timed on one probe per NACK (see [`Probe`]).

use crate::config::{ParticipantConfig, INITIAL_NACK_HOLD, MAX_NACK_HOLD, MAX_QUEUED_EVENTS};
use crate::event::{ChangeKind, ReceivedSample};
use crate::reassembly::{Reassembly, ReassemblyBudget};
use crate::time::Instant;
use halyard_wire::qos::{EndpointQos, ReliabilityKind};
use halyard_wire::{
    AckNack, DataFrag, EntityId, FragmentNumberSet, Guid, Locator, NackFrag, ReceptionReport,
    SequenceNumber, SequenceNumberSet, Time,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// What a local reader subscribes to and how.
#[derive(Clone, Debug)]
pub struct ReaderSpec {
    /// Topic name.
    pub topic_name: String,
    /// Registered type name.
    pub type_name: String,
    /// QoS (already validated by the API layer).
    pub qos: EndpointQos,
    /// True if the type has key fields.
    pub has_key: bool,
}

/// Where a writer proxy delivers in-order samples: the participant's delivery list, limited by
/// the reader's credit (the free space of the application's cache for a reliable KEEP_ALL
/// reader; `None` = unlimited). Without credit, reliable samples stay pending and unacknowledged,
/// so the writer keeps them and, once its own history is full, blocks: back-pressure instead of
/// loss (DDS 1.4 §2.2.3.14: RELIABLE with KEEP_ALL).
///
/// The participant's queue of samples not yet polled is bounded too ([`MAX_QUEUED_EVENTS`]):
/// when it is full, reliable samples are held back the same way and best-effort ones are lost.
/// Discovery's builtin readers are not held to that bound (their samples never reach it).
pub(crate) struct Sink<'a> {
    out: &'a mut Vec<ReceivedSample>,
    credit: &'a mut Option<usize>,
    /// Samples the participant's queue can still take.
    room: usize,
}

impl<'a> Sink<'a> {
    /// A sink for local reader `reader` appending to `out`, with `queued` samples already
    /// waiting to be polled.
    pub(crate) fn new(
        reader: EntityId,
        out: &'a mut Vec<ReceivedSample>,
        credit: &'a mut Option<usize>,
        queued: usize,
    ) -> Self {
        let room = if reader.is_builtin() {
            usize::MAX
        } else {
            MAX_QUEUED_EVENTS.saturating_sub(queued + out.len())
        };
        Sink { out, credit, room }
    }

    fn has_room(&self) -> bool {
        self.room > 0 && self.credit.is_none_or(|c| c > 0)
    }

    /// Appends the end of a GROUP set's part: no sample, so it takes no credit or room.
    fn push_mark(&mut self, s: ReceivedSample) {
        self.out.push(s);
    }

    fn push(&mut self, s: ReceivedSample) {
        debug_assert!(
            self.has_room(),
            "a sink is only pushed to while it has room"
        );
        if let Some(c) = self.credit.as_mut() {
            *c = c.saturating_sub(1);
        }
        self.room = self.room.saturating_sub(1);
        self.out.push(s);
    }
}

/// A sample as it arrived, before ordering.
#[derive(Debug)]
pub(crate) struct Arrival {
    pub(crate) kind: ChangeKind,
    pub(crate) key_hash: Option<[u8; 16]>,
    pub(crate) payload: Vec<u8>,
    pub(crate) timestamp: Option<Time>,
    /// PID_COHERENT_SET (see [`crate::coherent`]): `Some(Some(first))` in a set,
    /// `Some(None)` explicitly outside one, `None` absent.
    pub(crate) coherent: Option<Option<SequenceNumber>>,
    /// A DATA with neither data nor key nor status (a coherent set's end marker): it takes
    /// its sequence number but is no sample.
    pub(crate) marker: bool,
    /// PID_GROUP_COHERENT_SET and PID_GROUP_SEQ_NUM: the GROUP coherent set it belongs to and
    /// its group sequence number (see [`crate::group_coherent`]).
    pub(crate) group: Option<(SequenceNumber, SequenceNumber)>,
    /// Set by the coherent gate on a GROUP set's member or end: every change of the writer
    /// since its previous GROUP set's end arrived (see [`crate::group_coherent`]).
    pub(crate) contiguous: bool,
    /// PID_GROUP_SEQ_NUM (GROUP ordered access).
    pub(crate) gsn: Option<SequenceNumber>,
    /// PID_ORIGINAL_WRITER_INFO: a relayed change's original writer and sequence number.
    pub(crate) original: Option<(Guid, SequenceNumber)>,
    /// On a GROUP set's end marker from a Halyard writer: the set's member writers (see
    /// [`crate::group_coherent`]).
    pub(crate) members: Option<std::sync::Arc<[EntityId]>>,
}

/// What a change's inline QoS says (the parts delivery needs).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InlineQos {
    pub(crate) key_hash: Option<[u8; 16]>,
    pub(crate) status: u32,
    pub(crate) coherent: Option<Option<SequenceNumber>>,
    pub(crate) group: Option<(SequenceNumber, SequenceNumber)>,
    pub(crate) gsn: Option<SequenceNumber>,
    pub(crate) original: Option<(Guid, SequenceNumber)>,
}

enum Pending {
    Sample(Arrival),
    /// Irrelevant up to (excluding) this sequence number.
    Gap(SequenceNumber),
}

pub(crate) struct WriterProxy {
    pub(crate) guid: Guid,
    pub(crate) locators: Vec<Locator>,
    pub(crate) reliable: bool,
    /// Skip to the heartbeat's end on first contact (non-Halyard writers, volatile reader).
    sync_on_first_heartbeat: bool,
    next_sn: SequenceNumber,
    pending: BTreeMap<SequenceNumber, Pending>,
    frags: BTreeMap<SequenceNumber, Reassembly>,
    highest_announced: SequenceNumber,
    hb_counts: CountFilter,
    acknack_count: i32,
    nackfrag_count: i32,
    delivered_any: bool,
    pub(crate) lost: u64,
    /// One change or fragment asked for for the first time, and when: its arrival measures
    /// the repair round trip (see [`Probe`]).
    probe: Option<Probe>,
    /// NACKs sent up to this time are answered: the repair of one's probe arrived, so the
    /// writer had seen it (and every earlier NACK) and queued all their repairs before
    /// anything it sends later; what a later HEARTBEAT finds missing was lost on the way.
    answered_upto: Option<Instant>,
    /// Smoothed repair round trip (None until measured).
    repair_rtt: Option<Duration>,
    /// Whole changes asked for in an ACKNACK bitmap, and when (within the bitmap's window).
    requested_at: BTreeMap<SequenceNumber, Instant>,
    /// The writer is Halyard's: a best-effort proxy reports its reception to it.
    pub(crate) reports_reception: bool,
    /// Best-effort reception since the last report.
    reception: Reception,
    /// The writer's liveliness lease, if finite (see [`crate::liveliness`]).
    pub(crate) lease: Option<crate::liveliness::Lease>,
    /// Coherent sets held until complete, when the reader asked for coherent access and the
    /// writer offers it (see [`crate::coherent`]).
    pub(crate) coherent: Option<crate::coherent::CoherentGate>,
    /// The writer's publisher (its participant's prefix and PID_GROUP_ENTITYID) when the
    /// reader's subscriber and the writer's publisher have GROUP coherent access: its sets are
    /// assembled across the publisher's writers (see [`crate::group_coherent`]).
    pub(crate) group_publisher: Option<Guid>,
    /// The writer's publisher when both sides have GROUP ordered access: its samples carry
    /// their group sequence numbers to the application's cache.
    pub(crate) ordered_publisher: Option<Guid>,
    /// A durability service's reader acknowledges only what it stored (see
    /// [`crate::relay`]): the sequence numbers delivered and not yet released, in order.
    /// `None`: acknowledgments are not held.
    pub(crate) unreleased: Option<std::collections::VecDeque<SequenceNumber>>,
}

/// The first change (`frag` 0) or fragment a NACK asked for for the first time. Its repair
/// answers that NACK and no other, so the interval is a true sample of the repair round trip
/// (queues on the way included): as long as HEARTBEATs the writer sent before it saw the NACK
/// can keep arriving. Timing "the first repair after a NACK" instead mixed in the tail of the
/// previous NACK's repairs (samples far shorter than the path's latency) and, after a
/// lost NACK, the wait for the next HEARTBEAT (a 1 MiB stream at 30 % loss stalled on the
/// hold that estimate grew into). An item asked for again drops the probe (Karn's rule).
#[derive(Clone, Copy, Debug)]
struct Probe {
    sn: SequenceNumber,
    frag: u32,
    at: Instant,
}

/// What a best-effort proxy received since its last reception report.
#[derive(Clone, Copy, Debug, Default)]
struct Reception {
    /// Start of the interval (`None`: the first report opportunity starts it).
    since: Option<Instant>,
    /// Fragment payload bytes received.
    bytes: u64,
    /// Fragmented samples completed.
    complete: u32,
    /// Fragmented samples abandoned incomplete (superseded or evicted).
    abandoned: u32,
    /// Reports sent so far.
    count: i32,
}

impl WriterProxy {
    /// `first_count` seeds the ACKNACK/NACK_FRAG counters: it must exceed any count an earlier
    /// proxy of this reader sent to the same writer (the writer may still remember it).
    pub(crate) fn new(
        guid: Guid,
        locators: Vec<Locator>,
        reliable: bool,
        sync_on_first_heartbeat: bool,
        first_count: i32,
    ) -> Self {
        WriterProxy {
            guid,
            locators,
            reliable,
            sync_on_first_heartbeat,
            next_sn: SequenceNumber::FIRST,
            pending: BTreeMap::new(),
            frags: BTreeMap::new(),
            highest_announced: SequenceNumber(0),
            hb_counts: CountFilter::default(),
            acknack_count: first_count,
            nackfrag_count: first_count,
            delivered_any: false,
            lost: 0,
            probe: None,
            answered_upto: None,
            repair_rtt: None,
            requested_at: BTreeMap::new(),
            unreleased: None,
            reports_reception: false,
            reception: Reception::default(),
            lease: None,
            coherent: None,
            group_publisher: None,
            ordered_publisher: None,
        }
    }

    fn deliver(&mut self, reader: EntityId, sn: SequenceNumber, a: Arrival, out: &mut Sink<'_>) {
        self.delivered_any = true;
        if let Some(gate) = self.coherent.as_mut() {
            let mut ready = Vec::new();
            gate.admit(sn, a, &mut ready);
            let broken = std::mem::take(&mut gate.broken_groups);
            // Incomplete parts first: a set must not complete on a later end of its part.
            if self.group_publisher.is_some() {
                for (set, gsn) in broken {
                    out.push_mark(self.group_mark(reader, sn, set, gsn, true, false));
                }
            }
            for (sn, a) in ready {
                if a.marker {
                    // The end of a part of a GROUP set: for a reader gated by its group only.
                    if let (Some((set, gsn)), true) = (a.group, self.group_publisher.is_some()) {
                        let mut end = self.group_mark(reader, sn, set, gsn, false, a.contiguous);
                        if let Some(m) = end.group.as_mut() {
                            m.members = a.members;
                        }
                        out.push_mark(end);
                    }
                    continue;
                }
                self.push(reader, sn, a, out);
            }
            return;
        }
        if !a.marker {
            self.push(reader, sn, a, out);
        }
    }

    /// The end (or, `broken`, the incomplete end) of this writer's part of a GROUP set.
    fn group_mark(
        &self,
        reader: EntityId,
        sn: SequenceNumber,
        set: SequenceNumber,
        gsn: SequenceNumber,
        broken: bool,
        contiguous: bool,
    ) -> ReceivedSample {
        ReceivedSample {
            reader,
            writer: self.guid,
            sn,
            kind: ChangeKind::Alive,
            key_hash: None,
            payload: std::sync::Arc::new(Vec::new()),
            source_timestamp: None,
            lifespan_expiry: None,
            group: Some(crate::group_coherent::GroupMark {
                set,
                gsn,
                end: true,
                broken,
                contiguous,
                members: None,
            }),
            group_seq: None,
            original: None,
        }
    }

    fn push(&mut self, reader: EntityId, sn: SequenceNumber, a: Arrival, out: &mut Sink<'_>) {
        if let Some(q) = self.unreleased.as_mut() {
            q.push_back(sn);
        }
        let group = a
            .group
            .filter(|_| self.group_publisher.is_some())
            .map(|(set, gsn)| crate::group_coherent::GroupMark {
                set,
                gsn,
                end: false,
                broken: false,
                contiguous: a.contiguous,
                members: None,
            });
        out.push(ReceivedSample {
            reader,
            writer: self.guid,
            sn,
            kind: a.kind,
            key_hash: a.key_hash,
            payload: std::sync::Arc::new(a.payload),
            source_timestamp: a.timestamp,
            lifespan_expiry: None,
            group,
            group_seq: self.ordered_publisher.zip(a.gsn),
            original: a.original,
        });
    }

    /// A complete sample arrived. Returns the number of samples newly known lost.
    pub(crate) fn on_sample(
        &mut self,
        cfg: &ParticipantConfig,
        reader: EntityId,
        sn: SequenceNumber,
        a: Arrival,
        out: &mut Sink<'_>,
    ) -> u64 {
        if sn < self.next_sn || self.pending.contains_key(&sn) {
            return 0;
        }
        self.frags.remove(&sn);
        if !self.reliable {
            let skipped = if self.delivered_any {
                (sn - self.next_sn).max(0) as u64
            } else {
                0
            };
            self.next_sn = sn + 1;
            // Best effort: with no room to deliver it, the sample is lost like any other.
            let lost = if out.has_room() {
                self.deliver(reader, sn, a, out);
                skipped
            } else {
                skipped + 1
            };
            let in_progress = self.frags.len();
            self.frags = self.frags.split_off(&self.next_sn);
            self.reception.abandoned += (in_progress - self.frags.len()) as u32;
            self.lost += lost;
            return lost;
        }
        if sn == self.next_sn && out.has_room() {
            self.next_sn += 1;
            self.deliver(reader, sn, a, out);
            self.drain(reader, out);
        } else if self.pending.len() < cfg.reader_max_pending_samples {
            self.pending.insert(sn, Pending::Sample(a));
        }
        0
    }

    fn drain(&mut self, reader: EntityId, out: &mut Sink<'_>) {
        while let Some(entry) = self.pending.first_entry() {
            let sn = *entry.key();
            if sn > self.next_sn {
                break;
            }
            if sn == self.next_sn && matches!(entry.get(), Pending::Sample(_)) && !out.has_room() {
                break;
            }
            match entry.remove() {
                Pending::Sample(a) if sn == self.next_sn => {
                    self.next_sn += 1;
                    self.deliver(reader, sn, a, out);
                }
                Pending::Sample(_) => {}
                Pending::Gap(end) => self.next_sn = self.next_sn.max(end),
            }
        }
        if self
            .frags
            .first_key_value()
            .is_some_and(|(&k, _)| k < self.next_sn)
        {
            self.frags = self.frags.split_off(&self.next_sn);
        }
        debug_assert!(
            self.pending
                .first_key_value()
                .is_none_or(|(&k, _)| k >= self.next_sn),
            "a drained proxy holds nothing below the next sequence number to deliver"
        );
    }

    /// Delivers held samples after the reader's credit grew; returns whether any were.
    pub(crate) fn release(&mut self, reader: EntityId, out: &mut Sink<'_>) -> bool {
        let before = self.next_sn;
        self.drain(reader, out);
        self.next_sn > before
    }

    /// GAP: `start..end` and the members of `set` are irrelevant.
    pub(crate) fn on_gap(
        &mut self,
        cfg: &ParticipantConfig,
        reader: EntityId,
        start: SequenceNumber,
        set: &SequenceNumberSet,
        out: &mut Sink<'_>,
    ) {
        if !self.reliable {
            return;
        }
        let end = set.base;
        if start <= self.next_sn {
            self.next_sn = self.next_sn.max(end);
        } else if end > start && self.pending.len() < 2 * cfg.reader_max_pending_samples {
            self.pending.entry(start).or_insert(Pending::Gap(end));
        }
        for sn in set.iter() {
            if sn >= self.next_sn {
                self.pending.entry(sn).or_insert(Pending::Gap(sn + 1));
            }
        }
        self.drain(reader, out);
    }

    /// HEARTBEAT: returns (samples declared lost, whether an ACKNACK is due).
    pub(crate) fn on_heartbeat(
        &mut self,
        reader: EntityId,
        first: SequenceNumber,
        last: SequenceNumber,
        count: i32,
        final_flag: bool,
        out: &mut Sink<'_>,
    ) -> (u64, bool) {
        if !self.reliable {
            return (0, false);
        }
        let first_contact = !self.hb_counts.seen() && !self.delivered_any;
        if !self.hb_counts.accept(count) {
            return (0, false);
        }
        self.highest_announced = self.highest_announced.max(last);
        let mut lost = 0;
        if first_contact && self.sync_on_first_heartbeat {
            let start = self
                .pending
                .keys()
                .next()
                .copied()
                .unwrap_or(last + 1)
                .min(last + 1);
            self.next_sn = self.next_sn.max(start);
            self.drain(reader, out);
        } else if first > self.next_sn && out.has_room() {
            // Deliver what we hold below `first`; the rest is lost. (Without credit this waits
            // for a later heartbeat: the held samples must reach the application first.)
            while let Some(entry) = self.pending.first_entry() {
                let sn = *entry.key();
                if sn >= first {
                    break;
                }
                if matches!(entry.get(), Pending::Sample(_)) && !out.has_room() {
                    break;
                }
                if let Pending::Sample(a) = entry.remove() {
                    if sn >= self.next_sn {
                        lost += (sn - self.next_sn).max(0) as u64;
                        self.next_sn = sn + 1;
                        self.deliver(reader, sn, a, out);
                    }
                }
            }
            let held_below_first = self
                .pending
                .first_key_value()
                .is_some_and(|(&k, _)| k < first);
            if first > self.next_sn && !held_below_first {
                if self.delivered_any {
                    lost += (first - self.next_sn).max(0) as u64;
                }
                self.next_sn = first;
            }
            self.drain(reader, out);
        } else {
            // Samples held back for lack of room (credit or the participant's queue) go
            // out as soon as there is room: every HEARTBEAT retries.
            self.drain(reader, out);
        }
        self.lost += lost;
        let missing = self.highest_announced >= self.next_sn;
        (lost, missing || !final_flag)
    }

    /// A fragment arrived; returns the completed sample if this finished it.
    pub(crate) fn on_fragment(
        &mut self,
        cfg: &ParticipantConfig,
        budget: &ReassemblyBudget,
        df: &DataFrag<'_>,
        inline: InlineQos,
        ts: Option<Time>,
    ) -> Option<(SequenceNumber, Arrival)> {
        let sn = df.writer_sn;
        if sn < self.next_sn || self.pending.contains_key(&sn) {
            return None;
        }
        if !self.frags.contains_key(&sn) {
            if df.sample_size as usize > cfg.max_sample_size {
                return None;
            }
            if self.frags.len() >= cfg.max_reassemblies_per_writer {
                if self.reliable {
                    // Keep the oldest samples in progress: they unblock in-order delivery
                    // first.
                    let &newest = self.frags.keys().next_back()?;
                    if newest < sn {
                        return None;
                    }
                    self.frags.remove(&newest);
                } else {
                    // Best effort: a newer sample supersedes the oldest unfinished one, which
                    // is never repaired (keeping it instead refused every newer sample once
                    // the slots were full of samples that had lost a fragment).
                    let &oldest = self.frags.keys().next()?;
                    if sn < oldest {
                        return None;
                    }
                    self.frags.remove(&oldest);
                    self.reception.abandoned += 1;
                }
            }
            let r = Reassembly::new(df.sample_size, df.fragment_size, budget)?;
            self.frags.insert(sn, r);
        }
        let r = self.frags.get_mut(&sn)?;
        if !self.reliable {
            self.reception.bytes += df.fragments().len() as u64;
        }
        if df.fragment_starting_num == 1 {
            r.key_hash = inline.key_hash;
            r.status_info = inline.status;
            r.coherent = inline.coherent;
            r.group = inline.group;
            r.gsn = inline.gsn;
            r.original = inline.original;
            r.key_flag = df.key_flag;
        }
        if ts.is_some() {
            r.timestamp = ts;
        }
        let complete = r.insert(
            df.sample_size,
            df.fragment_size,
            df.fragment_starting_num,
            df.fragments_in_submessage,
            df.fragments(),
        );
        if complete != Ok(true) {
            return None;
        }
        let r = self.frags.remove(&sn)?;
        self.reception.complete += u32::from(!self.reliable);
        let kind = if r.key_flag {
            ChangeKind::from_status_info(r.status_info.max(1))
        } else {
            ChangeKind::from_status_info(r.status_info)
        };
        let arrival = Arrival {
            kind,
            key_hash: r.key_hash,
            timestamp: r.timestamp,
            coherent: r.coherent,
            marker: false,
            group: r.group,
            contiguous: false,
            gsn: r.gsn,
            original: r.original,
            members: None,
            payload: r.into_data(),
        };
        Some((sn, arrival))
    }

    /// The reception report due now to a Halyard best-effort writer of fragmented samples,
    /// if one is: `interval` after the last, and only while fragments arrive.
    pub(crate) fn reception_report(
        &mut self,
        reader: EntityId,
        now: Instant,
        interval: Duration,
    ) -> Option<ReceptionReport> {
        if self.reliable || !self.reports_reception {
            return None;
        }
        let Some(since) = self.reception.since else {
            self.reception.since = Some(now);
            return None;
        };
        let r = &mut self.reception;
        if now < since + interval || r.bytes == 0 {
            return None;
        }
        r.count = r.count.wrapping_add(1);
        let elapsed = now.saturating_duration_since(since).as_micros();
        let report = ReceptionReport {
            reader_id: reader,
            writer_id: self.guid.entity,
            count: r.count,
            interval_us: u32::try_from(elapsed).unwrap_or(u32::MAX),
            bytes: u32::try_from(r.bytes).unwrap_or(u32::MAX),
            complete: r.complete,
            lost: r.abandoned,
        };
        *r = Reception {
            since: Some(now),
            count: r.count,
            ..Reception::default()
        };
        Some(report)
    }

    /// A repair addressed to this reader arrived: a DATA (`frags` = `None`) or a GAP (from
    /// `sn`) or a DATA_FRAG (`frags` = its fragment numbers) of change `sn`. If it carries the
    /// probe, it is a sample of the repair round trip.
    pub(crate) fn note_repair(
        &mut self,
        now: Instant,
        sn: SequenceNumber,
        frags: Option<std::ops::RangeInclusive<u32>>,
    ) {
        let Some(p) = self.probe else { return };
        let hit = p.sn == sn && (p.frag == 0 || frags.is_none_or(|f| f.contains(&p.frag)));
        if !hit {
            return;
        }
        self.probe = None;
        self.answered_upto = Some(p.at);
        let sample = now.saturating_duration_since(p.at);
        // Quick to fall, slow to rise: a queue the first burst built (8 MiB ahead of the
        // first repair on a 1 Gbit/s link: tens of milliseconds) drains in one round trip, and
        // an estimate still holding it back would idle the stream for several round trips.
        self.repair_rtt = Some(match self.repair_rtt {
            Some(s) if sample < s => (s + sample) / 2,
            Some(s) => (s * 7 + sample) / 8,
            None => sample,
        });
    }

    /// A GAP addressed to this reader (`start` up to `list`'s base, and `list`): if it covers
    /// the probe's change, that answers it.
    pub(crate) fn note_gap_repair(
        &mut self,
        now: Instant,
        start: SequenceNumber,
        list: &SequenceNumberSet,
    ) {
        let covers = |sn| (sn >= start && sn < list.base) || list.contains(sn);
        if let Some(p) = self.probe.filter(|p| covers(p.sn)) {
            self.note_repair(now, p.sn, None);
        }
    }

    /// How long a NACKed change or fragment is not asked for again: one repair round trip.
    /// HEARTBEATs arriving sooner were sent before the writer saw the NACK (new data, the
    /// periodic timer), and answering each with the same NACK made the writer resend the same
    /// repairs again and again (on a lossy link, a large share of the bytes were duplicates). The
    /// writer's HEARTBEAT after its repairs comes later and is answered in full.
    ///
    /// Until a round trip is measured, [`INITIAL_NACK_HOLD`]: with none, every HEARTBEAT asked
    /// again, and each time the probe measured nothing, so none was ever measured. At most
    /// [`MAX_NACK_HOLD`], so that lost repairs never wait long, whatever the queues did to the
    /// estimate.
    fn nack_hold(&self) -> Duration {
        self.repair_rtt
            .unwrap_or(INITIAL_NACK_HOLD)
            .min(MAX_NACK_HOLD)
    }

    /// A NACK asks for change `sn` (`frag` 0) or its fragment `frag` for the first time: the
    /// first such item of a response becomes the probe, unless one is still outstanding. One
    /// is taken as lost (its NACK or its repair) after twice the round trip measured so far.
    fn set_probe(&mut self, now: Instant, sn: SequenceNumber, frag: u32) {
        let patience = self
            .repair_rtt
            .map_or(MAX_NACK_HOLD, |r| (r * 2).max(Duration::from_millis(1)))
            .min(MAX_NACK_HOLD);
        let outstanding = self
            .probe
            .is_some_and(|p| p.at == now || now < p.at + patience);
        if !outstanding {
            self.probe = Some(Probe { sn, frag, at: now });
        }
    }

    /// Change `sn` is asked for again: a repair of the probe could now answer either NACK, so
    /// it measures nothing (Karn's rule) and is dropped.
    fn drop_probe_on(&mut self, sn: SequenceNumber) {
        if self.probe.is_some_and(|p| p.sn == sn) {
            self.probe = None;
        }
    }

    /// The ACKNACK to send now (RTPS 2.5 §8.4.12.1.4): base = next_sn, bits = missing changes
    /// that are not partially received and were not asked for within [`Self::nack_hold`].
    ///
    /// With acknowledgments held ([`crate::relay`]) the base is the first delivered change
    /// not yet released, if that is lower: what lies between it and `next_sn` was received,
    /// so the bitmap does not name it, and the writer keeps it unacknowledged.
    pub(crate) fn acknack(&mut self, reader: EntityId, now: Instant) -> AckNack {
        let unreleased_from = self
            .unreleased
            .as_ref()
            .and_then(|q| q.front().copied())
            .filter(|&sn| sn < self.next_sn);
        let base = unreleased_from.unwrap_or(self.next_sn);
        let top = self.highest_announced.min(base + 255);
        let bits = if top >= base {
            (top - base + 1) as u32
        } else {
            0
        };
        debug_assert!(bits <= 256, "an ACKNACK bitmap holds at most 256 bits");
        let hold = self.nack_hold();
        if self
            .requested_at
            .first_key_value()
            .is_some_and(|(&k, _)| k < base)
        {
            self.requested_at = self.requested_at.split_off(&base);
        }
        let mut set = SequenceNumberSet::new(base, bits);
        let mut missing = false;
        for sn in base.until(base + i64::from(bits)) {
            if self.is_missing(sn) {
                missing = true;
                if self.ask_for(sn, now, hold) {
                    set.insert(sn);
                }
            }
        }
        let nothing_missing = !missing && !self.frags.keys().any(|&k| k <= top);
        self.acknack_count = self.acknack_count.wrapping_add(1);
        AckNack {
            reader_id: reader,
            writer_id: self.guid.entity,
            reader_sn_state: set,
            count: self.acknack_count,
            final_flag: nothing_missing,
        }
    }

    /// Whether change `sn` is missing: not delivered, not waiting in the reorder buffer, not
    /// partially received (its fragments are asked for by NACK_FRAG).
    fn is_missing(&self, sn: SequenceNumber) -> bool {
        sn >= self.next_sn && !self.pending.contains_key(&sn) && !self.frags.contains_key(&sn)
    }

    /// Whether missing change `sn` is asked for now: not if it was within `hold` (the
    /// writer may be answering), else it is noted as asked for now (and probes the round
    /// trip when asked for the first time, see [`Self::set_probe`]).
    fn ask_for(&mut self, sn: SequenceNumber, now: Instant, hold: Duration) -> bool {
        if self
            .requested_at
            .get(&sn)
            .is_some_and(|&t| held(self.answered_upto, t, now, hold))
        {
            return false;
        }
        if self.requested_at.insert(sn, now).is_none() {
            self.set_probe(now, sn, 0);
        } else {
            self.drop_probe_on(sn);
        }
        true
    }

    /// Halyard's NACK to send with the ACKNACK (`halyard_wire::message::id::HALYARD_NACK`),
    /// if any: with acknowledgments held, the ACKNACK's base is the first change not yet
    /// released, and its 256 bits may end before `next_sn`, the first change missing. The
    /// changes missing past them would then be asked for only once the service stored
    /// everything before them: a late reader of a fast stream of small samples, whose reorder
    /// buffer overflowed while it waited for the history, was repaired 256 changes per
    /// commit, and the stream stayed at that pace. This names up to 256 missing changes from
    /// `next_sn` (those not asked for within [`Self::nack_hold`]), acknowledging nothing. For
    /// Halyard writers only (other vendors skip vendor-specific submessages), and only
    /// between participants without security (it travels unprotected).
    pub(crate) fn nack_beyond(&mut self, reader: EntityId, now: Instant) -> Option<AckNack> {
        let base = self.unreleased.as_ref()?.front().copied()?;
        let first = self.next_sn;
        if first <= base + 255 || first > self.highest_announced {
            return None;
        }
        let top = self.highest_announced.min(first + 255);
        let bits = (top - first + 1) as u32;
        let hold = self.nack_hold();
        let mut set = SequenceNumberSet::new(first, bits);
        let mut any = false;
        for sn in first.until(first + i64::from(bits)) {
            if self.is_missing(sn) && self.ask_for(sn, now, hold) {
                set.insert(sn);
                any = true;
            }
        }
        any.then_some(AckNack {
            reader_id: reader,
            writer_id: self.guid.entity,
            reader_sn_state: set,
            count: self.acknack_count,
            final_flag: false,
        })
    }

    /// NACK_FRAGs for partially received samples the writer announced.
    ///
    /// The first window of each sample (256 fragments from its first hole) may reach past
    /// what the writer sent so far: that is how a reader pulls the rest of a large sample. The
    /// further windows only cover holes below the highest fragment received, which the writer
    /// did send and the network lost, so one round trip repairs a whole lossy burst without
    /// asking for more than was sent.
    ///
    /// Fragments NACKed within [`Self::nack_hold`] are not asked for again: only holes above
    /// what that NACK covered are.
    pub(crate) fn nack_frags(&mut self, reader: EntityId, now: Instant) -> Vec<NackFrag> {
        const EXTRA_WINDOWS: usize = 15;
        let mut v = Vec::new();
        let highest = self.highest_announced;
        let hold = self.nack_hold();
        let mut wanted: Vec<(SequenceNumber, FragmentNumberSet)> = Vec::new();
        let mut probe = None;
        let mut reasked = Vec::new();
        let answered = self.answered_upto;
        for (&sn, r) in self.frags.range_mut(..=highest).take(4) {
            // Within the hold, only fragments above what the last NACK covered: all asked for
            // for the first time, as on a sample's first NACK.
            let (from, first_time) = match r.last_nack {
                Some((t, covered)) if held(answered, t, now, hold) => {
                    (covered.saturating_add(1), true)
                }
                Some(_) => (1, false),
                None => (1, true),
            };
            let Some(first) = r.missing_from(from, r.total()) else {
                continue;
            };
            if !first_time {
                reasked.push(sn);
            }
            if first_time && probe.is_none() {
                probe = first.iter().next().map(|f| (sn, f));
            }
            let mut next = first.base.saturating_add(first.num_bits);
            wanted.push((sn, first));
            let top = r.highest_received();
            for _ in 0..EXTRA_WINDOWS {
                if next > top {
                    break;
                }
                let Some(set) = r.missing_from(next, top) else {
                    break;
                };
                next = set.base.saturating_add(set.num_bits);
                wanted.push((sn, set));
            }
            r.last_nack = Some((now, next.saturating_sub(1)));
        }
        for sn in reasked {
            self.drop_probe_on(sn);
        }
        if let Some((sn, f)) = probe {
            self.set_probe(now, sn, f);
        }
        for (sn, set) in wanted {
            self.nackfrag_count = self.nackfrag_count.wrapping_add(1);
            v.push(NackFrag {
                reader_id: reader,
                writer_id: self.guid.entity,
                writer_sn: sn,
                fragment_number_state: set,
                count: self.nackfrag_count,
            });
        }
        v
    }
}

/// True if what a NACK sent at `asked` named is not to be asked for again yet: within the
/// hold, unless that NACK is known to be answered in full (see `WriterProxy::answered_upto`):
/// then what is still missing was lost on the way and is asked for at once.
fn held(answered_upto: Option<Instant>, asked: Instant, now: Instant, hold: Duration) -> bool {
    now < asked + hold && answered_upto.is_none_or(|a| asked > a)
}

pub(crate) struct Reader {
    pub(crate) guid: Guid,
    pub(crate) spec: ReaderSpec,
    pub(crate) proxies: BTreeMap<Guid, WriterProxy>,
    /// Samples the application can still take in (see [`Sink`]); `None` = unlimited.
    pub(crate) credit: Option<usize>,
    /// Ownership, source order, time filter and deadline per instance.
    pub(crate) admission: crate::admission::Admission,
    /// The content filter it announces (see [`crate::discovery`]'s `content_filter`).
    pub(crate) content_filter: Option<halyard_wire::discovery::ContentFilterProperty>,
    /// The sequence number of its latest SEDP announcement.
    pub(crate) announced_sn: Option<SequenceNumber>,
    /// Its subscriber (announced as PID_GROUP_ENTITYID), if any.
    pub(crate) group: Option<EntityId>,
    /// It acknowledges only what is released (a durability service's, see [`crate::relay`]).
    pub(crate) holds_acks: bool,
    /// A reader holding acknowledgments catches up from relays (announced as
    /// [`crate::relay::SERVICE_READER_NAME`]: they send it every change); false for a
    /// service scoped to its own participant's writers (see
    /// `Participant::set_reader_catches_up`).
    pub(crate) catches_up: bool,
    /// The participant whose writers a scoped service reader keeps (see
    /// `Participant::set_reader_scope`).
    pub(crate) scope: Option<halyard_wire::GuidPrefix>,
    /// What it delivered per original writer, so that a sample that also comes from a
    /// durability service is delivered once (readers that are not VOLATILE).
    pub(crate) seen: Option<crate::relay::SeenSamples>,
}

impl Reader {
    pub(crate) fn new(guid: Guid, spec: ReaderSpec, hash_seed: u64) -> Self {
        let admission = crate::admission::Admission::new(&spec.qos, spec.has_key, hash_seed);
        let durable = spec.qos.durability >= halyard_wire::qos::DurabilityKind::TransientLocal;
        Reader {
            holds_acks: false,
            catches_up: true,
            scope: None,
            seen: (durable && !guid.entity.is_builtin()).then(Default::default),
            guid,
            spec,
            proxies: BTreeMap::new(),
            credit: None,
            admission,
            content_filter: None,
            group: None,
            announced_sn: None,
        }
    }

    pub(crate) fn is_reliable(&self) -> bool {
        self.spec.qos.reliability.kind == ReliabilityKind::Reliable
    }

    /// The reader as matching sees it.
    pub(crate) fn side(&self) -> crate::matching::Side<'_> {
        crate::matching::Side {
            topic: &self.spec.topic_name,
            type_name: &self.spec.type_name,
            qos: &self.spec.qos,
        }
    }
}

/// Counts (HEARTBEAT, ACKNACK, NACK_FRAG) only grow; a count at or below the last one is a
/// duplicate or stale, unless it is implausibly far below (a peer restart or a corrupted count
/// seen earlier), in which case it is accepted so one bad value cannot wedge the channel.
pub(crate) fn is_stale_count(count: i32, last: i32) -> bool {
    let behind = last as i64 - count as i64;
    (0..PLAUSIBLE_REORDER).contains(&behind)
}

/// How far below the last count a count may be and still be taken as a reordered duplicate.
const PLAUSIBLE_REORDER: i64 = 1 << 16;

/// Stale counts, each newer than the one before, after which the recorded count is taken as
/// bogus and the peer's current count adopted.
const STALE_RUN_RESYNC: u8 = 3;

/// The duplicate filter for one peer's HEARTBEAT, ACKNACK or NACK_FRAG counts.
///
/// A count that is not newer than the last accepted one is stale ([`is_stale_count`]). But the
/// last accepted count may itself be damaged: a bit flip that pushed it up by less than
/// [`PLAUSIBLE_REORDER`] (0x3007 -> 0x13007) makes every genuine count after it "stale" for up
/// to 65 535 submessages, and the channel is wedged. A peer's genuine counts keep growing while
/// reordered duplicates do not, so a run of stale counts that themselves keep growing proves
/// the recorded count wrong: after [`STALE_RUN_RESYNC`] of them the filter adopts the peer's
/// count. Accepting a stale submessage is harmless (acknowledgments only move forward, a
/// resend is redundant at worst); ignoring a live peer forever is not.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CountFilter {
    last: Option<i32>,
    /// The last stale count seen since `last` was accepted, and how many grew in a row.
    stale: Option<(i32, u8)>,
}

impl CountFilter {
    /// True if `count` is to be processed (it is then recorded as the last count).
    pub(crate) fn accept(&mut self, count: i32) -> bool {
        let Some(last) = self.last else {
            self.adopt(count);
            return true;
        };
        if !is_stale_count(count, last) {
            self.adopt(count);
            return true;
        }
        let run = match self.stale {
            Some((prev, run)) if is_newer(count, prev) => run.saturating_add(1),
            Some((prev, run)) if !is_newer(prev, count) => {
                // The same stale count again (a duplicate): no evidence either way.
                self.stale = Some((prev, run));
                return false;
            }
            _ => 1,
        };
        if run >= STALE_RUN_RESYNC {
            self.adopt(count);
            return true;
        }
        self.stale = Some((count, run));
        false
    }

    fn adopt(&mut self, count: i32) {
        self.last = Some(count);
        self.stale = None;
    }

    /// True once any count was accepted.
    pub(crate) fn seen(&self) -> bool {
        self.last.is_some()
    }
}

/// True if `a` is a plausible successor of `b`.
fn is_newer(a: i32, b: i32) -> bool {
    let ahead = a as i64 - b as i64;
    (1..PLAUSIBLE_REORDER).contains(&ahead)
}

#[cfg(test)]
mod count_tests {
    use super::CountFilter;

    #[test]
    fn corrupted_forward_jump_is_undone_by_growing_stale_counts() {
        let mut f = CountFilter::default();
        assert!(f.accept(0x3006));
        assert!(
            f.accept(0x13007),
            "a forward jump is accepted (it cannot be told apart)"
        );
        assert!(!f.accept(0x3008));
        assert!(!f.accept(0x3008), "a duplicate is no evidence");
        assert!(!f.accept(0x3009));
        assert!(f.accept(0x300a), "the third growing stale count resyncs");
        assert!(f.accept(0x300b));
        assert!(!f.accept(0x300b));
    }

    #[test]
    fn reordered_duplicates_are_dropped() {
        let mut f = CountFilter::default();
        for c in 1..=10 {
            assert!(f.accept(c));
        }
        assert!(!f.accept(7));
        assert!(!f.accept(9));
        assert!(!f.accept(8));
        assert!(!f.accept(10));
        assert!(f.accept(11));
    }
}
