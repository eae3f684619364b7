//! `halyard perf`: Cyclone DDS ddsperf's ping, pong, pub and sub modes, compatible on the wire
//! (topics, types, partitions, user data, timestamp conventions) and in output lines.
//! docs/ddsperf-conventions.md records the conventions followed.

mod args;
mod cpu;
mod stats;
mod types;

pub use cpu::CPUStats;
pub use types::*;

use halyard::qos::{dds_duration, EndpointQos, History, ReliabilityKind};
use halyard::{
    DataReader, DataWriter, DomainParticipant, GroupQos, GuidPrefix, InstanceHandle, InstanceState,
    ParticipantOptions, SampleState, Selector, Time,
};
use stats::{Hist, Latencies, SubStats};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// ddsperf's GUID partition string: 32 hex digits in 4 groups of 8 joined by `_`.
pub fn guid_partition(prefix: GuidPrefix) -> String {
    let mut b = [0u8; 16];
    b[..12].copy_from_slice(&prefix.0);
    b[12..].copy_from_slice(&[0, 0, 1, 0xc1]);
    let hex: Vec<String> = b
        .chunks(4)
        .map(|c| c.iter().map(|x| format!("{x:02x}")).collect())
        .collect();
    hex.join("_")
}

fn now_ns() -> i64 {
    halyard::wall_clock().to_nanos()
}

fn lock<X>(m: &Mutex<X>) -> std::sync::MutexGuard<'_, X> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn prefix_of(h: InstanceHandle) -> GuidPrefix {
    GuidPrefix(h.0[..12].try_into().unwrap_or([0; 12]))
}

// ddsperf's match mask bits: which of a peer's endpoints matched ours.
const MM_RD_DATA: u32 = 1;
const MM_RD_PING: u32 = 2;
const MM_RD_PONG: u32 = 4;
const MM_WR_DATA: u32 = 8;
const MM_WR_PING: u32 = 16;
const MM_WR_PONG: u32 = 32;
const MM_ALL: u32 = 63;

fn match_mask_names(mask: u32) -> String {
    let names = [
        (MM_RD_DATA, "data reader"),
        (MM_RD_PING, "ping reader"),
        (MM_RD_PONG, "pong reader"),
        (MM_WR_DATA, "data writer"),
        (MM_WR_PING, "ping writer"),
        (MM_WR_PONG, "pong writer"),
    ];
    names
        .iter()
        .filter(|(b, _)| mask & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// How long a discovered peer has to match all endpoints (ddsperf: 5 s).
const MATCH_DEADLINE: Duration = Duration::from_secs(5);

struct Peer<T: PerfType> {
    name: String,
    pong_writer: Arc<DataWriter<T>>,
    has_reader: bool,
    tdisc: Instant,
    /// Expected endpoints of this peer not matched yet (MM_* bits).
    unmatched: u32,
    deadline_passed: bool,
}

struct Perf<T: PerfType> {
    a: args::PerfArgs,
    dp: DomainParticipant,
    own: GuidPrefix,
    prefix: String,
    start: Instant,
    names: [String; 3],
    peers: Mutex<HashMap<GuidPrefix, Peer<T>>>,
    ping_writer: DataWriter<T>,
    ping_seq: AtomicU32,
    ping_answered: Mutex<Vec<GuidPrefix>>,
    last_ping_ns: AtomicU64,
    latencies: Mutex<HashMap<GuidPrefix, Latencies>>,
    sub_stats: Mutex<SubStats>,
    pub_hist: Mutex<Hist>,
    stop: AtomicBool,
    /// Ping and pub may start (`-Qminmatch` reached, or not asked for).
    started: AtomicBool,
    /// Samples published.
    sent: AtomicU64,
    /// `--latency-dump`: (seconds since start, one-way latency ns), bounded.
    dump: Option<Mutex<Vec<(f64, u64)>>>,
}

/// Most latency samples `--latency-dump` keeps (about 80 MB).
const MAX_DUMPED: usize = 5_000_000;

fn data_qos(a: &args::PerfArgs, writer: bool) -> EndpointQos {
    let mut q = if writer {
        EndpointQos::writer_default()
    } else {
        EndpointQos::reader_default()
    };
    q.reliability.kind = if a.reliable {
        ReliabilityKind::Reliable
    } else {
        ReliabilityKind::BestEffort
    };
    q.reliability.max_blocking_time = dds_duration(Duration::from_secs(10));
    q.history = a.keep_last.map_or(History::KeepAll, History::KeepLast);
    q.resource_limits.max_samples = 10_000;
    q
}

fn keep_last1(a: &args::PerfArgs, writer: bool) -> EndpointQos {
    let mut q = data_qos(a, writer);
    q.history = History::KeepLast(1);
    q.resource_limits.max_samples = -1;
    q
}

pub fn main(argv: &[String]) -> i32 {
    let a = match args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("halyard perf: {e}");
            }
            eprintln!("{}", args::USAGE);
            return 3;
        }
    };
    let r = match a.topic.as_str() {
        "K32" => run::<Keyed32>(a),
        "K256" => run::<Keyed256>(a),
        "OU" => run::<OneULong>(a),
        "UK16" => run::<Unkeyed16>(a),
        "UK1024" => run::<Unkeyed1024>(a),
        "S16" => run::<Struct16>(a),
        "S256" => run::<Struct256>(a),
        "S4k" => run::<Struct4k>(a),
        "S32k" => run::<Struct32k>(a),
        _ => run::<KeyedSeq>(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            println!("[{}] error: {e}", std::process::id());
            2
        }
    }
}

fn run<T: PerfType>(a: args::PerfArgs) -> halyard::Result<i32> {
    let pid = std::process::id();
    let host = hostname();
    // A `listen` process is no ddsperf peer: without the user data, pingers neither expect
    // pongs from it nor count it for -Qminmatch.
    let user_data = if a.listen {
        Vec::new()
    } else {
        format!("DDSPerf:{}:{}:{}", a.sub as u8, pid, host).into_bytes()
    };
    let dp = DomainParticipant::with_options(
        a.domain,
        ParticipantOptions {
            user_data,
            ..Default::default()
        },
    )?;
    // ddsperf sees itself in DCPSParticipant first of all.
    println!("[{pid}] participant {host}:{pid}: new (self)");
    let rel = if a.reliable { 'R' } else { 'U' };
    let names = ["Data", "Ping", "Pong"].map(|k| format!("DDSPerf{rel}{k}{}", T::SUFFIX));
    let data_t = dp.create_topic::<T>(&names[0])?;
    let ping_t = dp.create_topic::<T>(&names[1])?;
    let pong_t = dp.create_topic::<T>(&names[2])?;
    let cpu_t = dp.create_topic::<CPUStats>("DDSPerfCPUStats")?;
    let publisher = dp.create_publisher(GroupQos::default());
    let subscriber = dp.create_subscriber(GroupQos::default());
    let mut cpu_qos = EndpointQos::writer_default();
    cpu_qos.history = History::KeepLast(1);
    let cpu_writer = publisher.create_datawriter(&cpu_t, cpu_qos)?;
    let cpu_reader = if a.cpu_stats {
        let mut q = EndpointQos::reader_default();
        q.reliability.kind = ReliabilityKind::Reliable;
        q.history = History::KeepLast(1);
        Some(subscriber.create_datareader(&cpu_t, q)?)
    } else {
        None
    };
    let data_writer = publisher.create_datawriter(&data_t, data_qos(&a, true))?;
    let ping_writer = publisher.create_datawriter(&ping_t, keep_last1(&a, true))?;
    let own = dp.guid_prefix();
    let pong_sub = dp.create_subscriber(GroupQos {
        partition: vec![guid_partition(own)],
        ..Default::default()
    });
    let pong_reader = pong_sub.create_datareader(&pong_t, data_qos(&a, false))?;
    let ping_reader = subscriber.create_datareader(&ping_t, keep_last1(&a, false))?;
    let data_reader = if a.sub {
        Some(subscriber.create_datareader(&data_t, data_qos(&a, false))?)
    } else {
        None
    };

    let perf = Arc::new(Perf {
        prefix: format!("[{pid}]"),
        start: Instant::now(),
        names,
        own,
        peers: Mutex::new(HashMap::new()),
        ping_writer,
        ping_seq: AtomicU32::new(0),
        ping_answered: Mutex::new(Vec::new()),
        last_ping_ns: AtomicU64::new(0),
        latencies: Mutex::new(HashMap::new()),
        sub_stats: Mutex::new(SubStats::new(a.nkeys)),
        pub_hist: Mutex::new(Hist::default()),
        stop: AtomicBool::new(false),
        started: AtomicBool::new(a.min_match.is_none()),
        sent: AtomicU64::new(0),
        dump: a.latency_dump.as_ref().map(|_| Mutex::new(Vec::new())),
        dp: dp.clone(),
        a: a.clone(),
    });
    let ping_reader = Arc::new(ping_reader);
    {
        let (p, r) = (perf.clone(), ping_reader.clone());
        if a.listen {
            ping_reader.on_data_available(move || p.count_pings(&r));
        } else {
            ping_reader.on_data_available(move || p.answer_pings(&r));
        }
    }
    let pong_reader = Arc::new(pong_reader);
    {
        let (p, r) = (perf.clone(), pong_reader.clone());
        pong_reader.on_data_available(move || p.on_pongs(&r));
    }
    let data_reader = data_reader.map(Arc::new);
    if let Some(dr) = &data_reader {
        let (p, r) = (perf.clone(), dr.clone());
        dr.on_data_available(move || p.on_data(&r));
    }
    let publishing = a.publish.filter(|r| r.0 != Some(0.0));
    let publisher_thread = publishing.map(|rate| {
        let p = perf.clone();
        std::thread::Builder::new()
            .name("pub".into())
            .spawn(move || p.publish(&data_writer, rate))
    });
    let publisher_thread = match publisher_thread {
        Some(Ok(h)) => Some(h),
        Some(Err(e)) => return Err(halyard::Error::Thread(e)),
        None => None,
    };
    let cpu = cpu::CpuRecorder::new(host);
    let code = perf.main_loop(&publisher, &pong_t, cpu, &cpu_writer, cpu_reader.as_ref());
    perf.stop.store(true, Ordering::SeqCst);
    if let Some(h) = publisher_thread {
        let _ = h.join();
        println!(
            "{} {:.3}  pub sent {}",
            perf.prefix,
            perf.elapsed(),
            perf.sent.load(Ordering::SeqCst)
        );
    }
    if let (Some(path), Some(dump)) = (&a.latency_dump, &perf.dump) {
        if let Err(e) = write_dump(path, &lock(dump)) {
            println!("[{pid}] error: --latency-dump {}: {e}", path.display());
            return Ok(2);
        }
    }
    Ok(code)
}

/// Writes `SECONDS LATENCY_NS` lines.
fn write_dump(path: &std::path::Path, samples: &[(f64, u64)]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (t, ns) in samples {
        writeln!(f, "{t:.6} {ns}")?;
    }
    f.flush()
}

impl<T: PerfType> Perf<T> {
    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Tracks ddsperf peers (user data `DDSPerf:S:PID:HOST`): a pong writer in each one's
    /// GUID partition, `new`/`gone` lines. Returns true when the peer set changed.
    fn discover(&self, publisher: &halyard::Publisher, pong_t: &halyard::Topic<T>) -> bool {
        // A listener answers nobody, so it has no peers to track or match.
        if self.a.listen {
            return false;
        }
        let mut changed = false;
        let discovered = self.dp.discovered_participants();
        for p in &discovered {
            let prefix = p.guid.prefix;
            let ud = String::from_utf8_lossy(&p.user_data).to_string();
            let mut parts = ud.splitn(4, ':');
            if parts.next() != Some("DDSPerf") || prefix == self.own {
                continue;
            }
            let (has_reader, pid, host) = (
                parts.next().and_then(|s| s.parse::<i32>().ok()),
                parts.next().and_then(|s| s.parse::<i64>().ok()),
                parts.next(),
            );
            let (Some(has_reader), Some(pid), Some(host)) = (has_reader, pid, host) else {
                continue;
            };
            let mut peers = lock(&self.peers);
            if peers.contains_key(&prefix) {
                continue;
            }
            let name = format!("{host}:{}", pid as u32);
            println!("{} participant {name}: new", self.prefix);
            let mut q = keep_last1(&self.a, true);
            q.partition = vec![guid_partition(prefix)];
            match publisher.create_datawriter(pong_t, q) {
                Ok(w) => {
                    let mut unmatched = MM_ALL;
                    if has_reader == 0 {
                        unmatched &= !MM_RD_DATA;
                    }
                    if !self.a.sub {
                        unmatched &= !MM_WR_DATA;
                    }
                    peers.insert(
                        prefix,
                        Peer {
                            name,
                            pong_writer: Arc::new(w),
                            has_reader: has_reader != 0,
                            tdisc: Instant::now(),
                            unmatched,
                            deadline_passed: false,
                        },
                    );
                    changed = true;
                }
                Err(e) => println!("{} error: cannot create pong writer: {e}", self.prefix),
            }
        }
        let mut peers = lock(&self.peers);
        peers.retain(|k, v| {
            let keep = discovered.iter().any(|p| p.guid.prefix == *k);
            if !keep {
                println!("{} participant {}: gone", self.prefix, v.name);
                changed = true;
            }
            keep
        });
        changed
    }

    /// ddsperf's matching check: every expected endpoint of every peer must match within
    /// 5 s of discovering it (`failed to match in 5.000s` otherwise). Matches are sticky.
    fn check_matching(&self) {
        let mut peers = lock(&self.peers);
        if peers.values().all(|p| p.unmatched == 0) {
            return;
        }
        let pubs = self.dp.discovered_publications();
        let subs = self.dp.discovered_subscriptions();
        let own_part = guid_partition(self.own);
        let [data, ping, pong] = &self.names;
        for (prefix, p) in peers.iter_mut() {
            if p.unmatched == 0 {
                continue;
            }
            let peer_part = guid_partition(*prefix);
            let mut found = 0;
            for e in pubs.iter().filter(|e| e.guid.prefix == *prefix) {
                if &e.topic_name == data && self.a.sub {
                    found |= MM_WR_DATA;
                } else if &e.topic_name == ping {
                    found |= MM_WR_PING;
                } else if &e.topic_name == pong && e.qos.partition.contains(&own_part) {
                    found |= MM_WR_PONG;
                }
            }
            for e in subs.iter().filter(|e| e.guid.prefix == *prefix) {
                if &e.topic_name == data && p.has_reader {
                    found |= MM_RD_DATA;
                } else if &e.topic_name == ping {
                    found |= MM_RD_PING;
                } else if &e.topic_name == pong && e.qos.partition.contains(&peer_part) {
                    found |= MM_RD_PONG;
                }
            }
            p.unmatched &= !found;
            if p.unmatched != 0 && !p.deadline_passed && p.tdisc.elapsed() > MATCH_DEADLINE {
                p.deadline_passed = true;
                println!(
                    "{} participant {}: failed to match in {:.3}s",
                    self.prefix,
                    p.name,
                    MATCH_DEADLINE.as_secs_f64()
                );
            }
        }
    }

    /// Pong: echo every ping to the pinging participant, timestamp `ts | 1`.
    fn answer_pings(&self, r: &DataReader<T>) {
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
    fn count_pings(&self, r: &DataReader<T>) {
        let mut st = lock(&self.sub_stats);
        let _ = r.take_serialized(usize::MAX, |payload, info| {
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

    fn send_ping(&self) {
        let seq = self.ping_seq.fetch_add(1, Ordering::SeqCst) + 1;
        lock(&self.ping_answered).clear();
        let mut sample = T::initial(self.a.size);
        sample.set_seq(seq);
        self.last_ping_ns.store(now_ns() as u64, Ordering::SeqCst);
        let _ = self
            .ping_writer
            .write_w_timestamp(&sample, Time::from_nanos(now_ns() | 1));
    }

    /// Ping: record (now - ts)/2 per ponging peer; ping again once all answered.
    fn on_pongs(&self, r: &DataReader<T>) {
        let now = now_ns();
        let mut pongs = Vec::new();
        let _ = r.take_serialized(256, |payload, info| {
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

    fn on_data(&self, r: &DataReader<T>) {
        let mut st = lock(&self.sub_stats);
        let mut err = None;
        let mut pings = Vec::new();
        let _ = r.take_serialized(usize::MAX, |payload, info| {
            // ddsperf ignores its own participant's data (ignore-local).
            let from = prefix_of(info.publication_handle);
            if err.is_some() || from == self.own {
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

    fn publish(&self, w: &DataWriter<T>, rate: args::Rate) {
        let mut sample = T::initial(self.a.size);
        let nkeys = self.a.nkeys;
        for k in 0..nkeys {
            sample.set_keyval(k);
            let _ = w.register_instance(&sample);
        }
        sample.set_keyval(0);
        // Do not outrun discovery: give a subscriber that is already running up to 2 s to
        // match in both directions (a reliable reader counts once it acknowledged us), so the
        // first samples are not lost to it. ddsperf's -Qinitwait is the explicit form of this.
        while !self.started.load(Ordering::SeqCst) {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = w.wait_for_matched(self.a.min_match.unwrap_or(1).max(1), Duration::from_secs(2));
        // Like ddsperf (which turns Cyclone's write batching on), gather samples written at
        // full speed into shared datagrams; at a fixed rate each burst is flushed at once.
        if !self.a.no_batching {
            if let Err(e) = w.set_batching(Some(halyard::Batching::default())) {
                println!("{} error: cannot enable batching: {e}", self.prefix);
            }
        }
        let pct = u64::from(self.a.ping_pct);
        let burst = self.a.burst.max(1);
        let start = Instant::now();
        let mut count: u64 = 0;
        let mut in_burst = 0;
        while !self.stop.load(Ordering::Relaxed) {
            // The write-time histogram costs two clock reads per write: at full speed it is
            // sampled on one write in 16.
            let timed = rate.0.is_some() || count.is_multiple_of(16);
            let t_write = timed.then(Instant::now);
            // Sample `count` is a ping when the running ping quota crosses an integer.
            let is_ping = (count + 1) * pct / 100 > count * pct / 100;
            let ts = if is_ping { now_ns() | 1 } else { now_ns() & !1 };
            match w.write_w_timestamp(&sample, Time::from_nanos(ts)) {
                Ok(()) => {}
                Err(halyard::Error::Timeout) => {
                    println!("write error: timeout");
                    continue;
                }
                Err(e) => {
                    println!("write error: {e}");
                    std::process::exit(2);
                }
            }
            if let Some(t) = t_write {
                lock(&self.pub_hist).record(t.elapsed().as_nanos() as u64);
            }
            count += 1;
            self.sent.store(count, Ordering::Relaxed);
            sample.set_seq(sample.seq().wrapping_add(1));
            if T::KEY_OFF.is_some() {
                sample.set_keyval((sample.keyval() + 1) % nkeys);
            }
            if let Some(r) = rate.0 {
                in_burst += 1;
                if in_burst == burst {
                    in_burst = 0;
                    let _ = w.flush();
                    while ((count / burst as u64) as f64) / (start.elapsed().as_secs_f64() + 0.005)
                        > r
                        && !self.stop.load(Ordering::Relaxed)
                    {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
        }
    }

    fn main_loop(
        &self,
        publisher: &halyard::Publisher,
        pong_t: &halyard::Topic<T>,
        mut cpu: cpu::CpuRecorder,
        cpu_writer: &DataWriter<CPUStats>,
        cpu_reader: Option<&DataReader<CPUStats>>,
    ) -> i32 {
        let mut next_print = 1.0;
        let mut last_print = 0.0;
        let mut next_ping: f64 = 1.0;
        let mut run_start = 0.0;
        let mut next_disc = 0.0;
        let mut next_match = 0.0;
        let mut twarn_ping = 0.0;
        let mut ping_timeouts = 0u32;
        loop {
            let t = self.elapsed();
            // With -Qminmatch the run's duration counts from when the peers matched.
            let done = self
                .a
                .duration
                .is_some_and(|d| t >= run_start + d.as_secs_f64());
            if t >= next_print {
                self.print_stats(t, t - last_print, &mut cpu, cpu_writer, cpu_reader);
                last_print = t;
                next_print = if t > next_print + 0.5 {
                    t + 1.0
                } else {
                    next_print + 1.0
                };
            }
            if done {
                break;
            }
            if t >= next_disc {
                if self.discover(publisher, pong_t) {
                    twarn_ping = t + 3.333;
                }
                next_disc = t + 0.01;
            }
            if t >= next_match {
                self.check_matching();
                next_match = t + 0.1;
            }
            if !self.started.load(Ordering::SeqCst) {
                let need = self.a.min_match.unwrap_or(0) as usize;
                let matched = lock(&self.peers)
                    .values()
                    .filter(|p| p.unmatched == 0)
                    .count();
                if matched >= need {
                    self.started.store(true, Ordering::SeqCst);
                    run_start = t;
                    next_ping = t;
                } else if self.a.init_wait.is_some_and(|w| t >= w.as_secs_f64()) {
                    println!(
                        "{} error: too few matching participants ({matched})",
                        self.prefix
                    );
                    self.stop.store(true, Ordering::SeqCst);
                    return 1;
                }
            }
            let ping_now = self.started.load(Ordering::SeqCst);
            if let Some(args::Rate(rate)) = self.a.ping {
                let since =
                    (now_ns() as u64).saturating_sub(self.last_ping_ns.load(Ordering::SeqCst));
                match rate {
                    _ if !ping_now => {}
                    Some(r) if r > 0.0 && t >= next_ping => {
                        self.send_ping();
                        // Keep the schedule (a late wake-up does not lower the rate),
                        // unless far behind.
                        next_ping += 1.0 / r;
                        if next_ping < t - 0.1 {
                            next_ping = t + 1.0 / r;
                        }
                    }
                    None if (t >= 1.0 || self.a.min_match.is_some()) && since > 1_000_000_000 => {
                        let expected = lock(&self.peers).len();
                        if self.ping_seq.load(Ordering::SeqCst) > 0
                            && lock(&self.ping_answered).len() < expected
                        {
                            ping_timeouts += 1;
                            if t > twarn_ping {
                                println!(
                                    "{} ping timed out (total {ping_timeouts} times) ... sending new ping",
                                    self.prefix
                                );
                                twarn_ping = t + 1.0;
                            }
                        }
                        self.send_ping()
                    }
                    _ => {}
                }
            }
            let t = self.elapsed();
            let mut wake = next_print.min(next_disc).min(next_match);
            if self.a.ping.is_some() {
                wake = wake.min(next_ping.max(t + 0.001));
            }
            if let Some(d) = self.a.duration {
                wake = wake.min(run_start + d.as_secs_f64());
            }
            std::thread::sleep(Duration::from_secs_f64((wake - t).clamp(0.0, 0.01)));
        }
        self.stop.store(true, Ordering::SeqCst);
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

    fn print_stats(
        &self,
        t: f64,
        dt: f64,
        cpu: &mut cpu::CpuRecorder,
        cpu_writer: &DataWriter<CPUStats>,
        cpu_reader: Option<&DataReader<CPUStats>>,
    ) {
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
        let _ = cpu_writer.write(&cpu.sample);
        if let Some(r) = cpu_reader {
            self.print_remote_cpu(&pfx, r);
        }
    }

    /// `-c`: the latest CPUStats of every peer, `(stale)` when not updated since last time.
    fn print_remote_cpu(&self, pfx: &str, r: &DataReader<CPUStats>) {
        let Ok(samples) = r.read(40) else { return };
        for s in samples {
            if prefix_of(s.info.publication_handle) == self.own {
                let _ = r.take_with(
                    1,
                    Selector {
                        instance: Some(s.info.instance_handle),
                        ..Default::default()
                    },
                );
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
                let _ = r.take_with(
                    1,
                    Selector {
                        instance: Some(s.info.instance_handle),
                        ..Default::default()
                    },
                );
            }
        }
    }
}
