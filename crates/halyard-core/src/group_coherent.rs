//! PRESENTATION coherent access at GROUP scope (DDS 1.4 §2.2.3.6, RTPS 2.5 §8.7.6): a
//! subscriber takes a publisher's coherent set, across all the publisher's writers it reads,
//! whole or not at all.
//!
//! Design.
//! - Groups. The API layer creates a group entity per publisher and subscriber
//!   ([`Participant::create_group`]) and puts its endpoints in it before enabling them
//!   ([`Participant::set_endpoint_group`]); SEDP announces the group as PID_GROUP_ENTITYID, so
//!   a subscriber knows which remote writers share a publisher.
//! - Writer side. A publisher counts group sequence numbers (GSN) across its writers. Between
//!   [`Participant::begin_group_coherent_set`] and [`Participant::end_group_coherent_set`],
//!   every change of its writers that offer GROUP coherent access is a member of the writer's
//!   own coherent set (PID_COHERENT_SET, see [`crate::coherent`]) and also carries
//!   PID_GROUP_COHERENT_SET (the GSN of the group set's first change) and PID_GROUP_SEQ_NUM
//!   (its own GSN). At the end, every such writer of the publisher, including one that wrote
//!   nothing in the set, writes an end-of-set marker carrying the set's first and last GSN:
//!   each writer's part then ends explicitly.
//! - Reader side. A writer's part passes its reader's per-writer [`crate::coherent`] gate
//!   first (whole or discarded; a hole before an empty part's marker breaks it too). The
//!   released members and the marker then wait in the subscriber's pending group set, keyed
//!   by (subscriber, remote publisher, set). A set is complete when every pairing of a reader
//!   of the subscriber with a matched writer of that publisher has ended its part (its marker
//!   arrived, or a later set's change from it did: it had no part in this one); pairings that
//!   unmatch stop counting. A complete set reaches the readers' caches in one step, in GSN
//!   order; a set with a broken part is discarded whole and counted lost. Sets of one
//!   publisher are released in order. A bounded number of sets wait per participant
//!   ([`MAX_PENDING_GROUP_SETS`]); past it the oldest is discarded and counted lost.
//! - Readers in the writer's own participant get the members of all the publisher's writers
//!   when the group set ends, in one step.
//! - GROUP ordered access: a writer with it gives every change a GSN (PID_GROUP_SEQ_NUM, no
//!   set outside coherent sets); a reader's proxy of such a writer, for a subscriber with
//!   GROUP ordered access, passes (publisher, GSN) on with the sample
//!   (`ReceivedSample::group_seq`), and the API layer orders by it.

use crate::event::{Event, ReceivedSample};
use crate::participant::Participant;
use crate::time::Instant;
use crate::writer::GroupMarkOut;
use halyard_wire::{EntityId, Guid, SequenceNumber};
use std::collections::{BTreeMap, BTreeSet};

/// Group sets a participant's subscribers hold at most, all publishers together.
pub const MAX_PENDING_GROUP_SETS: usize = 64;

/// (subscriber, publisher) pairs whose last released set a participant remembers at most.
const MAX_RELEASED_MARKS: usize = 4096;

/// Entity kind of a user-defined publisher (RTPS 2.5 Table 9.1: writer group).
const KIND_WRITER_GROUP: u8 = 0x08;
/// Entity kind of a user-defined subscriber (reader group).
const KIND_READER_GROUP: u8 = 0x09;

/// Where a sample stands in a GROUP coherent set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMark {
    /// The group sequence number of the set's first change.
    pub set: SequenceNumber,
    /// The sample's group sequence number (for an end marker: the set's last).
    pub gsn: SequenceNumber,
    /// The end of its writer's part (no sample).
    pub end: bool,
    /// The writer's part was incomplete: the whole set is to be discarded (no sample).
    pub broken: bool,
    /// Every change of the writer since its previous GROUP set's end arrived: a change of a
    /// later set then proves it had no part in a pending earlier one (otherwise that part
    /// may have been lost, and the earlier set is discarded).
    pub contiguous: bool,
}

/// A local publisher or subscriber.
#[derive(Debug, Default)]
pub(crate) struct LocalGroup {
    /// The next group sequence number (publishers).
    next_gsn: i64,
    /// The open GROUP coherent set: its first and last GSN once something was written.
    open: Option<Option<(SequenceNumber, SequenceNumber)>>,
}

impl LocalGroup {
    /// The group marks the next change of a writer of this publisher with PRESENTATION `p`
    /// takes: in an open GROUP coherent set (a writer with GROUP coherent access), the set and
    /// a GSN; outside one, a GSN if the writer has GROUP ordered access. Counted by
    /// [`LocalGroup::commit`] once written.
    pub(crate) fn next_mark(&self, p: &halyard_wire::qos::Presentation) -> Option<GroupMarkOut> {
        let gsn = SequenceNumber(self.next_gsn + 1);
        match self.open {
            Some(open) if is_group_coherent(p) => {
                Some((Some(open.map_or(gsn, |(first, _)| first)), gsn))
            }
            _ if is_group_ordered(p) => Some((None, gsn)),
            _ => None,
        }
    }

    /// Records that a change of the publisher marked `mark` was written.
    pub(crate) fn commit(&mut self, mark: GroupMarkOut) {
        self.next_gsn = mark.1 .0;
        if let (Some(open), Some(set)) = (self.open.as_mut(), mark.0) {
            *open = Some((set, mark.1));
        }
    }
}

/// A group set a subscriber holds until every part arrived.
#[derive(Debug, Default)]
pub(crate) struct PendingGroupSet {
    /// (local reader, remote writer) pairings whose part ended.
    done: BTreeSet<(EntityId, Guid)>,
    broken: bool,
    samples: Vec<ReceivedSample>,
}

/// (subscriber, remote publisher, set) of a pending group set.
pub(crate) type GroupSetKey = (EntityId, Guid, SequenceNumber);

impl Participant {
    /// Creates a publisher (`publisher`) or subscriber group entity: its endpoints are
    /// announced with it as PID_GROUP_ENTITYID.
    pub fn create_group(&mut self, publisher: bool) -> EntityId {
        let kind = if publisher {
            KIND_WRITER_GROUP
        } else {
            KIND_READER_GROUP
        };
        let id = self.allocate_entity(kind);
        self.groups.insert(id, LocalGroup::default());
        id
    }

    /// Deletes a group entity (its endpoints keep their announced group).
    pub fn delete_group(&mut self, group: EntityId) {
        self.groups.remove(&group);
    }

    /// Puts a writer or reader, created disabled and not yet enabled, in `group`.
    pub fn set_endpoint_group(&mut self, entity: EntityId, group: EntityId) {
        if let Some(w) = self.writers.get_mut(&entity) {
            w.group = Some(group);
        } else if let Some(r) = self.readers.get_mut(&entity) {
            r.group = Some(group);
        }
    }

    /// The local writers of `group` that offer GROUP coherent access.
    fn group_coherent_writers(&self, group: EntityId) -> Vec<EntityId> {
        self.writers
            .iter()
            .filter(|(_, w)| w.group == Some(group) && w.linger_until.is_none())
            .filter(|(_, w)| is_group_coherent(&w.spec.qos.presentation))
            .map(|(&id, _)| id)
            .collect()
    }

    /// Opens a GROUP coherent set on publisher `group` (`begin_coherent_changes` of a
    /// publisher with GROUP coherent access). Already open: nothing changes.
    pub fn begin_group_coherent_set(&mut self, group: EntityId) {
        let Some(g) = self.groups.get_mut(&group) else {
            return;
        };
        if g.open.is_some() {
            return;
        }
        g.open = Some(None);
        for id in self.group_coherent_writers(group) {
            self.begin_coherent_set(id);
        }
    }

    /// Closes the GROUP coherent set of publisher `group`: every writer of it marks the
    /// end, and readers of this participant get the members of all its writers.
    pub fn end_group_coherent_set(&mut self, now: Instant, group: EntityId) {
        let Some(open) = self.groups.get_mut(&group).and_then(|g| g.open.take()) else {
            return;
        };
        let writers = self.group_coherent_writers(group);
        let end = open.map(|(first, last)| (Some(first), last));
        for &id in &writers {
            if let Some(w) = self.writers.get_mut(&id) {
                w.end_coherent(now, &mut self.out, &self.cfg, end);
            }
        }
        let mut held: Vec<(SequenceNumber, ReceivedSample)> = Vec::new();
        for id in writers {
            held.extend(
                self.local_sets
                    .remove(&id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|s| (s.group.map_or(SequenceNumber(0), |m| m.gsn), s)),
            );
        }
        held.sort_by_key(|(gsn, _)| *gsn);
        for (_, s) in held {
            self.deliver_to_application(now, ReceivedSample { group: None, ..s });
        }
    }

    /// Takes a sample or part end of a GROUP coherent set for a reader of a subscriber with
    /// GROUP coherent access.
    pub(crate) fn on_group_sample(&mut self, now: Instant, s: ReceivedSample) {
        let Some(mark) = s.group else {
            return;
        };
        let reader = s.reader;
        let Some((sub, publisher)) = self.readers.get(&reader).and_then(|r| {
            let publisher = r.proxies.get(&s.writer)?.group_publisher?;
            Some((r.group?, publisher))
        }) else {
            // Not (or no longer) gated by a group: a member is an ordinary sample.
            if !mark.end && !mark.broken {
                self.deliver_to_application(now, s);
            }
            return;
        };
        let pair = (reader, s.writer);
        // A change of a later set ends the writer's part in earlier ones: it had none if
        // nothing of it went missing since its previous set's end; otherwise its part may
        // have been lost (or it joined late), and the earlier sets are incomplete.
        let lo = (sub, publisher, SequenceNumber(i64::MIN));
        let hi = (sub, publisher, mark.set);
        for (_, set) in self.group_sets.range_mut(lo..hi) {
            if set.done.insert(pair) && !mark.contiguous {
                set.broken = true;
            }
        }
        if self
            .released_group_sets
            .get(&(sub, publisher))
            .is_some_and(|&done| mark.set <= done)
        {
            // Its set was released or discarded already: this is late news of a part.
            return;
        }
        let key = (sub, publisher, mark.set);
        if !self.group_sets.contains_key(&key) && self.group_sets.len() >= MAX_PENDING_GROUP_SETS {
            if let Some((k, oldest)) = self.group_sets.pop_first() {
                self.note_released(k);
                self.discard_group_set(oldest);
            }
        }
        let set = self.group_sets.entry(key).or_default();
        if mark.end || mark.broken {
            set.done.insert(pair);
            set.broken |= mark.broken;
        } else {
            set.samples.push(s);
        }
        self.release_group_sets(now);
    }

    /// Releases every pending group set that is complete, in order per publisher.
    pub(crate) fn release_group_sets(&mut self, now: Instant) {
        if self.group_sets.is_empty() {
            return;
        }
        let mut blocked: BTreeSet<(EntityId, Guid)> = BTreeSet::new();
        let mut complete: Vec<GroupSetKey> = Vec::new();
        for (key, set) in &self.group_sets {
            let (sub, publisher, _) = *key;
            if blocked.contains(&(sub, publisher)) {
                continue;
            }
            let whole = self
                .group_pairs(sub, publisher)
                .all(|p| set.done.contains(&p));
            if whole {
                complete.push(*key);
            } else {
                blocked.insert((sub, publisher));
            }
        }
        for key in complete {
            let Some(set) = self.group_sets.remove(&key) else {
                continue;
            };
            self.note_released(key);
            if set.broken {
                self.discard_group_set(set);
                continue;
            }
            let mut samples = set.samples;
            samples.sort_by_key(|s| s.group.map_or(SequenceNumber(0), |m| m.gsn));
            for mut s in samples {
                s.group = None;
                self.deliver_to_application(now, s);
            }
        }
    }

    /// Remembers that the sets of a publisher up to `key`'s were released (bounded: entries
    /// of publishers no subscriber reads any more are dropped when there are many).
    fn note_released(&mut self, key: GroupSetKey) {
        let (sub, publisher, set) = key;
        if self.released_group_sets.len() >= MAX_RELEASED_MARKS {
            let stale: Vec<(EntityId, Guid)> = self
                .released_group_sets
                .keys()
                .filter(|(s, p)| self.group_pairs(*s, *p).next().is_none())
                .copied()
                .collect();
            for k in stale {
                self.released_group_sets.remove(&k);
            }
        }
        if self.released_group_sets.len() < MAX_RELEASED_MARKS {
            let e = self
                .released_group_sets
                .entry((sub, publisher))
                .or_insert(set);
            *e = (*e).max(set);
        }
    }

    /// The (reader, writer) pairings of subscriber `sub` with writers of `publisher`.
    fn group_pairs(
        &self,
        sub: EntityId,
        publisher: Guid,
    ) -> impl Iterator<Item = (EntityId, Guid)> + '_ {
        self.readers
            .iter()
            .filter(move |(_, r)| r.group == Some(sub))
            .flat_map(move |(&id, r)| {
                r.proxies
                    .iter()
                    .filter(move |(_, p)| p.group_publisher == Some(publisher))
                    .map(move |(&w, _)| (id, w))
            })
    }

    /// Discards a group set: its samples are lost (reported per reader and writer) and the
    /// cache room they took is given back.
    fn discard_group_set(&mut self, set: PendingGroupSet) {
        let mut lost: BTreeMap<(EntityId, Guid), u64> = BTreeMap::new();
        for s in &set.samples {
            *lost.entry((s.reader, s.writer)).or_default() += 1;
        }
        for ((reader, writer), count) in lost {
            if let Some(c) = self
                .readers
                .get_mut(&reader)
                .and_then(|r| r.credit.as_mut())
            {
                *c = c.saturating_add(count as usize);
            }
            self.push_event(Event::SampleLost {
                reader,
                writer,
                count,
            });
        }
    }
}

/// True if `p` asks for (reader) or offers (writer) coherent access at GROUP scope.
pub(crate) fn is_group_coherent(p: &halyard_wire::qos::Presentation) -> bool {
    p.coherent_access && p.access_scope == 2
}

/// True if `p` asks for (reader) or offers (writer) ordered access at GROUP scope.
pub(crate) fn is_group_ordered(p: &halyard_wire::qos::Presentation) -> bool {
    p.ordered_access && p.access_scope == 2
}
