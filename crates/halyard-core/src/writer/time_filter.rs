//! Writer-side TIME_BASED_FILTER (DDS 1.4 §2.2.3.12; RTPS 2.5 §8.4.9: a writer may send a GAP
//! for a change irrelevant to a reader).
//!
//! Design. A Halyard reader that asks for a minimum separation announces it in SEDP
//! (PID_TIME_BASED_FILTER), and filters on its side: at most one data sample per instance per
//! separation, measured on source timestamps (`crate::admission`). A writer that knows the
//! reader applies exactly that rule (its participant's vendor is Halyard) sends it only what
//! the rule would let through: the proxy of such a reader keeps a [`TimeFilter`], and a new
//! alive sample stamped less than the separation after the last sample of its instance *sent
//! to that reader* is withheld, as a sample its content filter rejects is (see [`super::filter`]:
//! a GAP to a reliable reader, nothing to a best-effort one). It is one more rejection reason
//! in the same path, so the cost with no filter of either kind is the same one branch.
//!
//! Why it changes nothing the application sees. The reader and the writer run one rule
//! (`admission::within_separation`) over one sequence: the alive, timestamped samples of the
//! instance, in writer order, that reach the reader's filter, which are the ones this writer
//! sends it as DATA (samples its content filter rejected are not: they never arrive). Each
//! sample the writer sends is one its own mark let through, so the reader, whose mark is the
//! same, admits it; each one it withholds the reader would have dropped. The marks agree as
//! long as the reader receives what was sent and nothing else moves its mark; where they part
//! (see Limits) the reader's own filter still holds, and a sample comes at most one
//! separation later than the reader alone would have let one through.
//!
//! Exempt, always sent: disposals and unregistrations (an unregistration also makes the writer
//! forget its mark for the instance, as a reader left without writers of an instance forgets
//! it), samples without source timestamp (the reader measures those on reception), members of
//! a coherent set and its end marker (a GAP inside a set would make a reader without a content
//! filter drop the set). An unkeyed topic is one instance.
//!
//! Decided once. Whether a sequence number goes to a reader is decided when it is first sent
//! (or, for a late-joining reader of a TRANSIENT_LOCAL writer, over the held history in order
//! when it matches), and the decision stands: a repair of a withheld sequence number is a GAP,
//! one that was sent is sent again. The decision depends on every sample before it, so it is
//! remembered, not derived again: the reliable reader's proxy keeps the withheld sequence
//! numbers ([`TimeFilter::withheld`]), dropped as the reader acknowledges them, and never more
//! than twice the changes held (a number no longer held is answered with a GAP anyway). A
//! best-effort reader is never repaired: nothing is kept for it.
//!
//! Changes. A reader that announces another separation (set_qos, re-announced in SEDP) is
//! filtered with it from then on; the marks stay (they are what the reader has). One that
//! stops filtering keeps its withheld numbers until it acknowledges them; one that starts
//! again starts without marks. The DCPS `DataReader::set_qos` that changes the separation
//! waits (bounded) until the writers' participants acknowledged the announcement, so samples
//! written after it are filtered with the new one (a lower one would otherwise still withhold
//! samples the reader now wants).
//!
//! Bounds: marks for at most [`MAX_TIME_FILTER_INSTANCES`] instances per reader; when full,
//! marks that can no longer withhold anything are dropped, and if that frees too little, all
//! of them (forgetting a mark only makes the writer send more; the reader still filters).
//!
//! Limits (where the writer's mark may run ahead of the reader's and a sample come up to one
//! separation later than without writer-side filtering): a sample sent that never reaches the
//! reader (best-effort loss, a KEEP_LAST writer replacing it before it was repaired, LIFESPAN,
//! a paced sample dropped); several writers of one instance (the reader's mark follows all of
//! them); a reader that drops a sample for another reason (ownership, instance limit,
//! BY_SOURCE_TIMESTAMP order); a reader that changed its separation before the writer heard.
//! A reader that acknowledges less than before (it lost its state for the writer) is repaired
//! with DATA for withheld numbers it had acknowledged: its own filter drops them. A best-effort
//! reader counts each withheld sample as lost (SAMPLE_LOST), as it does a content-filtered one.
//! Readers of the writer's own participant are left to their own filter: they cost no bytes.

use super::{CacheChange, NewChange, Writer};
use crate::admission::{source_stamp, within_separation};
use crate::config::MAX_TIME_FILTER_INSTANCES;
use crate::event::ChangeKind;
use halyard_wire::{Guid, SequenceNumber, Time};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A writer's view of one Halyard reader's TIME_BASED_FILTER.
#[derive(Debug)]
pub(crate) struct TimeFilter {
    /// The reader's minimum separation (`None`: it no longer filters, but sequence numbers
    /// withheld stay withheld until acknowledged).
    separation: Option<Duration>,
    /// Source timestamp of the last alive sample of each instance sent to the reader.
    last_sent: BTreeMap<[u8; 16], Time>,
    /// Sequence numbers withheld from the reader and not yet acknowledged (reliable readers).
    withheld: BTreeSet<SequenceNumber>,
}

/// What a change is to time filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timing {
    /// Always sent, and moves no mark.
    Exempt,
    /// An alive sample of instance `key` stamped `ts`.
    Sample {
        /// The instance (zeros on an unkeyed topic).
        key: [u8; 16],
        /// Its source timestamp.
        ts: Time,
    },
    /// The writer unregisters the instance: always sent, and its mark is forgotten.
    Unregistered([u8; 16]),
}

impl TimeFilter {
    /// The filter of a reader that announces `separation` (not zero).
    pub(crate) fn new(separation: std::time::Duration) -> Self {
        TimeFilter {
            separation: Some(separation),
            last_sent: BTreeMap::new(),
            withheld: BTreeSet::new(),
        }
    }

    /// Decides whether change `sn` is withheld from the reader (true) or sent (false), and
    /// remembers it: a withheld one in [`TimeFilter::withheld`] if the reader is `reliable`
    /// (`changes`: the writer's history, which bounds that set), a sent one as its instance's
    /// mark.
    pub(super) fn decide(
        &mut self,
        sn: SequenceNumber,
        timing: Timing,
        reliable: bool,
        changes: &BTreeMap<SequenceNumber, CacheChange>,
    ) -> bool {
        let (key, ts) = match timing {
            Timing::Exempt => return false,
            Timing::Unregistered(key) => {
                self.last_sent.remove(&key);
                return false;
            }
            Timing::Sample { key, ts } => (key, ts),
        };
        let Some(separation) = self.separation else {
            return false;
        };
        let last = self.last_sent.get(&key);
        if last.is_some_and(|&last| within_separation(last, ts, separation)) {
            if reliable {
                self.withheld.insert(sn);
                self.trim_withheld(changes);
            }
            return true;
        }
        self.note_sent(key, ts, separation);
        false
    }

    /// Records `ts` as instance `key`'s mark, within the bound on marks.
    fn note_sent(&mut self, key: [u8; 16], ts: Time, separation: Duration) {
        if self.last_sent.len() >= MAX_TIME_FILTER_INSTANCES && !self.last_sent.contains_key(&key) {
            // A mark that no longer withholds a sample stamped `ts` or later is of no use
            // (timestamps going back are rare; forgetting a mark only sends more).
            self.last_sent
                .retain(|_, last| within_separation(*last, ts, separation));
            if self.last_sent.len() >= MAX_TIME_FILTER_INSTANCES / 4 * 3 {
                self.last_sent.clear();
            }
        }
        self.last_sent.insert(key, ts);
    }

    /// True if `sn` was withheld from the reader (and is not acknowledged yet).
    pub(super) fn withholds(&self, sn: SequenceNumber) -> bool {
        self.withheld.contains(&sn)
    }

    /// Drops withheld sequence numbers that are no longer held in `changes`, once they are more
    /// than twice as many as the changes held (those are answered with a GAP anyway).
    fn trim_withheld(&mut self, changes: &BTreeMap<SequenceNumber, CacheChange>) {
        if self.withheld.len() > 2 * changes.len() + 64 {
            self.withheld.retain(|sn| changes.contains_key(sn));
        }
    }

    /// The reader acknowledged everything below `base`; true if nothing is left to remember
    /// (it does not filter any more and has no withheld sequence number outstanding).
    pub(super) fn acknowledged(&mut self, base: SequenceNumber) -> bool {
        if self.withheld.first().is_some_and(|&first| first < base) {
            self.withheld = self.withheld.split_off(&base);
        }
        self.is_spent()
    }

    /// True if the reader does not filter and nothing withheld is outstanding.
    fn is_spent(&self) -> bool {
        self.separation.is_none() && self.withheld.is_empty()
    }
}

impl Writer {
    /// What change `sn` is to time filters (see the module documentation).
    pub(super) fn timing(&self, sn: SequenceNumber, change: &NewChange) -> Timing {
        timing_of(self.spec.has_key, self.coherence.get(&sn), change)
    }

    /// Brings the time filter of reader proxy `reader` in line with the minimum separation the
    /// reader announces (`None`: none, or the writer does not filter for it).
    pub(crate) fn refresh_proxy_time_filter(
        &mut self,
        reader: &Guid,
        separation: Option<Duration>,
    ) {
        let Some(p) = self.proxies.get_mut(reader) else {
            return;
        };
        match (p.time_filter.as_mut(), separation) {
            (None, None) => return,
            (None, Some(s)) => p.time_filter = Some(TimeFilter::new(s)),
            (Some(t), _) if t.separation == separation => return,
            (Some(t), _) => {
                t.separation = separation;
                if separation.is_none() {
                    t.last_sent.clear();
                }
                if t.is_spent() {
                    p.time_filter = None;
                }
            }
        }
        self.recount_filters();
    }

    /// Decides, for newly matched reader `reader`, the held history it is owed (a late joiner
    /// of a TRANSIENT_LOCAL writer), in order, as if each change were new: its repairs follow.
    pub(super) fn decide_history(&mut self, reader: &Guid) {
        let Some(p) = self.proxies.get_mut(reader) else {
            return;
        };
        let (Some(t), true) = (p.time_filter.as_mut(), p.reliable) else {
            return;
        };
        for (&sn, c) in self.changes.range(p.start_sn..) {
            // What its content filter rejects never reaches it: it moves no mark.
            if p.filter.as_ref().is_some_and(|f| f.rejects(&c.change)) {
                continue;
            }
            let timing = timing_of(self.spec.has_key, self.coherence.get(&sn), &c.change);
            if t.decide(sn, timing, true, &self.changes) {
                self.filters.time_withheld += 1;
            }
        }
    }

    /// The time filter of `reader` has nothing left to do: dropped.
    pub(super) fn retire_time_filter(&mut self, reader: &Guid) {
        if let Some(p) = self.proxies.get_mut(reader) {
            p.time_filter = None;
        }
        self.recount_filters();
    }

    /// Samples not sent to a reader because its time filter withheld them, so far (once per
    /// sample and reader).
    pub(crate) fn time_filtered_out(&self) -> u64 {
        self.filters.time_withheld
    }
}

/// What a change is to time filters, given whether the topic is keyed and the change's
/// coherent-set membership (see the module documentation).
fn timing_of(
    has_key: bool,
    coherence: Option<&Option<SequenceNumber>>,
    change: &NewChange,
) -> Timing {
    let key = if has_key { change.key_hash } else { [0; 16] };
    match change.kind {
        ChangeKind::Alive if coherence.is_none() => match source_stamp(change.timestamp) {
            Some(ts) => Timing::Sample { key, ts },
            None => Timing::Exempt,
        },
        ChangeKind::Unregistered | ChangeKind::DisposedUnregistered => Timing::Unregistered(key),
        ChangeKind::Alive | ChangeKind::Disposed => Timing::Exempt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ParticipantConfig;
    use crate::outbox::Outbox;
    use crate::time::Instant;
    use crate::writer::{ReaderProxy, WriterSpec};
    use halyard_wire::qos::{DurabilityKind, EndpointQos, History, ReliabilityKind};
    use halyard_wire::{
        EntityId, GuidPrefix, Header, Locator, Message, ProtocolVersion, Submessage, VendorId,
    };
    use std::sync::Arc;

    const SEP: Duration = Duration::from_millis(100);

    fn at(ms: i64) -> Time {
        Time::from_nanos(ms * 1_000_000)
    }

    fn sample(key: u8, ms: i64) -> Timing {
        Timing::Sample {
            key: [key; 16],
            ts: at(ms),
        }
    }

    /// Decides `timings` in order (sequence numbers from 1) for a reliable reader; returns
    /// the sequence numbers withheld.
    fn withheld(f: &mut TimeFilter, timings: &[Timing]) -> Vec<i64> {
        let none = BTreeMap::new();
        let mut out = Vec::new();
        for (i, t) in timings.iter().enumerate() {
            let sn = SequenceNumber(i as i64 + 1);
            if f.decide(sn, *t, true, &none) {
                out.push(sn.0);
            }
        }
        out
    }

    #[test]
    fn at_most_one_sample_per_instance_per_separation_measured_from_the_last_sent() {
        let mut f = TimeFilter::new(SEP);
        // Sent at 0, 100 (exactly one separation later), 230; the rest withheld: 199 is
        // within the separation of 100, not of 0.
        let got = withheld(
            &mut f,
            &[
                sample(1, 0),
                sample(1, 50),
                sample(1, 99),
                sample(1, 100),
                sample(1, 199),
                sample(1, 230),
                // Another instance has its own mark.
                sample(2, 231),
                sample(2, 260),
                // A timestamp going back is within the separation of the mark.
                sample(1, 10),
            ],
        );
        assert_eq!(got, vec![2, 3, 5, 8, 9]);
        assert!(f.withholds(SequenceNumber(5)) && !f.withholds(SequenceNumber(4)));
    }

    #[test]
    fn disposals_unregistrations_and_untimed_samples_always_pass() {
        let mut f = TimeFilter::new(SEP);
        let got = withheld(
            &mut f,
            &[
                sample(1, 0),
                Timing::Exempt,
                sample(1, 10),
                // Unregistering forgets the instance: its next sample goes through.
                Timing::Unregistered([1; 16]),
                sample(1, 20),
                sample(1, 30),
            ],
        );
        assert_eq!(got, vec![3, 6]);
    }

    #[test]
    fn best_effort_readers_keep_nothing_to_repair() {
        let mut f = TimeFilter::new(SEP);
        let none = BTreeMap::new();
        assert!(!f.decide(SequenceNumber(1), sample(1, 0), false, &none));
        assert!(f.decide(SequenceNumber(2), sample(1, 1), false, &none));
        assert!(f.withheld.is_empty());
    }

    #[test]
    fn acknowledged_numbers_are_forgotten_and_a_stopped_filter_retires() {
        let mut f = TimeFilter::new(SEP);
        let got = withheld(&mut f, &[sample(1, 0), sample(1, 1), sample(1, 2)]);
        assert_eq!(got, vec![2, 3]);
        assert!(!f.acknowledged(SequenceNumber(3)));
        assert!(!f.withholds(SequenceNumber(2)) && f.withholds(SequenceNumber(3)));
        f.separation = None;
        assert!(!f.acknowledged(SequenceNumber(3)), "3 is still owed a GAP");
        assert!(f.acknowledged(SequenceNumber(4)));
    }

    #[test]
    fn marks_and_withheld_numbers_are_bounded() {
        let mut f = TimeFilter::new(SEP);
        let none = BTreeMap::new();
        let n = MAX_TIME_FILTER_INSTANCES as u32 + 10;
        for i in 0..n {
            let mut key = [0u8; 16];
            key[..4].copy_from_slice(&i.to_le_bytes());
            let ts = at(i64::from(i));
            let t = Timing::Sample { key, ts };
            assert!(!f.decide(SequenceNumber(i64::from(i) + 1), t, true, &none));
            assert!(f.last_sent.len() <= MAX_TIME_FILTER_INSTANCES);
        }
        // Withheld numbers no longer held are dropped once they outnumber the history.
        for i in 0..1000 {
            f.decide(SequenceNumber(i64::from(n) + i), sample(9, 0), true, &none);
        }
        assert!(f.withheld.len() <= 64, "{}", f.withheld.len());
    }

    fn prefix(n: u8) -> GuidPrefix {
        GuidPrefix([n; 12])
    }

    fn reader(n: u8) -> Guid {
        Guid::new(prefix(n), EntityId([0, 0, n, 7]))
    }

    fn locator(n: u8) -> Locator {
        Locator::udpv4([10, 0, 0, n], 7411)
    }

    /// A reliable KEEP_ALL keyed writer (TRANSIENT_LOCAL when `durable`).
    fn writer(durable: bool) -> Writer {
        let mut qos = EndpointQos::writer_default();
        qos.reliability.kind = ReliabilityKind::Reliable;
        qos.history = History::KeepAll;
        if durable {
            qos.durability = DurabilityKind::TransientLocal;
        }
        let spec = WriterSpec {
            topic_name: "T".into(),
            type_name: "K".into(),
            qos,
            has_key: true,
        };
        Writer::new(Guid::new(prefix(1), EntityId([0, 0, 1, 2])), spec, false, 7)
    }

    /// Reader `n` (its own participant, reliable), filtering with `separation` if any.
    fn add_reader(w: &mut Writer, n: u8, separation: Option<Duration>, durable: bool) {
        let mut p = ReaderProxy::new(reader(n), vec![locator(n)], true);
        p.time_filter = separation.map(TimeFilter::new);
        w.add_proxy(Instant::from_nanos(0), p, durable);
        // As once it answered the HEARTBEAT announcing where its stream starts.
        w.assume_synced(&reader(n));
    }

    fn out() -> Outbox {
        let header = Header {
            version: ProtocolVersion::V2_5,
            vendor: VendorId::HALYARD,
            guid_prefix: prefix(1),
        };
        Outbox::new(header, 1400)
    }

    fn write(w: &mut Writer, o: &mut Outbox, kind: ChangeKind, key: u8, ms: i64) {
        let change = NewChange {
            kind,
            key_hash: [key; 16],
            payload: Arc::new(vec![0, 1, 0, 0, key, 0, 0, 0]),
            timestamp: Some(at(ms)),
            original: None,
        };
        let cfg = ParticipantConfig::new(0, prefix(1));
        let now = Instant::from_nanos(0);
        w.write(now, o, &cfg, change, None).expect("room");
    }

    /// The datagrams queued in `o` (which is emptied).
    fn drain(o: &mut Outbox) -> Vec<crate::Transmit> {
        std::iter::from_fn(|| o.pop()).collect()
    }

    /// Sequence numbers sent to one reader: as DATA, and as GAP.
    type Sent = (Vec<i64>, Vec<i64>);

    /// The sequence numbers of `datagrams` sent to `host`, as DATA and as GAP.
    fn sent_to(datagrams: &[crate::Transmit], host: u8) -> Sent {
        let (mut data, mut gaps) = (Vec::new(), Vec::new());
        for t in datagrams
            .iter()
            .filter(|t| t.destinations.contains(&locator(host)))
        {
            let m = Message::parse(&t.payload).expect("parses");
            for s in m.submessages() {
                match s.expect("parses") {
                    Submessage::Data(d) => data.push(d.writer_sn.0),
                    Submessage::Gap(g) => gaps.push(g.gap_start.0),
                    _ => {}
                }
            }
        }
        (data, gaps)
    }

    /// As [`sent_to`], for what `o` holds (which is emptied).
    fn sent(o: &mut Outbox, host: u8) -> Sent {
        sent_to(&drain(o), host)
    }

    /// Writes `(kind, key, ms)` in order to a writer with a filtered reader (host 2) and an
    /// unfiltered one (host 3); returns the writer and what each host was sent.
    fn two_readers(writes: &[(ChangeKind, u8, i64)]) -> (Writer, [Sent; 2]) {
        let mut w = writer(false);
        add_reader(&mut w, 2, Some(SEP), false);
        add_reader(&mut w, 3, None, false);
        let mut o = out();
        for &(kind, key, ms) in writes {
            write(&mut w, &mut o, kind, key, ms);
        }
        let datagrams = drain(&mut o);
        let hosts = [sent_to(&datagrams, 2), sent_to(&datagrams, 3)];
        (w, hosts)
    }

    #[test]
    fn a_writer_sends_gaps_for_withheld_samples_and_repairs_stay_decided() {
        let alive = ChangeKind::Alive;
        let (mut w, [filtered, plain]) = two_readers(&[
            (alive, 1, 0),
            (alive, 1, 50),
            (alive, 2, 60),
            (alive, 1, 120),
            (alive, 1, 130),
            (alive, 2, 150),
            // A disposal within the separation goes through; the next sample does not.
            (ChangeKind::Disposed, 1, 140),
            (alive, 1, 150),
        ]);
        assert_eq!(filtered, (vec![1, 3, 4, 7], vec![2, 5, 6, 8]));
        assert_eq!(plain, ((1..=8).collect(), vec![]));
        assert_eq!(w.time_filtered_out(), 4);
        // Repairs: withheld stays withheld, sent stays sent, even once the reader stops
        // filtering.
        let r = reader(2);
        w.refresh_proxy_time_filter(&r, None);
        assert!(w.repair_filtered(&r, SequenceNumber(2)));
        assert!(!w.repair_filtered(&r, SequenceNumber(4)));
        assert!(!w.repair_filtered(&reader(3), SequenceNumber(2)));
        let mut o = out();
        write(&mut w, &mut o, alive, 1, 151);
        assert_eq!(sent(&mut o, 2), (vec![9], vec![]), "no filter any more");
        assert_eq!(w.time_filtered_out(), 4);
    }

    #[test]
    fn a_changed_separation_applies_to_later_samples() {
        let mut w = writer(false);
        let mut o = out();
        add_reader(&mut w, 2, Some(SEP), false);
        write(&mut w, &mut o, ChangeKind::Alive, 1, 0);
        w.refresh_proxy_time_filter(&reader(2), Some(Duration::from_millis(10)));
        write(&mut w, &mut o, ChangeKind::Alive, 1, 20);
        w.refresh_proxy_time_filter(&reader(2), Some(Duration::from_secs(1)));
        write(&mut w, &mut o, ChangeKind::Alive, 1, 500);
        assert_eq!(sent(&mut o, 2), (vec![1, 2], vec![3]));
    }

    #[test]
    fn a_late_joiner_gets_the_history_filtered_the_same_way() {
        let mut w = writer(true);
        let mut o = out();
        // Two instances, each written every 30 ms for 300 ms, before the reader joins.
        for i in 0..10 {
            write(&mut w, &mut o, ChangeKind::Alive, 1, i * 30);
            write(&mut w, &mut o, ChangeKind::Alive, 2, i * 30 + 1);
        }
        add_reader(&mut w, 2, Some(SEP), true);
        // Kept per instance: 0, 120, 240 (instance 1: sn 1, 9, 17; instance 2: 2, 10, 18).
        let kept = [1, 2, 9, 10, 17, 18];
        for sn in 1..=20 {
            let filtered = w.repair_filtered(&reader(2), SequenceNumber(sn));
            assert_eq!(filtered, !kept.contains(&sn), "sn {sn}");
        }
        assert_eq!(w.time_filtered_out(), 14);
    }

    #[test]
    fn an_unkeyed_topic_is_one_instance() {
        let mut w = writer(false);
        w.spec.has_key = false;
        let mut o = out();
        add_reader(&mut w, 2, Some(SEP), false);
        write(&mut w, &mut o, ChangeKind::Alive, 1, 0);
        write(&mut w, &mut o, ChangeKind::Alive, 2, 10);
        assert_eq!(sent(&mut o, 2), (vec![1], vec![2]));
    }

    #[test]
    fn without_time_filter_nothing_is_decided() {
        let mut w = writer(false);
        let mut o = out();
        add_reader(&mut w, 2, None, false);
        assert!(!w.filters_any());
        write(&mut w, &mut o, ChangeKind::Alive, 1, 0);
        write(&mut w, &mut o, ChangeKind::Alive, 1, 1);
        assert_eq!(sent(&mut o, 2), (vec![1, 2], vec![]));
        assert_eq!(w.time_filtered_out(), 0);
    }
}
