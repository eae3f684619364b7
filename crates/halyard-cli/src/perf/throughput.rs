//! Throughput: `pub` writes samples at a rate or at full speed (a percentage of them stamped
//! as pings that subscribers answer), `sub` counts what arrives per writer and key, checking
//! sequence numbers for losses.

use super::{args, lock, now_ns, prefix_of, Perf, PerfType};
use halyard::qos::Durability;
use halyard::{DataReader, DataWriter, Time};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl<T: PerfType> Perf<T> {
    /// Sub: count every sample (per writer and key, with losses), and answer those stamped
    /// as pings.
    pub(super) fn on_data(&self, r: &DataReader<T>) {
        let mut st = lock(&self.sub_stats);
        let mut err = None;
        let mut pings = Vec::new();
        let _ = r.take_serialized(usize::MAX, |payload, info| {
            // ddsperf ignores its own participant's data (ignore-local).
            let from = prefix_of(info.publication_handle);
            // A disposal or unregistration notice (a writer leaving) is no sample.
            if err.is_some() || from == self.own || !info.valid_data {
                return;
            }
            if let Some((seq, key, size)) = T::peek(payload) {
                if let Err(e) = st.record(seq, key, size, info.publication_handle) {
                    err = Some(e);
                }
            }
            // A data sample stamped with an odd time is a ping (`pub ... X%`): answer it on
            // the pong topic, stamped `ts - 1`.
            if let Some(ts) = info.source_timestamp.map(|t| t.to_nanos()) {
                if ts & 1 == 1 {
                    pings.push((payload.to_vec(), ts, from));
                }
            }
        });
        drop(st);
        if let Some(e) = err {
            println!("{e}");
            std::process::exit(3);
        }
        for (payload, ts, from) in pings {
            let w = lock(&self.peers).get(&from).map(|p| p.pong_writer.clone());
            if let (Some(w), Ok(d)) = (w, halyard::cdr::deserialize::<T>(&payload)) {
                let _ = w.write_w_timestamp(&d, Time::from_nanos(ts - 1));
            }
        }
    }

    /// Pub: registers the keys, waits until the run may start, then writes until stopped.
    pub(super) fn publish(&self, w: &DataWriter<T>, rate: args::Rate) {
        let mut sample = T::initial(self.a.size);
        for k in 0..self.a.nkeys {
            sample.set_keyval(k);
            let _ = w.register_instance(&sample);
        }
        sample.set_keyval(0);
        if !self.wait_to_publish(w) {
            return;
        }
        // Like ddsperf (which turns Cyclone's write batching on), gather samples written at
        // full speed into shared datagrams; at a fixed rate each burst is flushed at once.
        if !self.a.no_batching {
            if let Err(e) = w.set_batching(Some(halyard::Batching::default())) {
                println!("{} error: cannot enable batching: {e}", self.prefix);
            }
        }
        let burst = self.a.burst.max(1);
        let start = Instant::now();
        let mut count: u64 = 0;
        while !self.stop.load(Ordering::Relaxed) {
            if !self.write_one(w, &mut sample, count, rate) {
                continue;
            }
            count += 1;
            self.sent.store(count, Ordering::Relaxed);
            let end_of_burst = count.is_multiple_of(u64::from(burst));
            if let (Some(r), true) = (rate.0, end_of_burst) {
                let _ = w.flush();
                self.pace(r, count / u64::from(burst), start);
            }
        }
    }

    /// Waits until the run may start (`-Qminmatch` reached), then gives a subscriber that is
    /// already running up to 2 s to match in both directions (a reliable reader counts once it
    /// acknowledged us), so the first samples are not lost to it: ddsperf's -Qinitwait is the
    /// explicit form of this. A TRANSIENT or PERSISTENT writer starts as soon as a durability
    /// service outside this process matched it too: that service keeps the samples for
    /// readers that come later. False if the run was stopped meanwhile.
    fn wait_to_publish(&self, w: &DataWriter<T>) -> bool {
        while !self.started.load(Ordering::SeqCst) {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let need = self.a.min_match.unwrap_or(1).max(1);
        let durable = self.a.durability >= Durability::Transient;
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let step = Duration::from_millis(10);
            if w.wait_for_matched(need, step).is_ok() {
                break;
            }
            if durable
                && w.durability_services()
                    .iter()
                    .any(|s| s.synced && !s.embedded)
            {
                break;
            }
            if Instant::now() >= deadline || self.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        true
    }

    /// Writes sample number `count` (a ping when the running ping quota crosses an integer)
    /// and moves `sample` on to the next sequence number and key. False if the write timed
    /// out; a failed write ends the process, as in ddsperf.
    fn write_one(&self, w: &DataWriter<T>, sample: &mut T, count: u64, rate: args::Rate) -> bool {
        // The write-time histogram costs two clock reads per write: at full speed it is
        // sampled on one write in 16.
        let timed = rate.0.is_some() || count.is_multiple_of(16);
        let t_write = timed.then(Instant::now);
        let pct = u64::from(self.a.ping_pct);
        let is_ping = (count + 1) * pct / 100 > count * pct / 100;
        let ts = if is_ping { now_ns() | 1 } else { now_ns() & !1 };
        match w.write_w_timestamp(sample, Time::from_nanos(ts)) {
            Ok(()) => {}
            Err(halyard::Error::Timeout) => {
                println!("write error: timeout");
                return false;
            }
            Err(e) => {
                println!("write error: {e}");
                std::process::exit(2);
            }
        }
        if let Some(t) = t_write {
            lock(&self.pub_hist).record(t.elapsed().as_nanos() as u64);
        }
        sample.set_seq(sample.seq().wrapping_add(1));
        if T::KEY_OFF.is_some() {
            sample.set_keyval((sample.keyval() + 1) % self.a.nkeys);
        }
        true
    }

    /// Sleeps while `bursts` bursts since `start` are ahead of `rate` bursts per second.
    fn pace(&self, rate: f64, bursts: u64, start: Instant) {
        while (bursts as f64) / (start.elapsed().as_secs_f64() + 0.005) > rate
            && !self.stop.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
