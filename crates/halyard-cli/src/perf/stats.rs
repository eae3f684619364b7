//! ddsperf's statistics: latency percentiles per interval and subscriber throughput/loss.

use halyard::InstanceHandle;
use std::collections::{HashMap, VecDeque};

/// Latencies (ns) of one ponging peer in the current interval.
#[derive(Default)]
pub struct Latencies {
    raw: Vec<u64>,
    sum: u64,
    count: u32,
    size: u32,
}

/// At most this many raw samples are kept per interval (as ddsperf).
const MAX_RAW: usize = 20_000;

impl Latencies {
    pub fn add(&mut self, ns: u64, size: u32) {
        if self.raw.len() < MAX_RAW {
            self.raw.push(ns);
        }
        self.sum += ns;
        self.count += 1;
        self.size = size;
    }

    /// `size N mean Xus min Xus 50% Xus 90% Xus 99% Xus max Xus cnt N`, then resets.
    pub fn line(&mut self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let r = &mut self.raw;
        r.sort_unstable();
        let n = r.len();
        let us = |v: u64| v as f64 / 1e3;
        let line = format!(
            "size {} mean {:.3}us min {:.3}us 50% {:.3}us 90% {:.3}us 99% {:.3}us max {:.3}us cnt {}",
            self.size,
            self.sum as f64 / self.count as f64 / 1e3,
            us(r[0]),
            us(r[n - n.div_ceil(2)]),
            us(r[n - n.div_ceil(10)]),
            us(r[n - n.div_ceil(100)]),
            us(r[n - 1]),
            self.count
        );
        *self = Latencies::default();
        Some(line)
    }
}

/// Subscriber statistics over all writers.
pub struct SubStats {
    nkeys: u32,
    expected: HashMap<(InstanceHandle, u32), u32>,
    pub total: u64,
    pub lost: u64,
    delta: u64,
    delta_lost: u64,
    delta_bytes: u64,
    size: u32,
    last: std::time::Instant,
    history: VecDeque<(u64, u64, f64)>,
}

impl SubStats {
    pub fn new(nkeys: u32) -> Self {
        SubStats {
            nkeys,
            expected: HashMap::new(),
            total: 0,
            lost: 0,
            delta: 0,
            delta_lost: 0,
            delta_bytes: 0,
            size: 0,
            last: std::time::Instant::now(),
            history: VecDeque::new(),
        }
    }

    /// Records one serialized KeyedSeq (CDR, either endianness).
    pub fn record(&mut self, payload: &[u8], writer: InstanceHandle) {
        if payload.len() < 16 {
            return;
        }
        let le = payload[1] & 1 == 1;
        let u32_at = |o: usize| {
            let b = [payload[o], payload[o + 1], payload[o + 2], payload[o + 3]];
            if le {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            }
        };
        let (seq, key, baglen) = (u32_at(4), u32_at(8), u32_at(12));
        self.size = 12u32.saturating_add(baglen);
        let exp = self
            .expected
            .entry((writer, key % self.nkeys))
            .or_insert(seq);
        let lost = seq.wrapping_sub(*exp);
        if lost < u32::MAX / 2 {
            self.lost += lost as u64;
            self.delta_lost += lost as u64;
        }
        *exp = seq.wrapping_add(self.nkeys);
        self.total += 1;
        self.delta += 1;
        self.delta_bytes += self.size as u64;
    }

    /// ddsperf's sub line, then starts a new interval.
    pub fn line(&mut self) -> Option<String> {
        let dt = self.last.elapsed().as_secs_f64().max(1e-9);
        self.last = std::time::Instant::now();
        if self.delta == 0 {
            return None;
        }
        self.history.push_back((self.delta, self.delta_bytes, dt));
        if self.history.len() > 10 {
            self.history.pop_front();
        }
        let (hs, hb): (u64, u64) = self
            .history
            .iter()
            .fold((0, 0), |a, h| (a.0 + h.0, a.1 + h.1));
        let line = format!(
            "size {} total {} lost {} delta {} lost {} rate {:.2} kS/s {:.2} Mb/s ({:.2} kS/s {:.2} Mb/s)",
            self.size,
            self.total,
            self.lost,
            self.delta,
            self.delta_lost,
            self.delta as f64 / dt / 1e3,
            self.delta_bytes as f64 * 8.0 / dt / 1e6,
            hs as f64 / (10.0 * dt) / 1e3,
            hb as f64 * 8.0 / (10.0 * dt) / 1e6
        );
        self.delta = 0;
        self.delta_lost = 0;
        self.delta_bytes = 0;
        Some(line)
    }
}
