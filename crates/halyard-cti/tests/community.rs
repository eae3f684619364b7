//! A community of real node processes with real DDS Security, made by `halyard-cti community
//! init`: three organisations in two sectors and an outsider in a third. An object reaches
//! exactly the nodes its marking and sector allow (seen through each node's TAXII server);
//! AMBER waits for a second person; a node killed with -9 and restarted, and a node started
//! late, end with every object; the outsider's node and a TAXII user without the sector get
//! nothing.

// A process test reads the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use base64::Engine as _;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_halyard-cti");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-cti-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A running `halyard-cti serve`; killed with -9 when dropped.
struct NodeProc {
    child: Child,
    base: String,
    password: String,
    log: PathBuf,
}

impl NodeProc {
    fn start(dir: &Path, org: &str) -> NodeProc {
        let config = dir.join(org).join("node.toml");
        let log = dir.join(format!("{org}.log"));
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let mut child = Command::new(BIN)
            .args(["serve", "--config"])
            .arg(&config)
            .env("HALYARD_INTERFACE", "lo")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("TAXII 2.1: ") {
                    let _ = tx.send(url.trim_end_matches("/taxii2/").to_string());
                }
            }
        });
        let base = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(b) => b,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "{org} did not print its TAXII URL; its log:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            }
        };
        let password = std::fs::read_to_string(dir.join(org).join("admin.password"))
            .unwrap()
            .trim()
            .to_string();
        NodeProc {
            child,
            base,
            password,
            log,
        }
    }

    fn auth(&self) -> String {
        basic("admin", &self.password)
    }

    fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for NodeProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build(),
    )
}

const TAXII: &str = "application/taxii+json;version=2.1";

fn get(url: &str, auth: &str) -> (u16, serde_json::Value) {
    let mut r = agent()
        .get(url)
        .header("Authorization", auth)
        .header("Accept", TAXII)
        .call()
        .unwrap();
    let status = r.status().as_u16();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&body).unwrap_or_default())
}

fn post_bundle(
    node: &NodeProc,
    sector: Option<&str>,
    bundle: &serde_json::Value,
) -> serde_json::Value {
    post_bundle_as(node, &node.auth(), sector, bundle)
}

fn post_bundle_as(
    node: &NodeProc,
    auth: &str,
    sector: Option<&str>,
    bundle: &serde_json::Value,
) -> serde_json::Value {
    let url = match sector {
        Some(s) => format!("{}/api/v1/objects?sector={s}", node.base),
        None => format!("{}/api/v1/objects", node.base),
    };
    let mut r = agent()
        .post(&url)
        .header("Authorization", auth)
        .header("Content-Type", "application/json")
        .send(bundle.to_string().as_bytes())
        .unwrap();
    let status = r.status().as_u16();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    assert_eq!(status, 200, "POST {url}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The ids of the objects in a node's TAXII collection (sector, tlp), all pages.
fn collection_ids(
    node: &NodeProc,
    auth: &str,
    sector: &str,
    tlp: &str,
) -> Result<Vec<String>, u16> {
    let id = halyard_cti::ids::name_based_uuid("collection", &format!("{sector}/{tlp}"));
    let mut url = format!(
        "{}/taxii2/api/collections/{id}/objects/?limit=1000",
        node.base
    );
    let mut ids = Vec::new();
    loop {
        let (status, v) = get(&url, auth);
        if status != 200 {
            return Err(status);
        }
        for o in v["objects"].as_array().into_iter().flatten() {
            ids.push(o["id"].as_str().unwrap_or_default().to_string());
        }
        match (v["more"].as_bool(), v["next"].as_str()) {
            (Some(true), Some(next)) => {
                url = format!(
                    "{}/taxii2/api/collections/{id}/objects/?limit=1000&next={next}",
                    node.base
                )
            }
            _ => return Ok(ids),
        }
    }
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool, logs: &[&NodeProc]) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut text = String::new();
    for n in logs {
        text += &format!(
            "--- {}\n{}\n",
            n.log.display(),
            std::fs::read_to_string(&n.log).unwrap_or_default()
        );
    }
    panic!("timed out: {what}\n{text}");
}

fn green() -> &'static str {
    "marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb"
}

fn amber() -> &'static str {
    "marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421"
}

fn indicator(n: u32, marking: &str, ip: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "indicator",
        "spec_version": "2.1",
        "id": format!("indicator--a1b2c3d4-0000-4000-8000-{n:012}"),
        "created": "2026-03-01T10:00:00.000Z",
        "modified": "2026-03-01T10:00:00.000Z",
        "name": format!("C2 server {n}"),
        "pattern": format!("[ipv4-addr:value = '{ip}']"),
        "pattern_type": "stix",
        "valid_from": "2026-03-01T10:00:00Z",
        "object_marking_refs": [marking],
    })
}

fn bundle(objects: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({
        "type": "bundle",
        "id": format!("bundle--{}", halyard_cti::ids::random_uuid()),
        "objects": objects,
    })
}

fn init_community(dir: &Path, domain: u32) {
    let out = Command::new(BIN)
        .args(["community", "init", "--dir"])
        .arg(dir)
        .args(["--org", "acme", "--sector", "finance", "--sector", "energy"])
        .args(["--org", "beta", "--sector", "finance"])
        .args(["--org", "gamma", "--sector", "energy"])
        .args(["--org", "delta", "--sector", "health"])
        .args(["--domain", &domain.to_string(), "--base-port", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "community init: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn has(node: &NodeProc, sector: &str, tlp: &str, id: &str) -> bool {
    collection_ids(node, &node.auth(), sector, tlp)
        .map(|ids| ids.iter().any(|i| i == id))
        .unwrap_or(false)
}

#[test]
fn objects_reach_exactly_the_nodes_their_marking_and_sector_allow() {
    let dir = tmp("community");
    init_community(&dir, 210);
    let acme = NodeProc::start(&dir, "acme");
    let beta = NodeProc::start(&dir, "beta");
    let gamma = NodeProc::start(&dir, "gamma");
    let delta = NodeProc::start(&dir, "delta");
    let all = [&acme, &beta, &gamma, &delta];

    // GREEN from acme to both its sectors: beta (finance) and gamma (energy) get it.
    let both = indicator(1, green(), "198.51.100.1");
    let r = post_bundle(&acme, None, &bundle(vec![both.clone()]));
    assert_eq!(r["results"][0]["disposition"], "shared", "{r}");
    let id1 = both["id"].as_str().unwrap();
    wait_until(
        "beta and gamma have the GREEN object",
        Duration::from_secs(60),
        || has(&beta, "finance", "green", id1) && has(&gamma, "energy", "green", id1),
        &all,
    );

    // GREEN to finance only: beta gets it, gamma never.
    let fin = indicator(2, green(), "198.51.100.2");
    post_bundle(&acme, Some("finance"), &bundle(vec![fin.clone()]));
    let id2 = fin["id"].as_str().unwrap();
    wait_until(
        "beta has the finance-only object",
        Duration::from_secs(30),
        || has(&beta, "finance", "green", id2),
        &all,
    );

    // AMBER from beta waits for review; a second reviewer approves; acme then has it.
    let am = indicator(3, amber(), "198.51.100.3");
    let r = post_bundle(&beta, Some("finance"), &bundle(vec![am.clone()]));
    assert_eq!(r["results"][0]["disposition"], "queued", "{r}");
    let review = r["results"][0]["review"].as_i64().unwrap();
    let id3 = am["id"].as_str().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert!(!has(&acme, "finance", "amber", id3), "shared before review");
    // The admin submitted it: four eyes needs someone else.
    let reviewer_pw = "a long reviewer passphrase";
    let out = Command::new(BIN)
        .args([
            "user",
            "add",
            "rita",
            "--role",
            "reviewer",
            "--password-env",
            "PW",
            "--config",
        ])
        .arg(dir.join("beta/node.toml"))
        .env("PW", reviewer_pw)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut resp = agent()
        .post(&format!("{}/api/v1/review/{review}/approve", beta.base))
        .header("Authorization", &basic("rita", reviewer_pw))
        .header("Content-Type", "application/json")
        .send(b"{}" as &[u8])
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        200,
        "{}",
        resp.body_mut().read_to_string().unwrap_or_default()
    );
    wait_until(
        "acme has the approved AMBER object",
        Duration::from_secs(30),
        || has(&acme, "finance", "amber", id3),
        &all,
    );

    // Nothing reached the outsider, nor gamma what was not for energy.
    std::thread::sleep(Duration::from_secs(2));
    assert!(!has(&gamma, "energy", "green", id2));
    assert!(!has(&gamma, "energy", "amber", id3));
    for tlp in ["clear", "green", "amber", "red"] {
        let ids = collection_ids(&delta, &delta.auth(), "health", tlp).unwrap();
        assert!(ids.is_empty(), "delta got {ids:?}");
    }
    // Through TAXII too: delta's node has no finance collection; a wrong password gets 401.
    assert_eq!(
        collection_ids(&delta, &delta.auth(), "finance", "green"),
        Err(404)
    );
    assert_eq!(
        collection_ids(
            &acme,
            &basic("admin", "wrong password!"),
            "finance",
            "green"
        ),
        Err(401)
    );
}

#[test]
fn a_node_killed_and_restarted_and_a_late_node_end_with_every_object() {
    let dir = tmp("restart");
    init_community(&dir, 211);
    let acme = NodeProc::start(&dir, "acme");
    let beta = NodeProc::start(&dir, "beta");
    let n = 40;
    let first: Vec<serde_json::Value> = (100..100 + n)
        .map(|i| indicator(i, green(), "203.0.113.9"))
        .collect();
    post_bundle(&acme, Some("finance"), &bundle(first.clone()));
    let ids: Vec<String> = first
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    wait_until(
        "beta has the first batch",
        Duration::from_secs(60),
        || {
            collection_ids(&beta, &beta.auth(), "finance", "green")
                .map(|got| ids.iter().all(|i| got.contains(i)))
                .unwrap_or(false)
        },
        &[&acme, &beta],
    );

    // beta dies (kill -9); acme shares more meanwhile; beta restarts and catches up.
    beta.kill9();
    let second: Vec<serde_json::Value> = (200..200 + n)
        .map(|i| indicator(i, green(), "203.0.113.10"))
        .collect();
    post_bundle(&acme, Some("finance"), &bundle(second.clone()));
    let beta = NodeProc::start(&dir, "beta");
    let all_ids: Vec<String> = first
        .iter()
        .chain(&second)
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    wait_until(
        "the restarted beta has both batches",
        Duration::from_secs(60),
        || {
            collection_ids(&beta, &beta.auth(), "finance", "green")
                .map(|got| all_ids.iter().all(|i| got.contains(i)))
                .unwrap_or(false)
        },
        &[&acme, &beta],
    );

    // acme is killed -9 right after its node accepted a batch: what it acknowledged to the
    // client is shared when it restarts, however far DDS had got.
    let third: Vec<serde_json::Value> = (400..400 + n)
        .map(|i| indicator(i, green(), "203.0.113.12"))
        .collect();
    post_bundle(&acme, Some("finance"), &bundle(third.clone()));
    acme.kill9();
    let acme = NodeProc::start(&dir, "acme");
    let third_ids: Vec<String> = third
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    wait_until(
        "beta has what acme accepted just before it was killed",
        Duration::from_secs(60),
        || {
            collection_ids(&beta, &beta.auth(), "finance", "green")
                .map(|got| third_ids.iter().all(|i| got.contains(i)))
                .unwrap_or(false)
        },
        &[&acme, &beta],
    );

    // gamma joins late (energy): it gets what acme shared with energy before it started.
    let energy: Vec<serde_json::Value> = (300..300 + n)
        .map(|i| indicator(i, green(), "203.0.113.11"))
        .collect();
    post_bundle(&acme, Some("energy"), &bundle(energy.clone()));
    std::thread::sleep(Duration::from_secs(1));
    let gamma = NodeProc::start(&dir, "gamma");
    let energy_ids: Vec<String> = energy
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    wait_until(
        "the late gamma has the energy batch",
        Duration::from_secs(60),
        || {
            collection_ids(&gamma, &gamma.auth(), "energy", "green")
                .map(|got| energy_ids.iter().all(|i| got.contains(i)))
                .unwrap_or(false)
        },
        &[&acme, &gamma],
    );
}
