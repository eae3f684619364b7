//! Pacing of best-effort writers (no RTPS counterpart: what Connext's flow controllers and
//! Fast DDS's throughput controllers do, plus adaptation to the readers' reception).
//!
//! Design. A best-effort writer that sends a large sample as fast as it can fills the
//! receiver's socket buffer faster than the receiver drains it; every sample then loses a
//! fragment and none arrives whole. So a writer's datagrams can be metered by a token bucket
//! whose rate is the lower of a configured limit (per writer, and per participant in a bucket
//! its writers share) and what its readers report they absorb:
//!
//! - A Halyard best-effort reader of fragmented samples reports every
//!   `reception_report_interval` what it received (bytes, samples completed, samples abandoned
//!   incomplete) in a vendor-specific submessage (`ReceptionReport`); other vendors skip it.
//! - A reader receiving less than 90 % of what the writer sent (rates smoothed over reports)
//!   means the path's buffer is filling: the writer's rate for that reader becomes just under
//!   what arrived (0.95), before anything is lost; abandoned samples mean it overflowed (0.9).
//!   Otherwise, while the rate held the writer back, it grows by 2 % per report, probing for
//!   more. A writer whose
//!   readers keep up is not paced at all: small-sample traffic that fits is never slowed.
//!
//! Samples wait whole in a queue until the bucket has tokens for their next datagram; a sample
//! never waits behind a newer one, and one that must be dropped (KEEP_LAST, a newer sample of
//! the writer came) is dropped before any of it was sent, and counted. A KEEP_ALL writer
//! instead refuses the write (`WriteError::Full`) while a sample waits, so its application
//! blocks up to max_blocking_time, as for reliable flow control.

use crate::time::Instant;
use std::time::Duration;

/// Bytes per second below which adaptation never lowers a writer's rate.
pub const MIN_PACED_RATE: f64 = 1_048_576.0;

/// How long a full bucket lets a writer burst at its rate: short, so a burst stays well below
/// a receiver's socket buffer (4 ms at 1 GB/s is 4 MB, half of a Linux socket buffer at the
/// usual 4 MiB rmem_max).
const BURST: Duration = Duration::from_millis(4);

/// A token bucket metering bytes: tokens accrue at `rate` up to a depth of [`BURST`] of them
/// (at least `min_depth`); a datagram may go out while tokens are not negative, and takes its
/// size (so one large datagram never waits forever).
#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    rate: f64,
    depth: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket of `rate` bytes per second, at least `min_depth` bytes deep.
    pub(crate) fn new(rate: f64, min_depth: usize, now: Instant) -> TokenBucket {
        let depth = (rate * BURST.as_secs_f64()).max(min_depth as f64);
        TokenBucket {
            rate,
            depth,
            tokens: depth,
            at: now,
        }
    }

    /// The rate in bytes per second.
    pub(crate) fn rate(&self) -> f64 {
        self.rate
    }

    /// Changes the rate, keeping the tokens earned so far.
    pub(crate) fn set_rate(&mut self, rate: f64, min_depth: usize, now: Instant) {
        self.refill(now);
        self.rate = rate;
        self.depth = (rate * BURST.as_secs_f64()).max(min_depth as f64);
        self.tokens = self.tokens.min(self.depth);
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + dt * self.rate).min(self.depth);
        self.at = self.at.max(now);
    }

    /// True if a datagram may go out now (a debt under one byte is float rounding: at
    /// [`TokenBucket::ready_at`] the bucket is ready).
    pub(crate) fn ready(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens > -1.0
    }

    /// Charges a datagram of `bytes`.
    pub(crate) fn take(&mut self, bytes: usize) {
        self.tokens -= bytes as f64;
    }

    /// When the next datagram may go out (rounded up to the next nanosecond, so that the
    /// bucket is ready then).
    pub(crate) fn ready_at(&self) -> Instant {
        if self.tokens > -1.0 || self.rate <= 0.0 {
            return self.at;
        }
        let nanos = (-self.tokens / self.rate * 1e9).ceil() as u64;
        self.at + Duration::from_nanos(nanos.max(1))
    }
}

/// Sent and received rates to one reader, smoothed over its reports (an exponentially
/// weighted moving average, a fifth per report): a 10 ms report window holds a burst of a large
/// sample or none, and sending and receiving windows are offset by the path's delay.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Smoothed {
    sent: f64,
    received: f64,
    reports: u32,
}

impl Smoothed {
    /// Reports whose smoothed rates are compared before the writer acts on a difference.
    const SETTLED: u32 = 4;

    /// Adds one report's rates; returns the smoothed (sent, received) rates. Until a few
    /// reports came, the received rate is returned as the sent one too (no conclusion yet).
    pub(crate) fn update(&mut self, sent: f64, received: f64) -> (f64, f64) {
        const WEIGHT: f64 = 0.2;
        if self.reports == 0 {
            (self.sent, self.received) = (sent, received);
        } else {
            self.sent += WEIGHT * (sent - self.sent);
            self.received += WEIGHT * (received - self.received);
        }
        self.reports = self.reports.saturating_add(1);
        if self.reports < Self::SETTLED {
            (self.received, self.received)
        } else {
            (self.sent, self.received)
        }
    }
}

/// What a best-effort reader's report says the writer's rate to it should be, given the rate
/// in force (`None`: unpaced), whether that rate held the writer back since the last report,
/// what the writer sent and the reader received per second over the report's interval, and
/// how many samples the reader abandoned incomplete. `None`: stay unpaced.
///
/// The reader receiving less than 90 % of what the writer sends (smoothed) means the path's
/// buffer is filling: the rate drops to just under what arrived, before anything is lost. A
/// loss means it overflowed: the rate drops further. Otherwise a writer held back by its rate
/// probes for more, 2 % per report (faster probing overshot the receiver's buffer and lost a
/// whole large sample each time: measured on loopback with 10 MiB samples).
pub(crate) fn adapt_rate(
    current: Option<f64>,
    limited: bool,
    sent_bytes_per_s: f64,
    received_bytes_per_s: f64,
    abandoned: u32,
) -> Option<f64> {
    if abandoned > 0 {
        return Some((received_bytes_per_s * 0.9).max(MIN_PACED_RATE));
    }
    if received_bytes_per_s < 0.9 * sent_bytes_per_s {
        return Some((received_bytes_per_s * 0.95).max(MIN_PACED_RATE));
    }
    match current {
        Some(r) if limited => Some(r * 1.02),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_meters_bytes_at_its_rate() {
        let t0 = Instant::from_nanos(0);
        let mut b = TokenBucket::new(1_000_000.0, 10_000, t0);
        assert!(b.ready(t0));
        b.take(30_000);
        assert!(!b.ready(t0), "20 000 bytes in debt");
        assert_eq!(b.ready_at(), t0 + Duration::from_millis(20));
        assert!(!b.ready(t0 + Duration::from_millis(19)));
        assert!(b.ready(t0 + Duration::from_millis(20)));
        // A long pause earns at most the depth.
        assert!(b.ready(t0 + Duration::from_secs(10)));
        b.take(10_000);
        assert!(b.ready(t0 + Duration::from_secs(10)));
        b.take(1);
        assert!(!b.ready(t0 + Duration::from_secs(10)));
    }

    #[test]
    fn loss_or_a_filling_path_sets_the_rate_and_headroom_is_probed() {
        assert_eq!(
            adapt_rate(None, false, 5e8, 5e8, 0),
            None,
            "keeping up: unpaced"
        );
        assert_eq!(adapt_rate(None, false, 5e8, 5e8, 3), Some(4.5e8));
        assert_eq!(
            adapt_rate(None, false, 8e8, 5e8, 0),
            Some(4.75e8),
            "the path falls behind: pace before anything is lost"
        );
        let probed = adapt_rate(Some(4.5e8), true, 4.5e8, 4.5e8, 0).unwrap();
        assert!((probed - 4.59e8).abs() < 1.0, "{probed}");
        assert_eq!(adapt_rate(Some(4.5e8), false, 1e8, 1e8, 0), Some(4.5e8));
        assert_eq!(
            adapt_rate(Some(4.5e8), true, 0.0, 0.0, 2),
            Some(MIN_PACED_RATE)
        );
    }
}
