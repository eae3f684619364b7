//! Hostile and malformed input over real HTTP is refused with a clear status and message,
//! stored data is returned as data, replays change nothing, and every response carries the
//! security headers.

mod http_support;

use http_support::*;
use serde_json::json;

const SECURITY_HEADERS: [(&str, &str); 5] = [
    (
        "content-security-policy",
        "default-src 'none'; frame-ancestors 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
];

fn assert_secure(r: &Reply) {
    for (k, v) in SECURITY_HEADERS {
        assert_eq!(r.header(k), Some(v), "{k} on a {} answer", r.status);
    }
    assert!(r.header("server").is_none());
}

#[test]
fn oversized_bodies_are_refused_with_413() {
    let s = Server::start();
    let big = format!("{{\"objects\":[],\"pad\":\"{}\"}}", "x".repeat(100_000));
    let path = format!("{}objects/", collection_path("finance", "green"));
    let r = s.taxii("POST", &path, "alice").post(TAXII, &big);
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(r.json()["http_status"], "413");
    assert_secure(&r);
    let r = s
        .req("POST", "/api/v1/objects", Some("alice"))
        .post("application/json", &big);
    assert_eq!(r.status, 413);
    assert!(r.json()["error"].as_str().unwrap().contains("65536"));
    assert_eq!(s.counter(|c| &c.refused_input), 2);
}

#[test]
fn deep_nesting_malformed_json_and_unknown_fields_are_refused_with_400() {
    let s = Server::start();
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    for body in [deep.as_str(), "{\"type\": \"bundle\", ", "not json at all"] {
        let r = s
            .req("POST", "/api/v1/misp", Some("alice"))
            .post("application/json", body);
        assert_eq!(r.status, 400, "{body:.40}: {}", r.body);
        assert!(r.json()["error"].is_string());
        let r = s
            .req("POST", "/api/v1/objects", Some("alice"))
            .post("application/json", body);
        assert_eq!(r.status, 400, "{body:.40}: {}", r.body);
    }
    let r = s
        .req("POST", "/api/v1/objects", Some("alice"))
        .post("text/plain", "{}");
    assert_eq!(r.status, 415);
    let r = s
        .req("POST", "/api/v1/review/1/approve", Some("rob"))
        .post("application/json", r#"{"notes": "typo"}"#);
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("notes"));
    assert!(s.counter(|c| &c.refused_input) >= 8);
}

#[test]
fn an_invalid_object_is_reported_with_its_index_and_nothing_is_stored() {
    let s = Server::start();
    let good = indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "ok",
    );
    let mut bad = indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "bad",
    );
    bad["created"] = json!("last tuesday");
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post("application/json", &bundle(&[good, bad]));
    assert_eq!(r.status, 400, "{}", r.body);
    let e = r.json();
    assert_eq!(e["index"], 1, "{e}");
    assert!(e["error"].is_string());
    assert!(s.sharer.ids().is_empty());
    assert_eq!(s.node.db().object_count().unwrap(), 0);
}

#[test]
fn markup_in_a_description_is_stored_and_returned_as_json_data() {
    let s = Server::start();
    let id = new_indicator_id();
    let script = "<script>alert(document.cookie)</script>";
    let mut obj = indicator(&id, "2024-01-02T00:00:00.000Z", TLP_GREEN, "xss");
    obj["description"] = json!(script);
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post("application/json", &bundle(&[obj]));
    assert_eq!(r.status, 200, "{}", r.body);
    let r = s
        .req("GET", &format!("/api/v1/objects/{id}"), Some("reader"))
        .get();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_secure(&r);
    assert_eq!(r.json()["versions"][0]["object"]["description"], script);
    let r = s
        .taxii(
            "GET",
            &format!("{}objects/{id}/", collection_path("finance", "green")),
            "reader",
        )
        .get();
    assert_eq!(r.header("content-type"), Some(TAXII));
    assert_eq!(r.json()["objects"][0]["description"], script);
}

#[test]
fn sql_looking_search_terms_are_only_words() {
    let s = Server::start();
    let id = new_indicator_id();
    let obj = indicator(
        &id,
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "quokka campaign",
    );
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post("application/json", &bundle(&[obj]));
    assert_eq!(r.status, 200, "{}", r.body);
    let rows = s.node.db().object_count().unwrap();
    for q in [
        "'%20OR%201=1--",
        "%22%29%20OR%20%28%22a",
        "x';%20DROP%20TABLE%20objects;--",
        "NEAR(a%20b)%20*%20^",
    ] {
        let r = s
            .req("GET", &format!("/api/v1/search?q={q}"), Some("reader"))
            .get();
        assert_eq!(r.status, 200, "{q}: {}", r.body);
        assert!(r.json()["results"].as_array().unwrap().is_empty(), "{q}");
    }
    let r = s
        .req("GET", "/api/v1/search?q=quokka", Some("reader"))
        .get();
    assert_eq!(r.json()["results"][0]["id"], id.as_str());
    assert_eq!(
        s.node.db().object_count().unwrap(),
        rows,
        "nothing dropped or added"
    );
}

#[test]
fn a_replayed_post_is_a_duplicate_and_shared_once() {
    let s = Server::start();
    let obj = indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "once",
    );
    let body = envelope(&[obj]);
    let path = format!("{}objects/", collection_path("finance", "green"));
    let first = s.taxii("POST", &path, "alice").post(TAXII, &body).json();
    let again = s.taxii("POST", &path, "alice").post(TAXII, &body).json();
    assert_eq!(first["success_count"], 1);
    assert_eq!(again["success_count"], 1);
    assert!(again["successes"][0]["message"]
        .as_str()
        .unwrap()
        .contains("known"));
    assert_eq!(s.sharer.ids().len(), 1);
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post("application/json", &body);
    assert_eq!(r.json()["results"][0]["disposition"], "duplicate");
    assert_eq!(s.sharer.ids().len(), 1);
}

#[test]
fn every_response_carries_the_security_headers_and_errors_have_bodies() {
    let s = Server::start();
    let cases = [
        s.taxii("GET", "/taxii2/", "reader").get(),
        s.req("GET", "/taxii2/", None).get(),
        s.taxii("GET", "/taxii2/nowhere/", "reader").get(),
        s.req("GET", "/nowhere", Some("reader")).get(),
        s.req("PUT", "/api/v1/status", Some("reader"))
            .send(Some(b"{}")),
        s.req("GET", "/taxii2/", Some("reader"))
            .header("accept", "text/html")
            .get(),
        s.req("GET", "/api/v1/search?limit=lots", Some("reader"))
            .get(),
    ];
    let statuses: Vec<u16> = cases.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 401, 404, 404, 405, 406, 400]);
    for r in &cases {
        assert_secure(r);
        if r.status >= 400 {
            let e = r.json();
            assert!(
                e["error"].is_string()
                    || e["http_status"].as_str() == Some(r.status.to_string().as_str()),
                "{e}"
            );
        }
    }
}
