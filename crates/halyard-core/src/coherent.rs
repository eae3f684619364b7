//! PRESENTATION coherent access (DDS 1.4 §2.2.3.6, RTPS 2.5 §8.7.6), INSTANCE and TOPIC
//! access scope: a reader takes a writer's coherent set whole or not at all.
//!
//! Design.
//! - Writer: between `begin_coherent_set` and `end_coherent_set` every change carries
//!   PID_COHERENT_SET, the sequence number of the set's first change. The end is an
//!   end-of-set marker: a DATA without payload whose PID_COHERENT_SET is
//!   SEQUENCENUMBER_UNKNOWN, with its own sequence number, so the set completes without
//!   waiting for the next write (see `Writer::end_coherent`). Readers that did not ask for
//!   coherent access, and implementations that do not know coherent sets (Cyclone DDS among
//!   them), take the members as ordinary samples and the marker as nothing.
//! - Reader: a [`CoherentGate`] per matched writer that offers coherent access, behind the
//!   in-order delivery of that writer's changes. A member is held while its set is open; the
//!   set is released, in order and in one go, when a change of another set or outside any
//!   set arrives (the marker is one). A set is complete only if every sequence number from
//!   its first to its last arrived: a hole (a change lost, given up by a GAP or evicted
//!   before it was sent; for a reliable reader with a content filter a skipped number is what
//!   a writer filtered out and does not count), a first member missing (a late joiner) or a
//!   set larger than the reader can hold makes it incomplete, and an incomplete set is
//!   discarded and counted as lost. A set still open when its writer goes away is discarded with the proxy.
//! - Readers in the writer's own participant get the members held by the participant until
//!   the set ends (`Participant::end_coherent_set`).
//! - GROUP access scope (sets across the writers of a publisher) builds on these gates: a
//!   GROUP set's end marker passes the gate (it ends the writer's part), and a part found
//!   incomplete is reported in `broken_groups`; see [`crate::group_coherent`].

use crate::event::Event;
use crate::participant::Participant;
use crate::reader::Arrival;
use crate::time::Instant;
use halyard_wire::{EntityId, Guid, SequenceNumber};

/// A reader's view of one writer's coherent sets.
#[derive(Debug)]
pub(crate) struct CoherentGate {
    open: Option<OpenSet>,
    /// The last sequence number taken in order (to find holes).
    last: Option<SequenceNumber>,
    /// Members a set may hold before it counts as incomplete.
    max_held: usize,
    /// A sequence number skipped inside a set makes it incomplete; false for a reliable
    /// reader with a content filter, whose skipped numbers are what writers filtered out
    /// (reliable delivery repairs everything else).
    holes_break: bool,
    /// Samples of incomplete sets discarded and not yet reported.
    pub(crate) dropped: u64,
    /// GROUP coherent sets (set, last GSN seen) whose part from this writer was incomplete,
    /// not yet reported.
    pub(crate) broken_groups: Vec<(SequenceNumber, SequenceNumber)>,
    /// Every change since the last GROUP set's end arrived (false until one did).
    contiguous: bool,
}

#[derive(Debug)]
struct OpenSet {
    first: SequenceNumber,
    held: Vec<(SequenceNumber, Arrival)>,
    broken: bool,
    /// The GROUP coherent set its members belong to (set, GSN of the last), if any.
    group: Option<(SequenceNumber, SequenceNumber)>,
    /// The gate's `contiguous` when the set opened with its first member.
    contiguous: bool,
}

impl CoherentGate {
    pub(crate) fn new(max_held: usize, holes_break: bool) -> Self {
        CoherentGate {
            open: None,
            last: None,
            max_held,
            holes_break,
            dropped: 0,
            broken_groups: Vec::new(),
            contiguous: false,
        }
    }

    /// Takes the next change of the writer in sequence order; appends to `ready` what the
    /// application may now have, in order.
    pub(crate) fn admit(
        &mut self,
        sn: SequenceNumber,
        a: Arrival,
        ready: &mut Vec<(SequenceNumber, Arrival)>,
    ) {
        let hole = self.holes_break && self.last.is_some_and(|l| sn > l + 1);
        // Nothing of the writer seen before, and not its first change: what came before it
        // (a part's members, for an end marker) is unknown.
        let unknown_before = self.last.is_none() && sn != SequenceNumber(1);
        self.last = Some(sn);
        if hole {
            self.contiguous = false;
            if let Some(o) = self.open.as_mut() {
                o.broken = true;
            }
        }
        match a.coherent {
            Some(Some(first)) => {
                if self.open.as_ref().is_some_and(|o| o.first != first) {
                    self.close(ready);
                }
                let o = self.open.get_or_insert_with(|| OpenSet {
                    first,
                    held: Vec::new(),
                    // Its first member is missing (a late joiner, or a loss before it).
                    broken: sn != first,
                    group: None,
                    contiguous: self.contiguous && sn == first,
                });
                if a.group.is_some() {
                    o.group = a.group;
                }
                if a.marker {
                    return;
                }
                if o.held.len() >= self.max_held {
                    o.broken = true;
                    self.dropped += 1;
                } else {
                    o.held.push((sn, a));
                }
            }
            _ => {
                self.close(ready);
                if !a.marker {
                    ready.push((sn, a));
                } else if let Some(group) = a.group {
                    // The end of this writer's part of a GROUP set. A hole just before it
                    // may have held the part's members: the part is incomplete.
                    if hole || unknown_before {
                        self.broken_groups.push(group);
                    } else {
                        let mut a = a;
                        a.contiguous = self.contiguous;
                        ready.push((sn, a));
                        self.contiguous = true;
                    }
                }
            }
        }
    }

    /// Ends the open set: released whole, or discarded if incomplete.
    fn close(&mut self, ready: &mut Vec<(SequenceNumber, Arrival)>) {
        let Some(o) = self.open.take() else {
            return;
        };
        if o.broken {
            self.dropped += o.held.len() as u64;
            if let Some(group) = o.group {
                self.broken_groups.push(group);
            }
        } else {
            let contiguous = o.contiguous;
            ready.extend(o.held.into_iter().map(|(sn, mut a)| {
                a.contiguous = contiguous;
                (sn, a)
            }));
        }
    }

    /// Samples held in an open set.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.open.as_ref().map_or(0, |o| o.held.len())
    }
}

impl Participant {
    /// Opens a coherent set on `writer` (`Publisher::begin_coherent_changes`): what it writes
    /// until [`Participant::end_coherent_set`] reaches readers that asked for coherent access
    /// whole or not at all. Already open: nothing changes.
    pub fn begin_coherent_set(&mut self, writer: EntityId) {
        if let Some(w) = self.writers.get_mut(&writer) {
            w.begin_coherent();
        }
    }

    /// Closes the coherent set of `writer`: remote readers get the end-of-set marker, and
    /// readers of this participant get the members held for them.
    pub fn end_coherent_set(&mut self, now: Instant, writer: EntityId) {
        if let Some(w) = self.writers.get_mut(&writer) {
            w.end_coherent(now, &mut self.out, &self.cfg, None);
        }
        for s in self.local_sets.remove(&writer).unwrap_or_default() {
            self.deliver_to_application(now, s);
        }
    }

    /// True if a sample `writer` writes now is held for local reader `reader` until the
    /// writer's coherent set ends.
    pub(crate) fn holds_for_set(&self, writer: EntityId, reader: EntityId) -> bool {
        let (Some(w), Some(r)) = (self.writers.get(&writer), self.readers.get(&reader)) else {
            return false;
        };
        w.in_coherent_set()
            && w.spec.qos.presentation.coherent_access
            && r.spec.qos.presentation.coherent_access
    }

    /// Reports the samples of incomplete coherent sets that reader `reader` discarded from
    /// `writer`.
    pub(crate) fn report_dropped_sets(&mut self, reader: EntityId, writer: Guid) {
        let dropped = self
            .readers
            .get_mut(&reader)
            .and_then(|r| r.proxies.get_mut(&writer))
            .and_then(|p| p.coherent.as_mut())
            .map_or(0, |g| std::mem::take(&mut g.dropped));
        if dropped > 0 {
            self.push_event(Event::SampleLost {
                reader,
                writer,
                count: dropped,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::ChangeKind;

    fn member(first: Option<i64>, marker: bool) -> Arrival {
        Arrival {
            kind: ChangeKind::Alive,
            key_hash: None,
            payload: if marker { Vec::new() } else { vec![0, 1, 0, 0] },
            timestamp: None,
            coherent: first.map(|f| (f > 0).then_some(SequenceNumber(f))),
            marker,
            group: None,
            contiguous: false,
            gsn: None,
            original: None,
            members: None,
        }
    }

    fn sns(v: &[(SequenceNumber, Arrival)]) -> Vec<i64> {
        v.iter().map(|(sn, _)| sn.0).collect()
    }

    #[test]
    fn a_set_is_released_whole_at_its_end_marker() {
        let mut g = CoherentGate::new(100, true);
        let mut ready = Vec::new();
        g.admit(SequenceNumber(1), member(None, false), &mut ready);
        assert_eq!(sns(&ready), [1], "outside a set: at once");
        for sn in 2..=4 {
            g.admit(SequenceNumber(sn), member(Some(2), false), &mut ready);
        }
        assert_eq!(sns(&ready), [1], "held while the set is open");
        assert_eq!(g.held(), 3);
        g.admit(SequenceNumber(5), member(Some(-1), true), &mut ready);
        assert_eq!(sns(&ready), [1, 2, 3, 4]);
        // The next set ends at the first change of the one after it.
        g.admit(SequenceNumber(6), member(Some(6), false), &mut ready);
        g.admit(SequenceNumber(7), member(Some(7), false), &mut ready);
        assert_eq!(sns(&ready), [1, 2, 3, 4, 6]);
        assert_eq!(g.dropped, 0);
    }

    #[test]
    fn incomplete_sets_are_discarded() {
        let mut g = CoherentGate::new(100, true);
        let mut ready = Vec::new();
        // A hole (3 never came: lost, GAP'd) inside the set.
        g.admit(SequenceNumber(1), member(Some(1), false), &mut ready);
        g.admit(SequenceNumber(2), member(Some(1), false), &mut ready);
        g.admit(SequenceNumber(4), member(Some(1), false), &mut ready);
        g.admit(SequenceNumber(5), member(None, true), &mut ready);
        assert!(ready.is_empty());
        assert_eq!(g.dropped, 3);
        // A late joiner: the set's first change (10) is not the first it sees.
        g.admit(SequenceNumber(11), member(Some(10), false), &mut ready);
        g.admit(SequenceNumber(12), member(None, true), &mut ready);
        assert!(ready.is_empty());
        assert_eq!(g.dropped, 4);
        // Too large to hold.
        let mut g = CoherentGate::new(2, true);
        for sn in 1..=3 {
            g.admit(SequenceNumber(sn), member(Some(1), false), &mut ready);
        }
        g.admit(SequenceNumber(4), member(None, true), &mut ready);
        assert!(ready.is_empty());
        assert_eq!(g.dropped, 3);
    }
}
