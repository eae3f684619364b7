//! Proves that `halyard perf` interoperates with Cyclone DDS 0.10 `ddsperf` on loopback in every ping/pong and pub/sub pairing (Halyard<->ddsperf both ways, Halyard<->Halyard), reliable and best-effort, at the default sample size and with 1 MB fragmented samples, and with two receivers of the other implementation, which a writer reaches by one multicast datagram per sample.

// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const CYCLONE_URI: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

/// Which program runs one side of a pairing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Prog {
    Halyard,
    Ddsperf,
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Returns false (test should return early) when ddsperf is missing outside CI;
/// panics when it is missing under CI.
fn ddsperf_available() -> bool {
    if find_in_path("ddsperf").is_some() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("ddsperf (cyclonedds-tools) is not installed but CI is set; run scripts/install-deps.sh");
    }
    eprintln!(
        "SKIP: ddsperf not found in PATH (install cyclonedds-tools via scripts/install-deps.sh)"
    );
    false
}

struct Side {
    prog: Prog,
    /// Arguments after the program's own prefix (`perf` for halyard).
    args: Vec<String>,
}

impl Side {
    fn new(prog: Prog, domain: u32, secs: u32, best_effort: bool, mode: &[&str]) -> Side {
        let mut args = vec![
            "-D".to_string(),
            secs.to_string(),
            "-i".to_string(),
            domain.to_string(),
        ];
        if best_effort {
            args.push("-u".to_string());
        }
        args.extend(mode.iter().map(|s| s.to_string()));
        Side { prog, args }
    }

    /// Adds options (before the mode words).
    fn opts(mut self, extra: &[&str]) -> Side {
        let at = self
            .args
            .iter()
            .position(|a| !a.starts_with('-') && a.parse::<f64>().is_err());
        let at = at.unwrap_or(self.args.len()).max(4);
        for (i, o) in extra.iter().enumerate() {
            self.args.insert(at + i, o.to_string());
        }
        self
    }

    fn describe(&self) -> String {
        match self.prog {
            Prog::Halyard => format!("halyard perf {}", self.args.join(" ")),
            Prog::Ddsperf => format!("ddsperf {}", self.args.join(" ")),
        }
    }

    fn spawn(&self) -> Child {
        let mut cmd = match self.prog {
            Prog::Halyard => {
                let mut c = Command::new(Path::new(env!("CARGO_BIN_EXE_halyard")));
                c.arg("perf");
                c
            }
            Prog::Ddsperf => Command::new("ddsperf"),
        };
        cmd.args(&self.args)
            .env("HALYARD_INTERFACE", "lo")
            .env("CYCLONEDDS_URI", CYCLONE_URI)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn()
            .unwrap_or_else(|e| panic!("cannot spawn `{}`: {e}", self.describe()))
    }
}

struct Output {
    what: String,
    status: String,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "=== `{}` exited: {}", self.what, self.status)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout)?;
        writeln!(f, "--- stderr ---\n{}", self.stderr)
    }
}

/// Waits for `child` with a hard deadline (kills it when exceeded) and collects its output.
fn collect(what: String, mut child: Child, deadline: Instant) -> Output {
    // Drain pipes in threads so a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break format!("{st}"),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let st = child.wait().map(|s| format!("{s}")).unwrap_or_default();
                break format!("KILLED after deadline ({st})");
            }
            Ok(None) => sleep(Duration::from_millis(50)),
            Err(e) => break format!("wait error: {e}"),
        }
    };
    Output {
        what,
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

/// Starts the `first` sides (the longer-lived ones), waits 0.5 s, starts `last`, and
/// collects every output: `last`'s, then the others' in order.
fn run_after<const N: usize>(first: [Side; N], last: Side) -> (Output, [Output; N]) {
    let children = first.map(|s| (s.describe(), s.spawn()));
    sleep(Duration::from_millis(500));
    let c = last.spawn();
    let deadline = Instant::now() + Duration::from_secs(20);
    let o = collect(last.describe(), c, deadline);
    (o, children.map(|(what, c)| collect(what, c, deadline)))
}

/// Starts `first`, then `second` 0.5 s later; returns (first's output, second's).
fn run_pair(first: Side, second: Side) -> (Output, Output) {
    let (o2, [o1]) = run_after([first], second);
    (o1, o2)
}

/// Value of the whitespace-separated token following `key`, nth occurrence.
fn field(line: &str, key: &str, nth: usize) -> Option<f64> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    toks.windows(2)
        .filter(|w| w[0] == key)
        .nth(nth)
        .and_then(|w| w[1].trim_end_matches("us").parse().ok())
}

/// Latency lines: `[PID] T  HOST:PID size N mean Xus ... cnt N`.
fn ping_lines(o: &Output) -> Vec<&str> {
    o.stdout
        .lines()
        .filter(|l| l.contains(" mean ") && l.contains(" cnt "))
        .collect()
}

/// Throughput lines: `[PID] T  size N total N lost N delta N lost N rate ...`.
fn sub_lines(o: &Output) -> Vec<&str> {
    o.stdout
        .lines()
        .filter(|l| l.contains(" total ") && l.contains(" delta ") && l.contains(" rate "))
        .collect()
}

fn fail(msg: &str, outs: &[&Output]) -> ! {
    let mut s = format!("{msg}\n");
    for o in outs {
        s.push_str(&o.to_string());
    }
    panic!("{s}");
}

/// Asserts the ping side printed at least one latency line with cnt > 0
/// and (if given) the expected sample size.
fn check_ping(ping: &Output, pong: &Output, size: Option<f64>) {
    let lines = ping_lines(ping);
    let good: Vec<&&str> = lines
        .iter()
        .filter(|l| field(l, "cnt", 0).is_some_and(|c| c > 0.0))
        .collect();
    if good.is_empty() {
        fail(
            "ping side printed no latency line with cnt > 0",
            &[ping, pong],
        );
    }
    if let Some(sz) = size {
        if !good.iter().all(|l| field(l, "size", 0) == Some(sz)) {
            fail(
                &format!("latency lines do not report size {sz}"),
                &[ping, pong],
            );
        }
    }
    for l in &good {
        let mean = field(l, "mean", 0);
        if !mean.is_some_and(|m| m > 0.0) {
            fail(&format!("unparsable mean latency in `{l}`"), &[ping, pong]);
        }
    }
}

/// Asserts the sub side printed throughput lines with total > 0 and, when
/// `reliable`, that the final line reports `lost 0` (cumulative and delta).
fn check_sub(sub: &Output, publ: &Output, reliable: bool, size: Option<f64>) {
    let lines = sub_lines(sub);
    let Some(last) = lines.last() else {
        fail("sub side printed no throughput line", &[sub, publ]);
    };
    let total = field(last, "total", 0);
    if !total.is_some_and(|t| t > 0.0) {
        fail(
            &format!("final sub line has no total > 0: `{last}`"),
            &[sub, publ],
        );
    }
    if let Some(sz) = size {
        if !lines.iter().all(|l| field(l, "size", 0) == Some(sz)) {
            fail(
                &format!("throughput lines do not report size {sz}"),
                &[sub, publ],
            );
        }
    }
    if reliable {
        let lost = field(last, "lost", 0);
        let dlost = field(last, "lost", 1);
        if lost != Some(0.0) || dlost != Some(0.0) {
            fail(
                &format!("reliable run: final sub line does not say `lost 0`: `{last}`"),
                &[sub, publ],
            );
        }
    }
    println!("sub final: {last}");
}

/// ping on `ping_prog` vs pong on `pong_prog`; the pong side lives longer and starts first.
fn ping_pong(domain: u32, ping_prog: Prog, pong_prog: Prog, size: Option<&str>) {
    let mut mode = vec!["ping"];
    if let Some(s) = size {
        mode.extend(["size", s]);
    }
    let pong = Side::new(pong_prog, domain, 4, false, &["pong"]);
    let ping = Side::new(ping_prog, domain, 3, false, &mode);
    let (pong_out, ping_out) = run_pair(pong, ping);
    let bytes = size.map(|s| if s == "1M" { 1048576.0 } else { 12.0 });
    check_ping(&ping_out, &pong_out, bytes);
    println!("{ping_out}{pong_out}");
}

/// pub on `pub_prog` vs sub on `sub_prog`; the sub side lives longer and starts first.
fn pub_sub(domain: u32, pub_prog: Prog, sub_prog: Prog, size: Option<&str>, best_effort: bool) {
    let mut mode = vec!["pub"];
    if let Some(s) = size {
        mode.extend(["size", s]);
    }
    let sub = Side::new(sub_prog, domain, 4, best_effort, &["sub"]);
    let publ = Side::new(pub_prog, domain, 3, best_effort, &mode);
    let (sub_out, pub_out) = run_pair(sub, publ);
    let bytes = Some(if size == Some("1M") { 1048576.0 } else { 12.0 });
    check_sub(&sub_out, &pub_out, !best_effort, bytes);
    println!("{sub_out}{pub_out}");
}

// ---- ping/pong ----

#[test]
fn halyard_ping_ddsperf_pong() {
    if ddsperf_available() {
        ping_pong(11, Prog::Halyard, Prog::Ddsperf, None);
    }
}

#[test]
fn ddsperf_ping_halyard_pong() {
    if ddsperf_available() {
        ping_pong(12, Prog::Ddsperf, Prog::Halyard, None);
    }
}

#[test]
fn halyard_ping_ddsperf_pong_1m() {
    if ddsperf_available() {
        ping_pong(13, Prog::Halyard, Prog::Ddsperf, Some("1M"));
    }
}

#[test]
fn halyard_ping_halyard_pong() {
    ping_pong(14, Prog::Halyard, Prog::Halyard, None);
}

// ---- pub/sub, reliable ----

#[test]
fn halyard_pub_ddsperf_sub() {
    if ddsperf_available() {
        pub_sub(15, Prog::Halyard, Prog::Ddsperf, None, false);
    }
}

#[test]
fn halyard_pub_ddsperf_sub_1m() {
    if ddsperf_available() {
        pub_sub(16, Prog::Halyard, Prog::Ddsperf, Some("1M"), false);
    }
}

#[test]
fn ddsperf_pub_halyard_sub() {
    if ddsperf_available() {
        pub_sub(17, Prog::Ddsperf, Prog::Halyard, None, false);
    }
}

#[test]
fn ddsperf_pub_halyard_sub_1m() {
    if ddsperf_available() {
        pub_sub(18, Prog::Ddsperf, Prog::Halyard, Some("1M"), false);
    }
}

#[test]
fn halyard_pub_halyard_sub() {
    pub_sub(19, Prog::Halyard, Prog::Halyard, None, false);
}

#[test]
fn halyard_pub_halyard_sub_1m() {
    pub_sub(20, Prog::Halyard, Prog::Halyard, Some("1M"), false);
}

// ---- best-effort ----

#[test]
fn ddsperf_pub_halyard_sub_best_effort() {
    if ddsperf_available() {
        pub_sub(21, Prog::Ddsperf, Prog::Halyard, None, true);
    }
}

// ---- other topic types (-T), keys (-n), CPU statistics, exit codes ----

fn assert_exit_ok(outs: &[&Output]) {
    for o in outs {
        if o.status != "exit status: 0" {
            fail(&format!("`{}` did not exit 0", o.what), outs);
        }
        if o.stdout.contains("failed to match") {
            fail(&format!("`{}` reported a matching failure", o.what), outs);
        }
    }
}

/// Halyard pub -> ddsperf sub with `opts`; lost 0, both exit 0.
fn typed_pub_sub(domain: u32, pub_prog: Prog, sub_prog: Prog, opts: &[&str], size: f64) {
    let sub = Side::new(sub_prog, domain, 4, false, &["sub"]).opts(opts);
    let publ = Side::new(pub_prog, domain, 3, false, &["pub"]).opts(opts);
    let (sub_out, pub_out) = run_pair(sub, publ);
    check_sub(&sub_out, &pub_out, true, Some(size));
    assert_exit_ok(&[&sub_out, &pub_out]);
    println!("{sub_out}{pub_out}");
}

/// ddsperf ping <-> Halyard pong with `opts`; latency lines of `size`, both exit 0.
fn typed_ping_pong(domain: u32, opts: &[&str], size: f64) {
    let pong = Side::new(Prog::Halyard, domain, 4, false, &["pong"]).opts(opts);
    let ping = Side::new(Prog::Ddsperf, domain, 3, false, &["ping"]).opts(opts);
    let (pong_out, ping_out) = run_pair(pong, ping);
    check_ping(&ping_out, &pong_out, Some(size));
    assert_exit_ok(&[&ping_out, &pong_out]);
    println!("{ping_out}{pong_out}");
}

#[test]
fn halyard_pub_ddsperf_sub_k256() {
    if ddsperf_available() {
        typed_pub_sub(22, Prog::Halyard, Prog::Ddsperf, &["-T", "K256"], 256.0);
    }
}

#[test]
fn halyard_pub_ddsperf_sub_ou() {
    if ddsperf_available() {
        typed_pub_sub(23, Prog::Halyard, Prog::Ddsperf, &["-T", "OU"], 4.0);
    }
}

#[test]
fn ddsperf_ping_halyard_pong_k256() {
    if ddsperf_available() {
        typed_ping_pong(24, &["-T", "K256"], 256.0);
    }
}

#[test]
fn ddsperf_ping_halyard_pong_ou() {
    if ddsperf_available() {
        typed_ping_pong(25, &["-T", "OU"], 4.0);
    }
}

#[test]
fn ddsperf_pub_halyard_sub_s4k() {
    if ddsperf_available() {
        typed_pub_sub(26, Prog::Ddsperf, Prog::Halyard, &["-T", "S4k"], 8464.0);
    }
}

#[test]
fn halyard_pub_ddsperf_sub_4keys() {
    if ddsperf_available() {
        typed_pub_sub(27, Prog::Halyard, Prog::Ddsperf, &["-n", "4"], 12.0);
    }
}

#[test]
fn ddsperf_pub_halyard_sub_4keys() {
    if ddsperf_available() {
        typed_pub_sub(28, Prog::Ddsperf, Prog::Halyard, &["-n", "4"], 12.0);
    }
}

/// ddsperf `-c` decodes the CPUStats samples Halyard publishes and prints them as
/// `@HOST:PID rss:...`; Halyard prints its own CPU line.
#[test]
fn ddsperf_reads_halyard_cpu_stats() {
    if !ddsperf_available() {
        return;
    }
    let sub = Side::new(Prog::Ddsperf, 29, 5, false, &["sub"]).opts(&["-c"]);
    // A moderate rate: this test is about CPUStats, not throughput.
    let publ = Side::new(Prog::Halyard, 29, 4, false, &["pub", "5kHz"]);
    let (sub_out, pub_out) = run_pair(sub, publ);
    let pid = pub_out
        .stdout
        .split(']')
        .next()
        .and_then(|s| s.strip_prefix('['))
        .unwrap_or("?")
        .to_string();
    let remote = format!(":{pid} rss:");
    if !sub_out
        .stdout
        .lines()
        .any(|l| l.contains(" @") && l.contains(&remote) && l.contains(" vcsw:"))
    {
        fail(
            "ddsperf -c printed no CPU line for the Halyard peer",
            &[&sub_out, &pub_out],
        );
    }
    if !pub_out.stdout.lines().any(|l| {
        l.contains("  rss:") && l.contains(" vcsw:") && l.contains(" ivcsw:") && l.contains('%')
    }) {
        fail("halyard printed no CPU line", &[&sub_out, &pub_out]);
    }
    assert_exit_ok(&[&pub_out]);
    if sub_out.stdout.contains("failed to match") {
        fail("ddsperf reported a matching failure", &[&sub_out, &pub_out]);
    }
    println!("{sub_out}{pub_out}");
}

/// Bad arguments exit 3, as ddsperf.
#[test]
fn bad_arguments_exit_3() {
    for args in [
        &["-T", "K64", "sub"][..],
        &["-T", "K32", "pub", "size", "1k"],
        &["-T", "OU", "-n", "2", "pub"],
        &[],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_halyard"))
            .arg("perf")
            .args(args)
            .env("HALYARD_INTERFACE", "lo")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "halyard perf {args:?}");
    }
}

/// A reliable and a best-effort ddsperf peer discover each other but match no endpoint:
/// both report `failed to match in 5.000s`; Halyard, ending while the peer still exists,
/// prints the final error and exits 1 (as ddsperf does in that position).
#[test]
fn unmatched_peer_fails_like_ddsperf() {
    if !ddsperf_available() {
        return;
    }
    let h = Side::new(Prog::Halyard, 30, 7, true, &["pong"]);
    let d = Side::new(Prog::Ddsperf, 30, 7, false, &["pong"]);
    let (h_out, d_out) = run_pair(h, d);
    for o in [&d_out, &h_out] {
        if !o.stdout.contains("failed to match in 5.000s") {
            fail(
                &format!("`{}` did not report the match failure", o.what),
                &[&h_out, &d_out],
            );
        }
    }
    if h_out.status != "exit status: 1"
        || !h_out
            .stdout
            .contains(" failed to match ping reader, pong reader, ping writer, pong writer")
    {
        fail("halyard did not fail like ddsperf", &[&h_out, &d_out]);
    }
}

// ---- fan-out to two participants of the other implementation (user-data multicast) ----

/// A pinger with two pongers of the other implementation, `-Qminmatch:2`: both must answer
/// (a Halyard writer reaches two Cyclone participants by one multicast datagram, and Cyclone
/// may reach two Halyard ones likewise).
fn ping_two_pongers(domain: u32, ping_prog: Prog, pong_prog: Prog) {
    let pong = || Side::new(pong_prog, domain, 6, false, &["pong"]);
    let ping = Side::new(ping_prog, domain, 3, false, &["ping", "200Hz"])
        .opts(&["-Qminmatch:2", "-Qinitwait:10"]);
    let (ping_out, pongs) = run_after([pong(), pong()], ping);
    let all = [&ping_out, &pongs[0], &pongs[1]];
    let answering: std::collections::BTreeSet<&str> = ping_lines(&ping_out)
        .iter()
        .filter(|l| field(l, "cnt", 0).is_some_and(|c| c > 0.0))
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    if answering.len() != 2 {
        fail(
            &format!("answering pongers: {answering:?}, expected 2"),
            &all,
        );
    }
    assert_exit_ok(&all);
}

/// A reliable publisher with two subscribers of the other implementation: both get every
/// sample (lost 0).
fn pub_two_subs(domain: u32, pub_prog: Prog, sub_prog: Prog) {
    let sub = || Side::new(sub_prog, domain, 6, false, &["sub"]);
    let publ = Side::new(pub_prog, domain, 3, false, &["pub", "2kHz", "size", "1k"])
        .opts(&["-Qminmatch:2", "-Qinitwait:10"]);
    let (pub_out, subs) = run_after([sub(), sub()], publ);
    for s in &subs {
        check_sub(s, &pub_out, true, Some(1024.0));
    }
    assert_exit_ok(&[&pub_out, &subs[0], &subs[1]]);
}

#[test]
fn halyard_ping_two_ddsperf_pongs() {
    if ddsperf_available() {
        ping_two_pongers(32, Prog::Halyard, Prog::Ddsperf);
    }
}

#[test]
fn ddsperf_ping_two_halyard_pongs() {
    if ddsperf_available() {
        ping_two_pongers(33, Prog::Ddsperf, Prog::Halyard);
    }
}

#[test]
fn halyard_pub_two_ddsperf_subs() {
    if ddsperf_available() {
        pub_two_subs(34, Prog::Halyard, Prog::Ddsperf);
    }
}
