//! Writer liveliness: DDS 1.4 §2.2.3.11 LIVELINESS and the RTPS 2.5 §8.4.13 writer liveliness
//! protocol.
//!
//! Design. A writer with a finite lease must show it is alive within each lease:
//! - AUTOMATIC: its participant does it. Any datagram from that participant renews it; a
//!   participant with such writers also sends a ParticipantMessageData (PMD) of kind
//!   AUTOMATIC every half of their shortest lease, so a quiet one stays alive.
//! - MANUAL_BY_PARTICIPANT: the application does it for the whole participant: any write by
//!   such a writer, or `assert_liveliness` on the participant or one of them (which sends a
//!   PMD of kind MANUAL).
//! - MANUAL_BY_TOPIC: each writer for itself: a write, or `assert_liveliness` on it (a
//!   HEARTBEAT with the liveliness flag).
//!
//! A reader keeps a [`Lease`] per matched writer with a finite lease. A writer is not alive
//! once a whole lease passed since its last assertion (LivelinessChanged, and its instances
//! lose their owner); the next assertion revives it. A local writer whose own application
//! failed to assert in time reports LivelinessLost, and its readers in the same participant
//! see it not alive (alive again after its next assertion). Checks run from one timer: the earliest
//! expiry among the leases, recomputed at each check; renewals only push expiries later, so
//! waking up early is harmless.

use crate::event::{ChangeKind, Event, ReceivedSample};
use crate::participant::Participant;
use crate::time::{wire_to_std, Instant};
use crate::writer::{NewChange, WriteError, Writer};
use halyard_wire::qos::{Liveliness, LivelinessKind};
use halyard_wire::{Duration as WireDuration, GuidPrefix};
use halyard_wire::{EntityId, Guid};
use std::time::Duration;

/// PMD kind of an automatic assertion (RTPS 2.5 §9.6.2.1).
pub(crate) const PMD_AUTOMATIC: [u8; 4] = [0, 0, 0, 1];
/// PMD kind of a manual (by participant) assertion.
pub(crate) const PMD_MANUAL: [u8; 4] = [0, 0, 0, 2];

/// A ParticipantMessageData sample: CDR big-endian encapsulation, the participant's GUID
/// prefix, the kind, and an empty `data` sequence. Its key hash is prefix and kind.
pub(crate) fn pmd_payload(prefix: GuidPrefix, kind: [u8; 4]) -> Vec<u8> {
    let mut v = Vec::with_capacity(24);
    v.extend_from_slice(&[0, 0, 0, 0]);
    v.extend_from_slice(&prefix.0);
    v.extend_from_slice(&kind);
    v.extend_from_slice(&0u32.to_be_bytes());
    v
}

/// The key hash of a PMD sample.
pub(crate) fn pmd_key(prefix: GuidPrefix, kind: [u8; 4]) -> [u8; 16] {
    let mut k = [0; 16];
    k[..12].copy_from_slice(&prefix.0);
    k[12..].copy_from_slice(&kind);
    k
}

/// The participant and kind of a received PMD sample (either CDR endianness: both fields are
/// octets); `None` if it is too short.
pub(crate) fn parse_pmd(payload: &[u8]) -> Option<(GuidPrefix, [u8; 4])> {
    let body = payload.get(4..20)?;
    let mut prefix = [0; 12];
    prefix.copy_from_slice(&body[..12]);
    let mut kind = [0; 4];
    kind.copy_from_slice(&body[12..16]);
    Some((GuidPrefix(prefix), kind))
}

/// A finite lease duration, `None` for an infinite one.
pub(crate) fn finite_lease(l: &Liveliness) -> Option<Duration> {
    (l.lease_duration != WireDuration::INFINITE).then(|| wire_to_std(l.lease_duration))
}

/// What a reader knows of one matched writer's liveliness.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lease {
    pub(crate) kind: LivelinessKind,
    pub(crate) duration: Duration,
    /// The writer's own last assertion (data, or a HEARTBEAT with the liveliness flag).
    last: Instant,
    pub(crate) alive: bool,
}

impl Lease {
    /// The lease of a writer just matched at `now` (alive), `None` if its lease is infinite.
    pub(crate) fn new(l: &Liveliness, now: Instant) -> Option<Lease> {
        finite_lease(l).map(|duration| Lease {
            kind: l.kind,
            duration,
            last: now,
            alive: true,
        })
    }

    /// The writer asserted its liveliness at `now`; true if that revived it.
    pub(crate) fn assert(&mut self, now: Instant) -> bool {
        self.last = self.last.max(now);
        !std::mem::replace(&mut self.alive, true)
    }

    /// When the writer stops being alive unless it asserts again: `heard` is when its
    /// participant was last heard from, `manual` when that participant last asserted
    /// MANUAL_BY_PARTICIPANT liveliness.
    pub(crate) fn expiry(&self, heard: Instant, manual: Instant) -> Instant {
        let base = match self.kind {
            LivelinessKind::Automatic => self.last.max(heard),
            LivelinessKind::ManualByParticipant => self.last.max(manual),
            LivelinessKind::ManualByTopic => self.last,
        };
        base + self.duration
    }
}

/// A local writer's own liveliness (MANUAL kinds with a finite lease).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OwnLiveliness {
    /// When the application last asserted it (write or assert_liveliness).
    pub(crate) last: Instant,
    /// LivelinessLost was reported and nothing asserted it since.
    pub(crate) lost: bool,
    /// Asserted again after being lost: its local readers are told at the next check.
    pub(crate) revived: bool,
}

impl Writer {
    /// The application asserted this writer at `now` (a write, or `assert_liveliness`):
    /// returns whether it had been reported lost, and whether it is MANUAL_BY_PARTICIPANT
    /// (which asserts its participant too).
    pub(crate) fn note_asserted(&mut self, now: Instant) -> (bool, bool) {
        self.own_liveliness.last = now;
        let was_lost = std::mem::replace(&mut self.own_liveliness.lost, false);
        self.own_liveliness.revived |= was_lost;
        let kind = self.spec.qos.liveliness.kind;
        (was_lost, kind == LivelinessKind::ManualByParticipant)
    }
}

// --- The participant's side: assertions, checks and PMD messages. ---

impl Participant {
    /// Reader `reader`'s proxy of `writer` saw an assertion (data, or a HEARTBEAT with the
    /// liveliness flag); `revived`: the writer was not alive before.
    pub(crate) fn liveliness_asserted(
        &mut self,
        now: Instant,
        reader: EntityId,
        writer: Guid,
        revived: bool,
        kind: LivelinessKind,
    ) {
        if kind == LivelinessKind::ManualByParticipant {
            if let Some(p) = self.remote.get_mut(&writer.prefix) {
                p.manual_asserted = now;
            }
        }
        if revived {
            self.push_event(Event::LivelinessChanged {
                reader,
                writer,
                alive: true,
            });
            self.check_liveliness_at(now);
        }
    }

    /// Makes the next liveliness check happen by `at`.
    pub(crate) fn check_liveliness_at(&mut self, at: Instant) {
        self.liveliness_next = Some(self.liveliness_next.map_or(at, |t| t.min(at)));
    }

    /// A ParticipantMessageData sample arrived: its participant is alive, and with kind
    /// MANUAL its MANUAL_BY_PARTICIPANT writers are too.
    pub(crate) fn on_participant_message(&mut self, now: Instant, s: &ReceivedSample) {
        if s.kind != ChangeKind::Alive {
            return;
        }
        let Some((prefix, kind)) = parse_pmd(&s.payload) else {
            self.stats.malformed_discovery += 1;
            return;
        };
        // A participant speaks for itself only.
        if prefix != s.writer.prefix {
            return;
        }
        let Some(p) = self.remote.get_mut(&prefix) else {
            return;
        };
        p.last_heard = now;
        let manual = kind == PMD_MANUAL;
        if manual {
            p.manual_asserted = now;
        }
        let mut revived = Vec::new();
        for (&reader, rd) in self.readers.iter_mut() {
            for (g, proxy) in rd.proxies.iter_mut().filter(|(g, _)| g.prefix == prefix) {
                let Some(l) = proxy.lease.as_mut() else {
                    continue;
                };
                let renews = l.kind == LivelinessKind::Automatic
                    || (manual && l.kind == LivelinessKind::ManualByParticipant);
                if renews && !l.alive {
                    l.alive = true;
                    revived.push((reader, *g));
                }
            }
        }
        if !revived.is_empty() {
            self.check_liveliness_at(now);
        }
        for (reader, writer) in revived {
            self.push_event(Event::LivelinessChanged {
                reader,
                writer,
                alive: true,
            });
        }
    }

    /// Liveliness duties at `now`: the periodic PMD of kind AUTOMATIC; matched writers whose
    /// lease ran out become not alive; local MANUAL writers that did not assert in time
    /// report LivelinessLost.
    pub(crate) fn liveliness_timeouts(&mut self, now: Instant) {
        if self.pmd_auto_next.is_some_and(|t| t <= now) {
            self.send_pmd(now, PMD_AUTOMATIC);
            self.pmd_auto_next = self.shortest_automatic_lease().map(|l| now + l / 2);
        }
        if self.liveliness_next.is_none_or(|t| t > now) {
            return;
        }
        let mut next: Option<Instant> = None;
        let mut events = Vec::new();
        let remote = &self.remote;
        for (&reader, rd) in self.readers.iter_mut() {
            for (g, proxy) in rd.proxies.iter_mut() {
                let Some(l) = proxy.lease.as_mut().filter(|l| l.alive) else {
                    continue;
                };
                let (heard, manual) = remote
                    .get(&g.prefix)
                    .map_or((Instant::default(), Instant::default()), |p| {
                        (p.last_heard, p.manual_asserted)
                    });
                let expiry = l.expiry(heard, manual);
                if expiry <= now {
                    l.alive = false;
                    events.push(Event::LivelinessChanged {
                        reader,
                        writer: *g,
                        alive: false,
                    });
                } else {
                    next = Some(next.map_or(expiry, |t| t.min(expiry)));
                }
            }
        }
        let manual_asserted = self.manual_asserted;
        for (&writer, w) in self.writers.iter_mut() {
            let lv = w.spec.qos.liveliness;
            if w.builtin || w.linger_until.is_some() || lv.kind == LivelinessKind::Automatic {
                continue;
            }
            let Some(lease) = finite_lease(&lv) else {
                continue;
            };
            // Readers of this participant learn of a local writer's liveliness directly.
            let local_readers = self
                .local_matches
                .get(&writer)
                .map_or(&[][..], Vec::as_slice);
            if std::mem::take(&mut w.own_liveliness.revived) {
                for &reader in local_readers {
                    events.push(Event::LivelinessChanged {
                        reader,
                        writer: w.guid,
                        alive: true,
                    });
                }
            }
            if w.own_liveliness.lost {
                continue;
            }
            let base = match lv.kind {
                LivelinessKind::ManualByParticipant => w.own_liveliness.last.max(manual_asserted),
                _ => w.own_liveliness.last,
            };
            let expiry = base + lease;
            if expiry <= now {
                w.own_liveliness.lost = true;
                events.push(Event::LivelinessLost { writer });
                for &reader in local_readers {
                    events.push(Event::LivelinessChanged {
                        reader,
                        writer: w.guid,
                        alive: false,
                    });
                }
            } else {
                next = Some(next.map_or(expiry, |t| t.min(expiry)));
            }
        }
        self.liveliness_next = next;
        for e in events {
            self.push_event(e);
        }
    }

    fn shortest_automatic_lease(&self) -> Option<Duration> {
        self.writers
            .values()
            .filter(|w| !w.builtin && w.linger_until.is_none())
            .filter(|w| w.spec.qos.liveliness.kind == LivelinessKind::Automatic)
            .filter_map(|w| finite_lease(&w.spec.qos.liveliness))
            .min()
    }

    /// Writers were created or deleted: re-arms the PMD cadence and the liveliness checks.
    pub(crate) fn writer_liveliness_changed(&mut self, now: Instant) {
        self.pmd_auto_next = self.shortest_automatic_lease().map(|l| {
            self.pmd_auto_next
                .map_or(now + l / 2, |t| t.min(now + l / 2))
        });
        self.check_liveliness_at(now);
    }

    /// A local writer was asserted at `now` (a write, or `assert_liveliness`).
    pub(crate) fn own_writer_asserted(&mut self, now: Instant, writer: EntityId) {
        if let Some(note) = self.writers.get_mut(&writer).map(|w| w.note_asserted(now)) {
            self.after_assertion(now, note);
        }
    }

    /// What a writer's assertion means for the participant ([`Writer::note_asserted`]'s
    /// answer): a MANUAL_BY_PARTICIPANT writer asserts it too; a writer that had been lost is
    /// watched again.
    pub(crate) fn after_assertion(
        &mut self,
        now: Instant,
        (was_lost, by_participant): (bool, bool),
    ) {
        if by_participant {
            self.manual_asserted = now;
        }
        if was_lost {
            self.check_liveliness_at(now);
        }
    }

    /// Asserts the liveliness of this participant's MANUAL_BY_PARTICIPANT writers
    /// (`DomainParticipant::assert_liveliness`): remote readers learn it from a PMD of kind
    /// MANUAL.
    pub fn assert_liveliness(&mut self, now: Instant) {
        self.manual_asserted = now;
        let mut any = false;
        for w in self.writers.values_mut().filter(|w| !w.builtin) {
            if w.spec.qos.liveliness.kind == LivelinessKind::ManualByParticipant {
                any = true;
                if std::mem::replace(&mut w.own_liveliness.lost, false) {
                    w.own_liveliness.last = now;
                    w.own_liveliness.revived = true;
                }
            }
        }
        if any {
            self.send_pmd(now, PMD_MANUAL);
            self.check_liveliness_at(now);
        }
    }

    /// Asserts one writer's liveliness (`DataWriter::assert_liveliness`): a MANUAL_BY_TOPIC
    /// writer sends a HEARTBEAT with the liveliness flag to its readers; a
    /// MANUAL_BY_PARTICIPANT one asserts its participant; an AUTOMATIC one needs nothing.
    pub fn assert_writer_liveliness(
        &mut self,
        now: Instant,
        writer: EntityId,
    ) -> Result<(), WriteError> {
        let w = self
            .writers
            .get_mut(&writer)
            .filter(|w| w.linger_until.is_none())
            .ok_or(WriteError::UnknownWriter)?;
        match w.spec.qos.liveliness.kind {
            LivelinessKind::Automatic => {}
            LivelinessKind::ManualByTopic => {
                w.send_liveliness_heartbeat(&mut self.out);
                self.own_writer_asserted(now, writer);
            }
            LivelinessKind::ManualByParticipant => self.assert_liveliness(now),
        }
        Ok(())
    }

    fn send_pmd(&mut self, now: Instant, kind: [u8; 4]) {
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: pmd_key(self.prefix, kind),
            payload: std::sync::Arc::new(pmd_payload(self.prefix, kind)),
            timestamp: None,
            original: None,
        };
        let pmd_writer = self.participant_message_writer();
        if let Some(w) = self.writers.get_mut(&pmd_writer) {
            // KEEP_LAST 1 per kind: the history never fills.
            let _ = w.write(now, &mut self.out, &self.cfg, change, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmd_round_trip_and_lease_expiry_by_kind() {
        let p = GuidPrefix([7; 12]);
        assert_eq!(
            parse_pmd(&pmd_payload(p, PMD_MANUAL)),
            Some((p, PMD_MANUAL))
        );
        assert_eq!(parse_pmd(&[0; 10]), None);
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let l = |kind| Liveliness {
            kind,
            lease_duration: WireDuration::from_nanos(100_000_000),
        };
        let auto = Lease::new(&l(LivelinessKind::Automatic), ms(0)).unwrap();
        let mbp = Lease::new(&l(LivelinessKind::ManualByParticipant), ms(0)).unwrap();
        let mut mbt = Lease::new(&l(LivelinessKind::ManualByTopic), ms(0)).unwrap();
        // Heard from at 50 ms, manual assertion at 80 ms.
        assert_eq!(auto.expiry(ms(50), ms(80)), ms(150));
        assert_eq!(mbp.expiry(ms(50), ms(80)), ms(180));
        assert_eq!(mbt.expiry(ms(50), ms(80)), ms(100));
        mbt.alive = false;
        assert!(mbt.assert(ms(120)));
        assert!(!mbt.assert(ms(130)));
        assert_eq!(mbt.expiry(ms(0), ms(0)), ms(230));
        let infinite = Liveliness::default();
        assert!(Lease::new(&infinite, ms(0)).is_none());
    }
}
