//! Latency: `ping` writes a sample stamped with the send time (odd: "answer me"), every
//! `pong` echoes it on its pong writer for that pinger, and the pinger records half the round
//! trip per ponging peer. `listen` counts pings without answering (RTI perftest's passive
//! subscribers).

use super::{args, lock, now_ns, prefix_of, Perf, PerfType, MAX_DUMPED};
use halyard::{DataReader, Time};
use std::sync::atomic::Ordering;

/// When the main loop's ping duties are next due, and how often pings timed out.
#[derive(Debug, Default)]
pub(super) struct PingSchedule {
    /// Next rated ping (seconds since start).
    pub(super) next_ping: f64,
    /// No "ping timed out" warning before this time.
    pub(super) twarn_ping: f64,
    pub(super) timeouts: u32,
}

impl<T: PerfType> Perf<T> {
    /// Pong: echo every ping to the pinging participant, timestamp `ts | 1`.
    pub(super) fn answer_pings(&self, r: &DataReader<T>) {
        let Ok(samples) = r.take(256) else { return };
        for s in samples {
            let (Some(d), Some(ts)) = (s.data, s.info.source_timestamp) else {
                continue;
            };
            let from = prefix_of(s.info.publication_handle);
            let w = lock(&self.peers).get(&from).map(|p| p.pong_writer.clone());
            if let Some(w) = w {
                let _ = w.write_w_timestamp(&d, Time::from_nanos(ts.to_nanos() | 1));
            }
        }
    }

    /// Listen: count pings like `sub` counts data, never answering them.
    pub(super) fn count_pings(&self, r: &DataReader<T>) {
        let mut st = lock(&self.sub_stats);
        let _ = r.take_serialized(usize::MAX, |payload, info| {
            if !info.valid_data {
                return; // a disposal or unregistration notice is no ping
            }
            if let Some((seq, key, size)) = T::peek(payload) {
                // Pings carry key 0; anything else is counted, not treated as an error.
                let _ = st.record(
                    seq,
                    key.min(self.a.nkeys - 1),
                    size,
                    info.publication_handle,
                );
            }
        });
    }

    pub(super) fn send_ping(&self) {
        let seq = self.ping_seq.fetch_add(1, Ordering::SeqCst) + 1;
        lock(&self.ping_answered).clear();
        let mut guard = lock(&self.ping_sample);
        let sample = guard.get_or_insert_with(|| T::initial(self.a.size));
        sample.set_seq(seq);
        self.last_ping_ns.store(now_ns() as u64, Ordering::SeqCst);
        let _ = self
            .ping_writer
            .write_w_timestamp(sample, Time::from_nanos(now_ns() | 1));
    }

    /// Ping: record (now - ts)/2 per ponging peer; ping again once all answered.
    pub(super) fn on_pongs(&self, r: &DataReader<T>) {
        let now = now_ns();
        let mut pongs = Vec::new();
        let _ = r.take_serialized(256, |payload, info| {
            if !info.valid_data {
                return; // a disposal or unregistration notice is no pong
            }
            if let (Some((seq, _, size)), Some(ts)) = (T::peek(payload), info.source_timestamp) {
                pongs.push((seq, size, ts.to_nanos(), prefix_of(info.publication_handle)));
            }
        });
        let mut all = false;
        if let Some(d) = &self.dump {
            let t = self.elapsed();
            let mut d = lock(d);
            for &(_, _, ts, _) in &pongs {
                if d.len() < MAX_DUMPED {
                    d.push((t, (now - ts).max(0) as u64 / 2));
                }
            }
        }
        for (seq, size, ts, from) in pongs {
            let lat = (now - ts).max(0) as u64 / 2;
            lock(&self.latencies)
                .entry(from)
                .or_default()
                .add(lat, size);
            if ts & 1 == 1 && seq == self.ping_seq.load(Ordering::SeqCst) {
                let mut answered = lock(&self.ping_answered);
                if !answered.contains(&from) {
                    answered.push(from);
                }
                let expected = lock(&self.peers).len();
                all = answered.len() >= expected.max(1);
            }
        }
        if all && matches!(self.a.ping, Some(args::Rate(None))) {
            self.send_ping();
        }
    }

    /// The main loop's ping duty at time `t`: a rated ping when due; at full speed (pinging
    /// again as soon as every peer answered, in `on_pongs`), a new ping once a second when
    /// pongs are missing.
    pub(super) fn ping_tick(&self, t: f64, s: &mut PingSchedule) {
        let Some(args::Rate(rate)) = self.a.ping else {
            return;
        };
        if !self.started.load(Ordering::SeqCst) {
            return;
        }
        let since = (now_ns() as u64).saturating_sub(self.last_ping_ns.load(Ordering::SeqCst));
        match rate {
            Some(r) if r > 0.0 && t >= s.next_ping => {
                self.send_ping();
                // Keep the schedule (a late wake-up does not lower the rate), unless far
                // behind.
                s.next_ping += 1.0 / r;
                if s.next_ping < t - 0.1 {
                    s.next_ping = t + 1.0 / r;
                }
            }
            None if (t >= 1.0 || self.a.min_match.is_some()) && since > 1_000_000_000 => {
                let expected = lock(&self.peers).len();
                if self.ping_seq.load(Ordering::SeqCst) > 0
                    && lock(&self.ping_answered).len() < expected
                {
                    s.timeouts += 1;
                    if t > s.twarn_ping {
                        println!(
                            "{} ping timed out (total {} times) ... sending new ping",
                            self.prefix, s.timeouts
                        );
                        s.twarn_ping = t + 1.0;
                    }
                }
                self.send_ping()
            }
            _ => {}
        }
    }
}
