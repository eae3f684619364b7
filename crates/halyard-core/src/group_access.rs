//! A subscriber's access to its readers (DDS 1.4 §2.2.2.5.2.8 `begin_access`, §2.2.3.6
//! PRESENTATION at GROUP access scope): between [`Participant::begin_access`] and
//! [`Participant::end_access`] nothing new reaches the subscriber's readers.
//!
//! Design. The application reads a subscriber's readers one after the other, each read a
//! separate call; a GROUP coherent set the core released between two of them would show
//! the second reader's part of it without the first's. So while the application accesses
//! the subscriber, every sample the core hands over for one of its readers (the members of
//! a whole group set, and samples outside sets, in the order they were handed over) waits in
//! the subscriber's access queue, and ends access moves them all to the participant's sample
//! queue in one step. The access queues count toward the bound of that queue
//! ([`crate::MAX_QUEUED_EVENTS`], see [`crate::reader::Sink`]): reliable samples beyond it
//! stay unacknowledged and back-pressure their writers, best-effort ones are lost. Samples
//! in them took their readers' credit (see [`Participant::held_for_reader`]).

use crate::event::ReceivedSample;
use crate::participant::Participant;
use halyard_wire::EntityId;

impl Participant {
    /// Begins the application's access to the readers of subscriber `subscriber` (a group
    /// from [`Participant::create_group`]): until [`Participant::end_access`], the samples
    /// for its readers are held, so that reading them one after the other sees each group
    /// coherent set whole or not at all. Already begun, or not a subscriber: nothing changes.
    pub fn begin_access(&mut self, subscriber: EntityId) {
        if subscriber.kind() == crate::group_coherent::KIND_READER_GROUP
            && self.groups.contains_key(&subscriber)
        {
            self.access.entry(subscriber).or_default();
        }
    }

    /// Ends the access begun by [`Participant::begin_access`]: what was held for the
    /// subscriber's readers is to be polled now, in the order it was handed over.
    pub fn end_access(&mut self, subscriber: EntityId) {
        if let Some(held) = self.access.remove(&subscriber) {
            self.samples.extend(held);
        }
    }

    /// True while the application accesses subscriber `subscriber`.
    pub fn in_access(&self, subscriber: EntityId) -> bool {
        self.access.contains_key(&subscriber)
    }

    /// Hands `s` to the application: to its subscriber's access queue while the subscriber
    /// is accessed (`group`: the reader's subscriber), else to the participant's queue.
    pub(crate) fn hand_over(&mut self, group: Option<EntityId>, s: ReceivedSample) {
        if !self.access.is_empty() {
            if let Some(held) = group.and_then(|g| self.access.get_mut(&g)) {
                held.push_back(s);
                return;
            }
        }
        self.samples.push_back(s);
    }

    /// Samples waiting for the application: polled or held while a subscriber is accessed.
    pub(crate) fn queued_samples(&self) -> usize {
        self.samples.len() + self.access.values().map(|q| q.len()).sum::<usize>()
    }

    /// Samples held for reader `reader` while its subscriber is accessed.
    pub(crate) fn held_for_access(&self, reader: EntityId) -> usize {
        if self.access.is_empty() {
            return 0;
        }
        self.access
            .values()
            .map(|q| q.iter().filter(|s| s.reader == reader).count())
            .sum()
    }

    /// Forgets what is held for deleted reader `reader`.
    pub(crate) fn forget_held_for(&mut self, reader: EntityId) {
        for q in self.access.values_mut() {
            q.retain(|s| s.reader != reader);
        }
        for set in self.group_sets.values_mut() {
            set.forget_reader(reader);
        }
    }
}
