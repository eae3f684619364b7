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
//!   nothing in the set, writes an end-of-set marker carrying the set's first and last GSN
//!   and the set's membership: the entity ids of all those writers (Halyard's
//!   PID_HALYARD_GROUP_MEMBERS). Each writer's part then ends explicitly, and a subscriber
//!   that sees one marker knows every writer whose part it must wait for, discovered or not.
//! - Reader side. A writer's part passes its reader's per-writer [`crate::coherent`] gate
//!   first (whole or discarded; a hole before an empty part's marker breaks it too). The
//!   released members and the marker then wait in the subscriber's pending group set, keyed
//!   by (subscriber, remote publisher, set). A pairing's part has ended when its marker
//!   arrived, or a later set's change from its writer did (the writer had no part in this
//!   one, unless something of it went missing since its previous set's end: that writer's
//!   part is then doubtful). Once the membership is known, the set is whole when, for every
//!   member writer, every pairing of it with a reader of the subscriber has ended its part:
//!   a member not discovered yet is waited for (at most [`GROUP_MEMBER_DISCOVERY_WAIT`], then
//!   the set is discarded), and so is a pairing whose type is still being looked up; a
//!   member discovered but read by no reader of the subscriber has no part to wait for. A
//!   pairing that went away before its part ended (the writer left or was unmatched, see
//!   [`Participant::note_group_writer_gone`]), a doubtful or broken part of a member, or a
//!   member that stays undiscovered discards the whole set (counted lost). Non-members (a
//!   writer created after the set) are never waited for. Until a marker with the membership
//!   arrives (a peer that does not send it), the set is whole when every current pairing of
//!   the subscriber's readers with the publisher's writers has ended its part.
//! - Release. A whole set reaches the readers in one step, in GSN order; sets of one
//!   publisher are released in order. A bounded number of sets wait per participant
//!   ([`MAX_PENDING_GROUP_SETS`]); past it the oldest is discarded and counted lost. Parts of
//!   a set that was released or discarded already are dropped.
//! - Readers in the writer's own participant get the members of all the publisher's writers
//!   when the group set ends, in one step.
//! - The application's access: what the core releases to a subscriber whose application has
//!   begun access is held until it ends access (see [`crate::group_access`]), so a set is
//!   never released between two of its readers' reads.
//! - GROUP ordered access: a writer with it gives every change a GSN (PID_GROUP_SEQ_NUM, no
//!   set outside coherent sets); a reader's proxy of such a writer, for a subscriber with
//!   GROUP ordered access, passes (publisher, GSN) on with the sample
//!   (`ReceivedSample::group_seq`), and the API layer orders by it.

use crate::event::{Event, ReceivedSample};
use crate::participant::Participant;
use crate::time::Instant;
use crate::writer::{GroupEnd, GroupMarkOut};
use halyard_wire::{EntityId, Guid, SequenceNumber};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// Group sets a participant's subscribers hold at most, all publishers together.
pub const MAX_PENDING_GROUP_SETS: usize = 64;

/// Member writers an end-of-set marker names at most: a publisher with more GROUP coherent
/// writers sends no membership, and its subscribers wait only for the pairings they have.
pub const MAX_GROUP_MEMBERS: usize = 256;

/// How long a pending group set waits for a member writer its subscriber's participant has
/// not discovered; then the set is discarded (counted lost) rather than released without
/// that writer's part.
pub const GROUP_MEMBER_DISCOVERY_WAIT: Duration = Duration::from_secs(10);

/// (subscriber, publisher) pairs whose last released set a participant remembers at most.
const MAX_RELEASED_MARKS: usize = 4096;

/// Departed writers of GROUP publishers a participant remembers at most (see
/// [`Departed`]).
const MAX_DEPARTED: usize = 1024;

/// Entity kind of a user-defined publisher (RTPS 2.5 Table 9.1: writer group).
const KIND_WRITER_GROUP: u8 = 0x08;
/// Entity kind of a user-defined subscriber (reader group).
pub(crate) const KIND_READER_GROUP: u8 = 0x09;

/// Where a sample stands in a GROUP coherent set.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// may have been lost, and the earlier set is discarded if the writer is a member).
    pub contiguous: bool,
    /// On a part's end from a Halyard writer: the set's member writers (entity ids in the
    /// publisher's participant).
    pub members: Option<Arc<[EntityId]>>,
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
#[derive(Debug)]
pub(crate) struct PendingGroupSet {
    /// (local reader, remote writer) pairings whose part ended.
    done: BTreeSet<(EntityId, Guid)>,
    /// Writers whose part ended by a later set's change after something of theirs went
    /// missing: broken if they are members.
    doubtful: BTreeSet<Guid>,
    /// A member's part was incomplete, or the set waited too long for a member.
    broken: bool,
    /// The member writers, once a marker named them.
    members: Option<Arc<[EntityId]>>,
    /// When its first sample or marker arrived.
    since: Instant,
    /// While it waits for a member not discovered yet: when it stops waiting.
    wait_until: Option<Instant>,
    samples: Vec<ReceivedSample>,
}

impl PendingGroupSet {
    fn new(now: Instant) -> Self {
        PendingGroupSet {
            done: BTreeSet::new(),
            doubtful: BTreeSet::new(),
            broken: false,
            members: None,
            since: now,
            wait_until: None,
            samples: Vec::new(),
        }
    }

    /// Forgets the members held for deleted reader `reader`.
    pub(crate) fn forget_reader(&mut self, reader: EntityId) {
        self.samples.retain(|s| s.reader != reader);
    }
}

/// (subscriber, remote publisher, set) of a pending group set.
pub(crate) type GroupSetKey = (EntityId, Guid, SequenceNumber);

/// A remote writer of a GROUP publisher that left (or was unmatched from some of our
/// readers): the readers it was paired with then. A pending set it is a member of must have
/// its part for those readers, or be discarded; a member that left paired with none of the
/// subscriber's readers had no part to wait for.
#[derive(Debug)]
pub(crate) struct Departed {
    /// Its publisher.
    publisher: Guid,
    /// When it last left a reader.
    at: Instant,
    /// The readers it left.
    readers: BTreeSet<EntityId>,
}

/// What a pending group set is ready for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Every part it needs ended: release it.
    Whole,
    /// A part is or may be missing for good: discard it.
    Broken,
    /// A part may still come (`Some`: a member not discovered yet, until then).
    Waiting(Option<Instant>),
}

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

    /// Deletes a group entity (its endpoints keep their announced group). A subscriber's
    /// access ends with it.
    pub fn delete_group(&mut self, group: EntityId) {
        self.groups.remove(&group);
        self.access.remove(&group);
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
    /// end, naming them all, and readers of this participant get the members of all its
    /// writers.
    pub fn end_group_coherent_set(&mut self, now: Instant, group: EntityId) {
        let Some(open) = self.groups.get_mut(&group).and_then(|g| g.open.take()) else {
            return;
        };
        let writers = self.group_coherent_writers(group);
        let members: Option<Arc<[EntityId]>> =
            (writers.len() <= MAX_GROUP_MEMBERS).then(|| writers.as_slice().into());
        let end = open.map(|(first, last)| GroupEnd {
            mark: (Some(first), last),
            members,
        });
        for &id in &writers {
            if let Some(w) = self.writers.get_mut(&id) {
                w.end_coherent(now, &mut self.out, &self.cfg, end.clone());
            }
        }
        let mut held: Vec<(SequenceNumber, ReceivedSample)> = Vec::new();
        for id in writers {
            held.extend(
                self.local_sets
                    .remove(&id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|s| (s.group.as_ref().map_or(SequenceNumber(0), |m| m.gsn), s)),
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
        let Some(mark) = s.group.clone() else {
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
        // have been lost (or it joined late), which matters if it is a member.
        let lo = (sub, publisher, SequenceNumber(i64::MIN));
        let hi = (sub, publisher, mark.set);
        for (_, set) in self.group_sets.range_mut(lo..hi) {
            if set.done.insert(pair) && !mark.contiguous {
                set.doubtful.insert(s.writer);
            }
        }
        if self
            .released_group_sets
            .get(&(sub, publisher))
            .is_some_and(|&done| mark.set <= done)
        {
            // Its set was released or discarded already: this is late news of a part.
            if !mark.end && !mark.broken {
                self.drop_group_samples(std::slice::from_ref(&s), false);
            }
            return;
        }
        let key = (sub, publisher, mark.set);
        if !self.group_sets.contains_key(&key) && self.group_sets.len() >= MAX_PENDING_GROUP_SETS {
            if let Some((k, oldest)) = self.group_sets.pop_first() {
                self.note_released(k);
                self.drop_group_samples(&oldest.samples, true);
            }
        }
        let set = self
            .group_sets
            .entry(key)
            .or_insert_with(|| PendingGroupSet::new(now));
        if set.members.is_none() {
            set.members = mark.members;
        }
        if mark.end || mark.broken {
            set.done.insert(pair);
            set.broken |= mark.broken;
        } else {
            set.samples.push(s);
        }
        self.release_group_sets(now);
    }

    /// Releases every pending group set that is whole and discards every one that is
    /// broken, in order per publisher (a set that waits holds back the later ones).
    pub(crate) fn release_group_sets(&mut self, now: Instant) {
        if self.group_sets.is_empty() {
            return;
        }
        let mut blocked: BTreeSet<(EntityId, Guid)> = BTreeSet::new();
        let mut ready: Vec<GroupSetKey> = Vec::new();
        let keys: Vec<GroupSetKey> = self.group_sets.keys().copied().collect();
        for key in keys {
            let Some(verdict) = self.group_sets.get(&key).map(|s| self.judge(now, key, s)) else {
                continue;
            };
            if let Some(set) = self.group_sets.get_mut(&key) {
                set.broken |= verdict == Verdict::Broken;
                set.wait_until = match verdict {
                    Verdict::Waiting(until) => until,
                    _ => None,
                };
            }
            let (sub, publisher, _) = key;
            if blocked.contains(&(sub, publisher)) {
                continue;
            }
            match verdict {
                Verdict::Waiting(_) => {
                    blocked.insert((sub, publisher));
                }
                _ => ready.push(key),
            }
        }
        for key in ready {
            let Some(set) = self.group_sets.remove(&key) else {
                continue;
            };
            self.note_released(key);
            if set.broken {
                self.drop_group_samples(&set.samples, true);
                continue;
            }
            let mut samples = set.samples;
            samples.sort_by_key(|s| s.group.as_ref().map_or(SequenceNumber(0), |m| m.gsn));
            for mut s in samples {
                s.group = None;
                self.deliver_to_application(now, s);
            }
        }
    }

    /// When the earliest pending group set stops waiting for a member not discovered yet.
    pub(crate) fn group_sets_deadline(&self) -> Option<Instant> {
        self.group_sets.values().filter_map(|s| s.wait_until).min()
    }

    /// Whether pending set `key` is whole, broken or must wait.
    fn judge(&self, now: Instant, key: GroupSetKey, set: &PendingGroupSet) -> Verdict {
        let (sub, publisher, _) = key;
        if set.broken {
            return Verdict::Broken;
        }
        let Some(members) = set.members.as_ref() else {
            // Membership unknown: every current pairing of the publisher's writers with the
            // subscriber's readers must have ended its part, and none doubtfully.
            if self.departed_part_missing(sub, set, |_, d| d.publisher == publisher) {
                return Verdict::Broken;
            }
            if !self
                .group_pairs(sub, publisher)
                .all(|p| set.done.contains(&p))
            {
                return Verdict::Waiting(None);
            }
            return match set.doubtful.is_empty() {
                true => Verdict::Whole,
                false => Verdict::Broken,
            };
        };
        let is_member = |w: &Guid| w.prefix == publisher.prefix && members.contains(&w.entity);
        if set.doubtful.iter().any(is_member)
            || self.departed_part_missing(sub, set, |w, _| is_member(w))
        {
            return Verdict::Broken;
        }
        let mut verdict = Verdict::Whole;
        for &e in members.iter() {
            let w = Guid::new(publisher.prefix, e);
            if !self.remote_writers.contains_key(&w) {
                if self.departed.contains_key(&w) {
                    // It left: what its pairings owed is judged above.
                    continue;
                }
                let until = set.since + GROUP_MEMBER_DISCOVERY_WAIT;
                if now >= until {
                    return Verdict::Broken;
                }
                verdict = Verdict::Waiting(Some(until));
                continue;
            }
            if verdict == Verdict::Whole && self.member_part_pending(sub, publisher, w, set) {
                verdict = Verdict::Waiting(None);
            }
        }
        verdict
    }

    /// True if a pairing of discovered member `w` with a reader of subscriber `sub` has not
    /// ended its part yet, or may still be made (its type is being looked up).
    fn member_part_pending(
        &self,
        sub: EntityId,
        publisher: Guid,
        w: Guid,
        set: &PendingGroupSet,
    ) -> bool {
        self.readers
            .iter()
            .filter(|(_, r)| r.group == Some(sub))
            .any(|(&id, r)| match r.proxies.get(&w) {
                Some(p) => p.group_publisher == Some(publisher) && !set.done.contains(&(id, w)),
                None => self.type_decision_pending(w, id),
            })
    }

    /// True if a writer for which `counts` holds left (or was unmatched from) a reader of
    /// subscriber `sub` it is no longer paired with, before its part of `set` ended there.
    fn departed_part_missing(
        &self,
        sub: EntityId,
        set: &PendingGroupSet,
        counts: impl Fn(&Guid, &Departed) -> bool,
    ) -> bool {
        if self.departed.is_empty() {
            return false;
        }
        self.departed
            .iter()
            .filter(|(w, d)| counts(w, d))
            .any(|(w, d)| {
                d.readers.iter().any(|r| {
                    self.readers.get(r).is_some_and(|rd| {
                        rd.group == Some(sub)
                            && !rd.proxies.contains_key(w)
                            && !set.done.contains(&(*r, *w))
                    })
                })
            })
    }

    /// Notes that remote writer `writer` of GROUP coherent publisher `publisher` left, or
    /// was unmatched from `readers` (the local readers whose pairing with it was gated by a
    /// GROUP coherent subscriber; none: it left without any). A pending set it is a member
    /// of then needs its part for those readers, and no longer waits for its discovery (see
    /// [`Departed`]).
    pub(crate) fn note_group_writer_gone(
        &mut self,
        now: Instant,
        writer: Guid,
        publisher: Guid,
        readers: &[EntityId],
    ) {
        if self.departed.len() >= MAX_DEPARTED && !self.departed.contains_key(&writer) {
            // The oldest record goes; a set it mattered to then waits for that member as
            // undiscovered, and is discarded after GROUP_MEMBER_DISCOVERY_WAIT.
            if let Some(oldest) = self
                .departed
                .iter()
                .min_by_key(|(_, d)| d.at)
                .map(|(w, _)| *w)
            {
                self.departed.remove(&oldest);
            }
        }
        let d = self.departed.entry(writer).or_insert(Departed {
            publisher,
            at: now,
            readers: BTreeSet::new(),
        });
        d.at = now;
        d.readers.extend(readers.iter().copied());
    }

    /// Notes that remote writer `writer`, never discovered here, was retracted: if a pending
    /// group set names it as a member, it left without any of the subscriber's readers.
    pub(crate) fn note_unknown_writer_gone(&mut self, now: Instant, writer: Guid) {
        let publisher = self.group_sets.iter().find_map(|((_, p, _), s)| {
            let named = s.members.as_ref()?.contains(&writer.entity);
            (p.prefix == writer.prefix && named).then_some(*p)
        });
        if let Some(publisher) = publisher {
            self.note_group_writer_gone(now, writer, publisher, &[]);
        }
    }

    /// Forgets departed writers no pending set can still need: when no set is pending, or
    /// after every set then pending has been decided.
    pub(crate) fn prune_departed(&mut self, now: Instant) {
        if self.departed.is_empty() {
            return;
        }
        let oldest_pending = self.group_sets.values().map(|s| s.since).min();
        self.departed.retain(|_, d| {
            oldest_pending.is_some_and(|since| since <= d.at)
                || now.saturating_duration_since(d.at) < GROUP_MEMBER_DISCOVERY_WAIT
        });
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

    /// Drops samples of a group set the application will not get: the cache room they took
    /// is given back, and with `lost` they are reported lost per reader and writer.
    fn drop_group_samples(&mut self, samples: &[ReceivedSample], lost: bool) {
        let mut count: BTreeMap<(EntityId, Guid), u64> = BTreeMap::new();
        for s in samples {
            *count.entry((s.reader, s.writer)).or_default() += 1;
        }
        for ((reader, writer), n) in count {
            if let Some(c) = self
                .readers
                .get_mut(&reader)
                .and_then(|r| r.credit.as_mut())
            {
                *c = c.saturating_add(n as usize);
            }
            if lost {
                self.push_event(Event::SampleLost {
                    reader,
                    writer,
                    count: n,
                });
            }
        }
    }

    /// Samples the core holds for local reader `reader` that already took its credit:
    /// members of pending group sets and samples held while its subscriber is accessed.
    pub(crate) fn held_for_reader(&self, reader: EntityId) -> usize {
        let in_sets: usize = self
            .group_sets
            .values()
            .map(|s| s.samples.iter().filter(|x| x.reader == reader).count())
            .sum();
        in_sets + self.held_for_access(reader)
    }
}

/// True if `p` asks for (reader) or offers (writer) coherent access at GROUP scope.
pub(crate) fn is_group_coherent(p: &halyard_wire::qos::Presentation) -> bool {
    p.coherent_access && p.access_scope == halyard_wire::qos::PresentationAccessScope::Group
}

/// True if `p` asks for (reader) or offers (writer) ordered access at GROUP scope.
pub(crate) fn is_group_ordered(p: &halyard_wire::qos::Presentation) -> bool {
    p.ordered_access && p.access_scope == halyard_wire::qos::PresentationAccessScope::Group
}
