//! The harness of the HTTP tests: a node over a real database in a temporary directory,
//! sharing through a recorder, served on a loopback port; a blocking client; accounts.
#![allow(dead_code)]

use argon2::password_hash::{PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine;
use halyard_cti::config::Config;
use halyard_cti::node::{Node, Outgoing, Sharer};
use halyard_cti::store::{Db, Role, User};
use halyard_stix::marking::Tlp;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// TLP 1.0 marking definitions of the STIX 2.1 specification.
pub const TLP_CLEAR: &str = "marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9";
pub const TLP_GREEN: &str = "marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da";
pub const TLP_AMBER: &str = "marking-definition--f88d31f6-486f-44da-b317-01333bde0b82";
pub const TLP_RED: &str = "marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed";

/// The password of every test account.
pub const PASSWORD: &str = "a long test password";

/// A Sharer that records what the node shares.
#[derive(Default)]
pub struct RecordingSharer {
    pub shared: Mutex<Vec<Outgoing>>,
    pub disposed: Mutex<Vec<(String, Tlp, String)>>,
}

impl Sharer for RecordingSharer {
    fn share(&self, out: &[Outgoing]) -> Result<(), String> {
        self.shared.lock().unwrap().extend_from_slice(out);
        Ok(())
    }
    fn dispose(&self, id: &str, tlp: Tlp, sector: &str) -> Result<(), String> {
        self.disposed
            .lock()
            .unwrap()
            .push((id.to_string(), tlp, sector.to_string()));
        Ok(())
    }
}

impl RecordingSharer {
    /// The ids shared so far, in order.
    pub fn ids(&self) -> Vec<String> {
        let s = self.shared.lock().unwrap();
        s.iter().map(|o| o.object.id.clone()).collect()
    }
}

/// An argon2id hash cheap enough for unoptimised test builds (the server reads the cost from
/// the PHC string).
pub fn cheap_hash(pw: &str) -> String {
    let salt = SaltString::encode_b64(b"halyard-test-salt").unwrap();
    Argon2::new(
        Algorithm::Argon2id,
        Version::V0x13,
        Params::new(64, 1, 1, None).unwrap(),
    )
    .hash_password(pw.as_bytes(), &salt)
    .unwrap()
    .to_string()
}

pub fn user(name: &str, role: Role, sectors: Option<&[&str]>, max_tlp: Tlp) -> User {
    User {
        name: name.into(),
        role,
        password_hash: cheap_hash(PASSWORD),
        sectors: sectors.map(|s| s.iter().map(|x| x.to_string()).collect()),
        max_tlp,
        disabled: false,
    }
}

/// The accounts every test server has.
pub fn accounts() -> Vec<User> {
    vec![
        user("admin", Role::Admin, None, Tlp::Red),
        user("alice", Role::Analyst, None, Tlp::Red),
        user("bob", Role::Analyst, None, Tlp::Red),
        user("rita", Role::Reviewer, None, Tlp::Red),
        user("rob", Role::Reviewer, None, Tlp::Red),
        user("reader", Role::ReadOnly, None, Tlp::Red),
        user("fin", Role::Analyst, Some(&["finance"]), Tlp::Green),
    ]
}

/// A node served over loopback, stopped and its directory removed on drop.
pub struct Server {
    pub base: String,
    pub node: Arc<Node>,
    pub sharer: Arc<RecordingSharer>,
    pub dir: PathBuf,
    agent: ureq::Agent,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The configuration of test servers: small pages and bodies, AMBER and above reviewed.
pub fn config_text(store: &std::path::Path) -> String {
    format!(
        r#"sectors = ["finance", "energy"]
[node]
organisation = "acme"
store = {store:?}
insecure = true
[limits]
max_body_bytes = 65536
page_size = 5
max_depth = 16
[review]
min_tlp = "amber"
types = []
on_sanitized = false
"#,
        store = store.display().to_string()
    )
}

impl Server {
    pub fn start() -> Server {
        let dir = std::env::temp_dir().join(format!(
            "halyard-cti-http-{}",
            halyard_cti::ids::random_uuid()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = Config::parse(&config_text(&dir), &dir).unwrap();
        let mut db = Db::open(&cfg.db_path()).unwrap();
        for u in accounts() {
            db.create_user(&u).unwrap();
        }
        let sharer = Arc::new(RecordingSharer::default());
        let node = Arc::new(Node::new(cfg, db, sharer.clone()).unwrap());
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let served = node.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let stop = async move {
                    let _ = stop_rx.await;
                };
                halyard_cti::http::serve(served, listener, stop)
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv().unwrap();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Server {
            base: format!("http://{addr}"),
            node,
            sharer,
            dir,
            agent,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// A request as `who` (None: no credentials).
    pub fn req(&self, method: &str, path: &str, who: Option<&str>) -> Req<'_> {
        Req {
            server: self,
            method: method.to_string(),
            path: path.to_string(),
            headers: who
                .map(|w| vec![("authorization".to_string(), basic(w, PASSWORD))])
                .unwrap_or_default(),
        }
    }

    /// A TAXII request as `who` (with the TAXII Accept).
    pub fn taxii(&self, method: &str, path: &str, who: &str) -> Req<'_> {
        self.req(method, path, Some(who))
            .header("accept", "application/taxii+json;version=2.1")
    }

    pub fn counter(
        &self,
        f: impl Fn(&halyard_cti::node::Counters) -> &std::sync::atomic::AtomicU64,
    ) -> u64 {
        f(self.node.counters()).load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn basic(name: &str, pw: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{name}:{pw}"))
    )
}

/// A request being built.
pub struct Req<'a> {
    server: &'a Server,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

/// An answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Req<'_> {
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.retain(|(x, _)| !x.eq_ignore_ascii_case(k));
        self.headers.push((k.to_string(), v.to_string()));
        self
    }

    pub fn send(self, body: Option<&[u8]>) -> Reply {
        let url = format!("{}{}", self.server.base, self.path);
        let agent = &self.server.agent;
        let resp = match (self.method.as_str(), body) {
            ("GET", _) => {
                let mut r = agent.get(&url);
                for (k, v) in &self.headers {
                    r = r.header(k, v);
                }
                r.call()
            }
            ("DELETE", _) => {
                let mut r = agent.delete(&url);
                for (k, v) in &self.headers {
                    r = r.header(k, v);
                }
                r.call()
            }
            ("POST", b) => {
                let mut r = agent.post(&url);
                for (k, v) in &self.headers {
                    r = r.header(k, v);
                }
                r.send(b.unwrap_or(&[]))
            }
            (m, _) => {
                let mut r = agent.put(&url);
                assert_eq!(m, "PUT");
                for (k, v) in &self.headers {
                    r = r.header(k, v);
                }
                r.send(body.unwrap_or(&[]))
            }
        };
        let mut resp = resp.unwrap_or_else(|e| panic!("{} {url}: {e}", self.method));
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        let body = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .unwrap_or_default();
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn get(self) -> Reply {
        self.send(None)
    }

    /// POSTs JSON text with `content_type`.
    pub fn post(self, content_type: &str, body: &str) -> Reply {
        self.header("content-type", content_type)
            .send(Some(body.as_bytes()))
    }
}

/// A STIX 2.1 indicator marked `marking`, `modified` at `version` (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
pub fn indicator(id: &str, version: &str, marking: &str, name: &str) -> Value {
    json!({
        "type": "indicator",
        "spec_version": "2.1",
        "id": id,
        "created": "2024-01-01T00:00:00.000Z",
        "modified": version,
        "name": name,
        "pattern": "[ipv4-addr:value = '198.51.100.1']",
        "pattern_type": "stix",
        "valid_from": "2024-01-01T00:00:00Z",
        "object_marking_refs": [marking],
    })
}

/// A new indicator id.
pub fn new_indicator_id() -> String {
    format!("indicator--{}", halyard_cti::ids::random_uuid())
}

/// A TAXII envelope of objects.
pub fn envelope(objects: &[Value]) -> String {
    json!({ "objects": objects }).to_string()
}

/// A STIX bundle of objects.
pub fn bundle(objects: &[Value]) -> String {
    json!({
        "type": "bundle",
        "id": format!("bundle--{}", halyard_cti::ids::random_uuid()),
        "objects": objects,
    })
    .to_string()
}

pub const TAXII: &str = "application/taxii+json;version=2.1";

/// The path of a collection's resource.
pub fn collection_path(sector: &str, tlp: &str) -> String {
    format!(
        "/taxii2/api/collections/{}/",
        halyard_cti::ids::name_based_uuid("collection", &format!("{sector}/{tlp}"))
    )
}
