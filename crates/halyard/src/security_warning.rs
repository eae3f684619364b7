//! The DDS Security warnings a participant writes to standard error whatever the security log
//! setting ([`halyard_core::Event::SecurityWarning`]: a peer that does not accept our
//! identity, or whose identity does not verify against ours). The plugin reports each peer
//! once; here a peer seen again (rediscovered after its lease ended) is not reported again
//! while it is among the last [`MAX_REMEMBERED`] reported, and at most [`MAX_PER_WINDOW`]
//! lines are written per [`WINDOW`], the next line saying how many were left out, so that
//! many refused peers (or forged announcements) cannot flood a terminal or a log.

use halyard_wire::GuidPrefix;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Peers remembered as reported.
const MAX_REMEMBERED: usize = 256;
/// Lines written per window at most.
const MAX_PER_WINDOW: u32 = 10;
/// The rate limit's window.
const WINDOW: Duration = Duration::from_secs(60);

/// Which warnings are written: once per peer, a bounded number per window.
#[derive(Debug, Default)]
pub(crate) struct WarningLimit {
    reported: VecDeque<GuidPrefix>,
    window_start: Option<Instant>,
    in_window: u32,
    left_out: u64,
}

impl WarningLimit {
    /// Whether a warning about `peer` at `now` is written; `Some(n)`: yes, after `n` left out
    /// since the last line written.
    pub(crate) fn admit(&mut self, peer: GuidPrefix, now: Instant) -> Option<u64> {
        if self.reported.contains(&peer) {
            return None;
        }
        if self
            .window_start
            .is_none_or(|start| now.saturating_duration_since(start) >= WINDOW)
        {
            self.window_start = Some(now);
            self.in_window = 0;
        }
        if self.in_window >= MAX_PER_WINDOW {
            self.left_out += 1;
            return None;
        }
        self.in_window += 1;
        if self.reported.len() == MAX_REMEMBERED {
            self.reported.pop_front();
        }
        self.reported.push_back(peer);
        Some(std::mem::take(&mut self.left_out))
    }
}

/// Writes the warning `what` about `peer` to standard error, within the limit.
pub(crate) fn write(peer: GuidPrefix, what: &str) {
    static LIMIT: Mutex<Option<WarningLimit>> = Mutex::new(None);
    let admitted = {
        let mut limit = LIMIT.lock().unwrap_or_else(|e| e.into_inner());
        limit
            .get_or_insert_with(WarningLimit::default)
            .admit(peer, crate::clock::monotonic())
    };
    let Some(left_out) = admitted else {
        return;
    };
    // The text holds peer input (names, certificate subjects): no control characters.
    let text: String = what
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if left_out > 0 {
        eprintln!("halyard security: {text} ({left_out} more such warnings left out)");
    } else {
        eprintln!("halyard security: {text}");
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // a start time for the windows
mod tests {
    use super::*;

    fn peer(n: u32) -> GuidPrefix {
        let mut p = [0u8; 12];
        p[..4].copy_from_slice(&n.to_be_bytes());
        GuidPrefix(p)
    }

    #[test]
    fn once_per_peer_and_a_bounded_number_per_window() {
        let mut l = WarningLimit::default();
        let t0 = Instant::now();
        assert_eq!(l.admit(peer(1), t0), Some(0));
        assert_eq!(l.admit(peer(1), t0), None, "once per peer");
        for n in 2..=MAX_PER_WINDOW {
            assert_eq!(l.admit(peer(n), t0), Some(0));
        }
        // The window is full: left out, and counted in the next line written.
        assert_eq!(l.admit(peer(100), t0 + Duration::from_secs(1)), None);
        assert_eq!(l.admit(peer(101), t0 + Duration::from_secs(2)), None);
        assert_eq!(l.admit(peer(102), t0 + WINDOW), Some(2));
        // A peer left out is reported once there is room.
        assert_eq!(l.admit(peer(100), t0 + WINDOW), Some(0));
        assert_eq!(l.admit(peer(1), t0 + WINDOW * 5), None, "still remembered");
    }

    #[test]
    fn the_peers_remembered_are_bounded() {
        let mut l = WarningLimit::default();
        let mut t = Instant::now();
        for n in 0..(MAX_REMEMBERED as u32 + 1) {
            t += WINDOW; // a fresh window for each
            assert_eq!(l.admit(peer(n), t), Some(0));
        }
        assert_eq!(l.reported.len(), MAX_REMEMBERED);
        // The oldest was forgotten: reported again.
        assert_eq!(l.admit(peer(0), t + WINDOW), Some(0));
    }
}
