//! Proves that `halyard security init` says what to do next and names a bad `--days`, and
//! that a participant whose identity a peer (Halyard or Cyclone DDS) does not accept is told
//! so on its own standard error, without HALYARD_SECURITY_LOG, once.

// A test driver: it reads the clock for deadlines.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const LO: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

fn security(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .arg("security")
        .args(args)
        .output()
        .expect("run halyard")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-sec-habits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn init(dir: &Path, names: &[&str]) {
    let mut args = vec!["init", dir.to_str().unwrap(), "--participant"];
    args.extend_from_slice(names);
    let o = security(&args);
    assert!(o.status.success(), "init: {}", err(&o));
}

#[test]
fn init_prints_the_next_step_and_a_bad_days_is_named() {
    let dir = temp_dir("init");
    let set_up = dir.join("sec");
    let o = security(&[
        "init",
        set_up.to_str().unwrap(),
        "--participant",
        "alice",
        "bob",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    // stdout: the identity directories, one a line (for scripts); stderr: what to do next.
    let alice = std::path::absolute(set_up.join("alice")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().next(),
        Some(set_up.join("alice").to_str().unwrap())
    );
    let next = err(&o);
    assert!(
        next.contains(&format!("HALYARD_SECURITY={} halyard", alice.display())),
        "{next}"
    );
    assert!(next.contains("halyard security cyclone-config"), "{next}");

    let o = security(&[
        "init",
        dir.join("zero").to_str().unwrap(),
        "--participant",
        "a",
        "--days",
        "0",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("--days 0: the certificates and grants expire at once"),
        "{}",
        err(&o)
    );

    // --origin-auth goes with the rtps-only levels too.
    let rtps = dir.join("rtps");
    let o = security(&[
        "init",
        rtps.to_str().unwrap(),
        "--participant",
        "a",
        "--protect",
        "rtps-sign",
        "--origin-auth",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let governance = std::fs::read_to_string(rtps.join("governance.xml")).unwrap();
    assert!(
        governance.contains(
            "<rtps_protection_kind>SIGN_WITH_ORIGIN_AUTHENTICATION</rtps_protection_kind>"
        ),
        "{governance}"
    );

    for (days, says) in [
        ("-1", "--days -1: a validity cannot be negative"),
        ("x", "--days \"x\" is not a number"),
        ("99999", "--days 99999: at most 36500"),
    ] {
        let o = security(&[
            "init",
            dir.join("bad").to_str().unwrap(),
            "--participant",
            "a",
            "--days",
            days,
        ]);
        assert_eq!(o.status.code(), Some(2), "--days {days}");
        assert!(err(&o).contains(says), "--days {days}: {}", err(&o));
        assert!(!dir.join("bad").exists(), "--days {days}: nothing written");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `halyard perf` with the identity `identity` (through HALYARD_SECURITY), and no security log.
fn halyard_perf(identity: &Path, domain: u32, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .arg("perf")
        .args(["-i", &domain.to_string()])
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_SECURITY", identity)
        .env_remove("HALYARD_SECURITY_LOG")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn halyard perf")
}

/// Waits for `child` (killing it at `deadline`); its standard error.
fn stderr_of(mut child: Child, deadline: Instant) -> String {
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let mut s = String::new();
    let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut s));
    s
}

/// The `halyard security:` lines of `stderr`.
fn security_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("halyard security:"))
        .collect()
}

#[test]
fn each_of_two_participants_of_different_identity_cas_is_told_once() {
    let dir = temp_dir("two-cas");
    let (own, other) = (dir.join("own"), dir.join("other"));
    init(&own, &["alice"]);
    init(&other, &["mallory"]);
    let alice = halyard_perf(&own.join("alice"), 198, &["-D", "9", "pub"]);
    let mallory = halyard_perf(&other.join("mallory"), 198, &["-D", "9", "sub"]);
    let (alice_pid, mallory_pid) = (alice.id(), mallory.id());
    let deadline = Instant::now() + Duration::from_secs(12);
    let (a, m) = (stderr_of(alice, deadline), stderr_of(mallory, deadline));
    let (la, lm) = (security_lines(&a), security_lines(&m));
    assert_eq!((la.len(), lm.len()), (1, 1), "alice:\n{a}\nmallory:\n{m}");
    // Each names the other, says its identity or the other's was not accepted, and why.
    for (line, peer_pid) in [(la[0], mallory_pid), (lm[0], alice_pid)] {
        assert!(line.contains(&format!("pid {peer_pid} ")), "{line}");
        assert!(line.contains("not accepted"), "{line}");
        assert!(
            line.contains("check that both use the same identity CA"),
            "{line}"
        );
    }
    // One of them refused the other's certificate; that other was told by the silence.
    let told = [la[0], lm[0]]
        .iter()
        .filter(|l| l.contains("identity not accepted by peer"))
        .count();
    assert_eq!(told, 1, "alice: {}\nmallory: {}", la[0], lm[0]);
    let _ = std::fs::remove_dir_all(dir);
}

fn ddsperf_available() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("ddsperf").is_file()));
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("ddsperf is not installed but CI is set; run scripts/install-deps.sh");
        }
        eprintln!("SKIP: ddsperf not found in PATH (scripts/install-deps.sh)");
    }
    found
}

/// Against Cyclone DDS too: a Halyard participant whose identity Cyclone refuses is told so,
/// naming the ddsperf process (Cyclone, the refusing side, logs its own refusal).
#[test]
fn a_participant_cyclone_refuses_is_told_so() {
    if !ddsperf_available() {
        return;
    }
    let dir = temp_dir("cyclone");
    let (own, other) = (dir.join("own"), dir.join("other"));
    init(&own, &["bob"]);
    // Who begins the handshake is who has the smaller GUID prefix, which comes from the
    // certificate's subject: of these two names one begins and the other does not, so both
    // ways are seen (Halyard's request unanswered, and Halyard refusing Cyclone's).
    init(&other, &["mallory", "ann"]);
    let mut kinds = Vec::new();
    let cfg = security(&["cyclone-config", own.join("bob").to_str().unwrap()]);
    assert!(cfg.status.success(), "{}", err(&cfg));
    let uri = format!("{LO}{}", String::from_utf8_lossy(&cfg.stdout).trim());
    for name in ["mallory", "ann"] {
        let cyclone = Command::new("ddsperf")
            .args(["-i", "199", "-D", "8", "sub"])
            .env("CYCLONEDDS_URI", &uri)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ddsperf");
        let cyclone_pid = cyclone.id();
        let halyard = halyard_perf(&other.join(name), 199, &["-D", "7", "pub"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        let h = stderr_of(halyard, deadline);
        let _ = stderr_of(cyclone, deadline);
        let lines = security_lines(&h);
        assert_eq!(lines.len(), 1, "{name}:\n{h}");
        assert!(
            lines[0].contains(&format!("(ddsperf pid {cyclone_pid} ")),
            "{name}: {}",
            lines[0]
        );
        assert!(lines[0].contains("not accepted"), "{name}: {}", lines[0]);
        assert!(
            lines[0].contains("check that both use the same identity CA"),
            "{name}: {}",
            lines[0]
        );
        kinds.push(lines[0].contains("identity not accepted by peer"));
    }
    assert_eq!(kinds, [true, false], "mallory begins, ann does not");
    let _ = std::fs::remove_dir_all(dir);
}
