//! What a writer knows of each reader's reception: the delivery report.
//!
//! A reliable reader's acknowledgments say how much of what it was owed it has; a best-effort
//! reader says nothing, and a reader of the same participant is handed each change as it is
//! written. The report lists every reader matched now and the last [`MAX_DEPARTED_READERS`]
//! that left, each as it stood when it left: a tool that wrote a few samples and waits for
//! its readers can then say truthfully which of them acknowledged everything, even a reader
//! that took what it wanted and went away before the tool looked.

use super::ReaderProxy;
use halyard_wire::{Guid, SequenceNumber};
use std::collections::VecDeque;

/// Readers that left a writer whose last state the writer remembers.
pub const MAX_DEPARTED_READERS: usize = 256;

/// What a writer knows of what one reader received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reception {
    /// A reliable reader acknowledged `acknowledged` of the `owed` changes (samples,
    /// disposals, unregistrations) written while it was matched and meant for it.
    Acknowledged {
        /// Changes it acknowledged.
        acknowledged: u64,
        /// Changes it was owed.
        owed: u64,
    },
    /// A best-effort reader: nothing tells what it received.
    Unknown,
    /// A reader of the same participant: handed every change as it was written.
    Local,
}

/// One reader in a writer's delivery report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderDelivery {
    /// The reader.
    pub reader: Guid,
    /// Still matched (false: it left, and this is how it stood then).
    pub matched: bool,
    /// A durability service's reader (what it acknowledged is stored).
    pub durability_service: bool,
    /// What it received.
    pub reception: Reception,
}

impl ReaderDelivery {
    /// True when the reader acknowledged everything it was owed, or is local.
    pub fn has_everything(&self) -> bool {
        match self.reception {
            Reception::Acknowledged { acknowledged, owed } => acknowledged >= owed,
            Reception::Local => true,
            Reception::Unknown => false,
        }
    }
}

/// The reception of remote reader `p` of a writer whose next sequence number is `next`.
pub(crate) fn of_proxy(p: &ReaderProxy, next: SequenceNumber, matched: bool) -> ReaderDelivery {
    let reception = if p.reliable {
        let owed = next.0.saturating_sub(p.start_sn.0).max(0) as u64;
        let acknowledged = p
            .acked_below
            .0
            .saturating_sub(p.start_sn.0)
            .clamp(0, owed as i64);
        Reception::Acknowledged {
            acknowledged: acknowledged as u64,
            owed,
        }
    } else {
        Reception::Unknown
    };
    ReaderDelivery {
        reader: p.guid,
        matched,
        durability_service: p.durability_service,
        reception,
    }
}

/// The readers that left, newest last, at most [`MAX_DEPARTED_READERS`], each with the first
/// change it was owed.
#[derive(Debug, Default)]
pub(crate) struct Departed(VecDeque<(ReaderDelivery, SequenceNumber)>);

impl Departed {
    /// Records reader `p` leaving a writer whose next sequence number is `next`.
    pub(crate) fn record(&mut self, p: &ReaderProxy, next: SequenceNumber) {
        if self.0.len() == MAX_DEPARTED_READERS {
            self.0.pop_front();
        }
        self.0.retain(|(d, _)| d.reader != p.guid);
        self.0.push_back((of_proxy(p, next, false), p.start_sn));
        debug_assert!(self.0.len() <= MAX_DEPARTED_READERS);
    }

    /// The departed readers not matched again since.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ReaderDelivery> {
        self.0.iter().map(|(d, _)| d)
    }

    /// Reader `guid` matched again: its departure record goes.
    pub(crate) fn returned(&mut self, guid: &Guid) {
        self.0.retain(|(d, _)| d.reader != *guid);
    }

    /// An ACKNACK of departed reader `guid` acknowledging everything below `base`: its last
    /// word, overtaken by its SEDP disposal (discovery and data travel on different sockets).
    /// A base past what the reader was owed is damage and changes nothing.
    pub(crate) fn acknowledged(&mut self, guid: &Guid, base: SequenceNumber) {
        let Some((d, start)) = self.0.iter_mut().find(|(d, _)| d.reader == *guid) else {
            return;
        };
        if let Reception::Acknowledged { acknowledged, owed } = &mut d.reception {
            let upto = base.0.saturating_sub(start.0);
            if upto >= 0 && upto as u64 <= *owed {
                *acknowledged = (*acknowledged).max(upto as u64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::{EntityId, GuidPrefix};

    fn proxy(n: u8, reliable: bool, start: i64, acked_below: i64) -> ReaderProxy {
        let mut p = ReaderProxy::new(
            Guid::new(GuidPrefix([n; 12]), EntityId::new(1, 7)),
            Vec::new(),
            reliable,
        );
        p.start_sn = SequenceNumber(start);
        p.acked_below = SequenceNumber(acked_below);
        p
    }

    #[test]
    fn reception_counts_what_was_owed_from_the_readers_start() {
        // Matched when 10 changes were written; 5 more since; it acknowledged 3 of them.
        let d = of_proxy(&proxy(1, true, 11, 14), SequenceNumber(16), true);
        assert_eq!(
            d.reception,
            Reception::Acknowledged {
                acknowledged: 3,
                owed: 5
            }
        );
        assert!(!d.has_everything());
        let d = of_proxy(&proxy(1, true, 11, 16), SequenceNumber(16), true);
        assert!(d.has_everything());
        // Nothing written since it matched: it has everything.
        assert!(of_proxy(&proxy(1, true, 16, 16), SequenceNumber(16), true).has_everything());
        let d = of_proxy(&proxy(2, false, 1, 1), SequenceNumber(16), true);
        assert_eq!(d.reception, Reception::Unknown);
        assert!(!d.has_everything());
    }

    #[test]
    fn departures_are_bounded_and_a_returning_reader_is_not_listed_twice() {
        let mut dep = Departed::default();
        for i in 0..(MAX_DEPARTED_READERS + 5) {
            let mut p = proxy(1, true, 1, 3);
            p.guid.entity = EntityId::new(i as u32 + 1, 7);
            dep.record(&p, SequenceNumber(3));
        }
        assert_eq!(dep.iter().count(), MAX_DEPARTED_READERS);
        let p = proxy(9, true, 1, 2);
        dep.record(&p, SequenceNumber(3));
        dep.record(&p, SequenceNumber(3));
        assert_eq!(dep.iter().filter(|d| d.reader == p.guid).count(), 1);
        // Its last ACKNACK, overtaken by its departure, still counts; damage does not.
        dep.acknowledged(&p.guid, SequenceNumber(9));
        dep.acknowledged(&p.guid, SequenceNumber(3));
        let d = dep.iter().find(|d| d.reader == p.guid).copied();
        assert!(d.is_some_and(|d| d.has_everything()), "{d:?}");
        dep.returned(&p.guid);
        assert_eq!(dep.iter().filter(|d| d.reader == p.guid).count(), 0);
    }
}
