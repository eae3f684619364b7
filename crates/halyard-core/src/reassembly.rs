//! Reassembly of fragmented samples (RTPS 2.5 §8.4.14.1, DATA_FRAG).
//!
//! Design. One buffer per sample in progress, allocated once at the announced sample size
//! (bounded by `max_sample_size`, checked by the caller), with a bitmap of received fragments.
//! Fragments are copied in place; duplicates and overlaps are harmless (same bytes). The
//! sample is complete when every fragment bit is set. Inconsistent fragments (a different
//! sample size or fragment size than the first one) are rejected.

use halyard_wire::{FragmentNumberSet, Time};

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
    pub(crate) key_hash: Option<[u8; 16]>,
    pub(crate) status_info: u32,
    pub(crate) timestamp: Option<Time>,
    pub(crate) key_flag: bool,
}

impl Reassembly {
    /// Starts a sample of `sample_size` bytes in fragments of `fragment_size`.
    pub(crate) fn new(sample_size: u32, fragment_size: u16) -> Option<Reassembly> {
        if fragment_size == 0 || sample_size == 0 {
            return None;
        }
        let total = sample_size.div_ceil(fragment_size as u32);
        Some(Reassembly {
            sample_size,
            fragment_size: fragment_size as u32,
            total,
            data: vec![0; sample_size as usize],
            received: vec![0; (total as usize).div_ceil(64)],
            received_count: 0,
            key_hash: None,
            status_info: 0,
            timestamp: None,
            key_flag: false,
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
        let usable = bytes.len().min(end.saturating_sub(offset));
        self.data[offset..offset + usable].copy_from_slice(&bytes[..usable]);
        // Only fragments fully covered by the bytes count as received.
        let covered_end = offset + usable;
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
        }
        Ok(self.received_count == self.total)
    }

    fn has(&self, n: u32) -> bool {
        let (w, b) = (((n - 1) / 64) as usize, (n - 1) % 64);
        self.received.get(w).is_some_and(|x| x & (1 << b) != 0)
    }

    /// Missing fragments, up to 256 from the first missing one, not beyond `upto`.
    pub(crate) fn missing(&self, upto: u32) -> Option<FragmentNumberSet> {
        let upto = upto.min(self.total);
        let first = (1..=upto).find(|&n| !self.has(n))?;
        let bits = (upto - first + 1).min(256);
        let mut set = FragmentNumberSet::new(first, bits);
        for n in first..first + bits {
            if !self.has(n) {
                set.insert(n);
            }
        }
        Some(set)
    }

    /// Total fragments of the sample.
    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// The completed sample bytes.
    pub(crate) fn into_data(self) -> Vec<u8> {
        self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_fragments_complete_the_sample() {
        let sample: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let mut r = Reassembly::new(2500, 1000).unwrap();
        assert!(!r.insert(2500, 1000, 3, 1, &sample[2000..]).unwrap());
        assert_eq!(r.missing(3).unwrap().iter().collect::<Vec<_>>(), vec![1, 2]);
        assert!(!r.insert(2500, 1000, 1, 1, &sample[..1000]).unwrap());
        assert!(!r.insert(2500, 1000, 1, 1, &sample[..1000]).unwrap());
        assert!(r.insert(2500, 1000, 2, 1, &sample[1000..2000]).unwrap());
        assert_eq!(r.into_data(), sample);
    }

    #[test]
    fn bad_fragments_are_refused() {
        let mut r = Reassembly::new(2500, 1000).unwrap();
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
        assert_eq!(r.missing(3).unwrap().base, 1);
    }
}
