//! Proves `halyard shapes` behaves as the OMG dds-rtps suite's harness expects of a
//! `shape_main`: a publisher and a subscriber on loopback print the creation, matched and
//! sample lines in the suite's formats, sizes grow one by one with `-z 0` and arrive without
//! gaps (RELIABLE), both end after `--num-iterations` with `Done.` and exit 0; an incompatible
//! pair prints the incompatible-QoS lines naming RELIABILITY; coherent sets (TOPIC scope)
//! arrive whole; a QoS Halyard refuses is printed with the reason and exits 2; a bad command
//! line prints the usage and exits 1. Every process is killed (and the test fails) if it
//! outlives its time.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The longest any `halyard shapes` process of these tests may run.
const LIMIT: Duration = Duration::from_secs(60);

fn shapes(args: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.arg("shapes")
        .args(args.split_whitespace())
        .env("HALYARD_INTERFACE", "lo")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Waits for `child` to exit within [`LIMIT`]; kills it and fails the test otherwise.
fn finish(mut child: Child, what: &str) -> Output {
    let end = Instant::now() + LIMIT;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() >= end {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "`halyard shapes {what}` still ran after {LIMIT:?}:\n{}",
                text(&o)
            );
        }
        sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Runs `halyard shapes ARGS` to its end (within [`LIMIT`]).
fn run(args: &str) -> Output {
    finish(shapes(args).spawn().expect("spawn"), args)
}

/// Runs a publisher and, a second later, a subscriber; returns both outputs.
fn pair(publisher: &str, subscriber: &str) -> (Output, Output) {
    let p = shapes(publisher).spawn().expect("spawn publisher");
    sleep(Duration::from_secs(1));
    let s = shapes(subscriber).spawn().expect("spawn subscriber");
    let s = finish(s, subscriber);
    let p = finish(p, publisher);
    (p, s)
}

/// (color, size) of every sample line: `%-10s %-10s %03d %03d [%d]`.
fn samples(out: &str) -> Vec<(String, u32)> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, color, x, y, size, ..]
                    if x.len() >= 3
                        && y.len() >= 3
                        && x.bytes().all(|b| b.is_ascii_digit())
                        && size.starts_with('[') =>
                {
                    let n = size.trim_matches(|c| c == '[' || c == ']').parse().ok()?;
                    Some((color.to_string(), n))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn reliable_pair_prints_what_the_harness_matches() {
    let (p, s) = pair(
        "-P -d 151 -t Square -c RED -z 0 -w -k 0 --write-period 20 --num-iterations 150",
        "-S -d 151 -t Square -k 0 --read-period 50 --num-iterations 50",
    );
    let (po, so) = (text(&p), text(&s));
    let ctx = format!("--- publisher\n{po}\n--- subscriber\n{so}");
    assert_eq!(p.status.code(), Some(0), "{ctx}");
    assert_eq!(s.status.code(), Some(0), "{ctx}");
    for l in [
        "Create topic: Square",
        "Create writer for topic: Square color: RED",
        "on_publication_matched() topic: 'Square'  type: 'ShapeType' : matched readers 1 (change = 1)",
        "Done.",
    ] {
        assert!(po.lines().any(|x| x == l), "publisher lacks {l:?}\n{ctx}");
    }
    for l in [
        "Create reader for topic: Square",
        "on_subscription_matched() topic: 'Square'  type: 'ShapeType' : matched writers 1 (change = 1)",
        "Done.",
    ] {
        assert!(so.lines().any(|x| x == l), "subscriber lacks {l:?}\n{ctx}");
    }
    // The exact sample format: topic and color padded to 10, x and y on 3 digits.
    let first = so
        .lines()
        .find(|l| l.ends_with(']'))
        .unwrap_or_else(|| panic!("no sample line\n{ctx}"));
    assert!(first.starts_with("Square     RED        "), "{first:?}");
    let got = samples(&so);
    assert!(got.len() >= 50, "only {} samples\n{ctx}", got.len());
    assert!(got.iter().all(|(c, _)| c == "RED"));
    // -z 0: sizes grow by one per sample; RELIABLE KEEP_ALL: no gaps.
    let sizes: Vec<u32> = got.iter().map(|g| g.1).collect();
    assert!(
        sizes.windows(2).all(|w| w[1] == w[0] + 1),
        "gaps or reordering: {sizes:?}"
    );
    let written = samples(&po);
    assert_eq!(written.len(), 150, "-w prints every write\n{ctx}");
}

#[test]
fn best_effort_writer_and_reliable_reader_report_reliability() {
    let (p, s) = pair(
        "-P -d 152 -t Square -b --num-iterations 60",
        "-S -d 152 -t Square -r --num-iterations 20",
    );
    let (po, so) = (text(&p), text(&s));
    assert!(
        po.contains(
            "on_offered_incompatible_qos() topic: 'Square'  type: 'ShapeType' : 11 (RELIABILITY)"
        ),
        "{po}"
    );
    assert!(
        so.contains(
            "on_requested_incompatible_qos() topic: 'Square'  type: 'ShapeType' : 11 (RELIABILITY)"
        ),
        "{so}"
    );
    assert!(
        samples(&so).is_empty(),
        "an incompatible pair exchanged data\n{so}"
    );
}

#[test]
fn filtered_subscriber_hears_only_its_color() {
    let p1 = shapes("-P -d 153 -t Circle -c RED --num-iterations 90")
        .spawn()
        .unwrap();
    let p2 = shapes("-P -d 153 -t Circle -c BLUE --num-iterations 90")
        .spawn()
        .unwrap();
    sleep(Duration::from_secs(1));
    let s = run("-S -d 153 -t Circle -c BLUE --num-iterations 15");
    let so = text(&s);
    let _ = (finish(p1, "RED publisher"), finish(p2, "BLUE publisher"));
    assert!(
        so.contains("Create reader for topic: Circle_filtered"),
        "{so}"
    );
    let got = samples(&so);
    assert!(!got.is_empty(), "{so}");
    assert!(got.iter().all(|(c, _)| c == "BLUE"), "{so}");
}

#[test]
fn refused_qos_and_bad_arguments_exit_as_shape_main_does() {
    // A deadline shorter than the time-based filter: a reader DDS 1.4 calls inconsistent.
    let o = run("-S -d 154 -t Square -f 100 --time-filter 500");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("DEADLINE"), "{}", text(&o));
    let o = run("-P -d 154");
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o);
    assert!(out.starts_with("please specify topic name [-t]\n"), "{out}");
    assert!(
        out.contains("   --help, -h      : print this menu"),
        "{out}"
    );
    let o = run("-h");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn coherent_sets_arrive_whole() {
    for (domain, scope) in [(155, 't'), (156, 'g')] {
        coherent_sets_arrive_whole_at(domain, scope);
    }
}

/// Sets of 3 iterations x 4 instances at access scope `scope`; the subscriber reads every
/// 10 ms and never gets part of a set.
fn coherent_sets_arrive_whole_at(domain: u32, scope: char) {
    let (p, s) = pair(
        &format!(
            "-P -d {domain} -t Square -c RED --num-instances 4 --coherent --access-scope {scope} \
             --coherent-sample-count 3 -k 0 --write-period 15 --num-iterations 240"
        ),
        &format!(
            "-S -d {domain} -t Square --coherent --access-scope {scope} -k 0 --take-read \
             --read-period 10 --num-iterations 200"
        ),
    );
    let (po, so) = (text(&p), text(&s));
    assert!(
        po.contains("Started Coherent Set") && po.contains("Finished Coherent Set"),
        "scope {scope}: {po}"
    );
    assert!(
        so.contains("Reading coherent sets, iteration 0"),
        "scope {scope}: {so}"
    );
    // Between two "Reading" lines, the samples are whole sets: a multiple of 12.
    let mut counts = Vec::new();
    let mut n = 0;
    for l in so.lines() {
        if l.starts_with("Reading coherent sets") {
            if n > 0 {
                counts.push(n);
            }
            n = 0;
        } else if l.ends_with(']') {
            n += 1;
        }
    }
    assert!(!counts.is_empty(), "scope {scope}: {so}");
    assert!(
        counts.iter().all(|c| c % 12 == 0),
        "scope {scope}: a read returned part of a set: {counts:?}\n{so}"
    );
}
