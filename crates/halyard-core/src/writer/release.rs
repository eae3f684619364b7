//! Released payloads: a relay whose driver keeps every change's bytes elsewhere (a durability
//! service's store) holds only the changes' metadata once its readers have them.
//!
//! Design. A durability service's relay holds the whole stored history for readers that come
//! later. Held in memory, a PERSISTENT topic of a million 1 KB samples costs a gigabyte of
//! heap beside the same bytes on disk, and every stored sample grows the heap. With release on
//! ([`Writer::set_releases_payloads`]) each change is written with the driver's locator of its
//! bytes (`stored_at`: a store row, say); once every reliable reader acknowledged it, its
//! payload is dropped and only its metadata stays (sequence number, kind, key hash, source
//! timestamp, original writer: about a hundred bytes). A change loaded from the store at start
//! is written released from the outset ([`Writer::write_released`]).
//!
//! A reader that asks for a released change (a late joiner's history, a repair) is not sent a
//! GAP: the sequence number stays among its requests and joins the writer's `wanted` set. The
//! participant reports `Event::PayloadsWanted`; the driver takes the wanted changes' locators
//! ([`Writer::take_wanted`]), reads their bytes and hands them back ([`Writer::restore`]),
//! and the requests are then served like any others. A payload the driver no longer has (its
//! store evicted or purged it) drops the change, and the readers that asked get a GAP.
//! Restored payloads are released again once acknowledged.
//!
//! Read-ahead. A late reader asks for its history a NACK at a time (256 sequence numbers
//! each), and every NACK whose changes are all released waited for a round through the driver
//! (event, store read, restore) before anything was sent: the catch-up went at that round's
//! pace. So a want also fetches the released changes after it, once each, up to
//! [`RELAY_READ_AHEAD`](crate::config::RELAY_READ_AHEAD) changes, fewer for large samples
//! (as many as make [`RELAY_READ_AHEAD_BYTES`](crate::config::RELAY_READ_AHEAD_BYTES) at the
//! size of the change asked for): the driver reads them while the reader takes what it asked
//! for, and its next NACK finds them in memory.
//!
//! Bounds: `wanted` and `fetching` hold only sequence numbers some reader requested or that
//! follow one within that read-ahead, and each reader's requests are bounded
//! (`MAX_REQUESTED_PER_READER`), as are restored payloads, which are released again as soon
//! as every reliable reader acknowledges them.

use super::{Ctx, Writer};
use crate::config::{
    ParticipantConfig, RELAY_READ_AHEAD as READ_AHEAD, RELAY_READ_AHEAD_BYTES as READ_AHEAD_BYTES,
};
use crate::outbox::Outbox;
use crate::time::Instant;
use halyard_wire::SequenceNumber;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A releasing writer's bookkeeping (see the module).
#[derive(Debug)]
pub(crate) struct Release {
    /// Changes below were released as they were acknowledged; a restore moves it back.
    from: SequenceNumber,
    /// Released changes some reader asked for, not yet handed to the driver.
    wanted: BTreeSet<SequenceNumber>,
    /// Handed to the driver ([`Writer::take_wanted`]), not yet restored.
    fetching: BTreeSet<SequenceNumber>,
    /// `wanted` became non-empty since the participant last looked.
    notice: bool,
    /// The end of the last read-ahead (exclusive): a want within the window before it
    /// continues from there rather than walking the changes again.
    ahead_to: SequenceNumber,
    /// The empty payload released changes share (no allocation per release).
    empty: Arc<Vec<u8>>,
}

impl Release {
    fn new() -> Release {
        Release {
            from: SequenceNumber::FIRST,
            wanted: BTreeSet::new(),
            fetching: BTreeSet::new(),
            notice: false,
            ahead_to: SequenceNumber::FIRST,
            empty: Arc::new(Vec::new()),
        }
    }
}

impl Writer {
    /// Releases the payloads of changes written with a locator once every reliable reader
    /// acknowledged them, and fetches them back through the driver when a reader asks (see
    /// the module).
    pub(crate) fn set_releases_payloads(&mut self) {
        if self.release.is_none() {
            self.release = Some(Release::new());
        }
    }

    /// Whether it releases payloads ([`Writer::set_releases_payloads`]).
    pub(crate) fn releases_payloads(&self) -> bool {
        self.release.is_some()
    }

    /// Records where the driver keeps change `sn`'s bytes, and releases what is acknowledged.
    pub(crate) fn set_stored_at(&mut self, sn: SequenceNumber, stored_at: u64) {
        if let Some(c) = self.changes.get_mut(&sn) {
            c.stored_at = Some(stored_at);
        }
        // Writing may have moved the release mark past it already (no reader to wait for).
        if let Some(r) = self.release.as_mut() {
            r.from = r.from.min(sn);
        }
        self.release_acked();
    }

    /// Adds a change whose payload the driver holds at `stored_at` (`len` bytes) without
    /// bringing it into memory: readers get it when they ask, fetched then. Nothing is sent
    /// now (a HEARTBEAT announces it). `Err(Full)` as for [`Writer::write`].
    pub(crate) fn write_released(
        &mut self,
        now: Instant,
        cfg: &ParticipantConfig,
        mut change: super::NewChange,
        stored_at: u64,
        len: usize,
    ) -> Result<SequenceNumber, super::WriteError> {
        let Some(empty) = self.release.as_ref().map(|r| Arc::clone(&r.empty)) else {
            return Err(super::WriteError::UnknownWriter);
        };
        if !self.can_accept(cfg, 0) {
            return Err(super::WriteError::Full);
        }
        change.payload = empty;
        self.last_sn += 1;
        let sn = self.last_sn;
        self.insert_change(sn, change);
        if let Some(c) = self.changes.get_mut(&sn) {
            c.stored_at = Some(stored_at);
            c.released_len = Some(len);
        }
        if self.has_reliable_proxy() {
            self.hurry_heartbeat(now, cfg);
        }
        Ok(sn)
    }

    /// Releases the payloads of the changes with a locator that every reliable reader
    /// acknowledged (all of them when there is none).
    pub(super) fn release_acked(&mut self) {
        if self.release.is_none() {
            return;
        }
        let below = self.min_acked();
        let Some(r) = self.release.as_mut() else {
            return;
        };
        if r.from >= below {
            return;
        }
        for (_, c) in self.changes.range_mut(r.from..below) {
            if c.stored_at.is_some() && c.released_len.is_none() {
                let len = c.change.payload.len();
                c.released_len = Some(len);
                c.change.payload = Arc::clone(&r.empty);
                self.history_bytes -= len;
            }
        }
        r.from = below;
    }

    /// True if change `sn` is held with its payload released.
    pub(super) fn is_released(&self, sn: SequenceNumber) -> bool {
        self.changes
            .get(&sn)
            .is_some_and(|c| c.released_len.is_some())
    }

    /// A reader asked for released change `sn`: fetch it unless that is under way, and the
    /// released changes of the read-ahead after it not fetched yet.
    pub(super) fn want(&mut self, sn: SequenceNumber) {
        let Some(r) = self.release.as_mut() else {
            return;
        };
        let was_empty = r.wanted.is_empty();
        if !r.fetching.contains(&sn) {
            r.wanted.insert(sn);
        }
        // The window: READ_AHEAD changes, fewer for large samples (as many as make
        // READ_AHEAD_BYTES at the size of the one asked for). Everything it adds lies within it,
        // so however many wants a NACK makes, what is fetched beyond the highest of them stays
        // within one window.
        let len = self
            .changes
            .get(&sn)
            .and_then(|c| c.released_len)
            .unwrap_or(0)
            .max(1);
        let window = READ_AHEAD.min(
            i64::try_from(READ_AHEAD_BYTES / len)
                .unwrap_or(i64::MAX)
                .max(1),
        );
        let end = sn + window;
        // Continue the last read-ahead when `sn` lies in its window, else start after `sn`.
        let from = if r.ahead_to > sn && r.ahead_to <= end {
            r.ahead_to
        } else {
            sn + 1
        };
        if from < end {
            for (next, c) in self.changes.range(from..end) {
                if c.released_len.is_some() && !r.fetching.contains(next) {
                    r.wanted.insert(*next);
                }
            }
            r.ahead_to = end;
        }
        if was_empty && !r.wanted.is_empty() {
            r.notice = true;
        }
    }

    /// Whether wanted payloads appeared since the last call (the participant then reports
    /// `Event::PayloadsWanted` once).
    pub(crate) fn take_fetch_notice(&mut self) -> bool {
        self.release
            .as_mut()
            .is_some_and(|r| std::mem::take(&mut r.notice))
    }

    /// Up to `max` wanted changes with their locators, lowest first; they are then being
    /// fetched until [`Writer::restore`] gets them.
    pub(crate) fn take_wanted(&mut self, max: usize) -> Vec<(SequenceNumber, u64)> {
        let Some(r) = self.release.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < max {
            let Some(sn) = r.wanted.pop_first() else {
                break;
            };
            let at = self
                .changes
                .get(&sn)
                .filter(|c| c.released_len.is_some())
                .and_then(|c| c.stored_at);
            if let Some(at) = at {
                r.fetching.insert(sn);
                out.push((sn, at));
            }
        }
        out
    }

    /// The driver could not read the payloads of `sns` now (taken with
    /// [`Writer::take_wanted`]): they are wanted again, and reported again after the next
    /// datagram or timeout.
    pub(crate) fn fetch_failed(&mut self, sns: &[SequenceNumber]) {
        if let Some(r) = self.release.as_mut() {
            for sn in sns {
                if r.fetching.remove(sn) {
                    r.wanted.insert(*sn);
                }
            }
            r.notice |= !r.wanted.is_empty();
        }
    }

    /// Takes back fetched payloads (`None`: the driver no longer has it, and the change is
    /// dropped), then serves the readers' requests that waited for them.
    pub(crate) fn restore(
        &mut self,
        now: Instant,
        out: &mut Outbox,
        cfg: &ParticipantConfig,
        payloads: Vec<(SequenceNumber, Option<Arc<Vec<u8>>>)>,
    ) {
        let Some(r) = self.release.as_mut() else {
            return;
        };
        let mut lowest = None;
        let mut gone = Vec::new();
        for (sn, payload) in payloads {
            r.fetching.remove(&sn);
            let Some(c) = self.changes.get_mut(&sn) else {
                continue;
            };
            if c.released_len.is_none() {
                continue;
            }
            match payload {
                Some(p) => {
                    c.released_len = None;
                    self.history_bytes += p.len();
                    c.change.payload = p;
                    lowest = Some(lowest.map_or(sn, |l: SequenceNumber| l.min(sn)));
                }
                None => gone.push(sn),
            }
        }
        if let Some(l) = lowest {
            r.from = r.from.min(l);
        }
        for sn in gone {
            self.drop_change(sn);
        }
        let waiting: Vec<_> = self
            .proxies
            .values()
            .filter(|p| !p.requested.is_empty())
            .map(|p| p.guid)
            .collect();
        let ctx = &mut Ctx { now, out, cfg };
        for reader in waiting {
            self.serve_requests(ctx, reader, false);
        }
        // Readers repairing fragments ask again at the next HEARTBEAT: soon.
        self.hurry_heartbeat(now, cfg);
        self.release_acked();
    }
}
