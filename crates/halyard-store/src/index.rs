//! The in-memory index of one channel's stored samples, in place of SQLite indexes.
//!
//! Design. Schema version 1 kept two SQLite indexes on the samples table, (channel, writer,
//! sn) for duplicates and (channel, key_hash, id) for KEEP_LAST eviction and purges. On a
//! stream of small samples they cost more than the row itself: every insert walked and wrote
//! two more b-trees, and a commit rewrote an index leaf per interleaved instance
//! (`examples/store_bench` shows it). Since version 2 the table is the only b-tree and this index answers
//! the same questions from memory:
//!
//! * per writer, the sequence numbers stored, as disjoint ranges (a writer's samples arrive
//!   in order, so this is usually one range per writer);
//! * per instance, the row ids of its data samples, oldest first (8 bytes per stored
//!   sample), how many of them each writer has, and the few state changes (disposes,
//!   unregistrations) it keeps ([`ChannelIndex::obsolete_states`] says which).
//!
//! It is built from one scan of the channel's rows when the store first uses the channel,
//! updated only after a write succeeded, and dropped whenever the pending transaction is lost
//! or another connection committed to the file (the store checks `PRAGMA data_version` as it
//! begins a transaction, holding the write lock): the next use scans again.

use crate::types::SampleKind;
use std::collections::{BTreeMap, VecDeque};

/// Stored sequence numbers as disjoint inclusive ranges, `start → end`.
#[derive(Debug, Default, Clone)]
pub(crate) struct SnRanges(BTreeMap<i64, i64>);

impl SnRanges {
    /// Whether `sn` is in a range.
    pub(crate) fn contains(&self, sn: i64) -> bool {
        self.0
            .range(..=sn)
            .next_back()
            .is_some_and(|(_, &end)| sn <= end)
    }

    /// Adds `sn`, merging it with the ranges it touches.
    pub(crate) fn insert(&mut self, sn: i64) {
        if self.contains(sn) {
            return;
        }
        let before = self
            .0
            .range(..sn)
            .next_back()
            .filter(|(_, &end)| end.checked_add(1) == Some(sn))
            .map(|(&start, _)| start);
        let after = sn
            .checked_add(1)
            .and_then(|next| self.0.get(&next).map(|&end| (next, end)));
        match (before, after) {
            (Some(start), Some((next, end))) => {
                self.0.remove(&next);
                self.0.insert(start, end);
            }
            (Some(start), None) => {
                self.0.insert(start, sn);
            }
            (None, Some((next, end))) => {
                self.0.remove(&next);
                self.0.insert(sn, end);
            }
            (None, None) => {
                self.0.insert(sn, sn);
            }
        }
    }

    /// Removes `sn`, splitting its range.
    pub(crate) fn remove(&mut self, sn: i64) {
        let Some((start, end)) = self
            .0
            .range(..=sn)
            .next_back()
            .filter(|(_, &end)| sn <= end)
            .map(|(&s, &e)| (s, e))
        else {
            return;
        };
        self.0.remove(&start);
        if start < sn {
            self.0.insert(start, sn - 1);
        }
        if sn < end {
            self.0.insert(sn + 1, end);
        }
    }

    /// Whether no sequence number is stored.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A state change kept for an instance: a dispose, an unregistration, or both (see
/// [`ChannelIndex::obsolete_states`] for why it is kept and when it goes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateRow {
    pub(crate) row: i64,
    pub(crate) writer: [u8; 16],
    pub(crate) kind: SampleKind,
}

/// What one instance holds.
#[derive(Debug, Default)]
struct InstanceRows {
    /// Row ids of its data samples (writes), oldest first: what HISTORY's depth counts.
    data: VecDeque<i64>,
    /// Data samples held per original writer (usually one writer).
    writers: Vec<([u8; 16], u32)>,
    /// Its state changes kept, oldest first (a few at most).
    states: Vec<StateRow>,
}

impl InstanceRows {
    fn data_of(&self, writer: &[u8; 16]) -> u32 {
        self.writers
            .iter()
            .find(|(w, _)| w == writer)
            .map_or(0, |&(_, n)| n)
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty() && self.states.is_empty()
    }
}

/// What is stored in one channel (see the module).
#[derive(Debug, Default)]
pub(crate) struct ChannelIndex {
    writers: BTreeMap<[u8; 16], SnRanges>,
    instances: BTreeMap<[u8; 16], InstanceRows>,
    /// Data samples stored (what RESOURCE_LIMITS.max_samples counts).
    samples: u64,
}

/// True for a change that disposes its instance.
fn disposes(kind: SampleKind) -> bool {
    matches!(
        kind,
        SampleKind::Disposed | SampleKind::DisposedUnregistered
    )
}

/// True for a change that unregisters its writer from its instance.
fn unregisters(kind: SampleKind) -> bool {
    matches!(
        kind,
        SampleKind::Unregistered | SampleKind::DisposedUnregistered
    )
}

impl ChannelIndex {
    /// Whether `writer`'s sample `sn` is stored.
    pub(crate) fn has(&self, writer: &[u8; 16], sn: i64) -> bool {
        self.writers.get(writer).is_some_and(|r| r.contains(sn))
    }

    /// Data samples the instance holds; `None` when it holds nothing (it does not exist).
    pub(crate) fn in_instance(&self, key_hash: &[u8; 16]) -> Option<u64> {
        self.instances
            .get(key_hash)
            .filter(|i| !i.is_empty())
            .map(|i| i.data.len() as u64)
    }

    /// Instances holding samples.
    pub(crate) fn instance_count(&self) -> u64 {
        self.instances.len() as u64
    }

    /// Data samples stored.
    pub(crate) fn samples(&self) -> u64 {
        self.samples
    }

    /// The instance's `n` oldest data rows.
    pub(crate) fn oldest(&self, key_hash: &[u8; 16], n: u64) -> Vec<i64> {
        self.instances.get(key_hash).map_or_else(Vec::new, |i| {
            i.data
                .iter()
                .take(usize::try_from(n).unwrap_or(usize::MAX))
                .copied()
                .collect()
        })
    }

    /// Every row id of the instance (data, then state changes).
    pub(crate) fn rows_of(&self, key_hash: &[u8; 16]) -> Vec<i64> {
        self.instances.get(key_hash).map_or_else(Vec::new, |i| {
            i.data
                .iter()
                .copied()
                .chain(i.states.iter().map(|s| s.row))
                .collect()
        })
    }

    /// The state changes of the instance that a new change of `kind` by `writer` makes
    /// obsolete, once `evicted` (the writers of the data rows the same insert evicts, one
    /// entry per row) are gone; and whether the new change is itself obsolete (a state
    /// change that would change nothing a reader is told: see below).
    ///
    /// HISTORY's depth counts data samples only: a dispose or an unregistration changes the
    /// instance's state and never takes a data sample's place. What is kept of the state
    /// changes is what a late reader needs to end with the instance's state:
    /// - a dispose, until a later write or dispose of the instance (by any writer);
    /// - an unregistration by a writer, while that writer has a data sample kept in the
    ///   instance (a reader learns of the writer from it) and until that writer writes or
    ///   unregisters the instance again.
    ///
    /// A dispose and unregistration in one change goes when both parts have. So an instance
    /// holds at most one dispose and one unregistration per writer it has data of, beside its
    /// data, and a state change for an instance the store does not hold is not stored.
    pub(crate) fn obsolete_states(
        &self,
        key_hash: &[u8; 16],
        writer: &[u8; 16],
        kind: SampleKind,
        evicted: &[[u8; 16]],
    ) -> (Vec<i64>, bool) {
        let Some(inst) = self.instances.get(key_hash).filter(|i| !i.is_empty()) else {
            // Nothing stored of the instance: a state change of it says nothing.
            return (Vec::new(), kind != SampleKind::Alive);
        };
        let data_after = |w: &[u8; 16]| {
            let gone = evicted.iter().filter(|e| *e == w).count() as u32;
            let added = u32::from(kind == SampleKind::Alive && w == writer);
            (inst.data_of(w) + added).saturating_sub(gone)
        };
        let obsolete = inst
            .states
            .iter()
            .filter(|s| {
                let dispose_gone = !disposes(s.kind) || kind == SampleKind::Alive || disposes(kind);
                let unregister_gone = !unregisters(s.kind)
                    || (s.writer == *writer && (kind == SampleKind::Alive || unregisters(kind)))
                    || data_after(&s.writer) == 0;
                dispose_gone && unregister_gone
            })
            .map(|s| s.row)
            .collect();
        let itself = kind == SampleKind::Unregistered && data_after(writer) == 0;
        (obsolete, itself)
    }

    /// The writers with data kept in the instance that have not unregistered it since (an
    /// unregistration row of a writer is kept only after that writer's last data).
    pub(crate) fn registered(&self, key_hash: &[u8; 16]) -> Vec<[u8; 16]> {
        self.instances.get(key_hash).map_or_else(Vec::new, |i| {
            i.writers
                .iter()
                .map(|&(w, _)| w)
                .filter(|w| {
                    !i.states
                        .iter()
                        .any(|s| s.writer == *w && unregisters(s.kind))
                })
                .collect()
        })
    }

    /// Records a stored row. Rows of an instance must come in ascending id order.
    pub(crate) fn add(
        &mut self,
        row: i64,
        writer: [u8; 16],
        sn: i64,
        key_hash: [u8; 16],
        kind: SampleKind,
    ) {
        self.writers.entry(writer).or_default().insert(sn);
        let inst = self.instances.entry(key_hash).or_default();
        if kind == SampleKind::Alive {
            inst.data.push_back(row);
            match inst.writers.iter_mut().find(|(w, _)| *w == writer) {
                Some((_, n)) => *n += 1,
                None => inst.writers.push((writer, 1)),
            }
            self.samples += 1;
        } else {
            inst.states.push(StateRow { row, writer, kind });
        }
    }

    /// Forgets a removed row: `writer`'s `sn`, in instance `key_hash`.
    pub(crate) fn remove(&mut self, row: i64, writer: &[u8; 16], sn: i64, key_hash: &[u8; 16]) {
        if let Some(ranges) = self.writers.get_mut(writer) {
            ranges.remove(sn);
            if ranges.is_empty() {
                self.writers.remove(writer);
            }
        }
        let Some(inst) = self.instances.get_mut(key_hash) else {
            return;
        };
        if let Some(at) = inst.states.iter().position(|s| s.row == row) {
            inst.states.remove(at);
        } else {
            // Evictions take the oldest; a purge takes them all: the front is the usual case.
            let found = if inst.data.front() == Some(&row) {
                inst.data.pop_front().is_some()
            } else if let Some(at) = inst.data.iter().position(|&r| r == row) {
                inst.data.remove(at).is_some()
            } else {
                false
            };
            if found {
                self.samples = self.samples.saturating_sub(1);
                if let Some(at) = inst.writers.iter().position(|(w, _)| w == writer) {
                    inst.writers[at].1 -= 1;
                    if inst.writers[at].1 == 0 {
                        inst.writers.swap_remove(at);
                    }
                }
            }
        }
        if inst.is_empty() {
            self.instances.remove(key_hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(r: &SnRanges) -> Vec<(i64, i64)> {
        r.0.iter().map(|(&s, &e)| (s, e)).collect()
    }

    #[test]
    fn ranges_merge_on_insert_and_split_on_remove() {
        let mut r = SnRanges::default();
        for sn in [1, 2, 3, 7, 5, 6] {
            r.insert(sn);
        }
        assert_eq!(ranges(&r), vec![(1, 3), (5, 7)]);
        r.insert(4);
        assert_eq!(ranges(&r), vec![(1, 7)]);
        r.insert(4);
        assert_eq!(ranges(&r), vec![(1, 7)]);
        r.remove(4);
        assert_eq!(ranges(&r), vec![(1, 3), (5, 7)]);
        r.remove(1);
        r.remove(7);
        r.remove(9);
        assert_eq!(ranges(&r), vec![(2, 3), (5, 6)]);
        assert!(r.contains(2) && r.contains(6) && !r.contains(4) && !r.contains(1));
        for sn in [2, 3, 5, 6] {
            r.remove(sn);
        }
        assert!(r.is_empty());
        r.insert(i64::MAX);
        r.insert(i64::MAX - 1);
        assert_eq!(ranges(&r), vec![(i64::MAX - 1, i64::MAX)]);
    }

    #[test]
    fn index_counts_instances_and_gives_their_oldest_rows() {
        let mut ix = ChannelIndex::default();
        let (w, a, b) = ([1; 16], [0xa; 16], [0xb; 16]);
        ix.add(1, w, 1, a, SampleKind::Alive);
        ix.add(2, w, 2, b, SampleKind::Alive);
        ix.add(3, w, 3, a, SampleKind::Alive);
        assert!(ix.has(&w, 2) && !ix.has(&w, 4) && !ix.has(&[2; 16], 1));
        assert_eq!(
            (ix.in_instance(&a), ix.in_instance(&[0; 16])),
            (Some(2), None)
        );
        assert_eq!((ix.samples(), ix.instance_count()), (3, 2));
        assert_eq!(ix.oldest(&a, 1), vec![1]);
        assert_eq!(ix.rows_of(&a), vec![1, 3]);
        ix.remove(1, &w, 1, &a);
        ix.remove(2, &w, 2, &b);
        assert_eq!((ix.samples(), ix.instance_count()), (1, 1));
        assert!(!ix.has(&w, 1) && ix.has(&w, 3));
        assert_eq!(ix.in_instance(&b), None);
    }

    #[test]
    fn state_changes_never_take_a_data_sample_place_and_stay_while_they_tell_something() {
        let (w, v, a) = ([1; 16], [2; 16], [0xa; 16]);
        let mut ix = ChannelIndex::default();
        // Nothing of the instance stored: its state changes are not kept.
        assert_eq!(
            ix.obsolete_states(&a, &w, SampleKind::Unregistered, &[]),
            (vec![], true)
        );
        assert_eq!(
            ix.obsolete_states(&a, &w, SampleKind::Disposed, &[]),
            (vec![], true)
        );
        ix.add(1, w, 1, a, SampleKind::Alive);
        // w's unregistration is kept beside its data, and counts as no data sample.
        assert_eq!(
            ix.obsolete_states(&a, &w, SampleKind::Unregistered, &[]),
            (vec![], false)
        );
        ix.add(2, w, 2, a, SampleKind::Unregistered);
        assert_eq!((ix.in_instance(&a), ix.samples()), (Some(1), 1));
        // v's unregistration says nothing: v has no data in the instance.
        assert_eq!(
            ix.obsolete_states(&a, &v, SampleKind::Unregistered, &[]),
            (vec![], true)
        );
        // A dispose by v is kept, w's unregistration stays (w still has its data).
        assert_eq!(
            ix.obsolete_states(&a, &v, SampleKind::Disposed, &[]),
            (vec![], false)
        );
        ix.add(3, v, 1, a, SampleKind::Disposed);
        // A write by v revives the instance (the dispose goes); KEEP_LAST 1 evicts w's
        // data, so w's unregistration goes too.
        assert_eq!(
            ix.obsolete_states(&a, &v, SampleKind::Alive, &[w]),
            (vec![2, 3], false)
        );
        // Without the eviction, w's unregistration stays.
        assert_eq!(
            ix.obsolete_states(&a, &v, SampleKind::Alive, &[]),
            (vec![3], false)
        );
        // w writes again: its own unregistration goes.
        assert_eq!(
            ix.obsolete_states(&a, &w, SampleKind::Alive, &[]),
            (vec![2, 3], false)
        );
        // A later dispose replaces the earlier one; a dispose-and-unregister by w replaces
        // both w's unregistration and the dispose.
        assert_eq!(
            ix.obsolete_states(&a, &v, SampleKind::Disposed, &[]),
            (vec![3], false)
        );
        assert_eq!(
            ix.obsolete_states(&a, &w, SampleKind::DisposedUnregistered, &[]),
            (vec![2, 3], false)
        );
        ix.remove(2, &w, 2, &a);
        ix.remove(3, &v, 1, &a);
        ix.add(4, w, 3, a, SampleKind::DisposedUnregistered);
        // v's dispose after w's dispose-and-unregister: the dispose part goes, w's
        // unregistration part stays.
        assert_eq!(
            ix.obsolete_states(&a, &v, SampleKind::Disposed, &[]),
            (vec![], false)
        );
        assert_eq!(ix.rows_of(&a), vec![1, 4]);
        ix.remove(1, &w, 1, &a);
        ix.remove(4, &w, 3, &a);
        assert_eq!((ix.in_instance(&a), ix.instance_count()), (None, 0));
    }
}
