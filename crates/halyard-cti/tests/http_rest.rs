//! The REST API over real HTTP: submitting bundles and MISP events, searching, reading an
//! object's versions, the audit log and the node's status, each within the user's sight.

mod http_support;

use http_support::*;
use serde_json::json;

#[test]
fn a_submitted_bundle_is_reported_per_object() {
    let s = Server::start();
    let green = new_indicator_id();
    let local = new_indicator_id();
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post(
            "application/stix+json;version=2.1",
            &bundle(&[indicator(
                &green,
                "2024-01-02T00:00:00.000Z",
                TLP_GREEN,
                "g",
            )]),
        );
    assert_eq!(r.status, 200, "{}", r.body);
    let res = &r.json()["results"][0];
    assert_eq!(res["id"], green.as_str());
    assert_eq!(res["version"], "2024-01-02T00:00:00.000Z");
    assert_eq!(res["disposition"], "shared");
    assert_eq!(res["sectors"], json!(["finance"]));

    let r = s
        .req("POST", "/api/v1/objects?sector=local", Some("alice"))
        .post(
            "application/json",
            &bundle(&[indicator(
                &local,
                "2024-01-02T00:00:00.000Z",
                TLP_GREEN,
                "l",
            )]),
        );
    assert_eq!(r.json()["results"][0]["disposition"], "local", "{}", r.body);
    assert_eq!(s.sharer.ids(), [green]);

    for bad in ["sector=nowhere", "tlp=purple"] {
        let r = s
            .req("POST", &format!("/api/v1/objects?{bad}"), Some("alice"))
            .post("application/json", &bundle(&[]));
        assert_eq!(r.status, 400, "{bad}");
    }
    let r = s
        .req("POST", "/api/v1/objects?sector=energy", Some("fin"))
        .post("application/json", &bundle(&[]));
    assert_eq!(r.status, 403, "fin is not in energy");
}

#[test]
fn a_misp_event_becomes_stix_and_is_ingested() {
    let s = Server::start();
    let event = json!({
        "Event": {
            "uuid": "5e1f6b5c-1b2c-4d3e-8f40-0a1b2c3d4e5f",
            "info": "phishing wave",
            "Orgc": { "uuid": "7a3b8d7e-3d4e-4f50-8b62-2c3d4e5f6071", "name": "acme" },
            "date": "2024-01-02",
            "timestamp": "1704153600",
            "threat_level_id": "2",
            "analysis": "1",
            "distribution": "1",
            "Tag": [{ "name": "tlp:green" }],
            "Attribute": [{
                "uuid": "6f2a7c6d-2c3d-4e4f-9a51-1b2c3d4e5f60",
                "type": "ip-dst",
                "category": "Network activity",
                "value": "198.51.100.7",
                "to_ids": true,
                "timestamp": "1704153600"
            }]
        }
    });
    let r = s
        .req("POST", "/api/v1/misp?sector=finance", Some("alice"))
        .post("application/json", &event.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.json()["results"].as_array().unwrap().is_empty());
    let r = s
        .req("POST", "/api/v1/misp", Some("alice"))
        .post("application/json", r#"{"not": "an event"}"#);
    assert_eq!(r.status, 400, "{}", r.body);
}

#[test]
fn search_and_object_reads_stay_within_the_users_sight() {
    let s = Server::start();
    let green = new_indicator_id();
    let amber = new_indicator_id();
    for (id, m, who) in [(&green, TLP_GREEN, "alice"), (&amber, TLP_AMBER, "alice")] {
        let r = s
            .req("POST", "/api/v1/objects?sector=finance", Some(who))
            .post(
                "application/json",
                &bundle(&[indicator(id, "2024-01-02T00:00:00.000Z", m, "walrus")]),
            );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    // The AMBER one waits for review; approve it so that it is stored.
    let n = s.node.db().review_items(None, 10).unwrap()[0].id;
    let r = s
        .req("POST", &format!("/api/v1/review/{n}/approve"), Some("rob"))
        .send(None);
    assert_eq!(r.status, 200, "{}", r.body);

    let ids = |who: &str, q: &str| -> Vec<String> {
        let r = s
            .req("GET", &format!("/api/v1/search?{q}"), Some(who))
            .get();
        assert_eq!(r.status, 200, "{}", r.body);
        let mut ids: Vec<String> = r.json()["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_str().unwrap().to_string())
            .collect();
        // A shared object is stored locally and in its sector: one row each.
        ids.sort();
        ids.dedup();
        ids
    };
    let all = ids("reader", "q=walrus");
    assert!(all.contains(&green) && all.contains(&amber), "{all:?}");
    assert_eq!(
        ids("fin", "q=walrus"),
        vec![green.clone()],
        "fin's clearance is GREEN"
    );
    assert_eq!(ids("reader", "q=walrus&tlp=amber"), vec![amber.clone()]);
    assert!(ids("reader", "q=walrus&since=2999-01-01T00:00:00Z").is_empty());

    assert_eq!(
        s.req("GET", &format!("/api/v1/objects/{amber}"), Some("fin"))
            .get()
            .status,
        404
    );
    let r = s
        .req("GET", &format!("/api/v1/objects/{amber}"), Some("reader"))
        .get();
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["versions"][0]["tlp"], "amber");
}

#[test]
fn the_status_and_the_audit_log_tell_what_the_node_did() {
    let s = Server::start();
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post(
            "application/json",
            &bundle(&[indicator(
                &new_indicator_id(),
                "2024-01-02T00:00:00.000Z",
                TLP_AMBER,
                "a",
            )]),
        );
    assert_eq!(r.status, 200, "{}", r.body);
    let st = s.req("GET", "/api/v1/status", Some("reader")).get().json();
    assert_eq!(st["organisation"], "acme");
    assert_eq!(st["sectors"], json!(["finance", "energy"]));
    assert_eq!(st["pending_reviews"], 1);
    assert_eq!(st["user"]["role"], "read-only");
    assert!(st["counters"]["queued"].as_u64().unwrap() >= 1);

    let a = s.req("GET", "/api/v1/audit?limit=1000", Some("rob")).get();
    assert_eq!(a.status, 200, "{}", a.body);
    let entries = a.json()["entries"].as_array().unwrap().clone();
    assert!(!entries.is_empty());
    let last_seq = entries.last().unwrap()["seq"].as_i64().unwrap();
    let after = s
        .req(
            "GET",
            &format!("/api/v1/audit?after={last_seq}"),
            Some("admin"),
        )
        .get()
        .json();
    assert!(after["entries"].as_array().unwrap().is_empty());
}
