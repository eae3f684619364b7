//! Reassembly of fragmented samples (RTPS 2.5 §8.4.14.1, DATA_FRAG).
//!
//! Design. One buffer per sample in progress, allocated once at the announced sample size
//! (bounded by `max_sample_size`, checked by the caller), with a bitmap of received fragments.
//! Fragments are copied in place; duplicates and overlaps are harmless (same bytes). The
//! sample is complete when every fragment bit is set. Inconsistent fragments (a different
//! sample size or fragment size than the first one) are rejected.
//!
//! Memory bounds. Every buffer is charged to the participant's [`ReassemblyBudget`] when it is
//! created and refunded when it is dropped (completed, superseded or its writer unmatched), so
//! all samples in progress together never exceed `max_reassembly_bytes`. Only whole fragments
//! are copied, and fragments must be at least [`MIN_FRAGMENT_SIZE`] bytes (unless the sample is
//! one fragment), so traffic cannot touch pages much faster than it carries bytes.

use crate::buffers::BufferPool;
use crate::config::MIN_FRAGMENT_SIZE;
use crate::time::Instant;
use halyard_wire::{FragmentNumberSet, Time};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes all reassembly buffers of one participant may hold together; buffers come from, and
/// go back to, the participant's [`BufferPool`] when large.
#[derive(Clone, Debug)]
pub(crate) struct ReassemblyBudget {
    used: Arc<AtomicUsize>,
    limit: usize,
    pool: BufferPool,
}

impl ReassemblyBudget {
    pub(crate) fn new(limit: usize, pool: BufferPool) -> Self {
        ReassemblyBudget {
            used: Arc::new(AtomicUsize::new(0)),
            limit,
            pool,
        }
    }

    /// A buffer of `len` bytes: a pooled one (its old bytes are left for the fragments to
    /// overwrite: a sample is only complete once every fragment overwrote its part), else a
    /// fresh zeroed one.
    fn buffer(&self, len: usize) -> Vec<u8> {
        match self.pool.take_at_least(len) {
            Some(mut buf) => {
                // Shorter: no byte is touched; longer: only the extension is zeroed.
                if buf.len() >= len {
                    buf.truncate(len);
                } else {
                    buf.resize(len, 0);
                }
                buf
            }
            None => vec![0; len],
        }
    }

    fn try_take(&self, n: usize) -> bool {
        let used = self.used.load(Ordering::Relaxed);
        if used.saturating_add(n) > self.limit {
            return false;
        }
        self.used.store(used + n, Ordering::Relaxed);
        true
    }

    fn give(&self, n: usize) {
        let used = self.used.load(Ordering::Relaxed);
        self.used.store(used.saturating_sub(n), Ordering::Relaxed);
    }

    /// Bytes currently charged.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// Why a fragment was refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FragError {
    /// Sample or fragment size differs from the first fragment seen.
    Inconsistent,
    /// Fragment numbers outside the sample.
    OutOfRange,
}

pub(crate) struct Reassembly {
    pub(crate) sample_size: u32,
    fragment_size: u32,
    total: u32,
    data: Vec<u8>,
    received: Vec<u64>,
    received_count: u32,
    /// Highest fragment number received (0 = none).
    highest: u32,
    pub(crate) key_hash: Option<[u8; 16]>,
    pub(crate) status_info: u32,
    /// PID_COHERENT_SET of the first fragment (see [`crate::coherent`]).
    pub(crate) coherent: Option<Option<halyard_wire::SequenceNumber>>,
    /// PID_GROUP_COHERENT_SET and PID_GROUP_SEQ_NUM of the first fragment.
    pub(crate) group: Option<(halyard_wire::SequenceNumber, halyard_wire::SequenceNumber)>,
    /// PID_GROUP_SEQ_NUM of the first fragment.
    pub(crate) gsn: Option<halyard_wire::SequenceNumber>,
    /// PID_ORIGINAL_WRITER_INFO of the first fragment.
    pub(crate) original: Option<(halyard_wire::Guid, halyard_wire::SequenceNumber)>,
    pub(crate) timestamp: Option<Time>,
    pub(crate) key_flag: bool,
    /// When fragments of this sample were last NACKed, and the highest fragment number that
    /// NACK covered (see `WriterProxy::nack_frags`).
    pub(crate) last_nack: Option<(Instant, u32)>,
    budget: ReassemblyBudget,
}

impl Drop for Reassembly {
    fn drop(&mut self) {
        self.budget.give(self.sample_size as usize);
        // An abandoned sample's buffer serves the next one.
        self.budget.pool.put(std::mem::take(&mut self.data));
    }
}

impl Reassembly {
    /// Starts a sample of `sample_size` bytes in fragments of `fragment_size`, charged to
    /// `budget`; `None` if the sizes are invalid or the budget is exhausted.
    pub(crate) fn new(
        sample_size: u32,
        fragment_size: u16,
        budget: &ReassemblyBudget,
    ) -> Option<Reassembly> {
        if fragment_size == 0 || sample_size == 0 {
            return None;
        }
        if (fragment_size as usize) < MIN_FRAGMENT_SIZE && sample_size > fragment_size as u32 {
            return None;
        }
        if !budget.try_take(sample_size as usize) {
            return None;
        }
        let total = sample_size.div_ceil(fragment_size as u32);
        debug_assert!(total >= 1, "a sample has at least one fragment");
        Some(Reassembly {
            budget: budget.clone(),
            sample_size,
            fragment_size: fragment_size as u32,
            total,
            data: budget.buffer(sample_size as usize),
            received: vec![0; (total as usize).div_ceil(64)],
            received_count: 0,
            highest: 0,
            key_hash: None,
            status_info: 0,
            coherent: None,
            group: None,
            gsn: None,
            original: None,
            timestamp: None,
            key_flag: false,
            last_nack: None,
        })
    }

    /// Adds `count` fragments starting at `start` (1-based). Returns true when complete.
    pub(crate) fn insert(
        &mut self,
        sample_size: u32,
        fragment_size: u16,
        start: u32,
        count: u16,
        bytes: &[u8],
    ) -> Result<bool, FragError> {
        if sample_size != self.sample_size || fragment_size as u32 != self.fragment_size {
            return Err(FragError::Inconsistent);
        }
        if start == 0 || start > self.total {
            return Err(FragError::OutOfRange);
        }
        let last = start
            .saturating_add(count as u32)
            .saturating_sub(1)
            .min(self.total);
        let offset = (start as usize - 1) * self.fragment_size as usize;
        let end = (last as usize * self.fragment_size as usize).min(self.sample_size as usize);
        debug_assert!(
            offset < end && end <= self.data.len(),
            "fragments {start}..={last} lie outside the {}-byte sample",
            self.data.len()
        );
        let usable = bytes.len().min(end.saturating_sub(offset));
        // Only fragments fully covered by the bytes count as received, and only those are
        // copied (a short fragment must not touch the buffer).
        let fs = self.fragment_size as usize;
        let whole = if offset + usable == end {
            usable
        } else {
            usable / fs * fs
        };
        self.data[offset..offset + whole].copy_from_slice(&bytes[..whole]);
        let covered_end = offset + whole;
        for n in start..=last {
            let f_end = (n as usize * self.fragment_size as usize).min(self.sample_size as usize);
            if f_end > covered_end {
                break;
            }
            let (w, b) = (((n - 1) / 64) as usize, (n - 1) % 64);
            if self.received[w] & (1 << b) == 0 {
                self.received[w] |= 1 << b;
                self.received_count += 1;
            }
            self.highest = self.highest.max(n);
        }
        debug_assert!(
            self.received_count <= self.total && self.highest <= self.total,
            "received {} of {} fragments, highest {}",
            self.received_count,
            self.total,
            self.highest
        );
        Ok(self.received_count == self.total)
    }

    fn has(&self, n: u32) -> bool {
        debug_assert!(
            (1..=self.total).contains(&n),
            "fragment {n} of {}",
            self.total
        );
        let (w, b) = (((n - 1) / 64) as usize, (n - 1) % 64);
        self.received.get(w).is_some_and(|x| x & (1 << b) != 0)
    }

    /// Missing fragments numbered `from` or more: up to 256 from the first missing one, not
    /// beyond `upto`.
    pub(crate) fn missing_from(&self, from: u32, upto: u32) -> Option<FragmentNumberSet> {
        let upto = upto.min(self.total);
        let first = (from.max(1)..=upto).find(|&n| !self.has(n))?;
        let bits = (upto - first + 1).min(256);
        let mut set = FragmentNumberSet::new(first, bits);
        for n in first..first + bits {
            if !self.has(n) {
                set.insert(n);
            }
        }
        Some(set)
    }

    /// The highest fragment number received so far (0 if none).
    pub(crate) fn highest_received(&self) -> u32 {
        self.highest
    }

    /// Total fragments of the sample.
    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// The completed sample bytes.
    pub(crate) fn into_data(mut self) -> Vec<u8> {
        std::mem::take(&mut self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_beyond_the_first_window_are_found_below_the_highest_fragment() {
        // 1000 fragments of 512 bytes; fragments 1..=900 arrive except 10, 300 and 700.
        let mut r = Reassembly::new(
            512_000,
            512,
            &ReassemblyBudget::new(1 << 20, BufferPool::default()),
        )
        .unwrap();
        let frag = vec![7u8; 512];
        for n in (1..=900).filter(|n| ![10, 300, 700].contains(n)) {
            r.insert(512_000, 512, n, 1, &frag).unwrap();
        }
        assert_eq!(r.highest_received(), 900);
        let first = r.missing_from(1, r.total()).unwrap();
        assert_eq!((first.base, first.num_bits), (10, 256));
        assert_eq!(first.iter().collect::<Vec<_>>(), vec![10]);
        let second = r.missing_from(266, r.highest_received()).unwrap();
        assert_eq!(second.iter().collect::<Vec<_>>(), vec![300]);
        let third = r.missing_from(556, r.highest_received()).unwrap();
        assert_eq!(third.iter().collect::<Vec<_>>(), vec![700]);
        assert!(r.missing_from(701, r.highest_received()).is_none());
    }

    #[test]
    fn out_of_order_fragments_complete_the_sample() {
        let sample: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let mut r = Reassembly::new(
            2500,
            1000,
            &ReassemblyBudget::new(1 << 20, BufferPool::default()),
        )
        .unwrap();
        assert!(!r.insert(2500, 1000, 3, 1, &sample[2000..]).unwrap());
        assert_eq!(
            r.missing_from(1, 3).unwrap().iter().collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert!(!r.insert(2500, 1000, 1, 1, &sample[..1000]).unwrap());
        assert!(!r.insert(2500, 1000, 1, 1, &sample[..1000]).unwrap());
        assert!(r.insert(2500, 1000, 2, 1, &sample[1000..2000]).unwrap());
        assert_eq!(r.into_data(), sample);
    }

    #[test]
    fn the_budget_bounds_buffers_and_is_refunded_on_drop() {
        let budget = ReassemblyBudget::new(5000, BufferPool::default());
        let a = Reassembly::new(2500, 1000, &budget).unwrap();
        let b = Reassembly::new(2500, 1000, &budget).unwrap();
        assert!(
            Reassembly::new(2500, 1000, &budget).is_none(),
            "over budget"
        );
        assert_eq!(budget.used(), 5000);
        drop(a);
        assert_eq!(budget.used(), 2500);
        assert_eq!(b.into_data().len(), 2500);
        assert_eq!(budget.used(), 0, "completing a sample refunds it");
        assert!(
            Reassembly::new(100_000, 64, &budget).is_none(),
            "tiny fragments refused"
        );
        assert!(
            Reassembly::new(60, 64, &budget).is_some(),
            "one-fragment samples may be small"
        );
    }

    #[test]
    fn bad_fragments_are_refused() {
        let mut r = Reassembly::new(
            2500,
            1000,
            &ReassemblyBudget::new(1 << 20, BufferPool::default()),
        )
        .unwrap();
        assert_eq!(
            r.insert(2600, 1000, 1, 1, &[0; 1000]),
            Err(FragError::Inconsistent)
        );
        assert_eq!(
            r.insert(2500, 1000, 4, 1, &[0; 1000]),
            Err(FragError::OutOfRange)
        );
        assert_eq!(
            r.insert(2500, 1000, 0, 1, &[0; 1000]),
            Err(FragError::OutOfRange)
        );
        // A short fragment does not count as received.
        assert!(!r.insert(2500, 1000, 1, 1, &[0; 10]).unwrap());
        assert_eq!(r.missing_from(1, 3).unwrap().base, 1);
    }
}
