//! `halyard-cti demo` as a newcomer runs it: three node processes start, each prints a
//! dashboard URL that answers with its login page and a TAXII URL that answers discovery with
//! the printed login while the demo runs, the feeds'
//! objects reach every member of their sectors, and the demo stops cleanly when its time is
//! up, leaving no node behind.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const TAXII: &str = "application/taxii+json;version=2.1";

#[test]
fn the_demo_starts_three_nodes_that_answer_and_delivers_everything_shared() {
    let dir = std::env::temp_dir().join(format!("halyard-cti-demo-test-{}", std::process::id()));
    let mut demo = Command::new(env!("CARGO_BIN_EXE_halyard-cti"))
        .args(["demo", "--seconds", "8", "--rate", "2", "--base-port", "0"])
        .args(["--domain", "218", "--dir"])
        .arg(&dir)
        .env("HALYARD_INTERFACE", "lo")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the demo");
    let stdout = demo.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    // Each node: its URL line, then its logins line.
    let mut nodes = Vec::new();
    let mut seen = Vec::new();
    let mut dashboards = Vec::new();
    while nodes.len() < 3 {
        let Some(line) = lines.next() else {
            panic!("the demo ended before naming three nodes: {seen:#?}");
        };
        seen.push(line.clone());
        if let Some(at) = line.find("TAXII ") {
            let url = line[at + 6..].split_whitespace().next().unwrap_or_default();
            let dashboard = line
                .split("dashboard ")
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .unwrap_or_default();
            dashboards.push(dashboard.to_string());
            let logins = lines.next().unwrap_or_default();
            seen.push(logins.clone());
            let password = logins
                .split("admin / ")
                .nth(1)
                .and_then(|s| s.split(',').next())
                .unwrap_or_default()
                .to_string();
            nodes.push((url.to_string(), password));
        }
    }
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(10)))
            .build(),
    );
    for (url, password) in &nodes {
        use base64::Engine as _;
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("admin:{password}"));
        let mut resp = agent
            .get(url)
            .header("Authorization", &format!("Basic {auth}"))
            .header("Accept", TAXII)
            .call()
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(resp.status().as_u16(), 200, "{url}");
        let body: serde_json::Value =
            serde_json::from_str(&resp.body_mut().read_to_string().unwrap_or_default())
                .expect("discovery is JSON");
        assert!(
            body["api_roots"].as_array().is_some_and(|a| !a.is_empty()),
            "{body}"
        );
    }
    for url in &dashboards {
        // Without a session the dashboard sends the browser to its login form.
        let mut resp = agent
            .get(url)
            .call()
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(resp.status().as_u16(), 200, "{url}");
        let page = resp.body_mut().read_to_string().unwrap_or_default();
        assert!(page.contains("action=\"/ui/login\""), "{url}: {page}");
    }
    assert_eq!(dashboards.len(), 3, "{seen:#?}");
    let rest: Vec<String> = lines.collect();
    let status = demo.wait().expect("demo exit");
    let mut err = String::new();
    if let Some(mut e) = demo.stderr.take() {
        use std::io::Read as _;
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "{rest:#?}\n{err}");
    assert!(
        rest.iter()
            .any(|l| l.contains("every object shared reached every member")),
        "{rest:#?}"
    );
    // The last figures: something was shared, and all of it delivered.
    let last = rest
        .iter()
        .rev()
        .find(|l| l.contains("owed ("))
        .expect("delivery figures");
    let delivered = last
        .split("delivered ")
        .nth(1)
        .and_then(|s| s.split(" owed").next())
        .unwrap_or_default();
    let (got, owed) = delivered.split_once(" of ").expect("N of M");
    assert_eq!(got, owed, "{last}");
    assert!(owed.parse::<u64>().is_ok_and(|n| n > 0), "{last}");
    // The nodes are gone: their ports no longer answer.
    for (url, _) in &nodes {
        assert!(agent.get(url).call().is_err(), "{url} still answers");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
