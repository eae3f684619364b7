//! `halyard-cti demo`: a community of three organisations in two sectors on this machine, each
//! its own node process with its own DDS Security identity and durability service, fed by the
//! project's generator ([`halyard_cti::demo`]) through each node's REST API, with the
//! community's delivery figures printed as they change.
//!
//! Delivery is counted from what the nodes say: each publication's report names the sectors
//! an object was shared with (objects held for review are not shared yet), every other member
//! of such a sector is owed it, and each node's status counts what it received over DDS. What
//! a reviewer approves meanwhile is delivered too without being counted as owed: delivery
//! may then pass 100 %.

use super::{add_account, init_with_admins, Failure, Res};
use halyard_cti::community::{CommunityOptions, Member};
use halyard_cti::demo::{Feed, MEMBERS};
use halyard_cti::store::Role;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a node may take to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long, once the feeds stop, the demo waits for what is owed to arrive.
const SETTLE: Duration = Duration::from_secs(15);

struct Options {
    dir: PathBuf,
    domain: u32,
    base_port: u16,
    rate: f64,
    seconds: Option<f64>,
    seed: u64,
}

fn options(args: &[String]) -> Result<Options, Failure> {
    let mut o = Options {
        dir: std::env::temp_dir().join(format!("halyard-cti-demo-{}", std::process::id())),
        domain: 42,
        base_port: 8441,
        rate: 1.0,
        seconds: None,
        seed: u64::from(std::process::id()),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| Failure::Usage(format!("demo: {a} needs a value")))
        };
        let number = |v: String, what: &str| -> Result<f64, Failure> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| Failure::Usage(format!("demo: {a} takes {what}, not {v:?}")))
        };
        match a.as_str() {
            "--dir" => o.dir = PathBuf::from(value()?),
            "-d" | "--domain" => {
                o.domain = value()?
                    .parse()
                    .map_err(|_| Failure::Usage("demo: --domain takes a number".into()))?
            }
            "--base-port" => {
                o.base_port = value()?
                    .parse()
                    .map_err(|_| Failure::Usage("demo: --base-port takes a port number".into()))?
            }
            "--rate" => o.rate = number(value()?, "a positive number")?.min(1000.0),
            "--seconds" => o.seconds = Some(number(value()?, "a positive number of seconds")?),
            "--seed" => {
                o.seed = value()?
                    .parse()
                    .map_err(|_| Failure::Usage("demo: --seed takes a number".into()))?
            }
            other => return Err(Failure::Usage(format!("demo: unknown {other:?}"))),
        }
    }
    Ok(o)
}

/// A node process of the demo.
struct NodeProc {
    org: String,
    sectors: Vec<String>,
    child: Child,
    base: String,
    auth: String,
    password: String,
    reviewer: String,
}

impl NodeProc {
    /// Starts `member`'s node from `config` and waits until it serves; `password` and
    /// `reviewer` are its accounts' passwords.
    fn start(
        exe: &Path,
        member: Member,
        config: &Path,
        password: String,
        reviewer: String,
    ) -> Result<NodeProc, Failure> {
        let org = &member.org;
        let log = config.with_file_name("node.log");
        let log_file =
            std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = Command::new(exe)
            .arg("serve")
            .arg("--config")
            .arg(config)
            // One machine's community: on loopback unless told otherwise.
            .env(
                "HALYARD_INTERFACE",
                std::env::var("HALYARD_INTERFACE").unwrap_or_else(|_| "lo".into()),
            )
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("starting {org}'s node: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("TAXII 2.1: ") {
                    let _ = tx.send(url.trim_end_matches("/taxii2/").to_string());
                }
            }
        });
        let Ok(base) = rx.recv_timeout(READY_TIMEOUT) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure::from(format!(
                "{org}'s node did not start within {READY_TIMEOUT:?}; its log: {}",
                log.display()
            )));
        };
        use base64::Engine as _;
        let auth = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("admin:{password}"))
        );
        Ok(NodeProc {
            org: member.org,
            sectors: member.sectors,
            child,
            base,
            auth,
            password,
            reviewer,
        })
    }

    /// Asks the node to stop (SIGTERM, so it unregisters cleanly), then waits for it.
    fn stop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the community shared and what arrived.
#[derive(Default)]
struct Tally {
    published: u64,
    shared: u64,
    queued: u64,
    /// Deliveries owed: one per (object shared with a sector, other member of it).
    owed: u64,
}

pub fn demo(args: &[String]) -> Res {
    let o = options(args)?;
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
    }
    let members: Vec<Member> = MEMBERS
        .iter()
        .map(|m| Member {
            org: m.org.to_string(),
            sectors: m.sectors.iter().map(|s| s.to_string()).collect(),
        })
        .collect();
    let made = init_with_admins(
        &o.dir,
        &CommunityOptions {
            members,
            domain: o.domain,
            base_port: o.base_port,
            days: 30,
            force: true,
        },
    )?;
    out!(
        "Halyard CTI demo: 3 organisations in 2 sectors on DDS domain {}, community in {}",
        o.domain,
        o.dir.display()
    );
    let mut nodes: Vec<NodeProc> = Vec::new();
    for (m, config, password) in made {
        // A second person for the four-eyes rule: what the feed (as admin) submits for
        // review, the reviewer approves.
        let reviewer = add_account(&config, "reviewer", Role::Reviewer)?;
        match NodeProc::start(&exe, m, &config, password, reviewer) {
            Ok(n) => nodes.push(n),
            Err(e) => {
                nodes.iter_mut().for_each(NodeProc::stop);
                return Err(e);
            }
        }
    }
    for n in &nodes {
        out!(
            "  {:<14} sectors {:<15} dashboard {}/ui/  TAXII {}/taxii2/  REST {}/api/v1/\n  {:<14} logins: admin / {}, reviewer / {}",
            n.org,
            n.sectors.join(","),
            n.base,
            n.base,
            n.base,
            "",
            n.password,
            n.reviewer
        );
    }
    let first = nodes.first().map_or("", |n| n.base.as_str());
    out!(
        "  open a dashboard in a browser: the live feed, search, the review queue (log in as\n  reviewer to approve what the sanitiser held back), community status and live plots\n  TAXII: curl -u admin:PASSWORD -H 'Accept: application/taxii+json;version=2.1' \\\n         {first}/taxii2/api/collections/"
    );
    let result = run(&o, &nodes, &stop);
    nodes.iter_mut().for_each(NodeProc::stop);
    result
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build(),
    )
}

/// Feeds the community and prints its figures until stopped.
fn run(o: &Options, nodes: &[NodeProc], stop: &AtomicBool) -> Res {
    let agent = agent();
    let mut feeds: Vec<Feed> = MEMBERS
        .iter()
        .enumerate()
        .map(|(k, m)| Feed::new(m.clone(), o.seed.wrapping_add(k as u64)))
        .collect();
    let mut tally = Tally::default();
    let now = || halyard_stix::time::format_rfc3339_millis(unix_millis());
    // Each organisation's identity, to every sector it is in (TLP:CLEAR: the sharing policy
    // shares it with all of them).
    for (n, f) in nodes.iter().zip(&feeds) {
        publish(&agent, n, nodes, None, vec![f.identity(&now())], &mut tally)?;
    }
    let start = Instant::now();
    let period = Duration::from_secs_f64(1.0 / o.rate);
    let mut next = start;
    let mut next_report = start + Duration::from_secs(5);
    let mut bursts = 0usize;
    loop {
        if stop.load(Ordering::SeqCst)
            || o.seconds
                .is_some_and(|s| start.elapsed().as_secs_f64() >= s)
        {
            break;
        }
        let mut step = || -> Result<(), Failure> {
            for (n, f) in nodes.iter().zip(feeds.iter_mut()) {
                let sector = n.sectors[bursts % n.sectors.len()].clone();
                let objects = f.burst(&sector, &now());
                publish(&agent, n, nodes, Some(&sector), objects, &mut tally)?;
            }
            if Instant::now() >= next_report {
                report(&agent, nodes, &tally, start.elapsed())?;
                next_report += Duration::from_secs(5);
            }
            Ok(())
        };
        match step() {
            Ok(()) => {}
            // Ctrl-C reaches the nodes too (one process group): a request may fail on the way.
            Err(_) if stop.load(Ordering::SeqCst) => break,
            Err(e) => return Err(e),
        }
        bursts += 1;
        next += period;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    if stop.load(Ordering::SeqCst) {
        out!(
            "interrupted: published {}, shared {}, held for review {}; the nodes stop",
            tally.published,
            tally.shared,
            tally.queued
        );
        return Ok(ExitCode::SUCCESS);
    }
    // What is owed arrives within moments; wait for it, then say where things stand.
    let end = Instant::now() + SETTLE;
    let mut delivered = received(&agent, nodes)?.iter().sum::<u64>();
    while delivered < tally.owed && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
        delivered = received(&agent, nodes)?.iter().sum::<u64>();
    }
    report(&agent, nodes, &tally, start.elapsed())?;
    if delivered < tally.owed {
        eprintln!(
            "halyard-cti demo: {} of {} deliveries arrived within {SETTLE:?} of the end",
            delivered, tally.owed
        );
        return Ok(ExitCode::FAILURE);
    }
    out!("stopped; every object shared reached every member of its sector");
    Ok(ExitCode::SUCCESS)
}

fn unix_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Posts `objects` to node `n` for `sector` (`None`: as the sharing policy says) and counts
/// what became of them.
fn publish(
    agent: &ureq::Agent,
    n: &NodeProc,
    nodes: &[NodeProc],
    sector: Option<&str>,
    objects: Vec<Value>,
    tally: &mut Tally,
) -> Result<(), Failure> {
    let bundle = json!({
        "type": "bundle",
        "id": halyard_cti::ids::new_id("bundle"),
        "objects": objects,
    });
    let url = match sector {
        Some(s) => format!("{}/api/v1/objects?sector={s}", n.base),
        None => format!("{}/api/v1/objects", n.base),
    };
    let mut resp = agent
        .post(&url)
        .header("Authorization", &n.auth)
        .header("Content-Type", "application/json")
        .send(bundle.to_string().as_bytes())
        .map_err(|e| format!("{url}: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    if status != 200 {
        return Err(Failure::from(format!(
            "{} refused the feed's bundle ({status}): {}",
            n.org,
            text.trim()
        )));
    }
    let report: Value = serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))?;
    for r in report["results"].as_array().into_iter().flatten() {
        tally.published += 1;
        match r["disposition"].as_str() {
            Some("shared") => {
                tally.shared += 1;
                for s in r["sectors"].as_array().into_iter().flatten() {
                    let s = s.as_str().unwrap_or_default();
                    let others = nodes
                        .iter()
                        .filter(|m| m.org != n.org && m.sectors.iter().any(|x| x == s))
                        .count();
                    tally.owed += others as u64;
                }
            }
            Some("queued") => tally.queued += 1,
            _ => {}
        }
    }
    Ok(())
}

/// Each node's count of objects received over DDS.
fn received(agent: &ureq::Agent, nodes: &[NodeProc]) -> Result<Vec<u64>, Failure> {
    nodes
        .iter()
        .map(|n| {
            Ok(status(agent, n)?["counters"]["received"]
                .as_u64()
                .unwrap_or(0))
        })
        .collect()
}

fn status(agent: &ureq::Agent, n: &NodeProc) -> Result<Value, Failure> {
    let url = format!("{}/api/v1/status", n.base);
    let mut resp = agent
        .get(&url)
        .header("Authorization", &n.auth)
        .call()
        .map_err(|e| format!("{url}: {e}"))?;
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| Failure::from(format!("{url}: {e}: {text}")))
}

fn report(
    agent: &ureq::Agent,
    nodes: &[NodeProc],
    t: &Tally,
    elapsed: Duration,
) -> Result<(), Failure> {
    let mut per_node = Vec::new();
    let mut delivered = 0;
    for n in nodes {
        let s = status(agent, n)?;
        let rx = s["counters"]["received"].as_u64().unwrap_or(0);
        delivered += rx;
        per_node.push(format!(
            "{} received {rx}, {} in review",
            n.org,
            s["pending_reviews"].as_u64().unwrap_or(0)
        ));
    }
    let pct = if t.owed == 0 {
        100.0
    } else {
        100.0 * delivered as f64 / t.owed as f64
    };
    out!(
        "[{:>4.0} s] feeds published {}, shared {}, held for review {}; delivered {delivered} of {} owed ({pct:.1} %) | {}",
        elapsed.as_secs_f64(),
        t.published,
        t.shared,
        t.queued,
        t.owed,
        per_node.join("; ")
    );
    Ok(())
}
