//! `halyard perf`: Cyclone DDS ddsperf's ping, pong, pub and sub modes, compatible on the wire
//! (topics, types, partitions, user data, timestamp conventions) and in output lines.
//! docs/ddsperf-conventions.md records the conventions followed.

mod args;
mod stats;

use halyard::qos::{dds_duration, EndpointQos, History, ReliabilityKind};
use halyard::{
    DataReader, DataWriter, DomainParticipant, GroupQos, GuidPrefix, ParticipantOptions, Time,
};
use stats::{Latencies, SubStats};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// ddsperf's default type: `struct KeyedSeq { uint32 seq; @key uint32 keyval; sequence<octet> baggage; }`.
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "KeyedSeq")]
pub struct KeyedSeq {
    pub seq: u32,
    #[key]
    pub keyval: u32,
    pub baggage: Vec<u8>,
}

/// ddsperf's per-thread CPU record.
#[derive(halyard::CdrType, Clone, Debug, Default)]
pub struct CPUStatThread {
    pub name: String,
    pub u_pct: i32,
    pub s_pct: i32,
}

/// ddsperf's CPU statistics type (the writer must exist for ddsperf peers to match us).
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "CPUStats")]
pub struct CPUStats {
    #[key]
    pub hostname: String,
    #[key]
    pub pid: u32,
    pub maxrss: f64,
    pub vcsw: u32,
    pub ivcsw: u32,
    pub some_above: bool,
    pub cpu: Vec<CPUStatThread>,
}

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

struct Peer {
    name: String,
    pong_writer: Arc<DataWriter<KeyedSeq>>,
}

struct Perf {
    a: args::PerfArgs,
    dp: DomainParticipant,
    prefix: String,
    start: Instant,
    peers: Mutex<HashMap<GuidPrefix, Peer>>,
    ping_writer: DataWriter<KeyedSeq>,
    ping_seq: AtomicU32,
    ping_answered: Mutex<Vec<GuidPrefix>>,
    last_ping_ns: AtomicU64,
    latencies: Mutex<HashMap<GuidPrefix, Latencies>>,
    sub_stats: Mutex<SubStats>,
}

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
    match run(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("[{}] error: {e}", std::process::id());
            2
        }
    }
}

fn run(a: args::PerfArgs) -> halyard::Result<i32> {
    let pid = std::process::id();
    let user_data = format!("DDSPerf:{}:{}:{}", a.sub as u8, pid, hostname()).into_bytes();
    let dp = DomainParticipant::with_options(
        a.domain,
        ParticipantOptions {
            user_data,
            ..Default::default()
        },
    )?;
    let rel = if a.reliable { 'R' } else { 'U' };
    let data_t = dp.create_topic::<KeyedSeq>(&format!("DDSPerf{rel}DataKS"))?;
    let ping_t = dp.create_topic::<KeyedSeq>(&format!("DDSPerf{rel}PingKS"))?;
    let pong_t = dp.create_topic::<KeyedSeq>(&format!("DDSPerf{rel}PongKS"))?;
    let cpu_t = dp.create_topic::<CPUStats>("DDSPerfCPUStats")?;
    let publisher = dp.create_publisher(GroupQos::default());
    let subscriber = dp.create_subscriber(GroupQos::default());
    let mut cpu_qos = EndpointQos::writer_default();
    cpu_qos.history = History::KeepLast(1);
    let _cpu_writer = publisher.create_datawriter(&cpu_t, cpu_qos)?;
    let data_writer = publisher.create_datawriter(&data_t, data_qos(&a, true))?;
    let ping_writer = publisher.create_datawriter(&ping_t, keep_last1(&a, true))?;
    let own = guid_partition(dp.guid_prefix());
    let pong_sub = dp.create_subscriber(GroupQos {
        partition: vec![own],
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
        peers: Mutex::new(HashMap::new()),
        ping_writer,
        ping_seq: AtomicU32::new(0),
        ping_answered: Mutex::new(Vec::new()),
        last_ping_ns: AtomicU64::new(0),
        latencies: Mutex::new(HashMap::new()),
        sub_stats: Mutex::new(SubStats::new(a.nkeys)),
        dp: dp.clone(),
        a: a.clone(),
    });
    let ping_reader = Arc::new(ping_reader);
    {
        let (p, r) = (perf.clone(), ping_reader.clone());
        ping_reader.on_data_available(move || p.answer_pings(&r));
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
    let publisher_thread = a.publish.map(|rate| {
        let p = perf.clone();
        std::thread::spawn(move || p.publish(&data_writer, rate))
    });
    let code = perf.main_loop(&publisher);
    drop(publisher_thread);
    Ok(code)
}

impl Perf {
    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn discover(&self, publisher: &halyard::Publisher, pong_t: &halyard::Topic<KeyedSeq>) {
        let own = self.dp.guid_prefix();
        for p in self.dp.discovered_participants() {
            let prefix = p.guid.prefix;
            let ud = String::from_utf8_lossy(&p.user_data).to_string();
            let mut parts = ud.splitn(4, ':');
            if parts.next() != Some("DDSPerf") || prefix == own {
                continue;
            }
            let (_, pid, host) = (
                parts.next(),
                parts.next().unwrap_or("?"),
                parts.next().unwrap_or("?"),
            );
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            if peers.contains_key(&prefix) {
                continue;
            }
            let name = format!("{host}:{pid}");
            println!(
                "{} {:.3} participant {name}: new",
                self.prefix,
                self.elapsed()
            );
            let mut q = keep_last1(&self.a, true);
            q.partition = vec![guid_partition(prefix)];
            match publisher.create_datawriter(pong_t, q) {
                Ok(w) => {
                    peers.insert(
                        prefix,
                        Peer {
                            name,
                            pong_writer: Arc::new(w),
                        },
                    );
                }
                Err(e) => eprintln!("{} error: cannot create pong writer: {e}", self.prefix),
            }
        }
        let alive: Vec<GuidPrefix> = self
            .dp
            .discovered_participants()
            .iter()
            .map(|p| p.guid.prefix)
            .collect();
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|k, v| {
            let keep = alive.contains(k);
            if !keep {
                println!(
                    "{} {:.3} participant {}: gone",
                    self.prefix,
                    self.start.elapsed().as_secs_f64(),
                    v.name
                );
            }
            keep
        });
    }

    /// Pong: echo every ping to the pinging participant, timestamp `ts | 1`.
    fn answer_pings(&self, r: &DataReader<KeyedSeq>) {
        let Ok(samples) = r.take(256) else { return };
        for s in samples {
            let (Some(d), Some(ts)) = (s.data, s.info.source_timestamp) else {
                continue;
            };
            let from = GuidPrefix(
                s.info.publication_handle.0[..12]
                    .try_into()
                    .unwrap_or([0; 12]),
            );
            let w = self
                .peers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&from)
                .map(|p| p.pong_writer.clone());
            if let Some(w) = w {
                let _ = w.write_w_timestamp(&d, Time::from_nanos(ts.to_nanos() | 1));
            }
        }
    }

    fn send_ping(&self) {
        let seq = self.ping_seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.ping_answered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let sample = KeyedSeq {
            seq,
            keyval: 0,
            baggage: vec![0xee; self.a.size as usize - 12],
        };
        self.last_ping_ns.store(now_ns() as u64, Ordering::SeqCst);
        let _ = self
            .ping_writer
            .write_w_timestamp(&sample, Time::from_nanos(now_ns() | 1));
    }

    /// Ping: record (now - ts)/2 per ponging peer; ping again once all answered.
    fn on_pongs(&self, r: &DataReader<KeyedSeq>) {
        let Ok(samples) = r.take(256) else { return };
        let now = now_ns();
        let mut all = false;
        for s in samples {
            let (Some(d), Some(ts)) = (s.data, s.info.source_timestamp) else {
                continue;
            };
            let from = GuidPrefix(
                s.info.publication_handle.0[..12]
                    .try_into()
                    .unwrap_or([0; 12]),
            );
            let lat = (now - ts.to_nanos()).max(0) as u64 / 2;
            self.latencies
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(from)
                .or_default()
                .add(lat, d.baggage.len() as u32 + 12);
            if d.seq == self.ping_seq.load(Ordering::SeqCst) {
                let mut answered = self.ping_answered.lock().unwrap_or_else(|e| e.into_inner());
                if !answered.contains(&from) {
                    answered.push(from);
                }
                let expected = self.peers.lock().unwrap_or_else(|e| e.into_inner()).len();
                all = answered.len() >= expected.max(1);
            }
        }
        if all && matches!(self.a.ping, Some(args::Rate(None))) {
            self.send_ping();
        }
    }

    fn on_data(&self, r: &DataReader<KeyedSeq>) {
        let mut st = self.sub_stats.lock().unwrap_or_else(|e| e.into_inner());
        let _ = r.take_serialized(usize::MAX, |payload, info| {
            st.record(payload, info.publication_handle)
        });
    }

    fn publish(&self, w: &DataWriter<KeyedSeq>, rate: args::Rate) {
        let mut sample = KeyedSeq {
            seq: 0,
            keyval: 0,
            baggage: vec![0xee; self.a.size as usize - 12],
        };
        let start = Instant::now();
        let mut count: u64 = 0;
        let deadline = self.a.duration.map(|d| self.start + d);
        loop {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return;
            }
            for _ in 0..self.a.burst {
                sample.keyval = sample.seq % self.a.nkeys;
                if let Err(halyard::Error::Timeout) =
                    w.write_w_timestamp(&sample, Time::from_nanos(now_ns() & !1))
                {
                    continue;
                }
                sample.seq = sample.seq.wrapping_add(1);
                count += 1;
            }
            if let Some(r) = rate.0 {
                if r <= 0.0 {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                while (count as f64) / (start.elapsed().as_secs_f64() + 0.005) > r {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }

    fn main_loop(&self, publisher: &halyard::Publisher) -> i32 {
        let rel = if self.a.reliable { 'R' } else { 'U' };
        let pong_t = match self
            .dp
            .create_topic::<KeyedSeq>(&format!("DDSPerf{rel}PongKS"))
        {
            Ok(t) => t,
            Err(_) => return 2,
        };
        let mut next_print = 1.0;
        let mut next_ping = 1.0;
        loop {
            self.discover(publisher, &pong_t);
            let t = self.elapsed();
            if self.a.duration.is_some_and(|d| t >= d.as_secs_f64()) {
                break;
            }
            if let Some(args::Rate(rate)) = self.a.ping {
                let since =
                    (now_ns() as u64).saturating_sub(self.last_ping_ns.load(Ordering::SeqCst));
                match rate {
                    Some(r) if r > 0.0 && t >= next_ping => {
                        self.send_ping();
                        next_ping = t.max(next_ping) + 1.0 / r;
                    }
                    None if t >= 1.0 && since > 1_000_000_000 => self.send_ping(),
                    _ => {}
                }
            }
            if t >= next_print {
                self.print_stats(t);
                next_print += 1.0;
            }
            std::thread::sleep(
                Duration::from_millis(1).min(Duration::from_secs_f64((next_print - t).max(0.0))),
            );
        }
        let lost = self
            .sub_stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lost;
        if lost > 0 && self.a.reliable && self.a.keep_last.is_none() && self.a.sub {
            println!("{} error: {lost} samples lost", self.prefix);
            return 1;
        }
        0
    }

    fn print_stats(&self, t: f64) {
        let peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        let mut lat = self.latencies.lock().unwrap_or_else(|e| e.into_inner());
        for (prefix, l) in lat.iter_mut() {
            if let Some(line) = l.line() {
                let name = peers
                    .get(prefix)
                    .map_or_else(|| format!("{:x?}", &prefix.0[..4]), |p| p.name.clone());
                println!("{} {t:.3}  {name} {line}", self.prefix);
            }
        }
        drop((peers, lat));
        if let Some(line) = self
            .sub_stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .line()
        {
            println!("{} {t:.3}  {line}", self.prefix);
        }
    }
}
