//! Proves Halyard's DDS Security interoperates with Cyclone DDS's builtin plugins through the
//! `cyclonedds` Python binding on loopback: reliable data both ways at each protection level
//! Halyard supports, none lost; outsiders (unsecured, or with an identity from another CA)
//! get no data and no discovery of the protected topic; denied topics and partitions never
//! match; expired and not-yet-valid certificates and permissions are refused on both sides.
//!
//! The binding must be built against Debian's Cyclone DDS 0.10 (`libddsc0debian`, which has
//! the security plugins): the `cyclonedds` wheel on PyPI bundles a Cyclone 11 built without
//! DDS Security ("//CycloneDDS/Domain: Security: unknown element"). `scripts/install-deps.sh`
//! builds one into a virtual environment; `HALYARD_SECURE_PYTHON` names its interpreter.
#![cfg(feature = "security")]
// A test driver, not the protocol core: it reads the clock for deadlines and certificate dates.
#![allow(clippy::disallowed_methods)]

use halyard::qos::{Durability, History, ReliabilityKind};
use halyard::{
    DataReader, DataReaderQos, DataWriter, DataWriterQos, DomainParticipant, ParticipantOptions,
    PublisherQos, SubscriberQos, Topic,
};
use halyard_security::access::ProtectionKind;
use halyard_security::random::OsRandom;
use halyard_security::setup::{self, files, AllowSpec, InitOptions, KeyKind, Protection, Validity};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant};

const LO: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

/// Where `scripts/install-deps.sh` puts the Python with a security-capable `cyclonedds`.
const DEFAULT_SECURE_PYTHON: &str = "/opt/halyard-cyclone010/bin/python3";

/// The `halyard security init --protect` levels tested, as the command line names them
/// (`none`: authentication and access control only; `rtps-*`: and every RTPS message signed
/// or encrypted; `sign` and `encrypt`: and discovery, liveliness, metadata and data protected).
/// The negative tests run at the last.
const LEVELS: &[&str] = &["none", "rtps-sign", "rtps-encrypt", "sign", "encrypt"];

/// Samples per direction in the lossless tests.
const N: u32 = 200;

/// `HalyardKeyed` of tests/peers/peer_common.py, matched by type name (no type description
/// announced): its payload is `sequence<uint8>`, and the Cyclone 0.10 core of this Python
/// binding (Debian's, built with security) cannot parse XTypes' uint8 kind in a peer's
/// TypeObject (it logs "invalid type object" and crashes: docs/known-issues.md). Type
/// matching against Cyclone is proven by `interop_cyclone_py` and `announced_types`; this
/// file proves security.
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardKeyed", type_description = false)]
struct Keyed {
    #[key]
    id: i32,
    seq: u32,
    payload: Vec<u8>,
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// The Python interpreter whose `cyclonedds` can load Cyclone's security plugins; `None`
/// (the test returns early) when there is none outside CI; a panic when there is none in CI.
fn secure_python() -> Option<PathBuf> {
    let py = std::env::var_os("HALYARD_SECURE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SECURE_PYTHON));
    let ok = Command::new(&py)
        .args(["-c", "import cyclonedds.domain"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(py);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} has no `cyclonedds` built against Debian's Cyclone DDS 0.10 but CI is set; \
             run scripts/install-deps.sh or set HALYARD_SECURE_PYTHON",
            py.display()
        );
    }
    eprintln!(
        "SKIP: no Python with a security-capable `cyclonedds` at {} (scripts/install-deps.sh \
         builds one; HALYARD_SECURE_PYTHON names another)",
        py.display()
    );
    None
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-secpy-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `halyard security init DIR --participant NAMES --protect LEVEL [--allow ...]`, through the
/// library the command uses.
fn init(dir: &Path, level: &str, names: &[&str], allows: &[&str]) {
    let (protection, rtps) = match level {
        "none" | "rtps-sign" | "rtps-encrypt" => {
            let none = Protection {
                encrypt: false,
                origin_auth: false,
                none: true,
            };
            let rtps = match level {
                "rtps-sign" => Some(ProtectionKind::Sign),
                "rtps-encrypt" => Some(ProtectionKind::Encrypt),
                _ => None,
            };
            (none, rtps)
        }
        "sign" | "encrypt" => {
            let p = Protection {
                encrypt: level == "encrypt",
                origin_auth: false,
                none: false,
            };
            (p, None)
        }
        other => panic!("unknown level {other}"),
    };
    let allows = (!allows.is_empty()).then(|| {
        allows
            .iter()
            .map(|a| AllowSpec::parse(a).expect("allow spec"))
            .collect()
    });
    let opts = InitOptions {
        participants: names.iter().map(|s| s.to_string()).collect(),
        protection,
        key: KeyKind::EcP256,
        days: 30,
        domains: Vec::new(),
        allows,
        force: true,
        now: now_unix(),
    };
    setup::init(dir, &opts, &mut OsRandom).expect("security init");
    if let Some(kind) = rtps {
        setup::set_rtps_protection(dir, kind).expect("set rtps protection");
    }
}

fn participant(domain: u32, identity: Option<&Path>) -> halyard::Result<DomainParticipant> {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            security: identity.map(Path::to_path_buf),
            ..Default::default()
        },
    )
}

/// Reliable, KEEP_ALL; TRANSIENT_LOCAL when `durable`.
macro_rules! reliable_qos {
    ($q:expr, $durable:expr) => {{
        let mut q = $q;
        q.reliability.kind = ReliabilityKind::Reliable;
        q.reliability.max_blocking_time = secs(10.0);
        q.history = History::KeepAll;
        if $durable {
            q.durability = Durability::TransientLocal;
        }
        q
    }};
}

fn writer(
    dp: &DomainParticipant,
    topic: &str,
    partition: &[&str],
    durable: bool,
) -> halyard::Result<DataWriter<Keyed>> {
    let t: Topic<Keyed> = dp.create_topic(topic)?;
    dp.create_publisher(PublisherQos::default().partition(partition.iter().copied()))
        .create_datawriter(&t, reliable_qos!(DataWriterQos::default(), durable))
}

fn reader(
    dp: &DomainParticipant,
    topic: &str,
    partition: &[&str],
) -> halyard::Result<DataReader<Keyed>> {
    let t: Topic<Keyed> = dp.create_topic(topic)?;
    dp.create_subscriber(SubscriberQos::default().partition(partition.iter().copied()))
        .create_datareader(&t, reliable_qos!(DataReaderQos::default(), false))
}

fn sample(i: u32) -> Keyed {
    Keyed {
        id: (i % 4) as i32,
        seq: i,
        payload: vec![(i & 0xff) as u8; 16],
    }
}

/// Takes samples until `n` arrived or `timeout` passed; returns their seqs.
fn take_seqs(rd: &DataReader<Keyed>, n: usize, timeout: Duration) -> Vec<u32> {
    let end = Instant::now() + timeout;
    let mut got = Vec::new();
    while got.len() < n && Instant::now() < end {
        rd.wait_for_data(Duration::from_millis(100));
        got.extend(
            rd.take(1000)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data.map(|d| d.seq)),
        );
    }
    got
}

/// A running Python peer (`tests/peers/*.py`) whose stdout lines are collected as they arrive.
struct Peer {
    what: String,
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    out_thread: Option<std::thread::JoinHandle<()>>,
    err_thread: Option<std::thread::JoinHandle<String>>,
    done: bool,
}

struct PeerOutput {
    ok: bool,
    report: String,
    lines: Vec<String>,
}

impl Peer {
    /// `python script args` as `identity` (`DIR/NAME`; `None`: unsecured).
    fn spawn(py: &Path, script: &str, identity: Option<&Path>, args: &[&str]) -> Peer {
        let path = format!("{}/../../tests/peers/{script}", env!("CARGO_MANIFEST_DIR"));
        let security = identity.map_or(String::new(), |id| {
            setup::cyclone_config(id).expect("cyclone-config")
        });
        let who = identity.map_or("unsecured".into(), |p| p.display().to_string());
        // HALYARD_CYCLONE_TRACE=DIR: each peer writes Cyclone's finest trace into DIR.
        let trace = std::env::var("HALYARD_CYCLONE_TRACE").map_or(String::new(), |d| {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!(
                "<Tracing><Verbosity>finest</Verbosity><OutputFile>{d}/{script}-{}-{n}.log</OutputFile></Tracing>",
                std::process::id()
            )
        });
        let what = format!("{script} {} ({who})", args.join(" "));
        let mut child = Command::new(py)
            .arg("-u")
            .arg(&path)
            .args(args)
            .env("CYCLONEDDS_URI", format!("{LO}{trace}{security}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let l2 = lines.clone();
        let out_thread = std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                l2.lock().unwrap().push(line);
            }
        });
        let err_thread = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Peer {
            what,
            child,
            lines,
            out_thread: Some(out_thread),
            err_thread: Some(err_thread),
            done: false,
        }
    }

    /// Waits until a stdout line contains `needle`.
    fn wait_line(&self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if self
                .lines
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.contains(needle))
            {
                return true;
            }
            sleep(Duration::from_millis(20));
        }
        false
    }

    /// Waits for exit (kills after `timeout`).
    fn finish(mut self, timeout: Duration) -> PeerOutput {
        let end = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break (st.success(), st.to_string()),
                Ok(None) if Instant::now() >= end => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break (false, "KILLED after deadline".to_string());
                }
                Ok(None) => sleep(Duration::from_millis(20)),
                Err(e) => break (false, format!("wait error: {e}")),
            }
        };
        self.done = true;
        if let Some(t) = self.out_thread.take() {
            let _ = t.join();
        }
        let stderr = self
            .err_thread
            .take()
            .map(|t| t.join().unwrap_or_default())
            .unwrap_or_default();
        let lines = self.lines.lock().unwrap().clone();
        PeerOutput {
            ok: status.0,
            report: format!(
                "=== `{}` exited: {}\n--- stdout ---\n{}\n--- stderr ---\n{stderr}",
                self.what,
                status.1,
                lines.join("\n")
            ),
            lines,
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl PeerOutput {
    /// The seqs of the sample lines `{"seq": ..}`.
    fn seqs(&self) -> Vec<i64> {
        self.lines
            .iter()
            .filter_map(|l| json_int(l, "seq"))
            .collect()
    }
    fn field(&self, key: &str) -> Option<i64> {
        self.lines.iter().rev().find_map(|l| json_int(l, key))
    }
    fn check(&self, cond: bool, msg: &str) {
        if !cond {
            self.fail(msg);
        }
    }
    fn fail(&self, msg: &str) -> ! {
        panic!("{msg}\n{}", self.report);
    }
}

/// Integer value of `"key": N` in a flat JSON line.
fn json_int(line: &str, key: &str) -> Option<i64> {
    let pat = format!("\"{key}\":");
    let rest = line[line.find(&pat)? + pat.len()..].trim_start();
    let end = rest
        .find(|c: char| !(c == '-' || c.is_ascii_digit()))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Arguments of `cyclone_sub.py` / `cyclone_pub.py` on `topic` (keyed, reliable).
fn py_args(domain: u32, topic: &str, count: u32, timeout_s: u32, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--domain",
        &domain.to_string(),
        "--topic",
        topic,
        "--type",
        "keyed",
        "--reliable",
        "--count",
        &count.to_string(),
        "--timeout",
        &timeout_s.to_string(),
        "--wait-match",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Writes `N` samples once the Python reader reports it matched, then waits for their
/// acknowledgement; returns the reader's output.
fn halyard_writes_to(wr: &DataWriter<Keyed>, sub: Peer, context: &str) -> PeerOutput {
    halyard_writes_n(wr, sub, N, context)
}

/// [`halyard_writes_to`] with `n` samples.
fn halyard_writes_n(wr: &DataWriter<Keyed>, sub: Peer, n: u32, context: &str) -> PeerOutput {
    let matched = wr.wait_for_matched(1, secs(20.0)).is_ok();
    if !matched || !sub.wait_line("reader_matched", secs(20.0)) {
        let o = sub.finish(secs(1.0));
        o.fail(&format!(
            "{context}: the Halyard writer and the Cyclone reader never matched"
        ));
    }
    for i in 0..n {
        wr.write(&sample(i)).unwrap();
    }
    let acked = wr.wait_for_acknowledgments(secs(20.0));
    let o = sub.finish(secs(20.0));
    o.check(
        acked.is_ok(),
        &format!("{context}: not every sample was acknowledged"),
    );
    o
}

/// All of `0..N` exactly once.
fn check_all(seqs: &[i64], o: &PeerOutput, context: &str) {
    let mut s = seqs.to_vec();
    s.sort_unstable();
    let want: Vec<i64> = (0..i64::from(N)).collect();
    o.check(
        s == want,
        &format!(
            "{context}: expected every seq 0..{N} once, got {} samples: {s:?}",
            seqs.len()
        ),
    );
}

/// Halyard (`identity`) writes `N` samples on `topic` to a Cyclone reader (`reader_identity`),
/// TRANSIENT_LOCAL when `durable`; asserts every one arrived.
fn halyard_to_cyclone(
    py: &Path,
    domain: u32,
    identity: &Path,
    reader_identity: &Path,
    durable: bool,
    context: &str,
) {
    let dp = participant(domain, Some(identity)).expect("secured participant");
    let wr = writer(&dp, "SecureInterop", &[], durable).unwrap();
    let tl: &[&str] = if durable { &["--transient-local"] } else { &[] };
    let args = py_args(domain, "SecureInterop", N, 40, tl);
    let sub = Peer::spawn(py, "cyclone_sub.py", Some(reader_identity), &strs(&args));
    let o = halyard_writes_to(&wr, sub, context);
    o.check(o.ok, &format!("{context}: the Cyclone reader failed"));
    check_all(&o.seqs(), &o, context);
}

/// A secured Halyard writer and a secured Cyclone reader, then a secured Cyclone writer and a
/// secured Halyard reader, exchange `N` reliable samples at each level: every one arrives.
/// Halyard -> Cyclone runs TRANSIENT_LOCAL: with VOLATILE endpoints a burst written right
/// after matching loses its first samples (see `reproducer_volatile_burst_right_after_secure_match`).
#[test]
fn secure_reliable_data_both_ways_at_each_level() {
    let Some(py) = secure_python() else { return };
    for (i, level) in LEVELS.iter().enumerate() {
        let dir = temp_dir(&format!("both-{level}"));
        init(&dir, level, &["alice", "bob"], &[]);
        let domain = 10 + (std::process::id() % 8) * 5 + i as u32;
        let (alice, bob) = (dir.join("alice"), dir.join("bob"));
        halyard_to_cyclone(
            &py,
            domain,
            &alice,
            &bob,
            true,
            &format!("{level}: Halyard -> Cyclone"),
        );

        // Cyclone writes, Halyard reads (VOLATILE).
        let dp = participant(domain, Some(&bob)).expect("secured participant");
        let rd = reader(&dp, "SecureInterop", &[]).unwrap();
        let args = py_args(domain, "SecureInterop", N, 40, &[]);
        let pubr = Peer::spawn(&py, "cyclone_pub.py", Some(&alice), &strs(&args));
        let got = take_seqs(&rd, N as usize, secs(40.0));
        let o = pubr.finish(secs(20.0));
        let context = format!("{level}: Cyclone -> Halyard");
        o.check(
            o.ok && o.field("written") == Some(i64::from(N)),
            &format!("{context}: the Cyclone writer failed"),
        );
        let got: Vec<i64> = got.into_iter().map(i64::from).collect();
        check_all(&got, &o, &context);
        println!("{level}: {N} samples each way, none lost");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A secured Halyard writer writes a VOLATILE burst as soon as a secured Cyclone reader has
/// matched: every sample arrives. It lost the first ones about one run in two (rtps-sign,
/// rtps-encrypt): Halyard sent them before Cyclone had Halyard's crypto tokens, Cyclone could not
/// decode them, and its reader then started at the first HEARTBEAT it could decode and
/// acknowledged everything below. A volatile reliable reader now gets no DATA before an ACKNACK
/// shows it heard where its stream starts, which Cyclone sends only once it can decode.
#[test]
fn volatile_burst_right_after_secure_match_is_lossless() {
    let Some(py) = secure_python() else { return };
    for run in 0..4 {
        let level = ["rtps-encrypt", "encrypt"][run as usize % 2];
        let dir = temp_dir(&format!("volatile-{run}"));
        init(&dir, level, &["alice", "bob"], &[]);
        let domain = 60 + (std::process::id() % 8) * 4 + run;
        let context = format!("{level} run {run}: Halyard -> Cyclone, VOLATILE");
        halyard_to_cyclone(
            &py,
            domain,
            &dir.join("alice"),
            &dir.join("bob"),
            false,
            &context,
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Whether the `--discovery` report of a Cyclone reader lists `topic`.
fn discovered(o: &PeerOutput, topic: &str) -> bool {
    let line = o
        .lines
        .iter()
        .find(|l| l.contains("discovered_publication_topics"));
    let line = line.unwrap_or_else(|| o.fail("no discovery report"));
    line.contains(&format!("\"{topic}\""))
}

/// Asserts a Halyard participant outside the secure domain got nothing: its reader took no
/// sample and, when `undiscovered`, matched no writer and learnt of no writer of `topic`.
fn assert_outsider(
    who: &str,
    dp: &DomainParticipant,
    rd: &DataReader<Keyed>,
    topic: &str,
    undiscovered: bool,
) {
    let took = take_seqs(rd, 1, secs(0.2));
    let m = rd.subscription_matched_status().unwrap();
    let pubs = dp.discovered_publications();
    let seen: Vec<_> = pubs.iter().filter(|p| p.topic_name == topic).collect();
    assert!(
        took.is_empty() && (!undiscovered || (m.total_count == 0 && seen.is_empty())),
        "{who}: took {} samples, matched {} writers, discovered writers of {topic}: {seen:?}",
        took.len(),
        m.total_count
    );
}

/// Whether the level protects discovery (`sign`, `encrypt`). At the rtps-only levels the
/// governance leaves discovery unprotected and Cyclone DDS 0.10 sends its SEDP by multicast
/// in clear (observed: a 296-byte plain DATA(w) to 239.255.0.1 with rtps protection
/// ENCRYPT), so an unsecured participant learns of a Cyclone writer (never of its data).
fn protects_discovery(level: &str) -> bool {
    matches!(level, "sign" | "encrypt")
}

/// Outsiders to a secure domain, unsecured or with an identity from another set-up (another
/// identity CA), get no data and do not discover the protected topic, while a member does,
/// both with a Halyard writer and Cyclone outsiders and with a Cyclone writer and Halyard
/// outsiders (except that an unsecured participant learns of a Cyclone writer where
/// discovery is not protected: see [`protects_discovery`]).
#[test]
fn outsiders_get_no_data_and_no_discovery() {
    let Some(py) = secure_python() else { return };
    let level = LEVELS[LEVELS.len() - 1];
    let (dir, other) = (temp_dir("outsiders"), temp_dir("outsiders-other"));
    init(&dir, level, &["alice", "bob"], &[]);
    init(&other, level, &["eve"], &[]);
    let (alice, bob, eve) = (dir.join("alice"), dir.join("bob"), other.join("eve"));
    let domain = 100 + std::process::id() % 20;
    let topic = "Protected";

    // A Halyard writer; a member and two outsiders read with Cyclone.
    let args = py_args(domain, topic, N, 12, &["--discovery"]);
    let outsiders =
        [None, Some(eve.as_path())].map(|id| Peer::spawn(&py, "cyclone_sub.py", id, &strs(&args)));
    let dp = participant(domain, Some(&alice)).expect("secured participant");
    let wr = writer(&dp, topic, &[], true).unwrap();
    let member_args = py_args(domain, topic, N, 40, &["--transient-local", "--discovery"]);
    let member = Peer::spawn(&py, "cyclone_sub.py", Some(&bob), &strs(&member_args));
    let o = halyard_writes_to(&wr, member, &format!("{level}: member"));
    check_all(&o.seqs(), &o, "the member's Cyclone reader");
    o.check(
        discovered(&o, topic),
        "the member did not discover the writer",
    );
    for p in outsiders {
        let o = p.finish(secs(30.0));
        o.check(o.ok, "an outsider's Cyclone reader failed");
        o.check(
            o.seqs().is_empty() && o.field("received") == Some(0) && o.field("matched") == Some(0),
            "an outsider's Cyclone reader matched or received data",
        );
        o.check(
            !discovered(&o, topic),
            "an outsider discovered the protected writer",
        );
    }
    drop((wr, dp));

    // A Cyclone writer; a member and two outsiders read with Halyard.
    let member = participant(domain, Some(&bob)).expect("secured participant");
    let member_rd = reader(&member, topic, &[]).unwrap();
    let plain = participant(domain, None).unwrap();
    let plain_rd = reader(&plain, topic, &[]).unwrap();
    let stranger = participant(domain, Some(&eve)).expect("participant of the other set-up");
    let stranger_rd = reader(&stranger, topic, &[]).unwrap();
    // The writer stays 5 s after writing: discovery is checked while it exists.
    let args = py_args(domain, topic, N, 40, &["--linger", "5"]);
    let pubr = Peer::spawn(&py, "cyclone_pub.py", Some(&alice), &strs(&args));
    let got = take_seqs(&member_rd, N as usize, secs(40.0));
    let seen = member
        .discovered_publications()
        .iter()
        .any(|p| p.topic_name == topic);
    let undiscovered = protects_discovery(level);
    assert_outsider(
        "the unsecured Halyard participant",
        &plain,
        &plain_rd,
        topic,
        undiscovered,
    );
    assert_outsider(
        "the Halyard participant of another CA",
        &stranger,
        &stranger_rd,
        topic,
        true,
    );
    let o = pubr.finish(secs(20.0));
    let got: Vec<i64> = got.into_iter().map(i64::from).collect();
    check_all(&got, &o, "the member's Halyard reader");
    o.check(seen, "the member did not discover the writer");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

/// The samples a control pair on a permitted topic or partition exchanges in the negative tests.
const FEW: u32 = 20;

/// Asserts a Cyclone peer was refused an endpoint by its own access control: it failed, saying
/// "not allowed by security", and delivered nothing.
fn assert_refused_by_cyclone(o: &PeerOutput, what: &str) {
    o.check(
        !o.ok && o.report.contains("NOT_ALLOWED_BY_SECURITY") && o.seqs().is_empty(),
        &format!("{what}: Cyclone should refuse to create the endpoint"),
    );
}

/// A topic and a partition the permissions deny never match, with a Halyard writer and a
/// Cyclone reader and with a Cyclone writer and a Halyard reader, while the same pair
/// exchanges data on the topic and partition they are granted. alice may publish everything,
/// bob may subscribe `Granted` (any partition) and `Parted` in partition `ok` only. Each
/// side refuses to create the endpoint its own permissions deny (Cyclone with
/// DDS_RETCODE_NOT_ALLOWED_BY_SECURITY, Halyard with `Error::NotAllowedBySecurity`), so the
/// other side's writer or reader on that topic or partition never matches anything. (Both
/// real products check locally first, so their check of a remote endpoint's permissions is
/// only reached by a peer that skips its own check: that is covered in memory, in
/// `tests/security.rs`.)
#[test]
fn denied_topic_and_partition_never_match() {
    let Some(py) = secure_python() else { return };
    let level = LEVELS[LEVELS.len() - 1];
    let dir = temp_dir("denied");
    let allows = ["alice:pub:*", "bob:sub:Granted", "bob:sub:Parted@ok"];
    init(&dir, level, &["alice", "bob"], &allows);
    let (alice, bob) = (dir.join("alice"), dir.join("bob"));
    let domain = 120 + std::process::id() % 20;

    // Halyard writes (alice), Cyclone reads (bob).
    let dp = participant(domain, Some(&alice)).expect("secured participant");
    let granted = writer(&dp, "Granted", &[], true).unwrap();
    let parted_ok = writer(&dp, "Parted", &["ok"], true).unwrap();
    let closed = writer(&dp, "Closed", &[], true).unwrap();
    let parted_no = writer(&dp, "Parted", &["no"], true).unwrap();
    let tl = ["--transient-local"];
    let denied: Vec<Peer> = [("Closed", None), ("Parted", Some("no"))]
        .iter()
        .map(|(topic, part)| {
            let mut extra = tl.to_vec();
            extra.extend(part.iter().flat_map(|p| ["--partition", *p]));
            let args = py_args(domain, topic, FEW, 10, &extra);
            Peer::spawn(&py, "cyclone_sub.py", Some(&bob), &strs(&args))
        })
        .collect();
    let args = py_args(domain, "Granted", FEW, 40, &tl);
    let sub = Peer::spawn(&py, "cyclone_sub.py", Some(&bob), &strs(&args));
    let o = halyard_writes_n(&granted, sub, FEW, "granted topic, Halyard -> Cyclone");
    o.check(
        o.seqs().len() == FEW as usize,
        "granted topic: samples missing",
    );
    let args = py_args(
        domain,
        "Parted",
        FEW,
        40,
        &["--transient-local", "--partition", "ok"],
    );
    let sub = Peer::spawn(&py, "cyclone_sub.py", Some(&bob), &strs(&args));
    let o = halyard_writes_n(
        &parted_ok,
        sub,
        FEW,
        "granted partition, Halyard -> Cyclone",
    );
    o.check(
        o.seqs().len() == FEW as usize,
        "granted partition: samples missing",
    );
    for (p, what) in denied.into_iter().zip(["denied topic", "denied partition"]) {
        assert_refused_by_cyclone(&p.finish(secs(20.0)), &format!("{what}, Cyclone reader"));
    }
    for (w, what) in [(&closed, "denied topic"), (&parted_no, "denied partition")] {
        let m = w.publication_matched_status().unwrap();
        assert_eq!(
            m.total_count, 0,
            "{what}: the Halyard writer matched a reader"
        );
    }
    drop((granted, parted_ok, closed, parted_no, dp));

    // Cyclone writes (alice), Halyard reads (bob).
    let dp = participant(domain, Some(&bob)).expect("secured participant");
    for (topic, part) in [("Closed", &[][..]), ("Parted", &["no"][..])] {
        match reader(&dp, topic, part) {
            Err(halyard::Error::NotAllowedBySecurity(_)) => {}
            Err(e) => panic!("{topic} {part:?}: expected NotAllowedBySecurity, got {e}"),
            Ok(_) => panic!("{topic} {part:?}: Halyard created a reader its permissions deny"),
        }
    }
    let granted = reader(&dp, "Granted", &[]).unwrap();
    let parted_ok = reader(&dp, "Parted", &["ok"]).unwrap();
    let spawn_pub = |topic: &str, part: Option<&str>, timeout_s: u32| {
        let extra: Vec<&str> = part.iter().flat_map(|p| ["--partition", *p]).collect();
        let args = py_args(domain, topic, FEW, timeout_s, &extra);
        Peer::spawn(&py, "cyclone_pub.py", Some(&alice), &strs(&args))
    };
    let unmatched = [
        spawn_pub("Closed", None, 8),
        spawn_pub("Parted", Some("no"), 8),
    ];
    let controls = [
        spawn_pub("Granted", None, 40),
        spawn_pub("Parted", Some("ok"), 40),
    ];
    for (rd, what) in [
        (&granted, "granted topic"),
        (&parted_ok, "granted partition"),
    ] {
        let got = take_seqs(rd, FEW as usize, secs(40.0));
        assert_eq!(
            got.len(),
            FEW as usize,
            "{what}, Cyclone -> Halyard: samples missing"
        );
    }
    for p in controls {
        let o = p.finish(secs(20.0));
        o.check(o.ok, "a Cyclone writer on a granted topic failed");
    }
    for (p, what) in unmatched
        .into_iter()
        .zip(["denied topic", "denied partition"])
    {
        let o = p.finish(secs(20.0));
        o.check(
            o.ok && o.field("written") == Some(0) && o.field("matched") == Some(0),
            &format!("{what}: the Cyclone writer matched a Halyard reader"),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A day, in seconds.
const DAY: i64 = 86400;

/// Adds `name` to the set-up in `dir` with an identity certificate (`cert`) or permissions
/// grant (`!cert`) valid only over `[not_before, not_after]`; the other part valid.
fn add_with_validity(dir: &Path, name: &str, cert: bool, not_before: i64, not_after: i64) {
    let opts = InitOptions {
        participants: vec![name.to_string()],
        protection: Protection {
            encrypt: false,
            origin_auth: false,
            none: true,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: Vec::new(),
        allows: None,
        force: true,
        now: now_unix(),
    };
    setup::add(dir, &opts, &mut OsRandom).expect("security add");
    let pdir = dir.join(name);
    let validity = Validity {
        not_before,
        not_after,
    };
    if cert {
        let ca = setup::read_ca(dir, files::IDENTITY_CA, files::IDENTITY_CA_KEY).unwrap();
        let key = setup::new_key(KeyKind::EcP256).unwrap();
        let c = setup::issue_identity(&ca, name, &key, validity, &mut OsRandom).unwrap();
        setup::write_file(&pdir.join(files::IDENTITY), &c.to_pem().unwrap()).unwrap();
        let pem = key.private_key_to_pem_pkcs8().unwrap();
        setup::write_secret(&pdir.join(files::IDENTITY_KEY), &pem).unwrap();
    } else {
        let subject = setup::subject_string(name);
        let xml = setup::permissions_xml(name, &subject, not_before, not_after, &[], None);
        setup::write_file(&pdir.join(files::PERMISSIONS_XML), xml.as_bytes()).unwrap();
        setup::resign(dir, Some(name)).unwrap();
    }
}

/// Identities whose certificate or permissions grant has expired or is not yet valid are
/// refused on both sides at start: a Halyard participant will not start with one (saying
/// why), nor will a Cyclone participant (saying why), and a Halyard member never matches
/// those Cyclone processes. That a peer refuses such an identity presented by a remote
/// participant is shown by `identities_that_expire_while_running_are_refused_by_new_peers`.
#[test]
fn expired_and_not_yet_valid_identities_and_permissions_are_refused() {
    let Some(py) = secure_python() else { return };
    let level = LEVELS[LEVELS.len() - 1];
    let dir = temp_dir("validity");
    init(&dir, level, &["alice", "bob"], &[]);
    let now = now_unix();
    let bad = [
        ("cert-expired", true, now - 10 * DAY, now - DAY),
        ("cert-future", true, now + DAY, now + 10 * DAY),
        ("perm-expired", false, now - 10 * DAY, now - DAY),
        ("perm-future", false, now + DAY, now + 10 * DAY),
    ];
    for (name, cert, nb, na) in bad {
        add_with_validity(&dir, name, cert, nb, na);
    }
    let domain = 140 + std::process::id() % 20;
    let topic = "Validity";

    // Halyard will not start with a bad identity.
    for (name, cert, ..) in bad {
        let why = match participant(domain, Some(&dir.join(name))) {
            Err(halyard::Error::Security(why)) => why.to_string(),
            Err(e) => panic!("{name}: expected a Security error, got {e}"),
            Ok(_) => panic!("{name}: Halyard started with a bad identity"),
        };
        let expect = match (cert, name.ends_with("expired")) {
            (true, true) => "expired",
            (true, false) => "is not yet valid",
            (false, true) => "grant expired",
            (false, false) => "grant not yet valid",
        };
        assert!(why.contains(expect), "{name}: {why}");
    }

    // Cyclone with each bad identity, a Halyard member reading.
    let dp = participant(domain, Some(&dir.join("bob"))).expect("secured participant");
    let rd = reader(&dp, topic, &[]).unwrap();
    let peers: Vec<(&str, Peer)> = bad
        .iter()
        .map(|(name, ..)| {
            let args = py_args(domain, topic, 1, 8, &[]);
            let p = Peer::spawn(&py, "cyclone_pub.py", Some(&dir.join(name)), &strs(&args));
            (*name, p)
        })
        .collect();
    for (name, p) in peers {
        let o = p.finish(secs(20.0));
        let expect = match name {
            "cert-expired" => "certificate has expired",
            "cert-future" => "certificate is not yet valid",
            "perm-expired" => "Permissions validity period expired",
            _ => "Permissions validity period has not started yet",
        };
        o.check(
            !o.ok && o.report.contains(expect) && o.field("matched").is_none(),
            &format!("{name}: Cyclone should refuse to start: {expect}"),
        );
    }
    let m = rd.subscription_matched_status().unwrap();
    let took = take_seqs(&rd, 1, secs(0.5));
    assert!(
        m.total_count == 0 && took.is_empty(),
        "the Halyard member matched {} writers and took {} samples from Cyclone participants with bad identities",
        m.total_count,
        took.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Seconds the short-lived identities of the expiry test stay valid after the set-up is made.
const SHORT_LIFE_S: i64 = 12;

/// A peer checks the validity of the certificate and permissions a remote participant
/// presents. Two Halyard participants, one whose certificate (`h-cert`) and one whose
/// permissions grant (`h-perm`) expires `SHORT_LIFE_S` after the set-up is made, start while
/// valid, each with a TRANSIENT_LOCAL writer that has written seq 1; alice (valid) has
/// written seq 0. Once they have expired, a Cyclone reader (bob) and a Halyard reader (carol)
/// start: each reads alice's sample and nothing of the two (Cyclone says "Certificate not
/// valid: ... expired" and "Permissions validity period expired" in its trace; carol's
/// reader matches alice only).
///
/// Cyclone cannot be the expiring side: Cyclone DDS 0.10 deletes its own participant when its
/// certificate or permissions expire (trace: `ddsi_delete_participant` at the expiry time),
/// so a Cyclone process never presents an expired identity. And Cyclone's reader counts
/// h-perm's writer as matched (`"matched": 2`): h-perm, the handshake initiator, sends its
/// SEDP right after its Final message, Cyclone takes it before its own access-control check
/// refuses h-perm and does not undo the match; no data of it is delivered. This test
/// therefore asserts what the Cyclone reader receives, not its match count.
#[test]
fn identities_that_expire_while_running_are_refused_by_new_peers() {
    let Some(py) = secure_python() else { return };
    let level = LEVELS[LEVELS.len() - 1];
    let dir = temp_dir("expiring");
    init(&dir, level, &["alice", "bob", "carol"], &[]);
    let now = now_unix();
    let end = now + SHORT_LIFE_S;
    for (name, cert) in [("h-cert", true), ("h-perm", false)] {
        add_with_validity(&dir, name, cert, now - 3600, end);
    }
    let domain = 160 + std::process::id() % 20;
    let topic = "Expiring";

    let valid = participant(domain, Some(&dir.join("alice"))).expect("alice");
    let wr = writer(&valid, topic, &[], true).unwrap();
    wr.write(&sample(0)).unwrap();
    let mut short_lived = Vec::new();
    for name in ["h-cert", "h-perm"] {
        let dp = participant(domain, Some(&dir.join(name))).expect("valid for now");
        let w = writer(&dp, topic, &[], true).unwrap();
        w.write(&sample(1)).unwrap();
        short_lived.push((w, dp));
    }
    let wait_s = (end + 2 - now_unix()).max(0) as u64;
    assert!(
        wait_s > 2,
        "the set-up took too long: the short-lived identities expire too soon"
    );
    sleep(Duration::from_secs(wait_s));

    // New peers, after the expiry: a Cyclone reader (bob) and a Halyard reader (carol).
    let args = py_args(domain, topic, 10, 10, &["--transient-local"]);
    let sub = Peer::spawn(&py, "cyclone_sub.py", Some(&dir.join("bob")), &strs(&args));
    let dp = participant(domain, Some(&dir.join("carol"))).expect("carol");
    let t: Topic<Keyed> = dp.create_topic(topic).unwrap();
    let rd = dp
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&t, reliable_qos!(DataReaderQos::default(), true))
        .unwrap();
    let got = take_seqs(&rd, 2, secs(10.0));
    let m = rd.subscription_matched_status().unwrap();
    let o = sub.finish(secs(20.0));
    o.check(
        o.ok && o.seqs() == vec![0],
        "the new Cyclone reader should read alice's sample only",
    );
    o.check(
        got == vec![0] && m.total_count == 1,
        &format!(
            "the new Halyard reader should match and read alice only: took {got:?}, matched {}",
            m.total_count
        ),
    );
    drop(short_lived);
    let _ = std::fs::remove_dir_all(&dir);
}
