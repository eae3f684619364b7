//! Large payload buffers kept for reuse. A fresh buffer of a large sample costs a page fault
//! per 4 KiB page the first time it is written (for a sample of megabytes, several times
//! what the copy itself costs); a reused one costs nothing. The participant keeps a few: buffers of
//! samples it finished sending (dropped from a writer's history), payloads the application
//! finished reading (given back by the API layer), and buffers of abandoned reassemblies.

use std::sync::{Arc, Mutex};

/// Buffers kept at most.
const POOLED_BUFFERS: usize = 4;
/// Buffers smaller than this are not worth keeping: allocating them is cheap. Above it the
/// allocator often returns a freed buffer's pages to the system (its trim threshold is
/// 128 KiB of free memory at the top of the heap), so the next one faults them in again.
pub(crate) const MIN_POOLED_BYTES: usize = 32 * 1024;
/// Buffers larger than this are not kept (a burst of huge samples must not pin memory).
const MAX_POOLED_BYTES: usize = 64 << 20;

/// A participant's pool of large buffers (shared by its writers and reassemblies).
#[derive(Clone, Debug, Default)]
pub(crate) struct BufferPool(Arc<Mutex<Vec<Vec<u8>>>>);

impl BufferPool {
    /// Keeps `buf` if it is large (not huge) and the pool has room. Its length is kept: those
    /// bytes are paged in already.
    pub(crate) fn put(&self, buf: Vec<u8>) {
        if !(MIN_POOLED_BYTES..=MAX_POOLED_BYTES).contains(&buf.capacity()) {
            return;
        }
        let mut pool = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOLED_BUFFERS {
            pool.push(buf);
        }
    }

    /// The smallest kept buffer with room for `len` bytes, if any (its old content is left).
    pub(crate) fn take_at_least(&self, len: usize) -> Option<Vec<u8>> {
        let mut pool = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let i = pool
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        Some(pool.swap_remove(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_keeps_a_few_large_buffers_and_hands_out_the_smallest_that_fits() {
        let pool = BufferPool::default();
        pool.put(vec![1; 16]);
        assert!(
            pool.take_at_least(1).is_none(),
            "small buffers are not kept"
        );
        for size in [1 << 20, 4 << 20, 2 << 20, 3 << 20, 5 << 20] {
            pool.put(Vec::with_capacity(size));
        }
        let b = pool.take_at_least(1_500_000).unwrap();
        assert_eq!(b.capacity(), 2 << 20);
        assert!(
            pool.take_at_least(5 << 20).is_none(),
            "the fifth was not kept"
        );
        assert_eq!(pool.take_at_least(1).unwrap().capacity(), 1 << 20);
    }
}
