//! The main loop of `halyard perf`: once a second it prints the figures (ddsperf's lines),
//! every 10 ms it tracks peers, every 100 ms it checks their matching, it starts the run once
//! `-Qminmatch` peers matched, sends pings, and at the end says whether the run succeeded.

use super::latency::PingSchedule;
use super::peers::match_mask_names;
use super::{cpu, lock, CPUStats, Perf, PerfType};
use halyard::{DataReader, DataWriter, InstanceState, SampleState, Selector};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The entities the main loop uses besides the `Perf` state.
pub(super) struct LoopEntities<'a, T: PerfType> {
    pub(super) pong_t: &'a halyard::Topic<T>,
    pub(super) cpu_writer: &'a DataWriter<CPUStats>,
    pub(super) cpu_reader: Option<&'a DataReader<CPUStats>>,
}

/// When the main loop's duties are next due (seconds since start).
#[derive(Debug, Default)]
struct Schedule {
    next_print: f64,
    last_print: f64,
    /// When the run started (`-Qminmatch` reached): `-D` counts from here.
    run_start: f64,
    next_disc: f64,
    next_match: f64,
    ping: PingSchedule,
}

impl<T: PerfType> Perf<T> {
    /// Runs until `-D` elapsed (or forever); returns the exit code.
    pub(super) fn main_loop(&self, e: &LoopEntities<'_, T>, mut cpu: cpu::CpuRecorder) -> i32 {
        let mut s = Schedule {
            next_print: 1.0,
            ping: PingSchedule {
                next_ping: 1.0,
                ..PingSchedule::default()
            },
            ..Schedule::default()
        };
        loop {
            let t = self.elapsed();
            let done = self
                .a
                .duration
                .is_some_and(|d| t >= s.run_start + d.as_secs_f64());
            if t >= s.next_print {
                self.print_stats(t, t - s.last_print, &mut cpu, e);
                s.last_print = t;
                s.next_print = if t > s.next_print + 0.5 {
                    t + 1.0
                } else {
                    s.next_print + 1.0
                };
            }
            if done {
                break;
            }
            self.peers_tick(t, &mut s, e);
            if !self.start_tick(t, &mut s) {
                return 1;
            }
            self.ping_tick(t, &mut s.ping);
            self.sleep_until_due(&s);
        }
        self.stop.store(true, Ordering::SeqCst);
        self.verdict()
    }

    /// Tracks peers every 10 ms and checks their matching every 100 ms.
    fn peers_tick(&self, t: f64, s: &mut Schedule, e: &LoopEntities<'_, T>) {
        if t >= s.next_disc {
            if self.discover(e.pong_t) {
                s.ping.twarn_ping = t + 3.333;
            }
            s.next_disc = t + 0.01;
        }
        if t >= s.next_match {
            self.check_matching();
            s.next_match = t + 0.1;
        }
    }

    /// Starts the run once `-Qminmatch` peers matched. False if `-Qinitwait` passed first
    /// (the run fails).
    fn start_tick(&self, t: f64, s: &mut Schedule) -> bool {
        if self.started.load(Ordering::SeqCst) {
            return true;
        }
        let need = self.a.min_match.unwrap_or(0) as usize;
        let matched = self.matched_peers();
        if matched >= need {
            self.started.store(true, Ordering::SeqCst);
            s.run_start = t;
            s.ping.next_ping = t;
        } else if self.a.init_wait.is_some_and(|w| t >= w.as_secs_f64()) {
            println!(
                "{} error: too few matching participants ({matched})",
                self.prefix
            );
            self.stop.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Sleeps until the next duty is due, at most 10 ms.
    fn sleep_until_due(&self, s: &Schedule) {
        let t = self.elapsed();
        let mut wake = s.next_print.min(s.next_disc).min(s.next_match);
        if self.a.ping.is_some() {
            wake = wake.min(s.ping.next_ping.max(t + 0.001));
        }
        if let Some(d) = self.a.duration {
            wake = wake.min(s.run_start + d.as_secs_f64());
        }
        std::thread::sleep(Duration::from_secs_f64((wake - t).clamp(0.0, 0.01)));
    }

    /// The exit code at the end of the run: 1 if a peer failed to match or a reliable
    /// KEEP_ALL subscriber lost samples.
    fn verdict(&self) -> i32 {
        self.check_matching();
        let mut ok = true;
        for p in lock(&self.peers).values() {
            if p.unmatched != 0 {
                println!(
                    "{} error: {} failed to match {}",
                    self.prefix,
                    p.name,
                    match_mask_names(p.unmatched)
                );
                ok = false;
            }
        }
        let lost = lock(&self.sub_stats).lost;
        // Pings are KEEP_LAST 1, so a listener's gaps are not a failure.
        if lost > 0 && self.a.sub && self.a.reliable && self.a.keep_last.is_none() {
            println!("{} error: {lost} samples lost", self.prefix);
            ok = false;
        }
        if ok {
            0
        } else {
            1
        }
    }

    /// ddsperf's once-a-second lines: write times, sub counts, latencies per peer, CPU.
    fn print_stats(&self, t: f64, dt: f64, cpu: &mut cpu::CpuRecorder, e: &LoopEntities<'_, T>) {
        let pfx = format!("{} {t:.3} ", self.prefix);
        if self.a.publish.is_some_and(|r| r.0 != Some(0.0)) {
            println!("{pfx}{}", lock(&self.pub_hist).line(dt));
        }
        if self.a.sub || self.a.listen {
            if let Some(line) = lock(&self.sub_stats).line(self.a.sub_every_second) {
                println!("{pfx} {line}");
            }
        }
        let peers = lock(&self.peers);
        let mut lat = lock(&self.latencies);
        for (prefix, l) in lat.iter_mut() {
            if let Some(line) = l.line() {
                let name = peers.get(prefix).map_or_else(
                    || prefix.0.iter().map(|b| format!("{b:02x}")).collect(),
                    |p| p.name.clone(),
                );
                println!("{pfx} {name} {line}");
            }
        }
        drop((peers, lat));
        if let Some(line) = cpu.record() {
            println!("{pfx}{line}");
        }
        let _ = e.cpu_writer.write(&cpu.sample);
        if let Some(r) = e.cpu_reader {
            self.print_remote_cpu(&pfx, r);
        }
    }

    /// `-c`: the latest CPUStats of every peer, `(stale)` when not updated since last time.
    fn print_remote_cpu(&self, pfx: &str, r: &DataReader<CPUStats>) {
        let Ok(samples) = r.read(40) else { return };
        let take_instance = |s: &halyard::Sample<CPUStats>| {
            let sel = Selector {
                instance: Some(s.info.instance_handle),
                ..Default::default()
            };
            let _ = r.take_with(1, sel);
        };
        for s in samples {
            if super::prefix_of(s.info.publication_handle) == self.own {
                take_instance(&s);
                continue;
            }
            let fresh = s.info.sample_state == SampleState::NotRead;
            let alive = s.info.instance_state == InstanceState::Alive;
            if let Some(d) = &s.data {
                if alive || fresh {
                    if let Some(line) = cpu::format_cpu(d, true, fresh) {
                        println!("{pfx}{line}");
                    }
                }
            }
            if !alive {
                take_instance(&s);
            }
        }
    }
}
