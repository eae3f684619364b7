//! `halyard perf`: Cyclone DDS ddsperf's ping, pong, pub and sub modes, compatible on the wire
//! (topics, types, partitions, user data, timestamp conventions) and in output lines.
//! docs/ddsperf-conventions.md records the conventions followed.
//!
//! [`peers`] tracks the other ddsperf processes, [`latency`] is ping/pong/listen,
//! [`throughput`] pub/sub, [`run_loop`] the main loop and its printed figures.

mod args;
mod cpu;
mod latency;
mod peers;
mod run_loop;
mod stats;
mod throughput;
mod types;

pub use cpu::CPUStats;
pub use peers::guid_partition;
pub use types::*;

use halyard::listener::on_data_available;
use halyard::qos::{Durability, History, ReliabilityKind, TopicQos};
use halyard::{
    DataReader, DataReaderQos, DataWriter, DataWriterQos, DomainParticipant, GuidPrefix,
    InstanceHandle, ParticipantOptions, PublisherQos, SubscriberQos,
};
use peers::Peer;
use run_loop::LoopEntities;
use stats::{Hist, Latencies, SubStats};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
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

/// What one `halyard perf` process shares between its main loop, its publisher thread and its
/// listeners.
struct Perf<T: PerfType> {
    a: args::PerfArgs,
    dp: DomainParticipant,
    own: GuidPrefix,
    prefix: String,
    start: Instant,
    names: [String; 3],
    peers: Mutex<BTreeMap<GuidPrefix, Peer<T>>>,
    ping_writer: DataWriter<T>,
    ping_seq: AtomicU32,
    ping_answered: Mutex<Vec<GuidPrefix>>,
    /// The ping sample, built once (ddsperf, too, keeps its sample): a 10 MiB ping must not
    /// time a 10 MiB allocation and fill.
    ping_sample: Mutex<Option<T>>,
    last_ping_ns: AtomicU64,
    latencies: Mutex<BTreeMap<GuidPrefix, Latencies>>,
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

/// The QoS the writers and readers of the data topic share.
fn data_qos(a: &args::PerfArgs) -> TopicQos {
    let mut q = TopicQos::default()
        .max_blocking_time(Duration::from_secs(10))
        .durability(a.durability);
    q.reliability.kind = if a.reliable {
        ReliabilityKind::Reliable
    } else {
        ReliabilityKind::BestEffort
    };
    q.history = a.keep_last.map_or(History::KeepAll, History::KeepLast);
    q.resource_limits.max_samples = Some(10_000);
    // A durable writer's service keeps what the writer's own history would.
    q.durability_service.history = q.history;
    q
}

/// The QoS the writers and readers of the ping and pong topics share.
fn keep_last1(a: &args::PerfArgs) -> TopicQos {
    let mut q = data_qos(a);
    q.history = History::KeepLast(1);
    q.resource_limits.max_samples = None;
    q
}

/// A writer of a topic with QoS `topic`.
fn writer_qos(a: &args::PerfArgs, topic: &TopicQos) -> DataWriterQos {
    let mut q = DataWriterQos::default().copy_from_topic_qos(topic);
    if a.durability >= Durability::Transient {
        // Durable samples outlive the publisher (as `halyard shapes` does): leaving
        // unregisters the instances, where disposing them would have the durability service
        // purge them once SERVICE_CLEANUP_DELAY (0 by default) passed.
        q.writer_data_lifecycle.autodispose_unregistered_instances = false;
    }
    q
}

/// A reader of a topic with QoS `topic`.
fn reader_qos(topic: &TopicQos) -> DataReaderQos {
    DataReaderQos::default().copy_from_topic_qos(topic)
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

/// ddsperf's topics and endpoints in one participant.
struct Endpoints<T: PerfType> {
    /// The writers' publisher, kept as long as they are.
    _publisher: halyard::Publisher,
    pong_t: halyard::Topic<T>,
    names: [String; 3],
    cpu_writer: DataWriter<CPUStats>,
    cpu_reader: Option<DataReader<CPUStats>>,
    data_writer: DataWriter<T>,
    ping_writer: DataWriter<T>,
    pong_reader: DataReader<T>,
    ping_reader: DataReader<T>,
    data_reader: Option<DataReader<T>>,
}

impl<T: PerfType> Endpoints<T> {
    /// Creates ddsperf's topics (`DDSPerf{R,U}{Data,Ping,Pong}<T>`, `DDSPerfCPUStats`) and
    /// their writers and readers, pongs in this participant's GUID partition.
    fn create(dp: &DomainParticipant, a: &args::PerfArgs) -> halyard::Result<Self> {
        let rel = if a.reliable { 'R' } else { 'U' };
        let names = ["Data", "Ping", "Pong"].map(|k| format!("DDSPerf{rel}{k}{}", T::SUFFIX));
        let data_t = dp.create_topic::<T>(&names[0])?;
        let ping_t = dp.create_topic::<T>(&names[1])?;
        let pong_t = dp.create_topic::<T>(&names[2])?;
        let cpu_t = dp.create_topic::<CPUStats>("DDSPerfCPUStats")?;
        let publisher = dp.create_publisher(PublisherQos::default());
        let subscriber = dp.create_subscriber(SubscriberQos::default());
        let cpu_qos = DataWriterQos::default().keep_last(1);
        let cpu_writer = publisher.create_datawriter(&cpu_t, cpu_qos)?;
        let cpu_reader = if a.cpu_stats {
            let q = DataReaderQos::default().reliable().keep_last(1);
            Some(subscriber.create_datareader(&cpu_t, q)?)
        } else {
            None
        };
        let data_writer = publisher.create_datawriter(&data_t, writer_qos(a, &data_qos(a)))?;
        let ping_writer = publisher.create_datawriter(&ping_t, writer_qos(a, &keep_last1(a)))?;
        let pong_sub = dp.create_subscriber(
            SubscriberQos::default().partition([guid_partition(dp.guid_prefix())]),
        );
        let pong_reader = pong_sub.create_datareader(&pong_t, reader_qos(&data_qos(a)))?;
        let ping_reader = subscriber.create_datareader(&ping_t, reader_qos(&keep_last1(a)))?;
        let data_reader = if a.sub {
            Some(subscriber.create_datareader(&data_t, reader_qos(&data_qos(a)))?)
        } else {
            None
        };
        Ok(Endpoints {
            _publisher: publisher,
            pong_t,
            names,
            cpu_writer,
            cpu_reader,
            data_writer,
            ping_writer,
            pong_reader,
            ping_reader,
            data_reader,
        })
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
            ..ParticipantOptions::from_env()?
        },
    )?;
    // ddsperf sees itself in DCPSParticipant first of all.
    println!("[{pid}] participant {host}:{pid}: new (self)");
    let e = Endpoints::<T>::create(&dp, &a)?;
    let perf = Arc::new(Perf {
        prefix: format!("[{pid}]"),
        start: Instant::now(),
        names: e.names.clone(),
        own: dp.guid_prefix(),
        peers: Mutex::new(BTreeMap::new()),
        ping_writer: e.ping_writer,
        ping_seq: AtomicU32::new(0),
        ping_answered: Mutex::new(Vec::new()),
        ping_sample: Mutex::new(None),
        last_ping_ns: AtomicU64::new(0),
        latencies: Mutex::new(BTreeMap::new()),
        sub_stats: Mutex::new(SubStats::new(a.nkeys)),
        pub_hist: Mutex::new(Hist::default()),
        stop: AtomicBool::new(false),
        started: AtomicBool::new(a.min_match.is_none()),
        sent: AtomicU64::new(0),
        dump: a.latency_dump.as_ref().map(|_| Mutex::new(Vec::new())),
        dp: dp.clone(),
        a: a.clone(),
    });
    let _readers = perf.listen(e.ping_reader, e.pong_reader, e.data_reader)?;
    let publishing = a.publish.filter(|r| r.0 != Some(0.0));
    let publisher_thread = match publishing {
        Some(rate) => {
            let p = perf.clone();
            let w = e.data_writer;
            let spawned = std::thread::Builder::new()
                .name("pub".into())
                .spawn(move || p.publish(&w, rate));
            Some(spawned.map_err(halyard::Error::Thread)?)
        }
        None => None,
    };
    let cpu = cpu::CpuRecorder::new(host);
    let entities = LoopEntities {
        pong_t: &e.pong_t,
        cpu_writer: &e.cpu_writer,
        cpu_reader: e.cpu_reader.as_ref(),
    };
    let code = perf.main_loop(&entities, cpu);
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

/// The readers whose listeners run the measurement; they must live as long as the run.
type Listening<T> = (
    Arc<DataReader<T>>,
    Arc<DataReader<T>>,
    Option<Arc<DataReader<T>>>,
);

impl<T: PerfType> Perf<T> {
    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Installs the listeners: pings answered (or counted by `listen`), pongs timed, data
    /// counted.
    fn listen(
        self: &Arc<Self>,
        ping_reader: DataReader<T>,
        pong_reader: DataReader<T>,
        data_reader: Option<DataReader<T>>,
    ) -> halyard::Result<Listening<T>> {
        let ping_reader = Arc::new(ping_reader);
        let (p, r) = (self.clone(), ping_reader.clone());
        if self.a.listen {
            ping_reader.set_listener(Some(on_data_available(move || p.count_pings(&r))))?;
        } else {
            ping_reader.set_listener(Some(on_data_available(move || p.answer_pings(&r))))?;
        }
        let pong_reader = Arc::new(pong_reader);
        let (p, r) = (self.clone(), pong_reader.clone());
        pong_reader.set_listener(Some(on_data_available(move || p.on_pongs(&r))))?;
        let data_reader = data_reader.map(Arc::new);
        if let Some(dr) = &data_reader {
            let (p, r) = (self.clone(), dr.clone());
            dr.set_listener(Some(on_data_available(move || p.on_data(&r))))?;
        }
        Ok((ping_reader, pong_reader, data_reader))
    }
}
