//! Proves Halyard's end-to-end delivery guarantees between participants on loopback UDP: 100 MB and back-to-back 20 MB reliable samples arrive intact and in order, a full KEEP_ALL writer blocks then times out while a reader is frozen, wait_for_acknowledgments tracks real acknowledgments, instance/view/sample states follow DDS, KEEP_LAST readers keep the newest samples, a killed writer process is detected through its lease, and malformed datagrams are counted without harming delivery.

// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use halyard::qos::{History, ReliabilityKind};
use halyard::{
    DataReader, DataReaderQos, DataWriter, DataWriterQos, DomainParticipant, Error, InstanceState,
    ParticipantOptions, PublisherQos, SampleState, Selector, SubscriberQos, ViewState,
};
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::sleep;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Types and helpers
// ---------------------------------------------------------------------------------------------

/// A large unkeyed sample.
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardDeliveryBlob")]
struct Blob {
    seq: u32,
    data: Vec<u8>,
}

/// A small keyed sample.
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardDeliveryKeyed")]
struct Keyed {
    #[key]
    id: u32,
    value: u32,
}

/// A participant bound to loopback (traffic must stay on `lo`).
fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
    )
    .expect("create participant on lo")
}

/// A participant on loopback with a 2 s lease. With `fast_spdp` it announces itself every
/// 500 ms (4 times per lease); without, at the core's default SPDP interval (2 s).
fn short_lease_participant(domain: u32, fast_spdp: bool) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            tuning: Some(if fast_spdp {
                |cfg| {
                    cfg.lease_duration = LEASE;
                    cfg.spdp_interval = LEASE / 4;
                }
            } else {
                |cfg| cfg.lease_duration = LEASE
            }),
            ..Default::default()
        },
    )
    .expect("create short-lease participant on lo")
}

const LEASE: Duration = Duration::from_secs(2);

fn reliable_keep_all_writer_qos(max_blocking: Duration) -> DataWriterQos {
    let mut q = DataWriterQos::default();
    q.history = History::KeepAll;
    q.reliability.max_blocking_time = max_blocking;
    q
}

fn reliable_reader_qos(history: History) -> DataReaderQos {
    let mut q = DataReaderQos::default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = history;
    q
}

fn writer_on<T: halyard::cdr::TopicType>(
    dp: &DomainParticipant,
    topic: &str,
    qos: DataWriterQos,
) -> DataWriter<T> {
    let t = dp.create_topic::<T>(topic).expect("topic");
    dp.create_publisher(PublisherQos::default())
        .create_datawriter(&t, qos)
        .expect("create writer")
}

fn reader_on<T: halyard::cdr::TopicType>(
    dp: &DomainParticipant,
    topic: &str,
    qos: DataReaderQos,
) -> DataReader<T> {
    let t = dp.create_topic::<T>(topic).expect("topic");
    dp.create_subscriber(SubscriberQos::default())
        .create_datareader(&t, qos)
        .expect("create reader")
}

const MATCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A deterministic, non-periodic byte pattern (a fragment delivered at the wrong offset or a
/// sample swapped with another changes the content).
fn pattern(seq: u32, len: usize) -> Vec<u8> {
    let salt = (seq as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (0..len as u64)
        .map(|i| ((i ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
        .collect()
}

/// Takes samples until `n` valid ones arrived or `deadline`; returns them in arrival order.
fn take_n<T: halyard::cdr::TopicType>(r: &DataReader<T>, n: usize, deadline: Instant) -> Vec<T> {
    let mut got = Vec::new();
    while got.len() < n {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        r.wait_for_data((deadline - now).min(Duration::from_millis(100)));
        for s in r.take(usize::MAX).expect("take") {
            if let Some(d) = s.data {
                got.push(d);
            }
        }
    }
    got
}

fn poll_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if cond() {
            return Some(start.elapsed());
        }
        if start.elapsed() >= timeout {
            return None;
        }
        sleep(Duration::from_millis(10));
    }
}

// ---------------------------------------------------------------------------------------------
// Child processes: this test binary re-run with `--ignored --exact child_process` and
// HALYARD_DELIVERY_CHILD=<role>:<domain>:<topic>. A separate process can be frozen (SIGSTOP)
// or killed abruptly (SIGKILL), which two participants in one process cannot simulate.
// ---------------------------------------------------------------------------------------------

const CHILD_ENV: &str = "HALYARD_DELIVERY_CHILD";
const CHILD_TAG: &str = "HALYARD-CHILD";

/// The child side. Roles:
/// * `reader`: a reliable KEEP_ALL reader of `Keyed`; prints READY once matched, then takes
///   samples forever (printing `GOT <value>`).
/// * `writer`: a participant with a 2 s lease announced every 500 ms and a reliable writer of
///   `Keyed`; prints READY once matched and once its one sample was acknowledged, then idles.
/// * `idle-writer`: the same with only `lease_duration = 2 s` (default SPDP interval), and
///   CPU-bound application threads once READY.
///
/// Both exit when stdin closes (the parent died) or after 120 s.
#[test]
#[ignore = "helper process for the other tests (does nothing unless HALYARD_DELIVERY_CHILD is set)"]
fn child_process() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.splitn(3, ':');
    let (role, domain, topic) = (
        parts.next().unwrap_or_default().to_string(),
        parts
            .next()
            .and_then(|d| d.parse::<u32>().ok())
            .expect("domain"),
        parts.next().expect("topic").to_string(),
    );
    std::thread::spawn(|| {
        // Parent gone (stdin closed) => exit.
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
        std::process::exit(0);
    });
    std::thread::spawn(|| {
        sleep(Duration::from_secs(120));
        std::process::exit(3);
    });
    let say = |s: &str| {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{CHILD_TAG} {s}");
        let _ = out.flush();
    };
    match role.as_str() {
        "reader" | "short-reader" => {
            let dp = if role == "short-reader" {
                short_lease_participant(domain, true)
            } else {
                participant(domain)
            };
            let r: DataReader<Keyed> =
                reader_on(&dp, &topic, reliable_reader_qos(History::KeepAll));
            r.wait_for_matched(1, Duration::from_secs(60))
                .expect("child reader matched");
            say("READY");
            loop {
                r.wait_for_data(Duration::from_millis(500));
                for s in r.take(usize::MAX).expect("take") {
                    if let Some(d) = s.data {
                        say(&format!("GOT {}", d.value));
                    }
                }
            }
        }
        "writer" | "idle-writer" => {
            let dp = short_lease_participant(domain, role == "writer");
            let w: DataWriter<Keyed> = writer_on(
                &dp,
                &topic,
                reliable_keep_all_writer_qos(Duration::from_secs(1)),
            );
            w.wait_for_matched(1, Duration::from_secs(60))
                .expect("child writer matched");
            w.write(&Keyed { id: 7, value: 42 }).expect("child write");
            w.wait_for_acknowledgments(Duration::from_secs(10))
                .expect("child write acknowledged");
            say("READY");
            if role == "idle-writer" {
                // The application is busy computing while its participant is idle (as under
                // a parallel build): Halyard's timer thread competes for the CPU.
                for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
                    std::thread::spawn(|| {
                        let mut x = 0u64;
                        loop {
                            x = std::hint::black_box(x.wrapping_add(1));
                        }
                    });
                }
            }
            loop {
                sleep(Duration::from_secs(1));
            }
        }
        other => panic!("unknown child role {other:?}"),
    }
}

/// A child process running [`child_process`]; killed (SIGKILL) when dropped.
struct ChildProc {
    child: Child,
    lines: Receiver<String>,
}

impl ChildProc {
    fn spawn(role: &str, domain: u32, topic: &str) -> ChildProc {
        let exe = std::env::current_exe().expect("current exe");
        let mut child = Command::new(exe)
            .args([
                "--ignored",
                "--exact",
                "child_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, format!("{role}:{domain}:{topic}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn child test process");
        let out = child.stdout.take().expect("child stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                // The harness may print "test child_process ... " on the same line.
                if let Some(at) = line.find(CHILD_TAG) {
                    if tx
                        .send(line[at + CHILD_TAG.len()..].trim().to_string())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        });
        ChildProc { child, lines: rx }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a line equal to `want` from the child; panics on timeout.
    fn expect_line(&self, want: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l == want => return,
                Ok(_) => {}
                Err(e) => panic!("child did not say {want:?} within {timeout:?}: {e}"),
            }
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -{sig} {} failed", self.pid());
    }

    /// Waits until every thread of the child is stopped (state `T` in /proc): `kill -STOP`
    /// returns once the signal is queued, not once the process stopped.
    fn wait_stopped(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let task_dir = format!("/proc/{}/task", self.pid());
        loop {
            let all_stopped = std::fs::read_dir(&task_dir).is_ok_and(|tasks| {
                tasks.flatten().all(|t| {
                    std::fs::read_to_string(t.path().join("stat")).is_ok_and(|stat| {
                        // The state follows the parenthesised command name.
                        stat.rsplit_once(") ")
                            .is_some_and(|(_, rest)| rest.starts_with('T'))
                    })
                })
            });
            if all_stopped {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "child {} did not stop",
                self.pid()
            );
            sleep(Duration::from_millis(1));
        }
    }

    fn kill_now(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        self.kill_now();
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Large samples
// ---------------------------------------------------------------------------------------------

#[test]
fn reliable_100mb_sample_then_three_20mb_samples_arrive_intact_and_in_order() {
    const DOMAIN: u32 = 60;
    const LIMIT: Duration = Duration::from_secs(60);
    let pub_dp = participant(DOMAIN);
    let sub_dp = participant(DOMAIN);
    let w: DataWriter<Blob> = writer_on(&pub_dp, "Big", reliable_keep_all_writer_qos(LIMIT));
    let r: DataReader<Blob> = reader_on(&sub_dp, "Big", reliable_reader_qos(History::KeepAll));
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("writer matched");
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("reader matched");

    // One 100 MiB sample.
    const BIG: usize = 100 * 1024 * 1024;
    let big = Blob {
        seq: 1,
        data: pattern(1, BIG),
    };
    let start = Instant::now();
    w.write(&big).expect("write 100 MB");
    let got = take_n(&r, 1, start + LIMIT);
    let elapsed = start.elapsed();
    assert_eq!(
        got.len(),
        1,
        "100 MB sample not delivered within {LIMIT:?} (lost={}, rejected={})",
        r.stats().unwrap().sample_lost,
        r.stats().unwrap().sample_rejected
    );
    assert_eq!(got[0].seq, 1);
    assert_eq!(got[0].data.len(), BIG, "100 MB sample length");
    assert!(got[0].data == big.data, "100 MB sample content differs");
    drop(got);
    drop(big);
    println!(
        "100 MiB sample delivered in {:.2} s: {:.1} MB/s",
        elapsed.as_secs_f64(),
        BIG as f64 / 1e6 / elapsed.as_secs_f64()
    );

    // Three 20 MiB samples back to back (each write blocks until the previous one is acked).
    const MID: usize = 20 * 1024 * 1024;
    let expected: Vec<Vec<u8>> = (2..5).map(|seq| pattern(seq, MID)).collect();
    let start = Instant::now();
    let deadline = start + LIMIT;
    let rx = std::thread::scope(|s| {
        let rx = s.spawn(|| take_n(&r, 3, deadline));
        for (i, data) in expected.iter().enumerate() {
            w.write(&Blob {
                seq: 2 + i as u32,
                data: data.clone(),
            })
            .unwrap_or_else(|e| panic!("write 20 MB sample #{i}: {e}"));
        }
        rx.join().expect("reader thread")
    });
    let elapsed = start.elapsed();
    assert_eq!(
        rx.len(),
        3,
        "3 x 20 MB samples not delivered within {LIMIT:?}"
    );
    for (i, (got, want)) in rx.iter().zip(&expected).enumerate() {
        assert_eq!(got.seq, 2 + i as u32, "20 MB samples out of order");
        assert!(got.data == *want, "20 MB sample #{i} content differs");
    }
    println!(
        "3 x 20 MiB samples delivered in {:.2} s: {:.1} MB/s",
        elapsed.as_secs_f64(),
        (3 * MID) as f64 / 1e6 / elapsed.as_secs_f64()
    );
}

// ---------------------------------------------------------------------------------------------
// 2. A full KEEP_ALL writer blocks, then times out
// ---------------------------------------------------------------------------------------------

#[test]
fn full_keep_all_writer_blocks_then_times_out_while_reader_is_frozen() {
    const DOMAIN: u32 = 61;
    const TOPIC: &str = "Blocking";
    const BLOCK: Duration = Duration::from_millis(200);
    let dp = participant(DOMAIN);
    let mut q = reliable_keep_all_writer_qos(BLOCK);
    q.resource_limits.max_samples = Some(5);
    let w: DataWriter<Keyed> = writer_on(&dp, TOPIC, q);
    let child = ChildProc::spawn("reader", DOMAIN, TOPIC);
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("writer matched the child reader");
    child.expect_line("READY", MATCH_TIMEOUT);
    // Acknowledged history is freed: a first write round trip proves the reader is live.
    w.write(&Keyed { id: 1, value: 0 }).expect("warm-up write");
    w.wait_for_acknowledgments(Duration::from_secs(5))
        .expect("warm-up write acknowledged");
    child.expect_line("GOT 0", Duration::from_secs(5));

    child.signal("STOP");
    child.wait_stopped(Duration::from_secs(5));
    for v in 1..=5 {
        let t = Instant::now();
        w.write(&Keyed { id: 1, value: v })
            .unwrap_or_else(|e| panic!("write {v} of 5 into a non-full history: {e}"));
        assert!(
            t.elapsed() < BLOCK,
            "write {v} (history not full) blocked {:?}",
            t.elapsed()
        );
    }
    let t = Instant::now();
    let res = w.write(&Keyed { id: 1, value: 6 });
    let blocked = t.elapsed();
    assert!(
        matches!(res, Err(Error::Timeout)),
        "6th write into a full KEEP_ALL history: expected Err(Timeout), got {res:?}"
    );
    assert!(
        blocked >= BLOCK - Duration::from_millis(5) && blocked < Duration::from_secs(2),
        "6th write blocked {blocked:?}, expected about max_blocking_time {BLOCK:?}"
    );

    let t = Instant::now();
    child.signal("CONT");
    let mut attempts = 0;
    loop {
        attempts += 1;
        match w.write(&Keyed { id: 1, value: 6 }) {
            Ok(()) => break,
            Err(Error::Timeout) if t.elapsed() < Duration::from_secs(5) => {}
            Err(e) => panic!(
                "write after SIGCONT still fails after {:?}: {e}",
                t.elapsed()
            ),
        }
    }
    let resumed = t.elapsed();
    for v in 1..=6 {
        child.expect_line(&format!("GOT {v}"), Duration::from_secs(5));
    }
    println!(
        "full KEEP_ALL writer: Err(Timeout) after {blocked:?} (max_blocking_time {BLOCK:?}); \
         writes resumed {resumed:?} after SIGCONT ({attempts} attempt(s))"
    );
}

// ---------------------------------------------------------------------------------------------
// 3. wait_for_acknowledgments
// ---------------------------------------------------------------------------------------------

#[test]
fn wait_for_acknowledgments_tracks_reader_acks() {
    const DOMAIN: u32 = 62;
    const TOPIC: &str = "Acks";
    let pub_dp = participant(DOMAIN);
    let sub_dp = participant(DOMAIN);
    let w: DataWriter<Keyed> = writer_on(
        &pub_dp,
        TOPIC,
        reliable_keep_all_writer_qos(Duration::from_secs(1)),
    );
    let r: DataReader<Keyed> = reader_on(&sub_dp, TOPIC, reliable_reader_qos(History::KeepAll));
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("writer matched the local reader");

    // Ok once the (only) reader received everything: it holds all samples at that moment.
    for v in 0..20 {
        w.write(&Keyed {
            id: v % 3,
            value: v,
        })
        .expect("write");
    }
    let t = Instant::now();
    w.wait_for_acknowledgments(Duration::from_secs(5))
        .expect("all samples acknowledged");
    let acked_in = t.elapsed();
    let got: Vec<u32> = r
        .take(usize::MAX)
        .expect("take")
        .into_iter()
        .filter_map(|s| s.data.map(|d| d.value))
        .collect();
    assert_eq!(
        got,
        (0..20).collect::<Vec<_>>(),
        "acknowledged samples must be in the reader's cache"
    );

    // A second, frozen reader: acknowledgments cannot complete.
    let child = ChildProc::spawn("reader", DOMAIN, TOPIC);
    w.wait_for_matched(2, MATCH_TIMEOUT)
        .expect("writer matched the child reader");
    child.expect_line("READY", MATCH_TIMEOUT);
    w.wait_for_acknowledgments(Duration::from_secs(5))
        .expect("nothing pending for the new reader");
    child.signal("STOP");
    w.write(&Keyed { id: 9, value: 100 }).expect("write");
    let t = Instant::now();
    let res = w.wait_for_acknowledgments(Duration::from_millis(500));
    let waited = t.elapsed();
    assert!(
        matches!(res, Err(Error::Timeout)),
        "wait_for_acknowledgments with a frozen reader: expected Err(Timeout), got {res:?}"
    );
    assert!(
        waited >= Duration::from_millis(495) && waited < Duration::from_secs(2),
        "wait_for_acknowledgments returned after {waited:?}, timeout was 500 ms"
    );
    // The live local reader got it regardless.
    let local = take_n(&r, 1, Instant::now() + Duration::from_secs(2));
    assert_eq!(local.len(), 1, "live reader did not get the sample");

    let t = Instant::now();
    child.signal("CONT");
    w.wait_for_acknowledgments(Duration::from_secs(5))
        .expect("acknowledged after SIGCONT");
    let resumed = t.elapsed();
    child.expect_line("GOT 100", Duration::from_secs(2));
    println!(
        "wait_for_acknowledgments: Ok after {acked_in:?} (20 samples), Err(Timeout) after \
         {waited:?} with a frozen reader, Ok {resumed:?} after SIGCONT"
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Instance lifecycle and sample/view/instance states
// ---------------------------------------------------------------------------------------------

#[test]
fn keyed_instances_dispose_unregister_and_states() {
    const DOMAIN: u32 = 63;
    const TOPIC: &str = "Instances";
    let pub_dp = participant(DOMAIN);
    let sub_dp = participant(DOMAIN);
    // Unregistering without autodispose leaves the instance without writers (the default,
    // autodispose, would dispose it: see tests/qos_policies.rs).
    let mut wq = reliable_keep_all_writer_qos(Duration::from_secs(1));
    wq.writer_data_lifecycle.autodispose_unregistered_instances = false;
    let w: DataWriter<Keyed> = writer_on(&pub_dp, TOPIC, wq);
    let r: DataReader<Keyed> = reader_on(&sub_dp, TOPIC, reliable_reader_qos(History::KeepAll));
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("writer matched");
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("reader matched");

    let k = |id: u32| Keyed { id, value: id * 10 };
    for id in 1..=3 {
        w.write(&k(id)).expect("write");
    }
    w.dispose(&k(1)).expect("dispose");
    w.unregister_instance(&k(2)).expect("unregister");
    w.wait_for_acknowledgments(Duration::from_secs(5))
        .expect("acknowledged");

    let h = |id: u32| r.lookup_instance(&k(id)).expect("lookup");
    assert_eq!(
        w.register_instance(&k(3)).expect("register"),
        h(3),
        "writer and reader agree on the instance handle"
    );

    let first = r.read(usize::MAX).expect("read");
    let summary: Vec<String> = first
        .iter()
        .map(|s| {
            format!(
                "{:?} valid={} {:?}/{:?}/{:?}",
                s.data,
                s.info.valid_data,
                s.info.sample_state,
                s.info.view_state,
                s.info.instance_state
            )
        })
        .collect();
    assert_eq!(
        first.len(),
        5,
        "3 samples + dispose + unregister notices: {summary:#?}"
    );
    for s in &first {
        assert_eq!(s.info.sample_state, SampleState::NotRead, "{summary:#?}");
        assert_eq!(s.info.view_state, ViewState::New, "{summary:#?}");
    }
    let of = |id: u32| -> Vec<&halyard::Sample<Keyed>> {
        first
            .iter()
            .filter(|s| s.info.instance_handle == h(id))
            .collect()
    };
    // Instance 1: data then a disposal notice.
    let i1 = of(1);
    assert_eq!(i1.len(), 2, "instance 1: {summary:#?}");
    assert!(i1[0].info.valid_data && i1[0].data.as_ref().is_some_and(|d| d.value == 10));
    assert!(
        !i1[1].info.valid_data && i1[1].data.is_none(),
        "disposal notice carries no data: {summary:#?}"
    );
    assert!(i1
        .iter()
        .all(|s| s.info.instance_state == InstanceState::NotAliveDisposed));
    // Instance 2: data then an unregistration notice.
    let i2 = of(2);
    assert_eq!(i2.len(), 2, "instance 2: {summary:#?}");
    assert!(i2[0].info.valid_data && i2[0].data.as_ref().is_some_and(|d| d.value == 20));
    assert!(
        !i2[1].info.valid_data && i2[1].data.is_none(),
        "unregistration notice carries no data: {summary:#?}"
    );
    assert!(i2
        .iter()
        .all(|s| s.info.instance_state == InstanceState::NotAliveNoWriters));
    // Instance 3: alive.
    let i3 = of(3);
    assert_eq!(i3.len(), 1, "instance 3: {summary:#?}");
    assert!(i3[0].info.valid_data && i3[0].info.instance_state == InstanceState::Alive);

    // Read again: READ and NOT_NEW.
    let second = r.read(usize::MAX).expect("read again");
    assert_eq!(second.len(), 5);
    for s in &second {
        assert_eq!(s.info.sample_state, SampleState::Read);
        assert_eq!(s.info.view_state, ViewState::NotNew);
    }
    // Only unread: nothing.
    let unread = r
        .read_with(
            usize::MAX,
            Selector {
                only_unread: true,
                ..Default::default()
            },
        )
        .expect("read unread");
    assert!(unread.is_empty(), "no unread samples left");

    // take_with one instance returns only it and leaves the others.
    let taken = r
        .take_with(
            usize::MAX,
            Selector {
                instance: Some(h(3)),
                ..Default::default()
            },
        )
        .expect("take instance 3");
    assert_eq!(taken.len(), 1);
    assert!(taken
        .iter()
        .all(|s| s.info.instance_handle == h(3) && s.data.as_ref().is_some_and(|d| d.id == 3)));
    let rest = r.take(usize::MAX).expect("take rest");
    assert_eq!(rest.len(), 4, "the other instances' samples remain");
    assert!(rest.iter().all(|s| s.info.instance_handle != h(3)));
    println!("instance states: {summary:#?}");
}

// ---------------------------------------------------------------------------------------------
// 5. KEEP_LAST reader depth
// ---------------------------------------------------------------------------------------------

#[test]
fn keep_last_2_reader_keeps_newest_two_per_instance() {
    const DOMAIN: u32 = 64;
    const TOPIC: &str = "KeepLast";
    let pub_dp = participant(DOMAIN);
    let sub_dp = participant(DOMAIN);
    let w: DataWriter<Keyed> = writer_on(
        &pub_dp,
        TOPIC,
        reliable_keep_all_writer_qos(Duration::from_secs(1)),
    );
    let r: DataReader<Keyed> = reader_on(&sub_dp, TOPIC, reliable_reader_qos(History::KeepLast(2)));
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("writer matched");
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("reader matched");
    for v in 0..10 {
        for id in [1, 2] {
            w.write(&Keyed { id, value: v }).expect("write");
        }
    }
    w.wait_for_acknowledgments(Duration::from_secs(5))
        .expect("acknowledged");
    let got: Vec<(u32, u32)> = r
        .take(usize::MAX)
        .expect("take")
        .into_iter()
        .filter_map(|s| s.data.map(|d| (d.id, d.value)))
        .collect();
    assert_eq!(
        got,
        vec![(1, 8), (2, 8), (1, 9), (2, 9)],
        "KEEP_LAST(2) keeps the newest 2 per instance, in arrival order"
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Liveliness through the participant lease
// ---------------------------------------------------------------------------------------------

/// Starts a child writer process of `role`, checks the local reader matched it (alive) and got
/// its sample, then that it stays matched and alive for `hold` while the child idles.
fn idle_child_writer_stays_alive(
    r: &DataReader<Keyed>,
    role: &str,
    domain: u32,
    topic: &str,
    hold: Duration,
) -> ChildProc {
    let child = ChildProc::spawn(role, domain, topic);
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("reader matched the child writer");
    let lv = r.liveliness_changed_status().unwrap();
    assert_eq!(
        (lv.alive_count, lv.not_alive_count),
        (1, 0),
        "matched writer is alive"
    );
    child.expect_line("READY", MATCH_TIMEOUT);
    let got = take_n(r, 1, Instant::now() + Duration::from_secs(2));
    assert_eq!(got.len(), 1, "the child writer's sample");

    // An idle but running writer process keeps its lease (it announces itself in time).
    let end = Instant::now() + hold;
    while Instant::now() < end {
        sleep(Duration::from_millis(20));
        let m = r.subscription_matched_status().unwrap();
        let lv = r.liveliness_changed_status().unwrap();
        assert_eq!(
            (
                m.current_count,
                m.total_count,
                lv.alive_count,
                lv.not_alive_count
            ),
            (1, 1, 1, 0),
            "a live, idle {role} process with a {LEASE:?} lease must stay matched and alive \
             (matched {m:?}, liveliness {lv:?}, {:?} after the hold began)",
            hold - end.saturating_duration_since(Instant::now())
        );
    }
    child
}

#[test]
fn killed_writer_process_is_detected_by_lease_expiry() {
    const DOMAIN: u32 = 65;
    const TOPIC: &str = "Lease";
    let dp = participant(DOMAIN);
    let r: DataReader<Keyed> = reader_on(&dp, TOPIC, reliable_reader_qos(History::KeepAll));
    let mut child = idle_child_writer_stays_alive(&r, "writer", DOMAIN, TOPIC, LEASE * 2);

    // The writer is reported not alive (LIVELINESS_CHANGED, seen by a listener), then
    // unmatched: after that it counts neither as alive nor as not alive.
    struct Seen(std::sync::Mutex<Vec<(u32, u32)>>);
    impl halyard::DataReaderListener for Seen {
        fn on_liveliness_changed(&self, s: halyard::LivelinessChangedStatus) {
            self.0
                .lock()
                .unwrap()
                .push((s.alive_count, s.not_alive_count));
        }
    }
    let seen = std::sync::Arc::new(Seen(Default::default()));
    r.set_listener(Some(seen.clone())).unwrap();
    child.kill_now();
    let killed = Instant::now();
    let limit = LEASE + Duration::from_secs(2);
    let detected = poll_until(limit, || {
        r.subscription_matched_status().unwrap().current_count == 0
            && seen.0.lock().unwrap().contains(&(0, 1))
    });
    let m = r.subscription_matched_status().unwrap();
    let lv = r.liveliness_changed_status().unwrap();
    assert!(
        detected.is_some(),
        "killed writer not detected within {limit:?}: matched {m:?}, liveliness {lv:?}, \
         listener saw {:?}",
        seen.0.lock().unwrap()
    );
    assert_eq!((lv.alive_count, lv.not_alive_count), (0, 0));
    println!(
        "killed writer (lease {LEASE:?}) detected after {:?}",
        killed.elapsed()
    );
}

#[test]
fn idle_writer_with_short_lease_and_default_spdp_interval_stays_alive() {
    const DOMAIN: u32 = 67;
    const TOPIC: &str = "LeaseIdle";
    let dp = participant(DOMAIN);
    let r: DataReader<Keyed> = reader_on(&dp, TOPIC, reliable_reader_qos(History::KeepAll));
    let _child = idle_child_writer_stays_alive(&r, "idle-writer", DOMAIN, TOPIC, LEASE * 10);
    println!(
        "idle writer with a {LEASE:?} lease stayed alive for {:?}",
        LEASE * 10
    );
}

/// kill -9 of a writer process, then a restarted one: the reader drops the dead writer after
/// its lease, matches the new process (a new participant) and receives its data, with no stale
/// state: one match, one discovered participant, the instance alive again as a new generation.
#[test]
fn killed_then_restarted_writer_process_matches_again_without_stale_state() {
    const DOMAIN: u32 = 68;
    const TOPIC: &str = "Restart";
    let dp = participant(DOMAIN);
    let r: DataReader<Keyed> = reader_on(&dp, TOPIC, reliable_reader_qos(History::KeepAll));
    let mut first = ChildProc::spawn("writer", DOMAIN, TOPIC);
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("first writer matched");
    first.expect_line("READY", MATCH_TIMEOUT);
    assert_eq!(
        take_n(&r, 1, Instant::now() + Duration::from_secs(2)).len(),
        1
    );
    first.kill_now();
    let gone = poll_until(LEASE + Duration::from_secs(2), || {
        r.subscription_matched_status().unwrap().current_count == 0
    });
    assert!(gone.is_some(), "killed writer not dropped within its lease");
    assert!(
        poll_until(Duration::from_secs(2), || dp
            .discovered_participants()
            .is_empty())
        .is_some(),
        "the dead participant is forgotten"
    );

    let second = ChildProc::spawn("writer", DOMAIN, TOPIC);
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("restarted writer matched");
    second.expect_line("READY", MATCH_TIMEOUT);
    let mut samples = Vec::new();
    let got = poll_until(Duration::from_secs(5), || {
        samples.extend(r.take(10).expect("take"));
        samples.iter().any(|s| s.info.valid_data)
    });
    assert!(got.is_some(), "the restarted writer's sample");
    let s = samples
        .iter()
        .find(|s| s.info.valid_data)
        .expect("a valid sample");
    assert_eq!(s.data.as_ref().map(|d| d.value), Some(42));
    assert_eq!(s.info.instance_state, halyard::InstanceState::Alive);
    assert_eq!(
        s.info.view_state,
        halyard::ViewState::New,
        "a new generation of the instance"
    );
    let m = r.subscription_matched_status().unwrap();
    assert_eq!(
        (m.current_count, m.total_count),
        (1, 2),
        "exactly the live writer is matched"
    );
    assert_eq!(
        dp.discovered_participants().len(),
        1,
        "no stale participant"
    );
}

/// kill -9 of a reader process while a reliable KEEP_ALL writer has unacknowledged data: the
/// writer drops the dead reader after its lease (acknowledgments no longer wait for it), and a
/// restarted reader process matches and receives new samples.
#[test]
fn killed_then_restarted_reader_process_releases_and_rematches_the_writer() {
    const DOMAIN: u32 = 69;
    const TOPIC: &str = "RestartReader";
    let dp = short_lease_participant(DOMAIN, true);
    let w: DataWriter<Keyed> = writer_on(
        &dp,
        TOPIC,
        reliable_keep_all_writer_qos(Duration::from_secs(1)),
    );
    let mut first = ChildProc::spawn("short-reader", DOMAIN, TOPIC);
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("first reader matched");
    first.expect_line("READY", MATCH_TIMEOUT);
    w.write(&Keyed { id: 1, value: 1 }).expect("write 1");
    first.expect_line("GOT 1", MATCH_TIMEOUT);
    first.signal("STOP");
    first.wait_stopped(MATCH_TIMEOUT);
    w.write(&Keyed { id: 1, value: 2 })
        .expect("write 2 (unacknowledged)");
    assert!(
        w.wait_for_acknowledgments(Duration::from_millis(300))
            .is_err(),
        "stopped reader cannot ack"
    );
    first.kill_now();
    let dropped = poll_until(LEASE + Duration::from_secs(2), || {
        w.publication_matched_status().unwrap().current_count == 0
    });
    assert!(
        dropped.is_some(),
        "killed reader not dropped within its lease"
    );
    w.wait_for_acknowledgments(Duration::from_secs(1))
        .expect("nothing left to wait for");

    let second = ChildProc::spawn("short-reader", DOMAIN, TOPIC);
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("restarted reader matched");
    second.expect_line("READY", MATCH_TIMEOUT);
    w.write(&Keyed { id: 1, value: 3 }).expect("write 3");
    second.expect_line("GOT 3", MATCH_TIMEOUT);
    let m = w.publication_matched_status().unwrap();
    assert_eq!((m.current_count, m.total_count), (1, 2));
}

// ---------------------------------------------------------------------------------------------
// 7. Malformed input
// ---------------------------------------------------------------------------------------------

fn rtps_header(prefix: [u8; 12]) -> Vec<u8> {
    let mut m = b"RTPS".to_vec();
    m.extend_from_slice(&[2, 5, 0x01, 0x99]);
    m.extend_from_slice(&prefix);
    m
}

#[test]
fn malformed_datagrams_are_counted_not_fatal() {
    const DOMAIN: u32 = 66;
    const TOPIC: &str = "Malformed";
    let pub_dp = participant(DOMAIN);
    let sub_dp = participant(DOMAIN);
    let (_, port) = sub_dp
        .unicast_locator()
        .as_udpv4()
        .expect("UDPv4 unicast locator");
    let target = std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, port);
    let before = sub_dp.stats();

    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let prefix = [0xEE, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    let mut bad_messages: Vec<Vec<u8>> = vec![
        vec![],                               // empty datagram
        b"garbage, not RTPS at all".to_vec(), // bad magic
        b"RTPS\x02\x05".to_vec(),             // truncated header
        {
            let mut m = rtps_header(prefix);
            m[4] = 9; // unsupported major version
            m
        },
    ];
    let mut x: u64 = 0x1234_5678_9ABC_DEF1;
    for len in [1usize, 19, 100, 1400] {
        bad_messages.push(
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect(),
        );
    }
    let n_bad_messages = bad_messages.len() as u64;
    let mut bad_submessages: Vec<Vec<u8>> = Vec::new();
    {
        // DATA claiming 256 bytes with 8 present.
        let mut m = rtps_header(prefix);
        m.extend_from_slice(&[0x15, 0x01, 0x00, 0x01]);
        m.extend_from_slice(&[0; 8]);
        bad_submessages.push(m);
        // A submessage header cut after 3 bytes.
        let mut m = rtps_header(prefix);
        m.extend_from_slice(&[0x15, 0x01, 0x00]);
        bad_submessages.push(m);
        // HEARTBEAT whose body is too short for its fields.
        let mut m = rtps_header(prefix);
        m.extend_from_slice(&[0x07, 0x01, 0x04, 0x00, 1, 2, 3, 4]);
        bad_submessages.push(m);
        // DATA with a body too short for its fixed part.
        let mut m = rtps_header(prefix);
        m.extend_from_slice(&[0x15, 0x05, 0x04, 0x00, 0, 0, 0, 0]);
        bad_submessages.push(m);
    }
    let n_bad_submessages = bad_submessages.len() as u64;
    for m in bad_messages.iter().chain(&bad_submessages) {
        sock.send_to(m, target).expect("send");
    }
    let sent = n_bad_messages + n_bad_submessages;
    let counted = poll_until(Duration::from_secs(3), || {
        sub_dp.stats().datagrams >= before.datagrams + sent
            && sub_dp.stats().malformed_messages >= before.malformed_messages + n_bad_messages
            && sub_dp.stats().malformed_submessages
                >= before.malformed_submessages + n_bad_submessages
    });
    let after = sub_dp.stats();
    assert!(
        counted.is_some(),
        "malformed input not counted: sent {n_bad_messages} bad messages and \
         {n_bad_submessages} bad submessages; before {before:?}, after {after:?}"
    );

    // Still delivers.
    let w: DataWriter<Keyed> = writer_on(
        &pub_dp,
        TOPIC,
        reliable_keep_all_writer_qos(Duration::from_secs(1)),
    );
    let r: DataReader<Keyed> = reader_on(&sub_dp, TOPIC, reliable_reader_qos(History::KeepAll));
    w.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("writer matched after malformed input");
    r.wait_for_matched(1, MATCH_TIMEOUT)
        .expect("reader matched after malformed input");
    for v in 0..10 {
        w.write(&Keyed { id: 1, value: v }).expect("write");
    }
    let got = take_n(&r, 10, Instant::now() + Duration::from_secs(5));
    assert_eq!(
        got.iter().map(|k| k.value).collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>(),
        "delivery after malformed input"
    );
    println!(
        "malformed: messages {} -> {}, submessages {} -> {}; delivery intact",
        before.malformed_messages,
        after.malformed_messages,
        before.malformed_submessages,
        after.malformed_submessages
    );
}
