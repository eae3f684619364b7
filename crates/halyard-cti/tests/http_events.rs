//! The live event stream (`GET /api/v1/events`) over real HTTP: each account gets, as it is
//! stored, every object version it may see and nothing else; an anonymous request is refused.

mod http_support;

use http_support::*;
use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

/// Opens the event stream as `who` and returns the JSON data of its `object` events as they
/// come.
fn watch(s: &Server, who: &str) -> mpsc::Receiver<serde_json::Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let resp = agent
        .get(&format!("{}/api/v1/events", s.base))
        .header("Authorization", &basic(who, PASSWORD))
        .call()
        .expect("event stream");
    assert_eq!(resp.status().as_u16(), 200);
    let kind = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut event = String::new();
        for line in BufReader::new(resp.into_body().into_reader()).lines() {
            let Ok(line) = line else { return };
            if let Some(e) = line.strip_prefix("event:") {
                event = e.trim().to_string();
            } else if let Some(d) = line.strip_prefix("data:") {
                if event == "object" {
                    let v = serde_json::from_str(d.trim()).expect("event data is JSON");
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

fn post(s: &Server, sector: &str, id: &str, name: &str) {
    let r = s
        .req(
            "POST",
            &format!("/api/v1/objects?sector={sector}"),
            Some("alice"),
        )
        .post(
            "application/json",
            &bundle(&[indicator(id, "2024-01-02T00:00:00.000Z", TLP_GREEN, name)]),
        );
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn each_account_sees_what_is_stored_within_its_sight_as_it_is_stored() {
    let s = Server::start();
    let all = watch(&s, "alice");
    let finance_green = watch(&s, "fin");
    let (fin, energy, marker) = (new_indicator_id(), new_indicator_id(), new_indicator_id());
    post(&s, "finance", &fin, "finance <b>one</b>");
    post(&s, "energy", &energy, "energy one");
    post(&s, "finance", &marker, "finance two");
    let wait = Duration::from_secs(5);
    let got: Vec<_> = (0..3)
        .map(|_| all.recv_timeout(wait).expect("alice's events"))
        .collect();
    let ids: Vec<_> = got
        .iter()
        .map(|e| e["id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ids, [fin.as_str(), energy.as_str(), marker.as_str()]);
    let first = &got[0];
    assert_eq!(first["type"], "indicator");
    assert_eq!(first["name"], "finance <b>one</b>");
    assert_eq!(first["tlp"], "green");
    assert_eq!(first["sector"], "finance");
    assert_eq!(first["origin"], "acme");
    assert_eq!(first["received"], false);
    assert!(first["stored_at_ns"].as_i64().is_some_and(|t| t > 0));
    // fin (finance only, up to GREEN): the finance objects, never the energy one.
    let a = finance_green.recv_timeout(wait).expect("fin's first event");
    let b = finance_green
        .recv_timeout(wait)
        .expect("fin's second event");
    assert_eq!(
        (a["id"].as_str(), b["id"].as_str()),
        (Some(fin.as_str()), Some(marker.as_str()))
    );
}

#[test]
fn the_event_stream_needs_an_account() {
    let s = Server::start();
    let r = s.req("GET", "/api/v1/events", None).get();
    assert_eq!(r.status, 401, "{}", r.body);
}
