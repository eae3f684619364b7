//! The in-memory index of one channel's stored samples, in place of SQLite indexes.
//!
//! Design. Schema version 1 kept two SQLite indexes on the samples table, (channel, writer,
//! sn) for duplicates and (channel, key_hash, id) for KEEP_LAST eviction and purges. On a
//! stream of 1 KB samples they cost more than the row itself: every insert walked and wrote
//! two more b-trees, and a commit rewrote an index leaf per interleaved instance
//! (`examples/store_bench`, 1 KB, 100 instances: 137 k inserts/s with them, 310 k/s without,
//! write-ahead log). Since version 2 the table is the only b-tree and this index answers
//! the same questions from memory:
//!
//! * per writer, the sequence numbers stored, as disjoint ranges (a writer's samples arrive
//!   in order, so this is usually one range per writer);
//! * per instance, the row ids of its samples, oldest first (8 bytes per stored sample).
//!
//! It is built from one scan of the channel's rows when the store first uses the channel,
//! updated only after a write succeeded, and dropped whenever the pending transaction is lost
//! or another connection committed to the file (the store checks `PRAGMA data_version` as it
//! begins a transaction, holding the write lock): the next use scans again.

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

/// What is stored in one channel (see the module).
#[derive(Debug, Default)]
pub(crate) struct ChannelIndex {
    writers: BTreeMap<[u8; 16], SnRanges>,
    instances: BTreeMap<[u8; 16], VecDeque<i64>>,
    /// Samples stored.
    samples: u64,
}

impl ChannelIndex {
    /// Whether `writer`'s sample `sn` is stored.
    pub(crate) fn has(&self, writer: &[u8; 16], sn: i64) -> bool {
        self.writers.get(writer).is_some_and(|r| r.contains(sn))
    }

    /// Samples the instance holds; `None` when it holds none (it does not exist).
    pub(crate) fn in_instance(&self, key_hash: &[u8; 16]) -> Option<u64> {
        self.instances
            .get(key_hash)
            .filter(|rows| !rows.is_empty())
            .map(|rows| rows.len() as u64)
    }

    /// Instances holding samples.
    pub(crate) fn instance_count(&self) -> u64 {
        self.instances.len() as u64
    }

    /// Samples stored.
    pub(crate) fn samples(&self) -> u64 {
        self.samples
    }

    /// The instance's `n` oldest row ids.
    pub(crate) fn oldest(&self, key_hash: &[u8; 16], n: u64) -> Vec<i64> {
        self.instances.get(key_hash).map_or_else(Vec::new, |rows| {
            rows.iter()
                .take(usize::try_from(n).unwrap_or(usize::MAX))
                .copied()
                .collect()
        })
    }

    /// Every row id of the instance, oldest first.
    pub(crate) fn rows_of(&self, key_hash: &[u8; 16]) -> Vec<i64> {
        self.oldest(key_hash, u64::MAX)
    }

    /// Records a stored row. Rows of an instance must come in ascending id order.
    pub(crate) fn add(&mut self, row: i64, writer: [u8; 16], sn: i64, key_hash: [u8; 16]) {
        self.writers.entry(writer).or_default().insert(sn);
        self.instances.entry(key_hash).or_default().push_back(row);
        self.samples += 1;
    }

    /// Forgets a removed row: `writer`'s `sn`, in instance `key_hash`.
    pub(crate) fn remove(&mut self, row: i64, writer: &[u8; 16], sn: i64, key_hash: &[u8; 16]) {
        if let Some(ranges) = self.writers.get_mut(writer) {
            ranges.remove(sn);
            if ranges.is_empty() {
                self.writers.remove(writer);
            }
        }
        if let Some(rows) = self.instances.get_mut(key_hash) {
            // Evictions take the oldest; a purge takes them all: the front is the usual case.
            if rows.front() == Some(&row) {
                rows.pop_front();
            } else if let Some(at) = rows.iter().position(|&r| r == row) {
                rows.remove(at);
            }
            if rows.is_empty() {
                self.instances.remove(key_hash);
            }
        }
        self.samples = self.samples.saturating_sub(1);
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
        ix.add(1, w, 1, a);
        ix.add(2, w, 2, b);
        ix.add(3, w, 3, a);
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
}
