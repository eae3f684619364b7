//! Per-instance DEADLINE timers (DDS 1.4 §2.2.3.7), shared by writers (offered) and readers
//! (requested).
//!
//! Each tracked instance has one due time; the queue is ordered by it, so the next timeout and
//! the instances that missed theirs are found in O(log n). An instance that misses its deadline
//! is re-armed one period later: every period without an update counts again, as DDS requires.

use crate::time::Instant;
use crate::{seeded_map, SeededMap};
use std::collections::BTreeSet;
use std::time::Duration;

/// An instance key (its key hash).
pub(crate) type Key = [u8; 16];

/// Due times of the instances under one DEADLINE period.
pub(crate) struct DeadlineQueue {
    period: Duration,
    due: SeededMap<Key, Instant>,
    order: BTreeSet<(Instant, Key)>,
}

impl DeadlineQueue {
    /// A queue for `period` (a finite DEADLINE).
    pub(crate) fn new(period: Duration, hash_seed: u64) -> Self {
        DeadlineQueue {
            period,
            due: seeded_map(hash_seed),
            order: BTreeSet::new(),
        }
    }

    /// The instance was updated at `now`: its next deadline is one period later.
    pub(crate) fn arm(&mut self, now: Instant, key: Key) {
        let due = now + self.period;
        if let Some(old) = self.due.insert(key, due) {
            self.order.remove(&(old, key));
        }
        self.order.insert((due, key));
    }

    /// The instance is no longer alive (disposed, unregistered): no more deadlines for it.
    pub(crate) fn disarm(&mut self, key: &Key) {
        if let Some(old) = self.due.remove(key) {
            self.order.remove(&(old, *key));
        }
    }

    /// Moves the queue to a new period (a DEADLINE changed at run time): each instance falls
    /// due one new period after its last update (or last miss), but not before `now`.
    pub(crate) fn set_period(&mut self, now: Instant, period: Duration) {
        let old = self.period;
        self.period = period;
        self.order.clear();
        for (key, due) in self.due.iter_mut() {
            let since = Instant::from_nanos(due.as_nanos().saturating_sub(old.as_nanos() as u64));
            let next = since + period;
            *due = if next < now { now } else { next };
            self.order.insert((*due, *key));
        }
    }

    /// The earliest due time.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.order.first().map(|(t, _)| *t)
    }

    /// Instances whose deadline passed by `now`, each once per missed period; they are re-armed.
    pub(crate) fn expire(&mut self, now: Instant, missed: &mut Vec<Key>) {
        while let Some(&(due, key)) = self.order.first() {
            if due > now {
                break;
            }
            self.order.pop_first();
            missed.push(key);
            let next = due + self.period;
            self.due.insert(key, next);
            self.order.insert((next, key));
        }
        debug_assert_eq!(
            self.due.len(),
            self.order.len(),
            "one due time per instance"
        );
    }

    /// Instances tracked.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.due.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_missed_period_counts_once_and_updates_rearm() {
        let ms = Duration::from_millis;
        let t0 = Instant::from_nanos(0);
        let mut q = DeadlineQueue::new(ms(100), 1);
        q.arm(t0, [1; 16]);
        q.arm(t0 + ms(50), [2; 16]);
        assert_eq!(q.next(), Some(t0 + ms(100)));
        let mut missed = Vec::new();
        q.expire(t0 + ms(99), &mut missed);
        assert!(missed.is_empty());
        q.arm(t0 + ms(90), [1; 16]); // an update moves its deadline
        q.expire(t0 + ms(160), &mut missed);
        assert_eq!(missed, vec![[2; 16]]);
        missed.clear();
        q.expire(t0 + ms(360), &mut missed);
        // [1] due 190, 290; [2] due 250, 350.
        assert_eq!(missed, vec![[1; 16], [2; 16], [1; 16], [2; 16]]);
        q.disarm(&[1; 16]);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn a_new_period_counts_from_each_instance_s_last_update() {
        let ms = Duration::from_millis;
        let t0 = Instant::from_nanos(0);
        let mut q = DeadlineQueue::new(ms(100), 1);
        q.arm(t0, [1; 16]);
        q.arm(t0 + ms(40), [2; 16]);
        // Longer: due one new period after the last update.
        q.set_period(t0 + ms(50), ms(300));
        assert_eq!(q.next(), Some(t0 + ms(300)));
        // Shorter than the time already elapsed: due at once, not in the past.
        q.set_period(t0 + ms(60), ms(10));
        let mut missed = Vec::new();
        q.expire(t0 + ms(60), &mut missed);
        assert_eq!(missed, vec![[1; 16], [2; 16]]);
        // Re-armed one new period later.
        assert_eq!(q.next(), Some(t0 + ms(70)));
    }
}
