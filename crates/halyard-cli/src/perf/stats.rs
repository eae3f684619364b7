//! ddsperf's statistics: latency percentiles per interval and subscriber throughput/loss.

use halyard::InstanceHandle;
use std::collections::{BTreeMap, VecDeque};

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
    expected: BTreeMap<InstanceHandle, Vec<u32>>,
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
            expected: BTreeMap::new(),
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

    /// Records one sample (seq, keyval, ddsperf size) from `writer`, as ddsperf's
    /// `check_eseq`: per writer and key the next expected seq; the first sample of a writer
    /// sets the expectation of every key consistently with `nkeys`. A key >= nkeys is an
    /// error (ddsperf exits 3).
    pub fn record(
        &mut self,
        seq: u32,
        key: u32,
        size: u32,
        writer: InstanceHandle,
    ) -> Result<(), String> {
        let n = self.nkeys;
        if key >= n {
            return Err(format!("received key {key} >= nkeys {n}"));
        }
        self.size = size;
        match self.expected.get_mut(&writer) {
            Some(e) => {
                let lost = seq.wrapping_sub(e[key as usize]);
                // A sample older than expected (e.g. a duplicate) is not a loss.
                if lost < u32::MAX / 2 {
                    self.lost += lost as u64;
                    self.delta_lost += lost as u64;
                }
                e[key as usize] = seq.wrapping_add(n);
            }
            None => {
                let e = (0..n)
                    .map(|i| {
                        seq.wrapping_add(i.wrapping_sub(key))
                            .wrapping_add(if i <= key { n } else { 0 })
                    })
                    .collect();
                self.expected.insert(writer, e);
            }
        }
        self.total += 1;
        self.delta += 1;
        self.delta_bytes += size as u64;
        Ok(())
    }

    /// ddsperf's sub line, then starts a new interval.
    /// `always`: print even when nothing arrived (`-1`).
    pub fn line(&mut self, always: bool) -> Option<String> {
        let dt = self.last.elapsed().as_secs_f64().max(1e-9);
        self.last = std::time::Instant::now();
        self.history.push_back((self.delta, self.delta_bytes, dt));
        if self.history.len() > 10 {
            self.history.pop_front();
        }
        if self.delta == 0 && !always {
            return None;
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

/// ddsperf's publisher write-latency histogram: 30 bins of 1 us from 0, plus overflow.
pub struct Hist {
    bins: [u64; 30],
    over: u64,
    min: u64,
    max: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Hist {
            bins: [0; 30],
            over: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

/// C's `printf("%W.Pg", v)`.
pub fn fmt_g(v: f64, width: usize, prec: usize) -> String {
    let p = prec.max(1);
    let s = if v == 0.0 {
        "0".to_string()
    } else {
        let e = format!("{:.*e}", p - 1, v);
        let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let x: i32 = exp.parse().unwrap_or(0);
        if x < -4 || x >= p as i32 {
            let m = strip_zeros(mant);
            format!("{m}e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs())
        } else {
            strip_zeros(&format!("{:.*}", (p as i32 - 1 - x).max(0) as usize, v))
        }
    };
    format!("{s:>width$}")
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

fn fmt_ns(v: u64) -> String {
    if v < 1000 {
        format!("{v:3}n")
    } else if v + 500 < 1_000_000 {
        format!("{:3}u", (v + 500) / 1000)
    } else if v + 500_000 < 1_000_000_000 {
        format!("{:3}m", (v + 500_000) / 1_000_000)
    } else {
        format!("{:3}s", (v + 500_000_000) / 1_000_000_000)
    }
}

impl Hist {
    pub fn record(&mut self, ns: u64) {
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        match self.bins.get_mut((ns / 1000) as usize) {
            Some(b) => *b += 1,
            None => self.over += 1,
        }
    }

    /// `RATE/s MIN |HISTOGRAM| PCT% MAX` over an interval of `dt` seconds, then resets.
    pub fn line(&mut self, dt: f64) -> String {
        let cnt = self.over + self.bins.iter().sum::<u64>();
        let peak = self.bins.iter().copied().max().unwrap_or(0);
        let (p1, p10, p20, p40, p60, p80) = (
            peak / 100,
            peak / 10,
            peak / 5,
            2 * peak / 5,
            3 * peak / 5,
            4 * peak / 5,
        );
        let hist: String = self
            .bins
            .iter()
            .map(|&b| match b {
                0 => ' ',
                b if b <= p1 => '.',
                b if b <= p10 => '_',
                b if b <= p20 => '-',
                b if b <= p40 => '=',
                b if b <= p60 => 'x',
                b if b <= p80 => 'X',
                _ => '@',
            })
            .collect();
        let avg = cnt as f64 / dt;
        let mut l = if avg < 999.5 {
            fmt_g(avg, 5, 3)
        } else if avg < 1e6 {
            format!("{}k", fmt_g(avg / 1e3, 4, 3))
        } else {
            format!("{}M", fmt_g(avg / 1e6, 4, 3))
        };
        l.push_str("/s ");
        if self.min == u64::MAX {
            l.push_str(" inf ");
        } else {
            l.push_str(&fmt_ns(self.min));
            l.push(' ');
        }
        let pct = 100 * (self.over + cnt / 2).checked_div(cnt).unwrap_or(0);
        l.push_str(&format!("|{hist}| {pct:3}% {}", fmt_ns(self.max)));
        *self = Hist::default();
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_g() {
        assert_eq!(fmt_g(101.0, 5, 3), "  101");
        assert_eq!(fmt_g(99.5, 5, 3), " 99.5");
        assert_eq!(fmt_g(1.0, 4, 3), "   1");
        assert_eq!(fmt_g(12.3456, 4, 3), "12.3");
        assert_eq!(fmt_g(999.9, 4, 3), "1e+03");
        assert_eq!(fmt_g(0.0, 5, 3), "    0");
    }

    #[test]
    fn hist_line_format() {
        let mut h = Hist::default();
        for ns in [4_000u64, 4_100, 10_000, 47_000] {
            h.record(ns);
        }
        assert_eq!(
            h.line(1.0),
            "    4/s   4u |    @     x                   |   0%  47u"
        );
        assert_eq!(
            h.line(1.0),
            "    0/s  inf |                              |   0%   0n"
        );
    }

    #[test]
    fn keys_expectations_as_ddsperf() {
        let w = InstanceHandle([1; 16]);
        let mut s = SubStats::new(4);
        // first sample seen is key 2 seq 6: earlier ones are not counted lost
        for (seq, key) in [(6, 2), (7, 3), (8, 0), (9, 1), (10, 2), (12, 0)] {
            s.record(seq, key, 12, w).unwrap();
        }
        assert_eq!((s.total, s.lost), (6, 0));
        s.record(17, 1, 12, w).unwrap(); // key 1 expected 13
        assert_eq!(s.lost, 4);
        assert!(s.record(1, 4, 12, w).is_err());
    }
}
