//! Proves that the poller works against the OASIS TAXII 2.1 reference server, medallion (its
//! memory backend, basic authentication, pages capped by `max_page_size` and followed by
//! `next`): every object is ingested, the bookmark is its `X-TAXII-Date-Added-Last`, and the
//! next poll asks only for what was added after it.
//!
//! Medallion is a Python package. Without it the test says so and passes, unless
//! `HALYARD_CTI_REQUIRE_MEDALLION` is set, when its absence fails the test.
#![allow(clippy::disallowed_methods)]

mod ingest_util;

use halyard_cti::ingest::poll::Poller;
use halyard_stix::marking::Tlp;
use ingest_util::*;
use serde_json::{json, Value};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const COLLECTION: &str = "91a7b528-80eb-42ed-a74d-c6fbd5a26116";
const OBJECTS: u32 = 5;

/// The medallion child process, killed when dropped.
struct Medallion(Child);

impl Drop for Medallion {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn medallion_available() -> bool {
    Command::new("python3")
        .args(["-c", "import medallion.scripts.run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The date_added of object `n` in the collection.
fn date_added(n: u32) -> String {
    format!("2026-03-01T10:00:{n:02}.000000Z")
}

/// A memory-backend data file: one API root, one collection of [`OBJECTS`] indicators.
fn data_file(port: u16) -> Value {
    let objects: Vec<Value> = (1..=OBJECTS).map(|n| indicator(n, Tlp::Green)).collect();
    let manifest: Vec<Value> = (1..=OBJECTS)
        .map(|n| {
            json!({
                "id": indicator_id(n),
                "date_added": date_added(n),
                "version": VERSION,
                "media_type": "application/stix+json;version=2.1",
            })
        })
        .collect();
    json!({
        "/discovery": {
            "title": "Halyard test server",
            "default": format!("http://127.0.0.1:{port}/api1/"),
            "api_roots": [format!("http://127.0.0.1:{port}/api1/")],
        },
        "api1": {
            "information": {
                "title": "Test API root",
                "versions": ["application/taxii+json;version=2.1"],
                "max_content_length": 10_485_760,
            },
            "status": [],
            "collections": [{
                "id": COLLECTION,
                "title": "Indicators",
                "can_read": true,
                "can_write": false,
                "media_types": ["application/stix+json;version=2.1"],
                "objects": objects,
                "manifest": manifest,
            }],
        },
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run_medallion(dir: &Path, port: u16) -> Medallion {
    let data = dir.join("data.json");
    std::fs::write(&data, data_file(port).to_string()).unwrap();
    let config = dir.join("medallion.json");
    let cfg = json!({
        "backend": {
            "module": "medallion.backends.memory_backend",
            "module_class": "MemoryBackend",
            "filename": data,
        },
        "users": { "halyard": "s3cret" },
        "taxii": { "max_page_size": 2 },
    });
    std::fs::write(&config, cfg.to_string()).unwrap();
    let child = Command::new("python3")
        .args([
            "-m",
            "medallion.scripts.run",
            "--host",
            "127.0.0.1",
            "--port",
        ])
        .arg(port.to_string())
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs");
    let server = Medallion(child);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    assert!(
        wait_until(Duration::from_secs(30), || TcpStream::connect(addr).is_ok()),
        "medallion did not listen on {addr}"
    );
    server
}

#[test]
fn the_poller_reads_a_collection_of_the_reference_server() {
    if !medallion_available() {
        if std::env::var_os("HALYARD_CTI_REQUIRE_MEDALLION").is_some() {
            panic!(
                "HALYARD_CTI_REQUIRE_MEDALLION is set and `python3 -c 'import medallion'` fails"
            );
        }
        eprintln!("skipped: medallion (pip install medallion) is not installed for python3");
        return;
    }
    let dir = tmp("medallion");
    let port = free_port();
    let _server = run_medallion(&dir, port);
    let url = format!("http://127.0.0.1:{port}/api1/collections/{COLLECTION}");
    let (node, rec) = node_in(
        &dir,
        &format!(
            "[[poll]]\nname = \"oasis\"\ncollection_url = \"{url}\"\nusername = \"halyard\"\n\
             password = \"s3cret\"\n"
        ),
    );
    let mut poller = Poller::new(node.clone(), node.config().polls[0].clone()).unwrap();
    let never = AtomicBool::new(false);
    let report = poller.poll_once(&never).unwrap();
    // Pages of two: 2 + 2 + 1.
    assert_eq!(
        (report.pages, report.objects, report.refused_pages),
        (3, 5, 0)
    );
    for n in 1..=OBJECTS {
        assert!(has(&node, &indicator_id(n)), "indicator {n}");
    }
    assert_eq!(rec.shared_ids().len(), OBJECTS as usize);
    let last = date_added(OBJECTS);
    assert_eq!(report.bookmark.as_deref(), Some(last.as_str()));
    assert_eq!(
        node.db().bookmark("poll:oasis").unwrap().as_deref(),
        Some(last.as_str())
    );
    // Nothing was added since: one empty page, the bookmark unchanged.
    let report = poller.poll_once(&never).unwrap();
    assert_eq!((report.pages, report.objects), (1, 0));
    assert_eq!(report.bookmark.as_deref(), Some(last.as_str()));

    // Wrong credentials: an error from the server, the bookmark kept.
    let (node2, _) = node_in(
        &tmp("medallion-auth"),
        &format!(
            "[[poll]]\nname = \"oasis\"\ncollection_url = \"{url}/\"\nusername = \"halyard\"\n\
             password = \"wrong\"\n"
        ),
    );
    let mut p2 = Poller::new(node2.clone(), node2.config().polls[0].clone()).unwrap();
    let e = p2.poll_once(&never).unwrap_err();
    assert!(e.to_string().contains("401"), "{e}");
}
