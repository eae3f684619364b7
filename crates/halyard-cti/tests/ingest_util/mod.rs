//! Helpers of the ingest tests: a node over a temporary database with a recording sharer,
//! STIX objects as JSON, waiting for a condition, and a tiny HTTP server of canned answers.
#![allow(dead_code)]
#![allow(clippy::disallowed_methods)]

use halyard_cti::config::Config;
use halyard_cti::node::{Node, Outgoing, Sharer};
use halyard_cti::store::Db;
use halyard_stix::marking::Tlp;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Records what the node shares.
#[derive(Default)]
pub struct Recorder {
    pub shared: Mutex<Vec<Outgoing>>,
}

impl Sharer for Recorder {
    fn share(&self, out: &[Outgoing]) -> Result<(), String> {
        self.shared.lock().unwrap().extend_from_slice(out);
        Ok(())
    }
    fn dispose(&self, _id: &str, _tlp: Tlp, _sector: &str) -> Result<(), String> {
        Ok(())
    }
}

impl Recorder {
    pub fn shared_ids(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .shared
            .lock()
            .unwrap()
            .iter()
            .map(|o| o.object.id.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// The start of every test node's configuration: one sector, no DDS Security.
pub const BASE: &str = r#"
sectors = ["finance"]

[node]
organisation = "acme"
store = "data"
insecure = true
"#;

/// A fresh empty directory for one test.
pub fn tmp(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "halyard-cti-ingest-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A node whose configuration is [`BASE`] followed by `extra`, its store under `dir`.
pub fn node_in(dir: &Path, extra: &str) -> (Arc<Node>, Arc<Recorder>) {
    let cfg = Config::parse(&format!("{BASE}{extra}"), dir).unwrap();
    std::fs::create_dir_all(&cfg.node.store).unwrap();
    let db = Db::open(&cfg.db_path()).unwrap();
    let rec = Arc::new(Recorder::default());
    let node = Node::new(cfg, db, rec.clone()).unwrap();
    (Arc::new(node), rec)
}

pub fn tlp_ref(t: Tlp) -> &'static str {
    match t {
        Tlp::Clear => "marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487",
        Tlp::Green => "marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb",
        Tlp::Amber => "marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421",
        Tlp::AmberStrict => "marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003",
        Tlp::Red => "marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1",
    }
}

/// The id of indicator `n`.
pub fn indicator_id(n: u32) -> String {
    format!("indicator--3f1c2a7e-5d4b-4e8a-9c01-{n:012}")
}

/// A valid indicator marked `tlp`.
pub fn indicator(n: u32, tlp: Tlp) -> Value {
    json!({
        "type": "indicator",
        "spec_version": "2.1",
        "id": indicator_id(n),
        "created": "2026-01-01T00:00:00.000Z",
        "modified": "2026-01-01T00:00:00.000Z",
        "name": format!("indicator {n}"),
        "pattern": format!("[ipv4-addr:value = '198.51.100.{}']", n % 250),
        "pattern_type": "stix",
        "valid_from": "2026-01-01T00:00:00Z",
        "object_marking_refs": [tlp_ref(tlp)],
    })
}

/// A bundle of these objects.
pub fn bundle(objects: Vec<Value>) -> String {
    json!({
        "type": "bundle",
        "id": "bundle--0d8a6f2e-7b1c-4c3d-9e5f-1a2b3c4d5e6f",
        "objects": objects,
    })
    .to_string()
}

/// The version string the store keeps for an object made by [`indicator`].
pub const VERSION: &str = "2026-01-01T00:00:00.000Z";

/// Whether the node stores this version of `id`.
pub fn has(node: &Node, id: &str) -> bool {
    node.db().has_version(id, VERSION).unwrap()
}

/// Polls `cond` every 20 ms until it holds or `timeout` passes; whether it held.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A request as the canned server saw it.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Query parameters, percent-decoded.
    pub query: BTreeMap<String, String>,
    /// Headers, names in lower case.
    pub headers: BTreeMap<String, String>,
}

/// An answer: status, extra headers, body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// 200 with a TAXII envelope and, if given, `X-TAXII-Date-Added-Last`.
    pub fn envelope(
        objects: Vec<Value>,
        more: bool,
        next: Option<&str>,
        last: Option<&str>,
    ) -> Answer {
        let mut env = json!({ "more": more, "objects": objects });
        if let Some(n) = next {
            env["next"] = json!(n);
        }
        let mut headers = vec![(
            "Content-Type".to_string(),
            "application/taxii+json;version=2.1".to_string(),
        )];
        if let Some(l) = last {
            headers.push(("X-TAXII-Date-Added-Last".into(), l.into()));
        }
        Answer {
            status: 200,
            headers,
            body: env.to_string(),
        }
    }
}

type Handler = dyn Fn(&Request) -> Answer + Send + Sync;

/// An HTTP/1.1 server on 127.0.0.1 answering each request with `handler`, one connection at
/// a time, closing each after its answer; it records every request.
pub struct CannedServer {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl CannedServer {
    pub fn start(handler: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> CannedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let handler: Arc<Handler> = Arc::new(handler);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if let Some(req) = read_request(&stream) {
                    log.lock().unwrap().push(req.clone());
                    write_answer(stream, &handler(&req));
                }
            }
        });
        CannedServer { addr, requests }
    }

    /// The URL of a collection on this server.
    pub fn collection_url(&self) -> String {
        format!("http://{}/api1/collections/c1/", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let (path, query_text) = target.split_once('?').unwrap_or((&target, ""));
    let mut req = Request {
        method,
        path: path.to_string(),
        ..Request::default()
    };
    for pair in query_text.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        req.query.insert(decode(k), decode(v));
    }
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            req.headers
                .insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Some(req)
}

fn write_answer(mut stream: TcpStream, a: &Answer) {
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        a.status,
        a.body.len()
    );
    for (k, v) in &a.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(a.body.as_bytes());
    let _ = stream.flush();
}

/// Percent-decoding of a query component (`+` is a space).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
