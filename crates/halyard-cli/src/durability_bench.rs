//! `halyard durability-bench`: what PERSISTENT durability costs, end to end on this machine.
//!
//! One run, one process, loopback: a standalone durability service on a fresh store file; a
//! PERSISTENT writer (in its own participant) writes N samples of S bytes and waits until the
//! service acknowledged every one as stored; the writer leaves; the service is stopped and
//! started again on the same file (a restart: everything is loaded from disk); then a
//! PERSISTENT reader that joins late is timed until it holds all N samples, checked once each
//! and in order. Printed, one line each (the benchmark campaign parses them):
//!
//! ```text
//! durability-bench stored N samples of S B in SECS s (KSPS kS/s MBPS Mb/s) commits COMMITS
//! durability-bench disk BYTES_PER_SAMPLE B/sample (BYTES B) for N samples
//! durability-bench reload N samples in SECS s
//! durability-bench catch-up N samples of S B in SECS s (KSPS kS/s MBPS Mb/s)
//! ```

use halyard::durability::{
    CommitPolicy, DurabilityConfig, DurabilityService, EmbeddedDurability, SyncLevel,
};
use halyard::qos::{dds_duration, DurabilityKind, EndpointQos, History, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, ParticipantOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: halyard durability-bench [--samples N] [--size BYTES] [--store PATH] \
[-d ID] [--commit POLICY] [--sync process|normal|full] [--timeout SECONDS]
  -d, --domain ID  the DDS domain id, 0..=232 (default 7; also -i, --id, --domain-id)
  --samples N    samples written, then caught up by a late reader (default 100000)
  --size BYTES   sample size on the wire, at least 32 (default 1024)
  --store PATH   the store file, which must not exist (default: a fresh temporary file, removed after)
  --commit       as `halyard durability --commit` (default batch)
  --timeout S    give up on a phase after S seconds (default 300)
Exit status: 0, 1 if the benchmark fails, 2 for bad arguments.";

/// The benchmark's topic type: a key, a sequence number and a payload.
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardBench::Durable")]
struct Durable {
    #[key]
    key: u32,
    seq: u64,
    payload: Vec<u8>,
}

/// Bytes of a sample beside its payload (encapsulation, key, seq, length).
const OVERHEAD: usize = 24;
const TOPIC: &str = "HalyardDurabilityBench";

struct Args {
    samples: u64,
    size: usize,
    store: Option<PathBuf>,
    domain: u32,
    commit: CommitPolicy,
    sync: SyncLevel,
    timeout: Duration,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        samples: 100_000,
        size: 1024,
        store: None,
        domain: 7,
        commit: CommitPolicy::default(),
        sync: SyncLevel::default(),
        timeout: Duration::from_secs(300),
    };
    let mut it = args.iter();
    while let Some(opt) = it.next() {
        let mut value = || {
            it.next()
                .map(String::as_str)
                .ok_or_else(|| format!("{opt} needs a value"))
        };
        match opt.as_str() {
            "--samples" => {
                a.samples = value()?
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--samples takes a positive count")?
            }
            "--size" => {
                a.size = value()?
                    .parse()
                    .ok()
                    .filter(|&n| (32..=16 << 20).contains(&n))
                    .ok_or("--size takes bytes from 32 to 16 MiB")?
            }
            "--store" => a.store = Some(value()?.into()),
            o if crate::discovery::is_domain_option(o) => {
                a.domain = crate::discovery::domain_id(value()?).map_err(|e| e.0)?
            }
            "--commit" => {
                a.commit = value()?
                    .parse::<CommitPolicy>()
                    .map_err(|e| e.to_string())?
            }
            "--sync" => a.sync = value()?.parse::<SyncLevel>()?,
            "--timeout" => {
                a.timeout = value()?
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0 && s.is_finite())
                    .map(Duration::from_secs_f64)
                    .ok_or("--timeout takes seconds")?
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(a)
}

/// Entry point: `args` follow `durability-bench`.
pub fn main(args: &[String]) -> i32 {
    if args
        .iter()
        .any(|a| a == "-h" || a == "--help" || a == "help")
    {
        println!("{USAGE}");
        return 0;
    }
    let a = match parse(args) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("halyard durability-bench: {msg}\n{USAGE}");
            return 2;
        }
    };
    let (store, scratch) = match &a.store {
        Some(p) if p.exists() => {
            eprintln!(
                "halyard durability-bench: {} exists; the benchmark needs a fresh store",
                p.display()
            );
            return 2;
        }
        Some(p) => (p.clone(), None),
        None => {
            let dir = std::env::temp_dir()
                .join(format!("halyard-durability-bench-{}", std::process::id()));
            if let Err(e) = std::fs::create_dir_all(&dir) {
                eprintln!("halyard durability-bench: {}: {e}", dir.display());
                return 1;
            }
            (dir.join("store.sqlite"), Some(dir))
        }
    };
    let r = run(&a, &store);
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("halyard durability-bench: {e}");
            1
        }
    }
}

fn options() -> Result<ParticipantOptions, String> {
    Ok(ParticipantOptions {
        durability: EmbeddedDurability::Off,
        ..ParticipantOptions::from_env().map_err(|e| e.to_string())?
    })
}

fn config(a: &Args, store: &Path) -> Result<DurabilityConfig, String> {
    Ok(DurabilityConfig {
        store: Some(store.to_path_buf()),
        commit: a.commit,
        sync: a.sync,
        participant: options()?,
        ..Default::default()
    })
}

fn durable_qos(mut q: EndpointQos) -> EndpointQos {
    q.reliability.kind = ReliabilityKind::Reliable;
    q.reliability.max_blocking_time = dds_duration(Duration::from_secs(30));
    q.history = History::KeepAll;
    q.durability = DurabilityKind::Persistent;
    q.durability_service.history = History::KeepAll;
    q
}

fn rate(n: u64, bytes: usize, secs: f64) -> String {
    format!(
        "{:.1} kS/s {:.1} Mb/s",
        n as f64 / secs / 1e3,
        n as f64 * bytes as f64 * 8.0 / secs / 1e6
    )
}

fn run(a: &Args, store: &Path) -> Result<(), String> {
    let payload = vec![0x5a_u8; a.size.saturating_sub(OVERHEAD)];
    let svc = DurabilityService::start(a.domain, config(a, store)?).map_err(|e| e.to_string())?;

    // Write N samples and wait until the service stored them all.
    {
        let p = DomainParticipant::with_options(a.domain, options()?).map_err(|e| e.to_string())?;
        let t = p
            .create_topic::<Durable>(TOPIC)
            .map_err(|e| e.to_string())?;
        let mut q = durable_qos(EndpointQos::writer_default());
        q.resource_limits.max_samples = 10_000;
        q.writer_data_lifecycle.autodispose_unregistered_instances = false;
        let w = p
            .create_publisher(GroupQos::default())
            .create_datawriter(&t, q)
            .map_err(|e| e.to_string())?;
        w.wait_for_durability_services(1, a.timeout)
            .map_err(|e| format!("the service's reader did not match: {e}"))?;
        let start = Instant::now();
        for seq in 0..a.samples {
            let s = Durable {
                key: (seq % 16) as u32,
                seq,
                payload: payload.clone(),
            };
            w.write(&s).map_err(|e| format!("write {seq}: {e}"))?;
        }
        w.wait_for_acknowledgments(a.timeout)
            .map_err(|e| format!("not every sample was stored in time: {e}"))?;
        let secs = start.elapsed().as_secs_f64();
        let s = svc.stats();
        println!(
            "durability-bench stored {} samples of {} B in {secs:.2} s ({}) commits {}",
            a.samples,
            a.size,
            rate(a.samples, a.size, secs),
            s.commits
        );
    }
    // The samples, and each instance's unregistration when the writer was deleted.
    let stats = svc.stop();
    if stats.stored < a.samples || !stats.problems.is_empty() {
        return Err(format!(
            "the service stored {} of {} samples; problems: {:?}",
            stats.stored, a.samples, stats.problems
        ));
    }
    let disk = disk_bytes(store);
    println!(
        "durability-bench disk {:.1} B/sample ({disk} B) for {} samples",
        disk as f64 / a.samples as f64,
        a.samples
    );

    // Restart on the same file: everything comes back from disk.
    let start = Instant::now();
    let svc = DurabilityService::start(a.domain, config(a, store)?).map_err(|e| e.to_string())?;
    let loaded = svc.stats().loaded;
    println!(
        "durability-bench reload {loaded} samples in {:.2} s",
        start.elapsed().as_secs_f64()
    );
    if loaded != stats.stored {
        return Err(format!("reloaded {loaded} of {} samples", stats.stored));
    }

    // A late reader catches up.
    let p = DomainParticipant::with_options(a.domain, options()?).map_err(|e| e.to_string())?;
    let t = p
        .create_topic::<Durable>(TOPIC)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let r = p
        .create_subscriber(GroupQos::default())
        .create_datareader(&t, durable_qos(EndpointQos::reader_default()))
        .map_err(|e| e.to_string())?;
    let mut next = 0u64;
    while next < a.samples {
        if start.elapsed() > a.timeout {
            return Err(format!(
                "catch-up: {next} of {} samples after {:?}",
                a.samples, a.timeout
            ));
        }
        r.wait_for_data(Duration::from_millis(100));
        for s in r.take(100_000).map_err(|e| e.to_string())? {
            let Some(d) = s.data else { continue };
            if d.seq != next {
                return Err(format!("catch-up: got seq {} where {next} was due", d.seq));
            }
            next += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "durability-bench catch-up {} samples of {} B in {secs:.2} s ({})",
        a.samples,
        a.size,
        rate(a.samples, a.size, secs)
    );
    drop(r);
    drop(p);
    svc.stop();
    Ok(())
}

/// The store file and its rollback journal (`process`, `full`) or its write-ahead log and
/// shared-memory index (`normal`), whichever are there, and its payload segments.
fn disk_bytes(store: &Path) -> u64 {
    let files: u64 = ["", "-journal", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let mut p = store.as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(PathBuf::from(p)).ok()
        })
        .map(|m| m.len())
        .sum();
    let segments: u64 = std::fs::read_dir(halyard::durability::payload_dir(store))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    files + segments
}
