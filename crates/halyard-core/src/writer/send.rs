//! Sending a writer's changes: new samples to every matched reader (whole, fragmented, or
//! gathered into a batch), and resent changes or fragments to one reader.

use super::{fast_heartbeat, Ctx, NewChange, Writer};
use crate::config::{ParticipantConfig, HEARTBEAT_EVERY_BYTES, MAX_FRAGMENT_SIZE, MIN_BATCH_BYTES};
use crate::event::ChangeKind;
use crate::outbox::Outbox;
use crate::pacing::TokenBucket;
use crate::time::Instant;
use halyard_wire::param::ParameterList;
use halyard_wire::{Data, DataFrag, EntityId, GuidPrefix, Locator, MessageBuilder, SequenceNumber};

/// The datagram being gathered and where it goes (fixed when it was started, so readers
/// matched later are not sent samples written before they matched).
pub(super) struct PendingBatch {
    mb: MessageBuilder,
    empty_len: usize,
    dests: Vec<Locator>,
    prefix: Option<GuidPrefix>,
    pub(super) due: Instant,
}

/// How a sample is cut into fragments.
#[derive(Clone, Copy, Debug)]
pub(super) struct FragmentLayout {
    /// Bytes per fragment (all but the last).
    pub(super) size: usize,
    /// Fragments of the sample.
    pub(super) total: u32,
    /// Fragments a datagram carries at most.
    pub(super) per_datagram: u32,
}

impl FragmentLayout {
    /// The layout of a `len`-byte sample whose datagrams need `overhead` bytes beyond the
    /// fragments (headers, inline QoS, data protection).
    pub(super) fn of(cfg: &ParticipantConfig, len: usize, overhead: usize) -> FragmentLayout {
        let size = cfg
            .fragment_size
            .clamp(crate::config::MIN_FRAGMENT_SIZE, MAX_FRAGMENT_SIZE);
        let per_datagram = ((cfg.max_message_size.saturating_sub(overhead)) / size)
            .clamp(1, u16::MAX as usize) as u32;
        FragmentLayout {
            size,
            total: len.div_ceil(size) as u32,
            per_datagram,
        }
    }
}

/// Where a datagram goes: the reader it is addressed to (`UNKNOWN`: every matched reader),
/// the participant named in INFO_DST (`None` when several), and the locators.
#[derive(Clone, Copy)]
pub(super) struct Target<'a> {
    pub(super) reader_id: EntityId,
    pub(super) prefix: Option<GuidPrefix>,
    pub(super) dests: &'a [Locator],
}

/// What to send of a change, and whether a HEARTBEAT follows it.
#[derive(Clone, Copy)]
pub(super) struct Sending<'a> {
    /// `None`: the whole change (or, if fragmented, its first burst of fragments).
    pub(super) fragments: Option<&'a [u32]>,
    pub(super) with_heartbeat: bool,
}

impl Sending<'_> {
    /// The whole change, without a HEARTBEAT.
    pub(super) fn whole() -> Self {
        Sending {
            fragments: None,
            with_heartbeat: false,
        }
    }
}

/// A change ready to go on the wire: its payload and encoded inline QoS.
struct Encoded<'a> {
    sn: SequenceNumber,
    change: &'a NewChange,
    qos: Option<&'a [u8]>,
}

impl Encoded<'_> {
    fn data<'b>(&'b self, reader_id: EntityId, writer_id: EntityId) -> Data<'b> {
        Data {
            reader_id,
            writer_id,
            writer_sn: self.sn,
            inline_qos: self.qos.map(|q| ParameterList::new(q, true)),
            // An empty payload is a coherent set's end marker: a DATA without data.
            payload: (!self.change.payload.is_empty()).then_some(&self.change.payload[..]),
            key_flag: self.change.kind != ChangeKind::Alive,
            non_standard_flag: false,
        }
    }
}

impl Writer {
    /// Sends a new change to every matched reader (one datagram per fragment group), or
    /// queues it for the pacer. Readers whose filter rejects it get a GAP or nothing (see
    /// [`super::filter`]).
    pub(super) fn send_new(
        &mut self,
        ctx: &mut Ctx<'_>,
        sn: SequenceNumber,
        shared: Option<&mut TokenBucket>,
    ) {
        if self.fanout.is_empty() {
            if self.filters_any() {
                // Readers still synchronising get this change later, as a repair: their time
                // filters decide on it now, in write order, as for every other reader.
                self.rejecting(sn);
            }
            return;
        }
        if std::mem::take(&mut self.pace_stale) {
            self.refresh_pace(ctx.now, ctx.cfg);
        }
        let len = self.changes.get(&sn).map_or(0, |c| c.change.payload.len());
        let fragmented = len + self.data_overhead() > ctx.cfg.max_message_size;
        if self.relay
            && !fragmented
            && !self.paces(fragmented, shared.is_some())
            && self.extend_live_gaps(ctx.now, ctx.cfg, sn, len)
        {
            return;
        }
        // The one branch writer-side filtering costs when no reader filters.
        let rejecting = if self.filters_any() {
            self.rejecting(sn)
        } else {
            Vec::new()
        };
        if self.paces(fragmented, shared.is_some()) {
            if let Some(change) = self.changes.get(&sn).map(|c| c.change.clone()) {
                let (dests, prefix) = if rejecting.is_empty() {
                    (self.fanout.clone(), self.fanout_prefix)
                } else {
                    self.accepting_dests(&rejecting)
                };
                if !dests.is_empty() {
                    self.enqueue_paced(sn, change, fragmented, dests, prefix);
                }
                self.pump_paced(ctx, shared);
            }
            return;
        }
        let want_hb = self.heartbeat_due_with(ctx.now, ctx.cfg, len)
            || (fragmented && self.has_reliable_proxy());
        self.spend_unpaced(len);
        self.bytes_since_hb += len;
        if rejecting.is_empty() {
            let dests = std::mem::take(&mut self.fanout);
            let to = Target {
                reader_id: EntityId::UNKNOWN,
                prefix: self.fanout_prefix,
                dests: &dests,
            };
            let what = Sending {
                fragments: None,
                with_heartbeat: want_hb,
            };
            self.send_change(ctx, sn, to, what);
            self.fanout = dests;
        } else {
            self.send_filtered(ctx, sn, &rejecting, want_hb);
        }
        if self.has_reliable_proxy() {
            self.hurry_heartbeat(ctx.now, ctx.cfg);
        }
    }

    /// True if a HEARTBEAT goes with a new change of `len` bytes: a reliable reader is
    /// matched, and enough bytes or time passed since the last one.
    pub(super) fn heartbeat_due_with(
        &self,
        now: Instant,
        cfg: &ParticipantConfig,
        len: usize,
    ) -> bool {
        self.has_reliable_proxy()
            && (self.bytes_since_hb + len >= HEARTBEAT_EVERY_BYTES
                || now.saturating_duration_since(self.last_hb_at) >= cfg.heartbeat_period / 10)
    }

    /// Back to the fast heartbeat interval after progress, with a HEARTBEAT due within it.
    pub(super) fn hurry_heartbeat(&mut self, now: Instant, cfg: &ParticipantConfig) {
        self.hb_interval = fast_heartbeat(cfg);
        let due = now + self.hb_interval;
        self.hb_due = Some(self.hb_due.map_or(due, |d| d.min(due)));
    }

    /// Sends change `sn` to `to` (whole, its first burst of fragments, or the fragments
    /// asked for), followed by a HEARTBEAT when asked to.
    pub(super) fn send_change(
        &mut self,
        ctx: &mut Ctx<'_>,
        sn: SequenceNumber,
        to: Target<'_>,
        what: Sending<'_>,
    ) {
        let Some(cc) = self.changes.get(&sn) else {
            return;
        };
        let change = cc.change.clone();
        self.send_held(ctx, sn, &change, to, what);
    }

    /// As [`Writer::send_change`], for a change given rather than looked up in the history
    /// (a paced best-effort sample is no longer there).
    pub(super) fn send_held(
        &mut self,
        ctx: &mut Ctx<'_>,
        sn: SequenceNumber,
        change: &NewChange,
        to: Target<'_>,
        what: Sending<'_>,
    ) {
        let mut qos = std::mem::take(&mut self.inline_scratch);
        let overhead = self.data_overhead();
        let fragmented = change.payload.len() + overhead > ctx.cfg.max_message_size;
        let has_qos = self.inline_qos(sn, change, fragmented, &mut qos);
        let enc = Encoded {
            sn,
            change,
            qos: has_qos.then_some(&qos[..]),
        };
        self.send_encoded(ctx, &enc, overhead, to, what);
        self.inline_scratch = qos;
    }

    /// [`Writer::send_held`] once the change's inline QoS is known.
    fn send_encoded(
        &mut self,
        ctx: &mut Ctx<'_>,
        enc: &Encoded<'_>,
        overhead: usize,
        to: Target<'_>,
        what: Sending<'_>,
    ) {
        let change = enc.change;
        let qos_len = enc.qos.map_or(0, <[u8]>::len);
        let fits = change.payload.len() + qos_len + overhead <= ctx.cfg.max_message_size;
        let whole = fits && what.fragments.is_none();
        // A batch goes to the fanout's participant: a datagram for one participant of several
        // (a filtered sample, see `super::filter`) is not batched.
        if whole
            && to.reader_id == EntityId::UNKNOWN
            && to.prefix == self.fanout_prefix
            && self.batch_policy.is_some()
        {
            self.append_to_batch(ctx, enc, to.dests, what.with_heartbeat);
            return;
        }
        self.flush_batch(ctx.out);
        if whole {
            let mut mb = ctx.out.start(to.prefix);
            mb.info_ts(change.timestamp);
            mb.data(&enc.data(to.reader_id, self.guid.entity));
            if what.with_heartbeat {
                let hb = self.heartbeat(to.reader_id, false);
                mb.heartbeat(&hb);
                self.note_hb_sent(ctx.now);
            }
            ctx.out.push(mb, 0, to.dests);
            return;
        }
        self.send_fragments(ctx, enc, to, what);
    }

    /// Sends fragments of a change in datagrams of consecutive runs: those asked for, or the
    /// first burst (`fragment_burst_bytes` to reliable readers, all of them otherwise).
    fn send_fragments(
        &mut self,
        ctx: &mut Ctx<'_>,
        enc: &Encoded<'_>,
        to: Target<'_>,
        what: Sending<'_>,
    ) {
        let cfg = ctx.cfg;
        let payload = &enc.change.payload;
        let FragmentLayout {
            size: frag_size,
            total,
            per_datagram: per_msg,
        } = FragmentLayout::of(
            cfg,
            payload.len(),
            self.data_overhead() + enc.qos.map_or(0, |q| q.len()),
        );
        let reliable = self.has_reliable_proxy();
        let burst = (cfg.fragment_burst_bytes / frag_size).max(per_msg as usize) as u32;
        // A tail of under a quarter burst goes with the burst: pulling it with a NACK_FRAG
        // would cost a round trip for a few fragments (a sample just over 1 MiB did so).
        let budget_frags = if !reliable || total <= burst + burst / 4 {
            total
        } else {
            burst
        };
        let wanted: Vec<u32> = match what.fragments {
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
            let hi = ((start + n - 1) as usize * frag_size).min(payload.len());
            debug_assert!(
                lo < hi && hi <= payload.len() && n <= per_msg,
                "fragments {start}+{n} of {total} lie outside the sample"
            );
            let mut mb = ctx.out.start(to.prefix);
            mb.info_ts(enc.change.timestamp);
            mb.data_frag(&DataFrag {
                reader_id: to.reader_id,
                writer_id: self.guid.entity,
                writer_sn: enc.sn,
                fragment_starting_num: start,
                fragments_in_submessage: n as u16,
                fragment_size: frag_size as u16,
                sample_size: payload.len() as u32,
                inline_qos: (start == 1)
                    .then_some(enc.qos)
                    .flatten()
                    .map(|q| ParameterList::new(q, true)),
                payload: &payload[lo..hi],
                key_flag: enc.change.kind != ChangeKind::Alive,
            });
            ctx.out.push(mb, 0, to.dests);
            i += n as usize;
            sent += n;
        }
        if reliable && what.with_heartbeat {
            let mut mb = ctx.out.start(to.prefix);
            let hb = self.heartbeat(to.reader_id, false);
            mb.heartbeat(&hb);
            self.note_hb_sent(ctx.now);
            ctx.out.push(mb, 0, to.dests);
        }
    }

    /// Turns batching on (or off, sending what is pending).
    pub(crate) fn set_batching(&mut self, out: &mut Outbox, policy: Option<super::BatchPolicy>) {
        if policy.is_none() {
            self.flush_batch(out);
        }
        self.batch_policy = policy;
    }

    /// When the pending batch (or pending GAPs) must be sent, if there is one.
    pub(crate) fn batch_due(&self) -> Option<Instant> {
        let gaps = self.pending_gaps.iter().map(|g| g.due).min();
        crate::time::earliest(self.pending.as_ref().map(|b| b.due), gaps)
    }

    /// Sends the pending batch and the pending GAPs, if any.
    pub(crate) fn flush_batch(&mut self, out: &mut Outbox) {
        self.flush_data_batch(out);
        self.flush_gaps(out);
    }

    /// Sends the pending batch of DATA only.
    pub(super) fn flush_data_batch(&mut self, out: &mut Outbox) {
        if let Some(b) = self.pending.take() {
            out.push(b.mb, b.empty_len, &b.dests);
        }
    }

    /// Appends INFO_TS + DATA of a change (and a HEARTBEAT when `with_hb`) to the pending
    /// batch, starting one (or sending a full one first) as needed.
    fn append_to_batch(
        &mut self,
        ctx: &mut Ctx<'_>,
        enc: &Encoded<'_>,
        dests: &[Locator],
        with_hb: bool,
    ) {
        let Some(policy) = self.batch_policy else {
            return;
        };
        // GAPs of earlier changes go before this one.
        self.flush_gaps(ctx.out);
        let limit = policy
            .max_bytes
            .clamp(MIN_BATCH_BYTES, ctx.cfg.max_message_size);
        let need = enc.change.payload.len() + enc.qos.map_or(0, |q| q.len()) + self.data_overhead();
        if self.pending.as_ref().is_some_and(|b| {
            b.mb.len() + need > limit || b.dests != dests || b.prefix != self.fanout_prefix
        }) {
            self.flush_batch(ctx.out);
        }
        let prefix = self.fanout_prefix;
        let now = ctx.now;
        let b = self.pending.get_or_insert_with(|| {
            let mb = ctx.out.start(prefix);
            PendingBatch {
                empty_len: mb.len(),
                mb,
                dests: dests.to_vec(),
                prefix,
                due: now + policy.max_flush_delay,
            }
        });
        b.mb.info_ts(enc.change.timestamp);
        b.mb.data(&enc.data(EntityId::UNKNOWN, self.guid.entity));
        // Full once another sample of this size would not fit: it goes now rather than at the
        // next write or the flush delay (a large sample alone in a batch otherwise waited for
        // the next write, and every write set the timer to the flush delay).
        let full = b.mb.len() + need > limit;
        if with_hb {
            let hb = self.heartbeat(EntityId::UNKNOWN, false);
            if let Some(b) = self.pending.as_mut() {
                b.mb.heartbeat(&hb);
            }
            self.note_hb_sent(now);
        }
        if full {
            self.flush_batch(ctx.out);
        }
    }
}
