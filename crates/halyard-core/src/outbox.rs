//! Datagrams the core wants sent, with a free list of buffers so the hot path does not allocate.

use halyard_wire::{GuidPrefix, Header, Locator, MessageBuilder};
use std::collections::VecDeque;

/// One datagram and where it goes.
#[derive(Debug)]
#[must_use = "a Transmit must be sent (then its buffer may be recycled)"]
pub struct Transmit {
    /// Destinations (the same bytes go to each).
    pub destinations: Vec<Locator>,
    /// The RTPS message.
    pub payload: Vec<u8>,
}

/// Bound on queued datagrams; beyond it the oldest best-effort-equivalent behaviour applies:
/// new datagrams are dropped and counted (reliability repairs them).
pub const MAX_QUEUED_TRANSMITS: usize = 65_536;

/// Queue of datagrams plus buffer recycling.
pub(crate) struct Outbox {
    header: Header,
    queue: VecDeque<Transmit>,
    free: Vec<Vec<u8>>,
    pub(crate) max_message_size: usize,
    pub(crate) dropped: u64,
    /// Bytes of every datagram queued so far (once each, whatever its destinations).
    pushed_bytes: usize,
}

impl Outbox {
    pub(crate) fn new(header: Header, max_message_size: usize) -> Self {
        Outbox {
            header,
            queue: VecDeque::new(),
            free: Vec::new(),
            max_message_size,
            dropped: 0,
            pushed_bytes: 0,
        }
    }

    /// Starts a message, with INFO_DST when the destination participant is known.
    pub(crate) fn start(&mut self, dst: Option<GuidPrefix>) -> MessageBuilder {
        let buf = self.free.pop().unwrap_or_default();
        let mut mb = MessageBuilder::new(buf, &self.header);
        if let Some(p) = dst {
            mb.info_dst(p);
        }
        mb
    }

    /// Queues a finished message unless it holds no submessage beyond `empty_len` bytes.
    pub(crate) fn push(&mut self, mb: MessageBuilder, empty_len: usize, destinations: &[Locator]) {
        if mb.len() <= empty_len || destinations.is_empty() {
            self.free.push(mb.finish());
            return;
        }
        if self.queue.len() >= MAX_QUEUED_TRANSMITS {
            self.dropped += 1;
            self.free.push(mb.finish());
            return;
        }
        self.pushed_bytes = self.pushed_bytes.wrapping_add(mb.len());
        self.queue.push_back(Transmit {
            destinations: destinations.to_vec(),
            payload: mb.finish(),
        });
    }

    /// Bytes of every datagram queued so far: the difference of two readings is what was
    /// queued in between.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.pushed_bytes
    }

    pub(crate) fn pop(&mut self) -> Option<Transmit> {
        self.queue.pop_front()
    }

    /// A buffer from the free list (empty), or a new one: the security protection of a
    /// datagram builds its protected form in it.
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        self.free.pop().unwrap_or_default()
    }

    pub(crate) fn recycle(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() == 0 {
            return;
        }
        if self.free.len() < 64 && buf.capacity() <= 2 * self.max_message_size {
            buf.clear();
            self.free.push(buf);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }
}
