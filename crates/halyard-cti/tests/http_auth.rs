//! Authentication and roles over real HTTP: wrong credentials are refused, counted and
//! audited without flooding the log; tokens and account changes take effect at once; each
//! role does only what it may, and nobody approves their own submission.
// A test reads the wall clock to make a token that has expired.
#![allow(clippy::disallowed_methods)]

mod http_support;

use halyard_cti::accounts;
use http_support::*;

fn audit_lines(s: &Server, action: &str, actor: &str) -> usize {
    s.node
        .db()
        .audit_log(None, 10_000)
        .unwrap()
        .iter()
        .filter(|a| a.entry.action == action && a.entry.actor == actor)
        .count()
}

#[test]
fn no_credentials_get_the_challenge_for_both_schemes() {
    let s = Server::start();
    for path in ["/taxii2/", "/api/v1/status"] {
        let r = s.req("GET", path, None).header("accept", TAXII).get();
        assert_eq!(r.status, 401, "{path}");
        let challenge = r.header("www-authenticate").unwrap();
        assert!(challenge.contains("Basic realm=\"halyard-cti\"") && challenge.contains("Bearer"));
    }
    assert_eq!(
        s.counter(|c| &c.auth_failures),
        0,
        "a challenge is not a failure"
    );
}

#[test]
fn a_wrong_password_is_refused_counted_and_audited_once_per_burst() {
    let s = Server::start();
    for _ in 0..3 {
        let r = s
            .req("GET", "/api/v1/status", None)
            .header("authorization", &basic("alice", "not her password"))
            .get();
        assert_eq!(r.status, 401);
        assert!(r.json()["error"].is_string());
    }
    let r = s
        .req("GET", "/api/v1/status", None)
        .header("authorization", &basic("nobody", "whatever password"))
        .get();
    assert_eq!(r.status, 401);
    assert_eq!(s.counter(|c| &c.auth_failures), 4);
    assert_eq!(audit_lines(&s, "login-failed", "alice"), 1);
    assert_eq!(audit_lines(&s, "login-failed", "nobody"), 1);
    let r = s.req("GET", "/api/v1/status", Some("alice")).get();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["user"]["name"], "alice");
}

#[test]
fn a_bearer_token_works_until_it_expires() {
    let s = Server::start();
    let good = accounts::new_token();
    let old = accounts::new_token();
    {
        let mut db = s.node.db();
        let now_us = 1_000_000
            * std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as i64;
        db.create_token("bob", &accounts::token_hash(&good), "ci", None)
            .unwrap();
        db.create_token("bob", &accounts::token_hash(&old), "old", Some(now_us - 1))
            .unwrap();
    }
    let r = s
        .req("GET", "/api/v1/status", None)
        .header("authorization", &format!("Bearer {good}"))
        .get();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["user"]["name"], "bob");
    for t in [old.as_str(), "hcti_forged"] {
        let r = s
            .req("GET", "/api/v1/status", None)
            .header("authorization", &format!("Bearer {t}"))
            .get();
        assert_eq!(r.status, 401, "{t}");
    }
    assert_eq!(s.counter(|c| &c.auth_failures), 2);
}

#[test]
fn disabling_an_account_or_changing_its_password_takes_effect_at_once() {
    let s = Server::start();
    assert_eq!(
        s.req("GET", "/api/v1/status", Some("bob")).get().status,
        200
    );
    let mut bob = s.node.db().user("bob").unwrap().unwrap();
    bob.disabled = true;
    s.node.db().update_user(&bob).unwrap();
    assert_eq!(
        s.req("GET", "/api/v1/status", Some("bob")).get().status,
        401
    );

    assert_eq!(
        s.req("GET", "/api/v1/status", Some("alice")).get().status,
        200
    );
    let mut alice = s.node.db().user("alice").unwrap().unwrap();
    alice.password_hash = cheap_hash("a brand new password");
    s.node.db().update_user(&alice).unwrap();
    assert_eq!(
        s.req("GET", "/api/v1/status", Some("alice")).get().status,
        401,
        "the remembered login no longer matches"
    );
    let r = s
        .req("GET", "/api/v1/status", None)
        .header("authorization", &basic("alice", "a brand new password"))
        .get();
    assert_eq!(r.status, 200);
}

#[test]
fn read_only_accounts_cannot_publish() {
    let s = Server::start();
    let obj = indicator(
        &new_indicator_id(),
        "2024-01-02T00:00:00.000Z",
        TLP_GREEN,
        "x",
    );
    let path = format!("{}objects/", collection_path("finance", "green"));
    let r = s
        .taxii("POST", &path, "reader")
        .post(TAXII, &envelope(std::slice::from_ref(&obj)));
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.json()["http_status"], "403");
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("reader"))
        .post("application/json", &bundle(&[obj]));
    assert_eq!(r.status, 403);
    assert_eq!(s.counter(|c| &c.forbidden), 2);
    assert!(s.sharer.ids().is_empty());
    assert_eq!(
        s.req("GET", "/api/v1/review", Some("alice")).get().status,
        403,
        "analysts do not read the review queue"
    );
    assert_eq!(
        s.req("GET", "/api/v1/audit", Some("reader")).get().status,
        403
    );
}

/// Submits an AMBER indicator as `who`; returns its review number.
fn submit_for_review(s: &Server, who: &str) -> (String, i64) {
    let id = new_indicator_id();
    let obj = indicator(&id, "2024-01-02T00:00:00.000Z", TLP_AMBER, "needs eyes");
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some(who))
        .post("application/json", &bundle(&[obj]));
    assert_eq!(r.status, 200, "{}", r.body);
    let res = &r.json()["results"][0];
    assert_eq!(res["disposition"], "queued", "{res}");
    (id, res["review"].as_i64().unwrap())
}

#[test]
fn four_eyes_the_submitter_cannot_approve_but_another_reviewer_can() {
    let s = Server::start();
    let (id, n) = submit_for_review(&s, "rita");
    let approve = format!("/api/v1/review/{n}/approve");
    let r = s
        .req("POST", &approve, Some("alice"))
        .post("application/json", "{}");
    assert_eq!(r.status, 403, "analysts do not approve: {}", r.body);
    let r = s
        .req("POST", &approve, Some("rita"))
        .post("application/json", r#"{"note":"mine"}"#);
    assert_eq!(r.status, 403, "not one's own submission: {}", r.body);
    assert!(s.sharer.ids().is_empty());

    let item = s
        .req("GET", &format!("/api/v1/review/{n}"), Some("rob"))
        .get();
    assert_eq!(item.status, 200, "{}", item.body);
    assert_eq!(item.json()["state"], "pending");
    let r = s
        .req("POST", &approve, Some("rob"))
        .post("application/json", r#"{"note":"checked"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let d = r.json();
    assert_eq!(d["state"], "approved");
    assert_eq!(d["decided_by"], "rob");
    assert_eq!(s.sharer.ids(), [id]);

    let again = s.req("POST", &approve, Some("admin")).send(None);
    assert_eq!(again.status, 409, "{}", again.body);
}

#[test]
fn a_rejected_submission_is_never_shared() {
    let s = Server::start();
    let (_id, n) = submit_for_review(&s, "alice");
    let list = s
        .req("GET", "/api/v1/review?state=pending", Some("rob"))
        .get();
    assert_eq!(list.status, 200);
    assert!(list.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["id"] == n));
    let r = s
        .req("POST", &format!("/api/v1/review/{n}/reject"), Some("rob"))
        .post("application/json", r#"{"note":"too sensitive"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["state"], "rejected");
    assert!(s.sharer.ids().is_empty());
}
