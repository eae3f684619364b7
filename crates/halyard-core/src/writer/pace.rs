//! A best-effort writer's pacing (see [`crate::pacing`]): the samples waiting for tokens, the
//! rate they are sent at, and the readers' reception reports that set it.

use super::send::{FragmentLayout, Sending, Target};
use super::{Ctx, NewChange, Writer};
use crate::config::ParticipantConfig;
use crate::pacing::{adapt_rate, TokenBucket};
use crate::time::Instant;
use halyard_wire::qos::History;
use halyard_wire::{EntityId, Guid, GuidPrefix, Locator, ReceptionReport, SequenceNumber};
use std::collections::VecDeque;

/// A sample waiting for tokens, and how far it got.
struct Waiting {
    sn: SequenceNumber,
    change: NewChange,
    /// The next fragment to send (1: nothing sent yet); 0 for an unfragmented sample.
    next_fragment: u32,
    dests: Vec<Locator>,
    prefix: Option<GuidPrefix>,
}

impl Waiting {
    fn started(&self) -> bool {
        self.next_fragment > 1
    }
}

/// Pacing state of one writer.
#[derive(Default)]
pub(crate) struct Pacer {
    /// Configured limit in bytes per second.
    limit: Option<f64>,
    /// The bucket in force (its rate: the limit, or less if readers reported loss); `None`:
    /// not paced by itself (a participant-wide limit may still apply).
    bucket: Option<TokenBucket>,
    /// Samples waiting for tokens, oldest first; at most one not started yet.
    queue: VecDeque<Waiting>,
    /// Something waited for this writer's own tokens since the last reception report.
    limited: bool,
    /// Samples dropped whole, before any of them was sent.
    pub(crate) dropped: u64,
    /// Bytes of new data sent so far (the readers' reports are compared with it).
    pub(crate) sent: u64,
}

impl Writer {
    fn is_best_effort(&self) -> bool {
        !self.is_reliable()
    }

    /// True if a new sample of `len` bytes goes through the pacer rather than straight out: a
    /// best-effort writer with a limit (its own or the participant's) paces every sample; one
    /// paced because a reader reported loss, the fragmented ones (small samples that fit are
    /// never slowed, they only spend tokens).
    pub(super) fn paces(&self, fragmented: bool, shared: bool) -> bool {
        self.is_best_effort()
            && (self.pacer.limit.is_some()
                || shared
                || (self.pacer.bucket.is_some() && fragmented)
                || !self.pacer.queue.is_empty())
    }

    /// True while a KEEP_ALL best-effort writer must refuse a new sample: one still waits
    /// unsent (KEEP_LAST writers replace it instead).
    pub(super) fn pacer_full(&self) -> bool {
        self.spec.qos.history == History::KeepAll && self.pacer.queue.iter().any(|w| !w.started())
    }

    /// Queues new sample `sn` for `dests` (participant `prefix`, if one); a KEEP_LAST writer
    /// drops a sample still waiting unsent, whole, and counts it.
    pub(super) fn enqueue_paced(
        &mut self,
        sn: SequenceNumber,
        change: NewChange,
        fragmented: bool,
        dests: Vec<Locator>,
        prefix: Option<GuidPrefix>,
    ) {
        if let Some(i) = self.pacer.queue.iter().position(|w| !w.started()) {
            debug_assert!(
                self.spec.qos.history != History::KeepAll,
                "a KEEP_ALL writer refuses samples while one waits"
            );
            self.pacer.queue.remove(i);
            self.pacer.dropped += 1;
        }
        self.pacer.queue.push_back(Waiting {
            sn,
            change,
            next_fragment: u32::from(fragmented),
            dests,
            prefix,
        });
    }

    /// Sends what the buckets allow of the waiting samples, oldest first, one datagram at a
    /// time: `shared` is the participant's bucket, if it has a limit.
    pub(crate) fn pump_paced(&mut self, ctx: &mut Ctx<'_>, mut shared: Option<&mut TokenBucket>) {
        let now = ctx.now;
        while let Some(w) = self.pacer.queue.front() {
            let own_ready = self.pacer.bucket.as_mut().is_none_or(|b| b.ready(now));
            let shared_ready = shared.as_deref_mut().is_none_or(|b| b.ready(now));
            if !(own_ready && shared_ready) {
                self.pacer.limited |= !own_ready;
                return;
            }
            let (sn, change, dests) = (w.sn, w.change.clone(), w.dests.clone());
            let to = Target {
                reader_id: EntityId::UNKNOWN,
                prefix: w.prefix,
                dests: &dests,
            };
            let before = ctx.out.queued_bytes();
            let done = if w.next_fragment == 0 {
                self.send_held(ctx, sn, &change, to, Sending::whole());
                true
            } else {
                let layout =
                    FragmentLayout::of(ctx.cfg, change.payload.len(), self.data_overhead());
                let first = w.next_fragment;
                let last = (first + layout.per_datagram - 1).min(layout.total);
                let run: Vec<u32> = (first..=last).collect();
                let what = Sending {
                    fragments: Some(&run),
                    with_heartbeat: false,
                };
                self.send_held(ctx, sn, &change, to, what);
                if let Some(w) = self.pacer.queue.front_mut() {
                    w.next_fragment = last + 1;
                }
                last >= layout.total
            };
            let sent = ctx.out.queued_bytes().wrapping_sub(before);
            self.pacer.sent += sent as u64;
            if let Some(b) = self.pacer.bucket.as_mut() {
                b.take(sent);
            }
            if let Some(b) = shared.as_deref_mut() {
                b.take(sent);
            }
            if done {
                self.pacer.queue.pop_front();
            }
        }
    }

    /// Charges a sample sent without waiting (a small one of a writer paced for its large
    /// ones) to the writer's own bucket.
    pub(super) fn spend_unpaced(&mut self, len: usize) {
        self.pacer.sent += len as u64;
        if let Some(b) = self.pacer.bucket.as_mut() {
            b.take(len);
        }
    }

    /// When waiting samples may go on, if any wait.
    pub(crate) fn paced_due(&self, shared: Option<&TokenBucket>) -> Option<Instant> {
        self.pacer.queue.front()?;
        let own = self.pacer.bucket.as_ref().map(TokenBucket::ready_at);
        let shared = shared.map(TokenBucket::ready_at);
        Some(own.into_iter().chain(shared).max().unwrap_or_default())
    }

    /// Sets (or clears) the writer's own bandwidth limit, in bytes per second.
    pub(crate) fn set_bandwidth_limit(
        &mut self,
        now: Instant,
        cfg: &ParticipantConfig,
        limit: Option<u64>,
    ) {
        self.pacer.limit = limit.map(|l| l as f64);
        self.refresh_pace(now, cfg);
    }

    /// Samples dropped whole by pacing so far.
    pub(crate) fn paced_drops(&self) -> u64 {
        self.pacer.dropped
    }

    /// A best-effort reader's reception report: adapts the rate to that reader.
    pub(crate) fn on_reception_report(
        &mut self,
        now: Instant,
        cfg: &ParticipantConfig,
        reader: Guid,
        report: &ReceptionReport,
    ) {
        let (limited, sent_total) = (self.pacer.limited, self.pacer.sent);
        let Some(p) = self.proxies.get_mut(&reader) else {
            return;
        };
        if !p.report_counts.accept(report.count) || report.interval_us == 0 {
            return;
        }
        // What we sent since this reader's last report, against what it received.
        let (sent_before, reported_at) = p.sent_mark.replace((sent_total, now)).unwrap_or((0, now));
        let secs = now.saturating_duration_since(reported_at).as_secs_f64();
        if secs <= 0.0 {
            return;
        }
        let sent = (sent_total - sent_before) as f64 / secs;
        let received = f64::from(report.bytes) * 1e6 / f64::from(report.interval_us);
        // Report intervals and sending bursts do not line up: compare smoothed rates.
        let (sent, received) = p.smoothed.update(sent, received);
        p.path_rate = adapt_rate(p.path_rate, limited, sent, received, report.lost);
        self.pacer.limited = false;
        self.refresh_pace(now, cfg);
    }

    /// Recomputes the bucket from the limit and the readers' rates (after a report, a limit
    /// change or a reader leaving).
    pub(super) fn refresh_pace(&mut self, now: Instant, cfg: &ParticipantConfig) {
        let readers = self.proxies.values().filter_map(|p| p.path_rate);
        let rate = readers.chain(self.pacer.limit).reduce(f64::min);
        let depth = cfg.max_message_size;
        self.pacer.bucket = match (rate, self.pacer.bucket.take()) {
            (None, _) => None,
            (Some(r), Some(mut b)) => {
                b.set_rate(r, depth, now);
                Some(b)
            }
            (Some(r), None) => Some(TokenBucket::new(r, depth, now)),
        };
    }

    /// The rate the writer is paced at, in bytes per second (`None`: not paced by itself).
    pub(crate) fn paced_rate(&self) -> Option<f64> {
        self.pacer.bucket.as_ref().map(TokenBucket::rate)
    }
}
