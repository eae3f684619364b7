//! The TAXII 2.1 server answers discovery, collections, objects, versions, manifests and
//! status resources over real HTTP as the specification and its clients expect.

mod http_support;

use http_support::*;
use serde_json::Value;

/// Posts green indicators to the finance collection as alice; returns their ids in order.
fn post_green(s: &Server, n: usize) -> Vec<String> {
    let ids: Vec<String> = (0..n).map(|_| new_indicator_id()).collect();
    let objects: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            indicator(
                id,
                "2024-01-02T00:00:00.000Z",
                TLP_GREEN,
                &format!("ind {i}"),
            )
        })
        .collect();
    let path = format!("{}objects/", collection_path("finance", "green"));
    let r = s
        .taxii("POST", &path, "alice")
        .post(TAXII, &envelope(&objects));
    assert_eq!(r.status, 202, "{}", r.body);
    ids
}

#[test]
fn discovery_and_the_api_root_describe_the_server_with_absolute_urls() {
    let s = Server::start();
    let r = s.taxii("GET", "/taxii2/", "reader").get();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some(TAXII));
    let d = r.json();
    let root = format!("{}/taxii2/api/", s.base);
    assert_eq!(d["default"], root.as_str());
    assert_eq!(d["api_roots"][0], root.as_str());
    assert!(d["title"].as_str().unwrap().contains("acme"));

    let a = s.taxii("GET", "/taxii2/api/", "reader").get().json();
    assert_eq!(a["versions"][0], TAXII);
    assert_eq!(a["max_content_length"], 65536);
}

#[test]
fn collections_are_those_the_user_may_see() {
    let s = Server::start();
    let titles = |who: &str| -> Vec<(String, bool)> {
        let r = s.taxii("GET", "/taxii2/api/collections/", who).get();
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["collections"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|c| {
                assert_eq!(c["can_read"], true);
                assert_eq!(c["media_types"][0], "application/stix+json;version=2.1");
                (
                    c["title"].as_str().unwrap().to_string(),
                    c["can_write"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    let admin = titles("admin");
    for t in [
        "finance · TLP:GREEN",
        "energy · TLP:AMBER",
        "local · TLP:GREEN",
    ] {
        assert!(admin.iter().any(|(x, w)| x == t && *w), "{t} in {admin:?}");
    }
    let fin = titles("fin");
    assert!(
        fin.iter().any(|(x, _)| x == "finance · TLP:GREEN"),
        "{fin:?}"
    );
    assert!(!fin.iter().any(|(x, _)| x.starts_with("energy")), "{fin:?}");
    assert!(
        !fin.iter()
            .any(|(x, _)| x.contains("AMBER") || x.contains("RED")),
        "{fin:?}"
    );
    let reader = titles("reader");
    assert!(
        !reader.is_empty() && reader.iter().all(|(_, w)| !w),
        "{reader:?}"
    );

    // A collection out of sight answers as if it did not exist.
    let r = s
        .taxii("GET", &collection_path("energy", "green"), "fin")
        .get();
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(r.json()["http_status"], "404");
    let c = s
        .taxii("GET", &collection_path("finance", "green"), "fin")
        .get()
        .json();
    assert_eq!(c["title"], "finance · TLP:GREEN");
}

#[test]
fn objects_are_paged_with_next_until_every_one_is_read() {
    let s = Server::start();
    let posted = post_green(&s, 12);
    let base = format!("{}objects/", collection_path("finance", "green"));
    let mut seen = Vec::new();
    let mut next: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &next {
            Some(n) => format!("{base}?limit=100&next={n}"),
            None => format!("{base}?limit=100"),
        };
        let r = s.taxii("GET", &path, "reader").get();
        assert_eq!(r.status, 200, "{}", r.body);
        let first = r.header("x-taxii-date-added-first").unwrap().to_string();
        let last = r.header("x-taxii-date-added-last").unwrap().to_string();
        assert!(first <= last && last.ends_with('Z'), "{first} {last}");
        let e = r.json();
        let objs = e["objects"].as_array().unwrap();
        assert!(objs.len() <= 5, "the page size caps the limit");
        seen.extend(objs.iter().map(|o| o["id"].as_str().unwrap().to_string()));
        pages += 1;
        if e["more"] == true {
            next = Some(e["next"].as_str().unwrap().to_string());
        } else {
            assert!(e.get("next").is_none());
            break;
        }
        assert!(pages < 10);
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, posted, "every object once, in the order added");
    let r = s
        .taxii("GET", &format!("{base}?next=bogus"), "reader")
        .get();
    assert_eq!(r.status, 400);
}

#[test]
fn added_after_returns_only_what_was_added_later() {
    let s = Server::start();
    let base = format!("{}objects/", collection_path("finance", "green"));
    let early = post_green(&s, 2);
    let r = s.taxii("GET", &base, "reader").get();
    let bookmark = r.header("x-taxii-date-added-last").unwrap().to_string();
    let late = post_green(&s, 2);
    let e = s
        .taxii("GET", &format!("{base}?added_after={bookmark}"), "reader")
        .get()
        .json();
    let ids: Vec<&str> = e["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, late.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!ids.contains(&early[0].as_str()));
    let r = s
        .taxii("GET", &format!("{base}?added_after=yesterday"), "reader")
        .get();
    assert_eq!(r.status, 400);
}

#[test]
fn match_filters_select_by_id_type_and_version() {
    let s = Server::start();
    let coll = collection_path("finance", "green");
    let id = new_indicator_id();
    let v1 = indicator(&id, "2024-01-02T00:00:00.000Z", TLP_GREEN, "v1");
    let v2 = indicator(&id, "2024-01-03T00:00:00.000Z", TLP_GREEN, "v2");
    let other = post_green(&s, 1);
    let r = s
        .taxii("POST", &format!("{coll}objects/"), "alice")
        .post(TAXII, &envelope(&[v1, v2]));
    assert_eq!(r.status, 202, "{}", r.body);

    let get = |q: &str| {
        s.taxii("GET", &format!("{coll}objects/?{q}"), "reader")
            .get()
            .json()
    };
    let names = |e: &Value| -> Vec<String> {
        e["objects"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|o| o["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        names(&get(&format!("match[id]={id}"))),
        ["v2"],
        "the latest by default"
    );
    assert_eq!(
        names(&get(&format!("match[id]={id}&match[version]=first"))),
        ["v1"]
    );
    assert_eq!(
        names(&get(&format!("match[id]={id}&match[version]=all"))),
        ["v1", "v2"]
    );
    assert_eq!(
        names(&get(&format!(
            "match[id]={id}&match[version]=2024-01-02T00:00:00.000Z"
        ))),
        ["v1"]
    );
    assert_eq!(
        get("match[type]=indicator")["objects"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        get("match[type]=malware"),
        serde_json::json!({}),
        "empty envelope"
    );
    assert_eq!(
        get(&format!("match[id]={}", other[0]))["objects"][0]["id"],
        other[0].as_str()
    );
    assert_eq!(
        names(&get(&format!("match[id]={id}&match[spec_version]=2.1"))),
        ["v2"]
    );
    assert_eq!(
        get(&format!("match[id]={id}&match[spec_version]=2.0")),
        serde_json::json!({})
    );

    // Get An Object: the latest version unless asked otherwise.
    let one = s
        .taxii("GET", &format!("{coll}objects/{id}/"), "reader")
        .get();
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(names(&one.json()), ["v2"]);
    let none = s
        .taxii(
            "GET",
            &format!("{coll}objects/{}/", new_indicator_id()),
            "reader",
        )
        .get();
    assert_eq!(none.status, 404);
}

#[test]
fn versions_and_the_manifest_list_every_version() {
    let s = Server::start();
    let coll = collection_path("finance", "green");
    let id = new_indicator_id();
    let versions = ["2024-01-02T00:00:00.000Z", "2024-01-03T00:00:00.000Z"];
    let objs: Vec<Value> = versions
        .iter()
        .map(|v| indicator(&id, v, TLP_GREEN, "x"))
        .collect();
    let r = s
        .taxii("POST", &format!("{coll}objects/"), "alice")
        .post(TAXII, &envelope(&objs));
    assert_eq!(r.status, 202, "{}", r.body);

    let r = s
        .taxii("GET", &format!("{coll}objects/{id}/versions/"), "reader")
        .get();
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["more"], false);
    assert_eq!(v["versions"], serde_json::json!(versions));

    let m = s
        .taxii(
            "GET",
            &format!("{coll}manifest/?match[version]=all"),
            "reader",
        )
        .get();
    assert_eq!(m.status, 200, "{}", m.body);
    assert!(m.header("x-taxii-date-added-first").is_some());
    let recs = m.json()["objects"].as_array().unwrap().clone();
    assert_eq!(recs.len(), 2);
    for (rec, v) in recs.iter().zip(versions) {
        assert_eq!(rec["id"], id.as_str());
        assert_eq!(rec["version"], v);
        assert_eq!(rec["media_type"], "application/stix+json;version=2.1");
        assert!(rec["date_added"].as_str().unwrap().ends_with('Z'));
    }
}

#[test]
fn a_posted_envelope_is_readable_and_its_status_kept_for_its_owner() {
    let s = Server::start();
    let coll = collection_path("finance", "green");
    let id = new_indicator_id();
    let r = s.taxii("POST", &format!("{coll}objects/"), "alice").post(
        TAXII,
        &envelope(&[indicator(&id, "2024-01-02T00:00:00.000Z", TLP_GREEN, "x")]),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.header("content-type"), Some(TAXII));
    let st = r.json();
    assert_eq!(st["status"], "complete");
    assert_eq!(st["total_count"], 1);
    assert_eq!(st["success_count"], 1);
    assert_eq!(st["successes"][0]["id"], id.as_str());
    assert_eq!(st["pending_count"], 0);
    assert_eq!(s.sharer.ids(), vec![id.clone()]);

    let path = format!("/taxii2/api/status/{}/", st["id"].as_str().unwrap());
    let mine = s.taxii("GET", &path, "alice").get();
    assert_eq!(mine.status, 200, "{}", mine.body);
    assert_eq!(mine.json()["id"], st["id"]);
    assert_eq!(s.taxii("GET", &path, "admin").get().status, 200);
    assert_eq!(s.taxii("GET", &path, "bob").get().status, 403);
    let unknown = "/taxii2/api/status/00000000-0000-4000-8000-000000000000/";
    assert_eq!(s.taxii("GET", unknown, "alice").get().status, 404);

    let got = s
        .taxii("GET", &format!("{coll}objects/{id}/"), "reader")
        .get()
        .json();
    assert_eq!(got["objects"][0]["id"], id.as_str());
}

#[test]
fn objects_needing_review_are_pending_in_the_status() {
    let s = Server::start();
    let coll = collection_path("finance", "amber");
    let id = new_indicator_id();
    let r = s.taxii("POST", &format!("{coll}objects/"), "alice").post(
        TAXII,
        &envelope(&[indicator(&id, "2024-01-02T00:00:00.000Z", TLP_AMBER, "x")]),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let st = r.json();
    assert_eq!(st["pending_count"], 1, "{st}");
    let msg = st["pendings"][0]["message"].as_str().unwrap();
    assert!(msg.starts_with("waiting for review "), "{msg}");
    assert!(s.sharer.ids().is_empty());
}

#[test]
fn objects_marked_above_the_collection_are_refused_whole() {
    let s = Server::start();
    let coll = collection_path("finance", "green");
    let ok = indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "ok",
    );
    let red = indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_RED,
        "red",
    );
    let r = s
        .taxii("POST", &format!("{coll}objects/"), "alice")
        .post(TAXII, &envelope(&[ok, red]));
    assert_eq!(r.status, 400, "{}", r.body);
    let e = r.json();
    assert_eq!(e["http_status"], "400");
    assert_eq!(e["details"]["index"], 1);
    assert!(s.sharer.ids().is_empty(), "all or nothing");
    let e = s
        .taxii("GET", &format!("{coll}objects/"), "reader")
        .get()
        .json();
    assert_eq!(e, serde_json::json!({}));
}

#[test]
fn the_media_types_are_enforced_with_406_and_415() {
    let s = Server::start();
    let coll = collection_path("finance", "green");
    let r = s
        .req("GET", "/taxii2/api/collections/", Some("reader"))
        .header("accept", "application/json")
        .get();
    assert_eq!(r.status, 406, "{}", r.body);
    assert_eq!(r.json()["http_status"], "406");
    for ok in [
        "application/taxii+json",
        "application/taxii+json;version=2.1",
        "*/*",
    ] {
        let r = s
            .req("GET", "/taxii2/api/collections/", Some("reader"))
            .header("accept", ok)
            .get();
        assert_eq!(r.status, 200, "{ok}");
    }
    let body = envelope(&[indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "x",
    )]);
    let r = s
        .taxii("POST", &format!("{coll}objects/"), "alice")
        .post("application/json", &body);
    assert_eq!(r.status, 415, "{}", r.body);
    assert_eq!(r.json()["http_status"], "415");
    let r = s
        .taxii("POST", &format!("{coll}objects/"), "alice")
        .post("application/taxii+json;version=2.0", &body);
    assert_eq!(r.status, 415);
}

#[test]
fn admins_delete_and_the_community_is_told() {
    let s = Server::start();
    let id = post_green(&s, 1).remove(0);
    let coll = collection_path("finance", "green");
    let path = format!("{coll}objects/{id}/");
    assert_eq!(s.taxii("DELETE", &path, "alice").get().status, 403);
    let missing = format!("{coll}objects/{}/", new_indicator_id());
    assert_eq!(s.taxii("DELETE", &missing, "admin").get().status, 404);
    let r = s.taxii("DELETE", &path, "admin").get();
    assert_eq!(r.status, 200, "{}", r.body);
    let disposed = s.sharer.disposed.lock().unwrap().clone();
    assert!(
        disposed
            .iter()
            .any(|(d, _, sector)| d == &id && sector == "finance"),
        "{disposed:?}"
    );
    assert_eq!(s.taxii("GET", &path, "reader").get().status, 404);
}
