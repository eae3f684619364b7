//! Proves that `halyard shapes` pairs in GROUP coherent scope, run as the OMG dds-rtps
//! suite's Test_CoherentSets_21 runs them (3 topics, 4 instances, sets of 3 samples per
//! instance, TRANSIENT_LOCAL, the subscriber started after the publisher and taking its three
//! readers one after the other inside begin/end access) but with sets written every few
//! milliseconds and read rounds back to back, never read part of a set: in every read round
//! each set is there whole (all 36 samples) or not at all, and no set is read twice. Each
//! process is killed (and the test fails) if it outlives its time.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The longest any process of these tests may run.
const LIMIT: Duration = Duration::from_secs(60);
/// Publisher iterations: each writes every instance of every topic once, 3 make a set.
const ITERATIONS: u32 = 900;
const TOPICS: usize = 3;
const INSTANCES: usize = 4;
const PER_SET: u32 = 3;

/// Starts `halyard shapes ARGS`, its output going to file `out` (a pipe nobody reads
/// while it runs would fill up and stop it).
fn spawn(args: &str, out: &std::path::Path) -> Child {
    let file = std::fs::File::create(out).expect("output file");
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .arg("shapes")
        .args(args.split_whitespace())
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn halyard shapes")
}

/// Waits for `child` to exit within [`LIMIT`] and returns its exit code and output; kills
/// it and fails the test otherwise.
fn finish(mut child: Child, out: &std::path::Path, what: &str) -> (Option<i32>, String) {
    let end = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(out).unwrap_or_default();
            panic!("`halyard shapes {what}` still ran after {LIMIT:?}:\n{text}");
        }
        sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(out).expect("output");
    let _ = std::fs::remove_file(out);
    (status.code(), text)
}

/// The samples of each read round that read any: (topic, color, size).
fn rounds(out: &str) -> Vec<Vec<(String, String, u32)>> {
    let mut rounds = Vec::new();
    let mut round: Option<Vec<(String, String, u32)>> = None;
    for l in out.lines() {
        if l.starts_with("Reading coherent sets") {
            rounds.extend(round.take().filter(|r| !r.is_empty()));
            round = Some(Vec::new());
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if let ([topic, color, _, _, size, ..], Some(r)) = (f.as_slice(), round.as_mut()) {
            if let Some(n) = size.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                let n = n.parse().expect("a size");
                r.push((topic.to_string(), color.to_string(), n));
            }
        }
    }
    rounds.extend(round.filter(|r| !r.is_empty()));
    rounds
}

/// One publisher and, half a second later, one subscriber on `domain`; checks every read
/// round of the subscriber.
fn pair_reads_whole_sets(domain: u32) {
    let common = format!(
        "-d {domain} -t Square -r -k 0 -D l --coherent --access-scope g --num-topics {TOPICS}"
    );
    let publisher = format!(
        "-P {common} --num-instances {INSTANCES} --coherent-sample-count {PER_SET} \
         --write-period 1 -z 0 --num-iterations {ITERATIONS}"
    );
    let subscriber = format!("-S {common} --take-read --read-period 1 --num-iterations 2500");
    let dir = std::env::temp_dir();
    let (pub_out, sub_out) = (
        dir.join(format!(
            "halyard-shapes-group-{}-{domain}-pub.txt",
            std::process::id()
        )),
        dir.join(format!(
            "halyard-shapes-group-{}-{domain}-sub.txt",
            std::process::id()
        )),
    );
    let p = spawn(&publisher, &pub_out);
    sleep(Duration::from_millis(500));
    let s = spawn(&subscriber, &sub_out);
    let (s, out) = finish(s, &sub_out, &subscriber);
    let (p, _) = finish(p, &pub_out, &publisher);
    assert_eq!(p, Some(0), "publisher");
    assert_eq!(s, Some(0), "subscriber");
    let whole = TOPICS * INSTANCES;
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    for (n, round) in rounds(&out).iter().enumerate() {
        // size -> the (topic, instance) pairs that had it: one per pair and iteration.
        let mut by_size: BTreeMap<u32, BTreeSet<(&str, &str)>> = BTreeMap::new();
        for (topic, color, size) in round {
            assert!(
                by_size.entry(*size).or_default().insert((topic, color)),
                "domain {domain}: round {n} read {topic} {color} [{size}] twice"
            );
        }
        for (size, pairs) in &by_size {
            let set = (size - 1) / PER_SET;
            let set_sizes = set * PER_SET + 1..=set * PER_SET + PER_SET;
            let whole_set = set_sizes
                .clone()
                .all(|s| by_size.get(&s).is_some_and(|p| p.len() == whole));
            assert!(
                pairs.len() == whole && whole_set,
                "domain {domain}: read round {n} held part of set {set} (sizes {set_sizes:?}): \
                 {} samples in the round, per size {:?}",
                round.len(),
                by_size
                    .iter()
                    .map(|(s, p)| (*s, p.len()))
                    .collect::<Vec<_>>()
            );
            assert!(
                seen.insert(*size),
                "domain {domain}: size {size} read again in round {n}"
            );
        }
    }
    // Not vacuous: most of the sets were read.
    assert!(
        seen.len() as u32 > ITERATIONS / 2,
        "domain {domain}: only {} of {ITERATIONS} iterations read:\n{out}",
        seen.len()
    );
}

#[test]
fn group_coherent_pairs_never_read_part_of_a_set() {
    for domain in [187, 188, 189] {
        pair_reads_whole_sets(domain);
    }
}
