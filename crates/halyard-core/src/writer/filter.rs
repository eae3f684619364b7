//! Writer-side content filtering (DDS 1.4 §2.2.2.3.3; RTPS 2.5 §8.4.9: a change that
//! DDS_FILTER finds irrelevant to a reader goes to it as a GAP, not as DATA).
//!
//! Design. A reader of a content-filtered topic announces its filter in SEDP
//! (PID_CONTENT_FILTER_PROPERTY). A local writer that has a [`FilterCompiler`] (the DCPS layer
//! gives every DataWriter one for its type) compiles that filter when it matches the reader,
//! and again when the reader announces another one, and keeps the [`SampleFilter`] on the
//! reader's proxy. The core never reads an expression: what a filter means is the compiler's
//! business, and a filter it cannot compile (another filter class, an expression that does not
//! parse against the writer's type) is not installed, so that reader gets everything.
//!
//! New samples. With no filter installed a new sample goes out as it always did (one datagram
//! to the fanout, multicast included): the cost is one branch. Otherwise the filters run on an
//! alive sample (disposals and unregistrations go to every reader); if none rejects it, it
//! still goes out in one datagram. If some reader rejects it, it cannot: per participant, when
//! all its readers accept, one datagram addressed to that participant (INFO_DST, readerId
//! UNKNOWN) at their unicast locators; where one of them rejects, DATA addressed to each
//! accepting reader (its readerId), and one datagram of GAPs for that sequence number to the
//! rejecting reliable readers, so that they do not NACK it. A rejecting best-effort reader
//! gets nothing: it notices no gap. A paced best-effort writer queues such a sample for the
//! participants that have an accepting reader.
//!
//! Repairs follow the content filter in force when they are sent: a sequence number a reader's
//! filter rejects is answered with a GAP, whether the reader asked for it (ACKNACK, NACK_FRAG)
//! or is owed it as a late joiner of a TRANSIENT_LOCAL writer (a time filter's verdict, by
//! contrast, is the one given when the number was first sent). Readers of the writer's own
//! participant, which get samples without the network, are content-filtered in
//! `Participant::write` (time filters leave them to their own filter).
//!
//! A relay gathers its GAPs of new changes (its live samples, which its matched readers get
//! from the original writer, see `Writer::set_relay`): the GAP for a change joins the pending
//! one of the same participant when it names the same readers and the change follows the
//! pending range, so a durability service's batch of stored samples costs one GAP of a range
//! per participant, not a datagram per sample. A participant's pending GAPs go out before
//! DATA to that participant, with a HEARTBEAT, before any unfiltered datagram of the writer,
//! or at the writer's next timeout (due at once): after the writes of one call into the core,
//! not later. Other writers send each GAP at once.
//!
//! Readers keep filtering on their side: writers of other vendors may not filter, and a writer
//! filters with the parameters last announced. A sample a writer filtered never arrives.
//!
//! Time filters. A Halyard reader's TIME_BASED_FILTER is a second reason for a proxy to reject
//! a new sample, decided in the same pass ([`Writer::rejecting`]) and sent the same way; unlike
//! a content filter's, its verdict depends on what was sent before, so it is decided once and
//! remembered for repairs (see [`super::time_filter`]). A sample a reader's content filter
//! rejects is not subject to its time filter: it never reaches the reader.

use super::send::{Sending, Target};
use super::{push_gap, Ctx, Writer};
use crate::config::ParticipantConfig;
use crate::event::ChangeKind;
use crate::outbox::Outbox;
use crate::time::Instant;
use crate::writer::NewChange;
use halyard_wire::discovery::ContentFilterProperty;
use halyard_wire::{EntityId, Guid, GuidPrefix, Locator, SequenceNumber};
use std::collections::BTreeMap;
use std::sync::Arc;

/// GAPs not yet sent to the rejecting reliable readers of one participant: `start..end`.
pub(crate) struct GapRun {
    prefix: GuidPrefix,
    readers: Vec<EntityId>,
    dests: Vec<Locator>,
    start: SequenceNumber,
    end: SequenceNumber,
    /// When it must go out at the latest (the writer's next timeout).
    pub(super) due: Instant,
}

/// A test of a serialized sample (encapsulation header included): true if it passes.
pub type SampleFilter = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// Compiles a reader's announced filter for a writer's type: `None` when the writer cannot
/// apply it (another filter class, an expression that does not parse against its type); that
/// reader then gets every sample and filters them itself.
pub type FilterCompiler = Arc<dyn Fn(&ContentFilterProperty) -> Option<SampleFilter> + Send + Sync>;

/// A compiled filter and the announcement it came from.
#[derive(Clone)]
pub(crate) struct InstalledFilter {
    property: ContentFilterProperty,
    test: SampleFilter,
}

impl InstalledFilter {
    /// True if the filter rejects `change` (only alive samples are filtered).
    pub(super) fn rejects(&self, change: &NewChange) -> bool {
        change.kind == ChangeKind::Alive && !(self.test)(&change.payload)
    }
}

/// A writer's filtering state.
#[derive(Default)]
pub(crate) struct WriterFilters {
    compiler: Option<FilterCompiler>,
    /// Some reader proxy has a content or time filter: the one branch a new sample pays.
    any: bool,
    /// Filters of matched readers of the writer's own participant.
    local: BTreeMap<EntityId, InstalledFilter>,
    /// DATA not sent because a reader's filter rejected it (per sample and reader).
    pub(crate) withheld: u64,
    /// DATA not sent because a reader's time filter withheld it (per sample and reader).
    pub(super) time_withheld: u64,
}

/// The readers of one participant for one filtered sample.
#[derive(Default)]
struct Group {
    accepting: Vec<(EntityId, Vec<Locator>)>,
    /// Rejecting reliable readers (owed a GAP).
    gaps: Vec<(EntityId, Vec<Locator>)>,
    /// Some reader rejects (reliable or not).
    rejecting: bool,
}

/// `a`'s locators with `b`'s added (no duplicates).
fn union(a: &mut Vec<Locator>, b: &[Locator]) {
    for l in b {
        if !a.contains(l) {
            a.push(*l);
        }
    }
}

impl Writer {
    /// Takes `compiler` (or none) and drops every filter compiled with the previous one: the
    /// caller installs them again ([`Writer::refresh_proxy_filter`]).
    pub(crate) fn set_filter_compiler(&mut self, compiler: Option<FilterCompiler>) {
        self.filters.compiler = compiler;
        self.filters.local.clear();
        for p in self.proxies.values_mut() {
            p.filter = None;
        }
        self.recount_filters();
    }

    /// `property` compiled with this writer's compiler (reusing an equal filter already
    /// compiled: readers of one content-filtered topic then share one test).
    pub(crate) fn compile_filter(
        &self,
        property: Option<&ContentFilterProperty>,
    ) -> Option<InstalledFilter> {
        let property = property?;
        let compiler = self.filters.compiler.as_ref()?;
        let installed = self.proxies.values().filter_map(|p| p.filter.as_ref());
        if let Some(f) = installed
            .chain(self.filters.local.values())
            .find(|f| f.property == *property)
        {
            return Some(f.clone());
        }
        let test = compiler(property)?;
        Some(InstalledFilter {
            property: property.clone(),
            test,
        })
    }

    /// True if `installed` is what `announced` compiles to (or both are absent).
    fn filter_current(
        installed: Option<&InstalledFilter>,
        announced: Option<&ContentFilterProperty>,
    ) -> bool {
        match (installed, announced) {
            (Some(f), Some(a)) => f.property == *a,
            (None, None) => true,
            _ => false,
        }
    }

    /// Brings the filter of reader proxy `reader` in line with what the reader announces.
    pub(crate) fn refresh_proxy_filter(
        &mut self,
        reader: &Guid,
        announced: Option<&ContentFilterProperty>,
    ) {
        let Some(p) = self.proxies.get(reader) else {
            return;
        };
        if Self::filter_current(p.filter.as_ref(), announced) {
            return;
        }
        let compiled = self.compile_filter(announced);
        if let Some(p) = self.proxies.get_mut(reader) {
            p.filter = compiled;
        }
        self.recount_filters();
    }

    /// Brings the filter of local reader `reader` (of this participant) in line with what it
    /// announces.
    pub(crate) fn refresh_local_filter(
        &mut self,
        reader: EntityId,
        announced: Option<&ContentFilterProperty>,
    ) {
        if Self::filter_current(self.filters.local.get(&reader), announced) {
            return;
        }
        match self.compile_filter(announced) {
            Some(f) => self.filters.local.insert(reader, f),
            None => self.filters.local.remove(&reader),
        };
    }

    /// Local reader `reader` is gone.
    pub(crate) fn forget_local_filter(&mut self, reader: EntityId) {
        self.filters.local.remove(&reader);
    }

    /// True if some reader proxy has a content or time filter.
    pub(super) fn filters_any(&self) -> bool {
        self.filters.any
    }

    /// Recomputes whether any proxy has a content or time filter (after proxies or filters
    /// changed).
    pub(super) fn recount_filters(&mut self) {
        self.filters.any = self.relay
            || self
                .proxies
                .values()
                .any(|p| p.filter.is_some() || p.time_filter.is_some());
    }

    /// Removes from `readers` (local readers of this participant) those whose filter rejects
    /// `change`, counting them.
    pub(crate) fn retain_local_accepting(
        &mut self,
        readers: &mut Vec<EntityId>,
        change: &NewChange,
    ) {
        if self.filters.local.is_empty() {
            return;
        }
        let before = readers.len();
        let local = &self.filters.local;
        readers.retain(|r| local.get(r).is_none_or(|f| !f.rejects(change)));
        self.filters.withheld += (before - readers.len()) as u64;
    }

    /// DATA not sent because a reader's filter rejected it, so far.
    pub(crate) fn filtered_out(&self) -> u64 {
        self.filters.withheld
    }

    /// The proxies that do not get new change `sn`: their content filter rejects it, or their
    /// time filter withholds it (decided here, once, and remembered: see
    /// [`super::time_filter`]); counted. Empty: every reader gets it, or none filters.
    pub(super) fn rejecting(&mut self, sn: SequenceNumber) -> Vec<Guid> {
        if !self.filters.any {
            return Vec::new();
        }
        let Some(c) = self.changes.get(&sn) else {
            return Vec::new();
        };
        let timing = self.timing(sn, &c.change);
        // Readers of one content-filtered topic share a test: run it once.
        let mut verdicts: Vec<(*const (), bool)> = Vec::new();
        let mut out = Vec::new();
        for p in self.proxies.values_mut() {
            if sn >= p.snapshot_end {
                // A relay's change written after the reader matched (see `Writer::set_relay`).
                out.push(p.guid);
                continue;
            }
            if let Some(f) = p.filter.as_ref() {
                let key = Arc::as_ptr(&f.test) as *const ();
                let rejects = match verdicts.iter().find(|(k, _)| *k == key) {
                    Some(&(_, v)) => v,
                    None => {
                        let v = f.rejects(&c.change);
                        verdicts.push((key, v));
                        v
                    }
                };
                if rejects {
                    self.filters.withheld += 1;
                    out.push(p.guid);
                    continue;
                }
            }
            if let Some(t) = p.time_filter.as_mut() {
                if t.decide(sn, timing, p.reliable, &self.changes) {
                    self.filters.time_withheld += 1;
                    out.push(p.guid);
                }
            }
        }
        out
    }

    /// True if reader `reader` does not get held change `sn` as a repair (it gets a GAP): its
    /// time filter withheld it when first sent, or its content filter rejects it (counted).
    pub(super) fn repair_filtered(&mut self, reader: &Guid, sn: SequenceNumber) -> bool {
        if !self.filters.any {
            return false;
        }
        let (Some(p), Some(c)) = (self.proxies.get(reader), self.changes.get(&sn)) else {
            return false;
        };
        if sn >= p.snapshot_end || p.time_filter.as_ref().is_some_and(|t| t.withholds(sn)) {
            return true;
        }
        let rejected = p.filter.as_ref().is_some_and(|f| f.rejects(&c.change));
        self.filters.withheld += u64::from(rejected);
        rejected
    }

    /// The readers of each participant for a sample `rejecting` reject, in GUID order.
    fn groups(&self, rejecting: &[Guid]) -> Vec<(GuidPrefix, Group)> {
        let mut out: Vec<(GuidPrefix, Group)> = Vec::new();
        // A reader still synchronising gets no DATA (see the module `writer`).
        for p in self.proxies.values().filter(|p| p.synced) {
            if out
                .last()
                .is_none_or(|(prefix, _)| *prefix != p.guid.prefix)
            {
                out.push((p.guid.prefix, Group::default()));
            }
            let Some((_, g)) = out.last_mut() else {
                continue;
            };
            let entry = (p.guid.entity, p.locators.clone());
            if !rejecting.contains(&p.guid) {
                g.accepting.push(entry);
                continue;
            }
            g.rejecting = true;
            if p.reliable {
                g.gaps.push(entry);
            }
        }
        out
    }

    /// Where a paced best-effort sample that `rejecting` reject goes: the unicast locators of
    /// the participants with an accepting reader, and the participant named in INFO_DST when
    /// there is one.
    pub(super) fn accepting_dests(&self, rejecting: &[Guid]) -> (Vec<Locator>, Option<GuidPrefix>) {
        let mut dests = Vec::new();
        let mut prefixes = Vec::new();
        for (prefix, g) in self.groups(rejecting) {
            if g.accepting.is_empty() {
                continue;
            }
            prefixes.push(prefix);
            for (_, locs) in &g.accepting {
                union(&mut dests, locs);
            }
        }
        let prefix = match prefixes.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        (dests, prefix)
    }

    /// Sends new change `sn`, which the readers `rejecting` reject, to the others (see the
    /// module documentation), and GAPs to the rejecting reliable readers.
    pub(super) fn send_filtered(
        &mut self,
        ctx: &mut Ctx<'_>,
        sn: SequenceNumber,
        rejecting: &[Guid],
        with_heartbeat: bool,
    ) {
        let Some(change) = self.changes.get(&sn).map(|c| c.change.clone()) else {
            return;
        };
        self.flush_data_batch(ctx.out);
        let groups = self.groups(rejecting);
        for (prefix, g) in &groups {
            if !g.accepting.is_empty() {
                // DATA to a participant goes out after its GAPs of the changes before.
                if let Some(i) = self.pending_gaps.iter().position(|r| r.prefix == *prefix) {
                    let run = self.pending_gaps.swap_remove(i);
                    self.send_gap_run(ctx.out, run, None);
                }
            }
        }
        let what = Sending {
            fragments: None,
            with_heartbeat,
        };
        for (prefix, g) in groups {
            if !g.rejecting {
                let mut dests = Vec::new();
                g.accepting.iter().for_each(|(_, l)| union(&mut dests, l));
                let to = Target {
                    reader_id: EntityId::UNKNOWN,
                    prefix: Some(prefix),
                    dests: &dests,
                };
                self.send_held(ctx, sn, &change, to, what);
                continue;
            }
            for (reader_id, dests) in &g.accepting {
                let to = Target {
                    reader_id: *reader_id,
                    prefix: Some(prefix),
                    dests,
                };
                self.send_held(ctx, sn, &change, to, what);
            }
            self.send_filter_gaps(ctx, prefix, &g.gaps, sn, with_heartbeat);
        }
    }

    /// A GAP for `sn` to each of `readers` of participant `prefix`: it joins the pending run
    /// of that participant when it can, else that run goes out and a new one starts. With a
    /// HEARTBEAT the run goes out at once, the HEARTBEAT in the same datagram.
    fn send_filter_gaps(
        &mut self,
        ctx: &mut Ctx<'_>,
        prefix: GuidPrefix,
        readers: &[(EntityId, Vec<Locator>)],
        sn: SequenceNumber,
        with_heartbeat: bool,
    ) {
        if readers.is_empty() {
            return;
        }
        let same = |run: &GapRun| {
            run.readers.len() == readers.len()
                && run.readers.iter().zip(readers).all(|(a, (b, _))| a == b)
        };
        let at = self.pending_gaps.iter().position(|r| r.prefix == prefix);
        let joined = match at.and_then(|i| self.pending_gaps.get_mut(i)) {
            Some(run) if run.end == sn && same(run) => {
                run.end = sn + 1;
                true
            }
            _ => false,
        };
        if !joined {
            if let Some(i) = at {
                let run = self.pending_gaps.swap_remove(i);
                self.send_gap_run(ctx.out, run, None);
            }
            let mut dests = Vec::new();
            readers.iter().for_each(|(_, l)| union(&mut dests, l));
            self.pending_gaps.push(GapRun {
                prefix,
                readers: readers.iter().map(|(r, _)| *r).collect(),
                dests,
                start: sn,
                end: sn + 1,
                due: ctx.now,
            });
        }
        let hb = with_heartbeat.then(|| {
            let reader_id = match readers {
                [(one, _)] => *one,
                _ => EntityId::UNKNOWN,
            };
            self.note_hb_sent(ctx.now);
            self.heartbeat(reader_id, false)
        });
        // Only a relay gathers; a content or time filter's GAP goes out at once.
        if hb.is_some() || !self.relay {
            if let Some(i) = self.pending_gaps.iter().position(|r| r.prefix == prefix) {
                let run = self.pending_gaps.swap_remove(i);
                self.send_gap_run(ctx.out, run, hb.as_ref());
            }
        }
    }

    /// A relay's fast path for new change `sn` (`len` bytes) when it goes to no reader: every
    /// reader matched before it was written (it gets it from its original writer), each
    /// reliable one already in a pending GAP run that ends at `sn`, and no HEARTBEAT due with
    /// it. The runs grow by one, as [`Writer::send_filtered`] would make them grow, without
    /// its per-sample grouping of readers. False (nothing done) when any of that does not
    /// hold: the caller takes the general path.
    pub(super) fn extend_live_gaps(
        &mut self,
        now: Instant,
        cfg: &ParticipantConfig,
        sn: SequenceNumber,
        len: usize,
    ) -> bool {
        if self.pending.is_some()
            || self.pending_gaps.is_empty()
            || self.pending_gaps.iter().any(|run| run.end != sn)
            || self.proxies.values().any(|p| sn < p.snapshot_end)
        {
            return false;
        }
        let reliable = self.proxies.values().filter(|p| p.reliable).count();
        let in_runs: usize = self.pending_gaps.iter().map(|run| run.readers.len()).sum();
        let current = self.pending_gaps.iter().all(|run| {
            run.readers.iter().all(|r| {
                self.proxies
                    .get(&Guid::new(run.prefix, *r))
                    .is_some_and(|p| p.reliable)
            })
        });
        if in_runs != reliable || !current || self.heartbeat_due_with(now, cfg, len) {
            return false;
        }
        for run in &mut self.pending_gaps {
            run.end = sn + 1;
        }
        self.spend_unpaced(len);
        self.bytes_since_hb += len;
        self.hurry_heartbeat(now, cfg);
        true
    }

    /// Sends every pending GAP run.
    pub(crate) fn flush_gaps(&mut self, out: &mut Outbox) {
        for run in std::mem::take(&mut self.pending_gaps) {
            self.send_gap_run(out, run, None);
        }
    }

    /// One datagram: the run's GAP to each of its readers, then `hb` if given.
    fn send_gap_run(&self, out: &mut Outbox, run: GapRun, hb: Option<&halyard_wire::Heartbeat>) {
        let mut mb = out.start(Some(run.prefix));
        let empty = mb.len();
        for reader_id in &run.readers {
            push_gap(&mut mb, *reader_id, self.guid.entity, run.start, run.end);
        }
        if let Some(hb) = hb {
            mb.heartbeat(hb);
        }
        out.push(mb, empty, &run.dests);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ParticipantConfig;
    use crate::outbox::Outbox;
    use crate::time::Instant;
    use crate::writer::{NewChange, ReaderProxy, Writer, WriterSpec};
    use halyard_wire::qos::{DurabilityKind, EndpointQos, History, ReliabilityKind};
    use halyard_wire::{
        EntityId, Guid, GuidPrefix, Header, Locator, Message, ProtocolVersion, Submessage, VendorId,
    };
    use std::sync::Arc;

    fn prefix(n: u8) -> GuidPrefix {
        GuidPrefix([n; 12])
    }

    /// A relay (a durability service's writer) with one reliable reader matched, synced.
    fn relay_with_reader() -> Writer {
        let mut qos = EndpointQos::writer_default();
        qos.reliability.kind = ReliabilityKind::Reliable;
        qos.history = History::KeepAll;
        qos.durability = DurabilityKind::Persistent;
        let spec = WriterSpec {
            topic_name: "T".into(),
            type_name: "K".into(),
            qos,
            has_key: true,
        };
        let mut w = Writer::new(Guid::new(prefix(1), EntityId([0, 0, 1, 2])), spec, false, 7);
        w.set_relay();
        let reader = Guid::new(prefix(2), EntityId([0, 0, 2, 7]));
        let locator = Locator::udpv4([10, 0, 0, 2], 7411);
        w.add_proxy(
            Instant::from_nanos(0),
            ReaderProxy::new(reader, vec![locator], true),
            false,
        );
        w.assume_synced(&reader);
        w
    }

    /// (GAP ranges as (start, end), DATA sequence numbers) in the datagrams `o` holds.
    fn sent(o: &mut Outbox) -> (Vec<(i64, i64)>, Vec<i64>) {
        let (mut gaps, mut data) = (Vec::new(), Vec::new());
        while let Some(t) = o.pop() {
            let m = Message::parse(&t.payload).expect("parses");
            for s in m.submessages() {
                match s.expect("parses") {
                    Submessage::Gap(g) => gaps.push((g.gap_start.0, g.gap_list.base.0)),
                    Submessage::Data(d) => data.push(d.writer_sn.0),
                    _ => {}
                }
            }
        }
        (gaps, data)
    }

    /// Every (reader entity, GAP start, GAP end) in the datagrams `o` holds.
    fn gaps_by_reader(o: &mut Outbox) -> Vec<(EntityId, i64, i64)> {
        let mut out = Vec::new();
        while let Some(t) = o.pop() {
            let m = Message::parse(&t.payload).expect("parses");
            for s in m.submessages() {
                if let Submessage::Gap(g) = s.expect("parses") {
                    out.push((g.reader_id, g.gap_start.0, g.gap_list.base.0));
                }
            }
        }
        out
    }

    fn live_change(k: u8) -> NewChange {
        NewChange {
            kind: crate::event::ChangeKind::Alive,
            key_hash: [k; 16],
            payload: Arc::new(vec![0, 1, 0, 0, k, 0, 0, 0]),
            timestamp: None,
            original: Some((
                Guid::new(prefix(3), EntityId([0, 0, 1, 2])),
                halyard_wire::SequenceNumber(1 + i64::from(k)),
            )),
        }
    }

    /// The fast path that grows a relay's pending GAP runs (`Writer::extend_live_gaps`) must
    /// not outlive the readers the runs were made for: a reader replaced by another of the
    /// same participant between two writes of one call gets no GAP for the changes written
    /// after it left, and its successor none for those written before it came.
    #[test]
    fn a_relays_gap_runs_follow_the_readers_matched_at_each_change() {
        let mut w = relay_with_reader();
        let header = Header {
            version: ProtocolVersion::V2_5,
            vendor: VendorId::HALYARD,
            guid_prefix: prefix(1),
        };
        let mut o = Outbox::new(header, 1400);
        let cfg = ParticipantConfig::new(0, prefix(1));
        let now = Instant::from_nanos(0);
        let first = EntityId([0, 0, 2, 7]);
        let second = EntityId([0, 0, 3, 7]);
        for k in 0..10u8 {
            w.write(now, &mut o, &cfg, live_change(k), None)
                .expect("room");
        }
        assert!(w.remove_proxy(&Guid::new(prefix(2), first)));
        let successor = Guid::new(prefix(2), second);
        let locator = Locator::udpv4([10, 0, 0, 2], 7411);
        w.add_proxy(now, ReaderProxy::new(successor, vec![locator], true), false);
        w.assume_synced(&successor);
        for k in 10..20u8 {
            w.write(now, &mut o, &cfg, live_change(k), None)
                .expect("room");
        }
        w.flush_batch(&mut o);
        let gaps = gaps_by_reader(&mut o);
        let covered = |reader: EntityId| -> Vec<i64> {
            let mut sns: Vec<i64> = gaps
                .iter()
                .filter(|(r, _, _)| *r == reader)
                .flat_map(|&(_, s, e)| s..e)
                .collect();
            sns.sort_unstable();
            sns.dedup();
            sns
        };
        assert_eq!(covered(first), (1..=10).collect::<Vec<_>>(), "{gaps:?}");
        assert_eq!(covered(second), (11..=20).collect::<Vec<_>>(), "{gaps:?}");
    }

    #[test]
    fn a_relays_live_changes_go_to_its_readers_as_one_gap_range() {
        let mut w = relay_with_reader();
        let header = Header {
            version: ProtocolVersion::V2_5,
            vendor: VendorId::HALYARD,
            guid_prefix: prefix(1),
        };
        let mut o = Outbox::new(header, 1400);
        let cfg = ParticipantConfig::new(0, prefix(1));
        let now = Instant::from_nanos(0);
        let _ = sent(&mut o);
        for k in 0..100u8 {
            w.write(now, &mut o, &cfg, live_change(k), None)
                .expect("room");
        }
        let (gaps, data) = sent(&mut o);
        assert!(data.is_empty(), "live changes go as GAPs: {data:?}");
        // At most a HEARTBEAT cuts the run (it goes with the GAPs before it).
        let covered: i64 = gaps.iter().map(|(s, e)| e - s).sum();
        assert!(gaps.len() <= 3, "{gaps:?}");
        assert!(w.batch_due().is_some() || covered == 100, "the rest is due");
        w.flush_batch(&mut o);
        let (rest, _) = sent(&mut o);
        let mut all = gaps;
        all.extend(rest);
        all.sort_unstable();
        assert_eq!(all.first().map(|g| g.0), Some(1));
        assert!(
            all.windows(2).all(|p| p[0].1 == p[1].0),
            "contiguous: {all:?}"
        );
        assert_eq!(all.last().map(|g| g.1), Some(101), "{all:?}");
        assert!(all.len() <= 4, "{all:?}");
    }
}
