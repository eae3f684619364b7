//! Reader-driven repair and heartbeats of a writer (RTPS 2.5 §8.4.15): ACKNACKs acknowledge
//! and name changes to resend (DATA when held and the reader's filters let it through, GAP
//! otherwise), NACK_FRAGs name fragments; the periodic HEARTBEAT asks readers that are behind
//! to say where they are.

use super::send::{Sending, Target};
use super::{fast_heartbeat, push_gap, Ctx, Writer};
use crate::config::{ParticipantConfig, MAX_REQUESTED_PER_READER};
use crate::outbox::Outbox;
use crate::pacing::TokenBucket;
use crate::time::Instant;
use halyard_wire::param::ParameterList;
use halyard_wire::{AckNack, Data, EntityId, Guid, NackFrag, SequenceNumber};

impl Writer {
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
        let ctx = &mut Ctx { now, out, cfg };
        let (set, count, final_flag) = (&an.reader_sn_state, an.count, an.final_flag);
        let last_sn = self.last_sn;
        // A fed reader's acknowledgments are its service's commits (`fed_ack`): what its
        // RTPS reader says is about the wire, which it takes nothing from.
        let Some(p) = self.proxies.get_mut(&reader).filter(|p| !p.fed) else {
            if !self.proxies.contains_key(&reader) {
                self.departed.acknowledged(&reader, set.base);
            }
            return false;
        };
        // An ACKNACK acknowledging beyond what was ever written is damaged (a bit flip in its
        // base: RTPS has no checksum of its own), unless the reader really is ahead (it skipped
        // to a damaged HEARTBEAT's or GAP's end), in which case it says so again every time.
        // Taking one such ACKNACK at its word acknowledges changes the reader never received;
        // once all is acknowledged no HEARTBEAT ever asks it again (seed 0xcbdc8571e728e503:
        // a SEDP announcement lost for good, no match). So it counts only once confirmed; until
        // then a HEARTBEAT asks the reader to say again where it is.
        if set.base > last_sn + 1 {
            p.acks_ahead = p.acks_ahead.saturating_add(1);
            if p.acks_ahead < 2 {
                self.serve_requests(ctx, reader, true);
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
        let mut newly_synced = false;
        if !p.synced {
            if !acknack_proves_sync(an, first_contact, p.start_sn) {
                // It may not know where its stream starts: tell it again (and nothing else).
                self.serve_requests(ctx, reader, true);
                return false;
            }
            p.synced = true;
            newly_synced = true;
        }
        let base = set.base.min(last_sn + 1);
        // The reader is behind what it acknowledged before: it lost its state for us (a new
        // proxy after its lease on us expired, or a restart) and knows nothing to ask for.
        let went_back = base < p.acked_below;
        let advanced = base > p.acked_below;
        // Its time filter's withheld numbers are forgotten as it acknowledges them.
        let mut retire_time_filter = false;
        if advanced {
            p.acked_below = base;
            p.requested = p.requested.split_off(&base);
            retire_time_filter = p.time_filter.as_mut().is_some_and(|t| t.acknowledged(base));
        }
        if went_back {
            // What it acknowledged before is owed again: HEARTBEATs go on until it
            // acknowledges, even if the one answering this ACKNACK is lost (left at the old
            // mark, a lost answer ended the exchange for good: sim content_filter seed
            // 0x67c1a61a76cb1733, a peer whose lease on us had expired never got our SEDP
            // announcement again).
            p.acked_below = base;
        }
        p.reported_gap = set.iter().next().is_some();
        p.request(set, last_sn);
        if newly_synced {
            // What was written for it while it synchronised, held back until now.
            let owed = self
                .changes
                .range(base.max(p.start_sn)..)
                .map(|(sn, _)| *sn);
            p.requested
                .extend(owed.take(MAX_REQUESTED_PER_READER.saturating_sub(p.requested.len())));
        }
        let wants_hb = first_contact
            || newly_synced
            || (set.num_bits == 0 && (!final_flag || went_back) && base <= last_sn);
        if went_back {
            let soon = now + fast_heartbeat(cfg);
            self.hb_interval = fast_heartbeat(cfg);
            self.hb_due = Some(self.hb_due.map_or(soon, |d| d.min(soon)));
        }
        if newly_synced {
            self.recompute_fanout();
        }
        if advanced {
            self.collect_acked();
            // As hurry_heartbeat, but only brings forward a HEARTBEAT already due: with
            // everything acknowledged none is.
            self.hb_interval = fast_heartbeat(cfg);
            self.hb_due = self.hb_due.map(|d| d.min(now + self.hb_interval));
        }
        self.serve_requests(ctx, reader, wants_hb);
        if retire_time_filter {
            self.retire_time_filter(&reader);
        }
        self.check_history();
        advanced
    }

    /// Handles Halyard's NACK from `reader`: resends the changes it names, as for an
    /// ACKNACK's bits, and acknowledges nothing (a reader whose acknowledgments lag what it
    /// received names with it what its ACKNACK cannot reach; see `reader`'s `nack_beyond`).
    pub(crate) fn on_halyard_nack(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        reader: Guid,
        nack: &AckNack,
    ) {
        self.flush_batch(out);
        let last_sn = self.last_sn;
        let Some(p) = self.proxies.get_mut(&reader).filter(|p| p.synced && !p.fed) else {
            return;
        };
        if p.request(&nack.reader_sn_state, last_sn) {
            let ctx = &mut Ctx { now, out, cfg };
            self.serve_requests(ctx, reader, false);
        }
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
        let (sn, frags, count) = (nf.writer_sn, &nf.fragment_number_state, nf.count);
        let Some(p) = self.proxies.get_mut(&reader).filter(|p| p.synced && !p.fed) else {
            return;
        };
        if !p.nackfrag_counts.accept(count) {
            return;
        }
        let list: Vec<u32> = frags.iter().collect();
        let (dests, prefix) = (p.locators.clone(), p.guid.prefix);
        let held = self.changes.contains_key(&sn) && sn >= p.start_sn;
        let ctx = &mut Ctx { now, out, cfg };
        if held && !self.repair_filtered(&reader, sn) {
            if self.is_released(sn) {
                // Fetched first; the reader asks again at the next HEARTBEAT.
                self.want(sn);
                return;
            }
            let to = Target {
                reader_id: reader.entity,
                prefix: Some(prefix),
                dests: &dests,
            };
            let what = Sending {
                fragments: Some(&list),
                with_heartbeat: false,
            };
            self.send_change(ctx, sn, to, what);
            if !self.repaired.contains(&reader) {
                self.repaired.push(reader);
            }
            // The reader is repairing: if the repairs or their HEARTBEAT are lost, ask again
            // soon rather than after an interval that has backed off meanwhile.
            self.hurry_heartbeat(now, cfg);
        } else {
            self.send_gap(ctx.out, reader, sn, sn + 1);
        }
    }

    /// Sends `reader` everything held that is relevant to it (from its start), directed, with
    /// a HEARTBEAT, without waiting for it to ask.
    pub(crate) fn push_history(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        reader: Guid,
    ) {
        let Some(p) = self.proxies.get_mut(&reader).filter(|p| p.synced) else {
            return;
        };
        let held = self.changes.range(p.start_sn..).map(|(sn, _)| *sn);
        p.requested
            .extend(held.take(MAX_REQUESTED_PER_READER.saturating_sub(p.requested.len())));
        self.serve_requests(&mut Ctx { now, out, cfg }, reader, true);
    }

    /// Resends what `reader` asked for: DATA when held and its filters let it through, GAP
    /// otherwise, then a HEARTBEAT.
    pub(super) fn serve_requests(&mut self, ctx: &mut Ctx<'_>, reader: Guid, force_hb: bool) {
        let Some(p) = self.proxies.get_mut(&reader) else {
            return;
        };
        let requested = std::mem::take(&mut p.requested);
        let (dests, start_sn) = (p.locators.clone(), p.start_sn);
        let to = Target {
            reader_id: reader.entity,
            prefix: Some(reader.prefix),
            dests: &dests,
        };
        let max_message_size = ctx.cfg.max_message_size;
        let mut mb = ctx.out.start(to.prefix);
        let empty = mb.len();
        let mut gap: Option<(SequenceNumber, SequenceNumber)> = None;
        let mut sent_fragmented = false;
        // Released changes wait for their payloads (see `super::release`): still requested.
        let mut waiting = Vec::new();
        for sn in requested {
            let held = sn >= start_sn && self.changes.contains_key(&sn);
            if held && self.is_released(sn) && !self.repair_filtered(&reader, sn) {
                self.want(sn);
                waiting.push(sn);
                continue;
            }
            if !held || self.repair_filtered(&reader, sn) {
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
            if len + self.data_overhead() > max_message_size {
                let what = Sending {
                    fragments: None,
                    with_heartbeat: false,
                };
                self.send_change(ctx, sn, to, what);
                sent_fragmented = true;
                continue;
            }
            if mb.len() + len + self.data_overhead() > max_message_size {
                ctx.out.push(mb, empty, &dests);
                mb = ctx.out.start(to.prefix);
            }
            if let Some(c) = self.changes.get(&sn) {
                let mut qos = Vec::new();
                let has_qos = self.inline_qos(sn, &c.change, false, &mut qos);
                mb.info_ts(c.change.timestamp);
                mb.data(&Data {
                    reader_id: reader.entity,
                    writer_id: self.guid.entity,
                    writer_sn: sn,
                    inline_qos: has_qos.then(|| ParameterList::new(&qos, true)),
                    payload: (!c.change.payload.is_empty()).then_some(&c.change.payload[..]),
                    key_flag: c.change.kind != crate::event::ChangeKind::Alive,
                    non_standard_flag: false,
                });
            }
        }
        if let Some((s, e)) = gap {
            push_gap(&mut mb, reader.entity, self.guid.entity, s, e);
        }
        if let Some(p) = self.proxies.get_mut(&reader) {
            p.requested.extend(waiting);
        }
        let sent_something = mb.len() > empty || sent_fragmented;
        if sent_something || force_hb {
            let hb = self.heartbeat_to(&reader, false);
            mb.heartbeat(&hb);
            self.note_hb_sent(ctx.now);
        }
        ctx.out.push(mb, empty, &dests);
        if sent_something {
            // As after fragment repairs: if these repairs (or the HEARTBEAT with them) are lost,
            // ask again within the fast interval, not after one that has backed off meanwhile.
            self.hurry_heartbeat(ctx.now, ctx.cfg);
        }
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
            let hb = self.heartbeat_to(&g, false);
            mb.heartbeat(&hb);
            self.note_hb_sent(now);
            out.push(mb, empty, &dests);
        }
    }

    /// True if repairs were sent that still owe their HEARTBEAT.
    pub(crate) fn owes_repair_heartbeat(&self) -> bool {
        !self.repaired.is_empty()
    }

    fn send_gap(
        &mut self,
        out: &mut Outbox,
        reader: Guid,
        start: SequenceNumber,
        end: SequenceNumber,
    ) {
        let Some(p) = self.proxies.get(&reader) else {
            return;
        };
        let dests = p.locators.clone();
        let mut mb = out.start(Some(reader.prefix));
        let empty = mb.len();
        push_gap(&mut mb, reader.entity, self.guid.entity, start, end);
        out.push(mb, empty, &dests);
    }

    /// Periodic duties: paced samples whose tokens came, a due batch, and a HEARTBEAT while
    /// any reliable reader has not acknowledged everything (`shared`: the participant's
    /// bucket, if it has a bandwidth limit).
    /// Asserts MANUAL_BY_TOPIC liveliness: a HEARTBEAT with the liveliness flag (and the
    /// final flag: no answer wanted) to every matched reader.
    pub(crate) fn send_liveliness_heartbeat(&mut self, out: &mut Outbox) {
        if self.fanout.is_empty() {
            return;
        }
        self.flush_batch(out);
        let dests = self.fanout.clone();
        let mut mb = out.start(self.fanout_prefix);
        let empty = mb.len();
        let mut hb = self.heartbeat(EntityId::UNKNOWN, true);
        hb.liveliness_flag = true;
        mb.heartbeat(&hb);
        out.push(mb, empty, &dests);
    }

    pub(crate) fn on_timeout(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        shared: Option<&mut TokenBucket>,
    ) {
        if self.lifespan.is_some() {
            self.expire_lifespan(now);
        }
        self.pump_paced(&mut Ctx { now, out, cfg }, shared);
        if self.pending.as_ref().is_some_and(|b| now >= b.due) {
            self.flush_data_batch(out);
        }
        if self.pending_gaps.iter().any(|g| now >= g.due) {
            self.flush_gaps(out);
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
            .filter(|p| {
                p.reliable && (!p.synced || p.acked_below <= last || !p.acknack_counts.seen())
            })
            .map(|p| p.guid)
            .collect();
        if unacked.is_empty() {
            self.hb_due = None;
            return;
        }
        let one_datagram = (self.fanout_prefix.is_some() || !self.per_reader)
            && self.proxies.values().all(|p| p.synced);
        if one_datagram && unacked.len() == self.proxies.len() && self.fanout.len() <= unacked.len()
        {
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
                let hb = self.heartbeat_to(&g, false);
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
        // Back off while readers merely lag; not while half the flow-control window waits
        // for them: then the application is (or soon will be) blocked on their repairs, and
        // on a lossy path a HEARTBEAT backed off to the full period after a few lost ones
        // left the stream idle for most of it (Cyclone, too, heartbeats faster the fuller its
        // writer history is).
        let congested = 2 * self.unacked_bytes_cache >= self.window(cfg, 0);
        if !congested {
            self.hb_interval = (self.hb_interval * 2).min(cfg.heartbeat_period);
        }
    }
}

/// True if ACKNACK `an` from a reader not yet synchronised (see the module `writer`'s "First
/// synchronisation"; `first` = its first ACKNACK accepted, `start` = its first sequence number)
/// proves the reader heard a HEARTBEAT of ours, so it knows where its stream starts:
///
/// - a pre-emptive ACKNACK, sent before any HEARTBEAT, proves nothing: Cyclone DDS's and
///   Halyard's acknowledge nothing (base 1, no bits; Cyclone's has count 0, RTI's base 0);
/// - the reader acknowledges everything before `start`: only our HEARTBEAT [start, start - 1]
///   told it so, unless `start` is 1;
/// - with `start` 1, an ACKNACK that follows another one: a reader acknowledges nothing again
///   before it heard from us only in a pre-emptive ACKNACK, which Cyclone resends with count 0
///   and Halyard never resends.
fn acknack_proves_sync(an: &AckNack, first: bool, start: SequenceNumber) -> bool {
    let base = an.reader_sn_state.base;
    let cyclone_preemptive = base <= SequenceNumber(1) && an.count == 0;
    !cyclone_preemptive && base >= start && (base > SequenceNumber(1) || !first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::SequenceNumberSet;

    fn acknack(base: i64, count: i32) -> AckNack {
        AckNack {
            reader_id: EntityId([0, 0, 1, 4]),
            writer_id: EntityId([0, 0, 1, 3]),
            reader_sn_state: SequenceNumberSet::new(SequenceNumber(base), 0),
            count,
            final_flag: true,
        }
    }

    #[test]
    fn preemptive_acknacks_prove_no_synchronisation() {
        // Cyclone DDS's pre-emptive ACKNACK (base 1, count 0), first or repeated.
        assert!(!acknack_proves_sync(
            &acknack(1, 0),
            true,
            SequenceNumber(1)
        ));
        assert!(!acknack_proves_sync(
            &acknack(1, 0),
            false,
            SequenceNumber(1)
        ));
        // Halyard's (base 1, any count) when it is the reader's first.
        assert!(!acknack_proves_sync(
            &acknack(1, 24577),
            true,
            SequenceNumber(1)
        ));
        // Any reader still before a start beyond 1.
        assert!(!acknack_proves_sync(
            &acknack(1, 3),
            false,
            SequenceNumber(5)
        ));
        assert!(!acknack_proves_sync(
            &acknack(4, 3),
            false,
            SequenceNumber(5)
        ));
    }

    #[test]
    fn an_answer_to_the_start_heartbeat_proves_synchronisation() {
        assert!(acknack_proves_sync(&acknack(5, 1), true, SequenceNumber(5)));
        assert!(acknack_proves_sync(
            &acknack(1, 1),
            false,
            SequenceNumber(1)
        ));
        assert!(acknack_proves_sync(
            &acknack(1, 24578),
            false,
            SequenceNumber(1)
        ));
    }
}
