//! Proves, with `halyard perf` and Cyclone DDS's `ddsperf` as separate processes on loopback,
//! that a secured Halyard process re-authenticates after a restart with the same identity and
//! data flows again (both directions, each level Halyard supports), and that `ddsperf` and
//! `halyard perf` processes outside the secure domain (unsecured, or with an identity from
//! another identity CA) receive nothing while a member receives.

// A test driver: it reads the clock for deadlines.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant};

const LO: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

/// The `halyard security init --protect` levels tested (`sign` and `encrypt` also protect
/// discovery, liveliness, metadata and data).
const LEVELS: &[&str] = &["none", "rtps-sign", "rtps-encrypt", "sign", "encrypt"];

fn ddsperf_available() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("ddsperf").is_file()));
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("ddsperf (cyclonedds-tools) is not installed but CI is set; run scripts/install-deps.sh");
        }
        eprintln!("SKIP: ddsperf not found in PATH (install cyclonedds-tools via scripts/install-deps.sh)");
    }
    found
}

fn security(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .arg("security")
        .args(args)
        .output()
        .expect("run halyard security")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-secdp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `halyard security init DIR --participant NAMES --protect LEVEL`.
fn init(dir: &Path, level: &str, names: &[&str]) {
    let mut args = vec![
        "init",
        dir.to_str().unwrap(),
        "--protect",
        level,
        "--participant",
    ];
    args.extend_from_slice(names);
    let o = security(&args);
    assert!(o.status.success(), "init failed: {o:?}");
}

/// A running process whose stdout and stderr lines are collected as they arrive.
struct Proc {
    what: String,
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Proc {
    fn spawn(what: String, mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {what}: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out: Box<dyn Read + Send> = Box::new(child.stdout.take().unwrap());
        let err: Box<dyn Read + Send> = Box::new(child.stderr.take().unwrap());
        let threads = [out, err]
            .into_iter()
            .map(|r| {
                let l = lines.clone();
                std::thread::spawn(move || {
                    for line in BufReader::new(r).lines().map_while(|l| l.ok()) {
                        l.lock().unwrap().push(line);
                    }
                })
            })
            .collect();
        Proc {
            what,
            child,
            lines,
            threads,
        }
    }

    /// `ddsperf` as `identity` (`DIR/NAME`; `None`: unsecured).
    fn ddsperf(identity: Option<&Path>, domain: u32, args: &[&str]) -> Proc {
        let sec = identity.map_or(String::new(), |id| {
            let cfg = security(&["cyclone-config", id.to_str().unwrap()]);
            assert!(cfg.status.success(), "cyclone-config: {cfg:?}");
            String::from_utf8_lossy(&cfg.stdout).trim().to_string()
        });
        let mut c = Command::new("ddsperf");
        c.args(["-i", &domain.to_string()])
            .args(args)
            .env("CYCLONEDDS_URI", format!("{LO}{sec}"));
        Proc::spawn(format!("ddsperf {} ({})", args.join(" "), who(identity)), c)
    }

    /// `halyard perf` as `identity` (through `HALYARD_SECURITY`; `None`: unsecured).
    fn halyard(identity: Option<&Path>, domain: u32, args: &[&str]) -> Proc {
        let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
        c.arg("perf")
            .args(["-i", &domain.to_string()])
            .args(args)
            .env("HALYARD_INTERFACE", "lo")
            .env_remove("HALYARD_SECURITY");
        if let Some(id) = identity {
            c.env("HALYARD_SECURITY", id);
        }
        Proc::spawn(
            format!("halyard perf {} ({})", args.join(" "), who(identity)),
            c,
        )
    }

    /// The largest `total N` of the throughput lines so far.
    fn received(&self) -> u64 {
        received(&self.lines.lock().unwrap())
    }

    /// Waits until [`Proc::received`] reaches `n`.
    fn wait_received(&self, n: u64, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if self.received() >= n {
                return true;
            }
            sleep(Duration::from_millis(50));
        }
        false
    }

    /// Whether the process is still running.
    fn alive(&mut self) -> bool {
        self.child.try_wait().is_ok_and(|s| s.is_none())
    }

    /// Kills the process (SIGKILL: no goodbye to its peers).
    fn kill(mut self) -> String {
        let _ = self.child.kill();
        self.finish_now()
    }

    fn finish_now(&mut self) -> String {
        let status = self.child.wait();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        format!(
            "=== {} ({status:?})\n{}\n",
            self.what,
            self.lines.lock().unwrap().join("\n")
        )
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn who(identity: Option<&Path>) -> String {
    identity.map_or("unsecured".into(), |p| p.display().to_string())
}

/// The largest `total N` in perf sub throughput lines.
fn received(lines: &[String]) -> u64 {
    lines
        .iter()
        .filter(|l| l.contains(" total ") && l.contains(" rate "))
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t.windows(2)
                .find(|w| w[0] == "total")
                .and_then(|w| w[1].parse().ok())
        })
        .max()
        .unwrap_or(0)
}

/// Samples a subscriber must have received before and again after the restart.
const SOME: u64 = 50;

/// Samples per second the publishers write: the most a subscriber can report late, in its
/// next once-a-second line, of a publisher already killed.
const RATE: u64 = 100;

/// A secured Halyard publisher feeds a secured `ddsperf` subscriber, is killed (SIGKILL) and
/// restarted with the same identity: the subscriber receives from the new process too. Then
/// the same with a secured `ddsperf` publisher and a Halyard subscriber that is killed and
/// restarted. At each level.
#[test]
fn halyard_restarted_with_the_same_identity_exchanges_data_with_cyclone_again() {
    if !ddsperf_available() {
        return;
    }
    for (i, level) in LEVELS.iter().enumerate() {
        let dir = temp_dir(&format!("restart-{level}"));
        init(&dir, level, &["alice", "bob"]);
        let (alice, bob) = (dir.join("alice"), dir.join("bob"));
        let domain = 100 + (std::process::id() % 16) * 5 + i as u32;
        let pubargs = ["-D", "30", "pub", "100Hz", "size", "64"];

        // Halyard publishes (restarted), Cyclone subscribes.
        let sub = Proc::ddsperf(Some(&bob), domain, &["-D", "40", "sub"]);
        let first = Proc::halyard(Some(&alice), domain, &pubargs);
        let ok = sub.wait_received(SOME, Duration::from_secs(20));
        let first = first.kill();
        assert!(
            ok,
            "{level}: nothing reached Cyclone from the first Halyard:\n{first}"
        );
        let before = sub.received();
        let second = Proc::halyard(Some(&alice), domain, &pubargs);
        let ok = sub.wait_received(before + RATE + SOME, Duration::from_secs(20));
        let (second, subout) = (second.kill(), sub.kill());
        assert!(
            ok,
            "{level}: Cyclone received nothing from the restarted Halyard publisher (had {before}):\n{first}{second}{subout}"
        );
        println!(
            "{level}: Halyard restarted -> Cyclone: {before} then {}",
            received_of(&subout)
        );

        // Cyclone publishes, Halyard subscribes (restarted).
        let publ = Proc::ddsperf(Some(&alice), domain, &pubargs);
        let first = Proc::halyard(Some(&bob), domain, &["-D", "40", "sub"]);
        let ok = first.wait_received(SOME, Duration::from_secs(20));
        let first = first.kill();
        assert!(
            ok,
            "{level}: the first Halyard subscriber received nothing:\n{first}"
        );
        let second = Proc::halyard(Some(&bob), domain, &["-D", "40", "sub"]);
        let ok = second.wait_received(SOME, Duration::from_secs(20));
        let (second, pubout) = (second.kill(), publ.kill());
        assert!(
            ok,
            "{level}: the restarted Halyard subscriber received nothing:\n{first}{second}{pubout}"
        );
        println!(
            "{level}: Cyclone -> Halyard restarted: {}",
            received_of(&second)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn received_of(out: &str) -> u64 {
    received(&out.lines().map(String::from).collect::<Vec<_>>())
}

/// Outsiders get nothing: with a secured Halyard publisher, an unsecured `ddsperf` and a
/// `ddsperf` with an identity from another set-up (another identity CA) receive nothing while
/// a member `ddsperf` receives; with a secured `ddsperf` publisher, an unsecured
/// `halyard perf` and one from the other set-up receive nothing while a member receives.
#[test]
fn ddsperf_and_halyard_outsiders_receive_nothing() {
    if !ddsperf_available() {
        return;
    }
    let level = LEVELS[LEVELS.len() - 1];
    let (dir, other) = (temp_dir("members"), temp_dir("others"));
    init(&dir, level, &["alice", "bob"]);
    init(&other, level, &["eve"]);
    let (alice, bob, eve) = (dir.join("alice"), dir.join("bob"), other.join("eve"));
    let domain = 180 + std::process::id() % 40;
    let pubargs = ["-D", "30", "pub", "100Hz", "size", "64"];
    let subargs = ["-D", "30", "sub"];

    // Halyard publishes.
    let outsiders = [None, Some(eve.as_path())].map(|id| Proc::ddsperf(id, domain, &subargs));
    let member = Proc::ddsperf(Some(&bob), domain, &subargs);
    let publ = Proc::halyard(Some(&alice), domain, &pubargs);
    let ok = member.wait_received(3 * SOME, Duration::from_secs(20));
    let report = format!("{}{}", publ.kill(), member.kill());
    assert!(ok, "the member ddsperf received too little:\n{report}");
    for mut o in outsiders {
        let (n, alive) = (o.received(), o.alive());
        let out = o.kill();
        assert!(alive, "an outsider ddsperf exited early:\n{out}{report}");
        assert_eq!(n, 0, "an outsider ddsperf received data:\n{out}{report}");
    }

    // Cyclone publishes.
    let outsiders = [None, Some(eve.as_path())].map(|id| Proc::halyard(id, domain, &subargs));
    let member = Proc::halyard(Some(&bob), domain, &subargs);
    let publ = Proc::ddsperf(Some(&alice), domain, &pubargs);
    let ok = member.wait_received(3 * SOME, Duration::from_secs(20));
    let report = format!("{}{}", publ.kill(), member.kill());
    assert!(ok, "the member halyard perf received too little:\n{report}");
    for mut o in outsiders {
        let (n, alive) = (o.received(), o.alive());
        let out = o.kill();
        assert!(
            alive,
            "an outsider halyard perf exited early:\n{out}{report}"
        );
        assert_eq!(
            n, 0,
            "an outsider halyard perf received data:\n{out}{report}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}
