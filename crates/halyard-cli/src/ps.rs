//! `halyard ps`: joins a domain, listens to discovery for a while and lists the processes
//! taking part, by host: each process's name, pid, addresses, participants and topics. Where
//! a participant runs comes from the `__Hostname`, `__Pid` and `__ProcessName` properties of
//! its SPDP announcement, which Cyclone DDS and Halyard send; participants without them are
//! grouped as an unknown process. Unlike `cyclonedds ps`, processes without topics are listed
//! too (a process that only joined the domain is still a process in it).

use crate::discovery::{self, guid, vendor_name, Peer, Snapshot};
use crate::json::Json;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long `ps` listens by default.
const DEFAULT_DURATION: Duration = Duration::from_secs(3);

const HELP: &str = "usage: halyard ps [-d DOMAIN] [-r SECONDS] [-t PATTERN] [--json]

Joins DOMAIN, listens to discovery for SECONDS and lists the processes found by host: name, pid,
addresses, participants and topics.
  -d, --domain DOMAIN     the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
  -r, --duration SECONDS  how long to listen (default 3; also 500ms, 1m)
  -t, --topic PATTERN     only topics whose name matches (wildcards * and ?)
  --json  one JSON document:
    domain_id, duration_s, hosts[] (names, sorted)
    processes[]: host, pid, process (null when the participants did not announce them),
      addresses[], participants[] {guid, name, vendor}, topics[] (names, sorted)

Exit status: 0, 1 if the domain cannot be joined, 2 for bad arguments.";

/// Runs `halyard ps`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}");
        return 0;
    }
    let a = match discovery::parse_args(args, false, DEFAULT_DURATION) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("halyard ps: {}\n\n{HELP}", e.0);
            return 2;
        }
    };
    let dp = match discovery::join(a.domain, "halyard ps") {
        Ok(dp) => dp,
        Err(e) => {
            eprintln!("halyard ps: cannot join domain {}: {e}", a.domain);
            return 1;
        }
    };
    std::thread::sleep(a.duration);
    let snap = Snapshot::take(&dp, a.topic.as_deref());
    let procs = processes(&snap);
    if a.json {
        println!("{}", document(a.domain, a.duration, &procs).pretty());
    } else {
        print!("{}", text(&procs));
    }
    0
}

/// A process: (host, process name, pid) and its participants.
type Key<'a> = (Option<&'a str>, Option<&'a str>, Option<u64>);

/// The processes of a snapshot, by host, process name and pid.
fn processes(snap: &Snapshot) -> BTreeMap<Key<'_>, Vec<&Peer>> {
    let mut m: BTreeMap<Key<'_>, Vec<&Peer>> = BTreeMap::new();
    for p in &snap.peers {
        m.entry((p.host(), p.process(), p.pid()))
            .or_default()
            .push(p);
    }
    m
}

/// The topics of a process's participants, sorted, deduplicated.
fn topics<'a>(peers: &[&'a Peer]) -> Vec<&'a str> {
    let mut t: Vec<&str> = peers.iter().flat_map(|p| p.topics()).collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn addresses(peers: &[&Peer]) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    for s in peers.iter().flat_map(|p| p.addresses()) {
        if !a.contains(&s) {
            a.push(s);
        }
    }
    a
}

fn document(domain: u32, duration: Duration, procs: &BTreeMap<Key<'_>, Vec<&Peer>>) -> Json {
    let mut hosts: Vec<&str> = procs.keys().filter_map(|k| k.0).collect();
    hosts.dedup();
    let list = procs
        .iter()
        .map(|(&(host, process, pid), peers)| {
            let participants = peers
                .iter()
                .map(|p| {
                    Json::Obj(vec![
                        ("guid", Json::str(guid(p.guid()))),
                        ("name", Json::opt_str(p.name())),
                        ("vendor", Json::opt_str(p.vendor().map(vendor_name))),
                    ])
                })
                .collect();
            Json::Obj(vec![
                ("host", Json::opt_str(host)),
                ("pid", pid.map_or(Json::Null, |n| Json::Int(n as i64))),
                ("process", Json::opt_str(process)),
                ("addresses", Json::strs(&addresses(peers))),
                ("participants", Json::Arr(participants)),
                ("topics", Json::strs(&topics(peers))),
            ])
        })
        .collect();
    Json::Obj(vec![
        ("domain_id", Json::Int(domain.into())),
        ("duration_s", Json::Num(duration.as_secs_f64())),
        ("hosts", Json::strs(&hosts)),
        ("processes", Json::Arr(list)),
    ])
}

fn text(procs: &BTreeMap<Key<'_>, Vec<&Peer>>) -> String {
    let mut out = String::new();
    if procs.is_empty() {
        out.push_str("no participant found\n");
        return out;
    }
    let mut host = None;
    for (&(h, process, pid), peers) in procs {
        if host != Some(h) {
            out.push_str(&format!("Host {}\n", h.unwrap_or("(unknown)")));
            host = Some(h);
        }
        out.push_str(&format!(
            "  {} pid {}  {}\n",
            process.unwrap_or("(unknown process)"),
            pid.map_or("?".into(), |n| n.to_string()),
            addresses(peers).join(" ")
        ));
        for p in peers {
            let name = p.name().map_or(String::new(), |n| format!(" \"{n}\""));
            let vendor = p.vendor().map_or("unknown vendor".into(), vendor_name);
            out.push_str(&format!(
                "    participant {}{name} ({vendor})\n",
                guid(p.guid())
            ));
        }
        let t = topics(peers);
        if !t.is_empty() {
            out.push_str(&format!("    topics: {}\n", t.join(", ")));
        }
    }
    out
}
