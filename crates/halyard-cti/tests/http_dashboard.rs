//! The dashboard's sessions over real HTTP: the login form opens a session held in an
//! HttpOnly, SameSite=Strict cookie; pages need it; a change made with the cookie needs the
//! session's CSRF token (a form field, or `X-CSRF-Token` for the REST API) and a same-origin
//! form; logout and a disabled account end the session. The pages carry a content security
//! policy that allows the node's own scripts only.

mod http_support;

use http_support::*;

/// An agent that does not follow redirects: the tests look at them.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

struct Answer {
    status: u16,
    location: String,
    cookie: String,
    csp: String,
    body: String,
}

fn call(s: &Server, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let url = format!("{}{path}", s.base);
    let a = agent();
    let resp = if method == "GET" {
        let mut r = a.get(&url);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.call()
    } else {
        let mut r = a.post(&url);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.send(body)
    };
    let mut resp = resp.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let h = |n: &str| {
        resp.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let (location, cookie, csp) = (h("location"), h("set-cookie"), h("content-security-policy"));
    Answer {
        status: resp.status().as_u16(),
        location,
        cookie,
        csp,
        body: resp.body_mut().read_to_string().unwrap_or_default(),
    }
}

const FORM: &str = "application/x-www-form-urlencoded";

/// Logs `name` in; the `Cookie` header value of its session.
fn login(s: &Server, name: &str) -> String {
    let a = call(
        s,
        "POST",
        "/ui/login",
        &[("content-type", FORM), ("origin", &s.base)],
        &format!(
            "name={name}&password={}&next=%2Fui%2Freview",
            PASSWORD.replace(' ', "+")
        ),
    );
    assert_eq!(a.status, 303, "{}", a.body);
    assert_eq!(a.location, "/ui/review");
    assert!(
        a.cookie.contains("HttpOnly") && a.cookie.contains("SameSite=Strict"),
        "{}",
        a.cookie
    );
    a.cookie.split(';').next().unwrap().to_string()
}

/// The CSRF token a page of the session carries.
fn csrf_of(s: &Server, cookie: &str) -> String {
    let page = call(s, "GET", "/ui/", &[("cookie", cookie)], "");
    assert_eq!(page.status, 200, "{}", page.body);
    let at = page
        .body
        .find("name=\"csrf-token\" content=\"")
        .expect("csrf meta")
        + 27;
    page.body[at..].split('"').next().unwrap().to_string()
}

#[test]
fn pages_need_a_session_and_a_wrong_password_gets_the_form_again() {
    let s = Server::start();
    let a = call(&s, "GET", "/ui/search?q=x", &[], "");
    assert_eq!(a.status, 303);
    assert_eq!(a.location, "/ui/login?next=%2Fui%2Fsearch%3Fq%3Dx");
    let form = call(&s, "GET", &a.location, &[], "");
    assert_eq!(form.status, 200);
    // minijinja escapes `/` too.
    assert!(
        form.body.contains("value=\"&#x2f;ui&#x2f;search?q=x\""),
        "{}",
        form.body
    );
    let before = s.counter(|c| &c.auth_failures);
    let wrong = call(
        &s,
        "POST",
        "/ui/login",
        &[("content-type", FORM)],
        "name=rita&password=guess",
    );
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("not accepted") && wrong.cookie.is_empty());
    assert_eq!(s.counter(|c| &c.auth_failures), before + 1);
    // A login posted by another site's page is refused before the password is checked.
    let forged = call(
        &s,
        "POST",
        "/ui/login",
        &[("content-type", FORM), ("origin", "http://evil.example")],
        &format!("name=rita&password={}", PASSWORD.replace(' ', "+")),
    );
    assert_eq!(forged.status, 403);
}

#[test]
fn a_session_reads_pages_and_the_api_and_its_changes_need_the_csrf_token() {
    let s = Server::start();
    let cookie = login(&s, "rita");
    let page = call(&s, "GET", "/ui/", &[("cookie", &cookie)], "");
    assert_eq!(page.status, 200);
    assert!(page.csp.contains("script-src 'self'") && !page.csp.contains("unsafe-inline"));
    let status = call(&s, "GET", "/api/v1/status", &[("cookie", &cookie)], "");
    assert_eq!(status.status, 200, "{}", status.body);
    // A REST change with the cookie alone (what another site's form can send) is refused.
    let bare = call(
        &s,
        "POST",
        "/api/v1/review/1/approve",
        &[("cookie", &cookie), ("content-type", "text/plain")],
        "a=b",
    );
    assert_eq!(bare.status, 403);
    assert!(bare.body.contains("X-CSRF-Token"), "{}", bare.body);
    let token = csrf_of(&s, &cookie);
    let with_token = call(
        &s,
        "POST",
        "/api/v1/review/1/approve",
        &[("cookie", &cookie), ("x-csrf-token", &token)],
        "",
    );
    assert_eq!(with_token.status, 404, "authenticated: there is no item 1");
    // A dashboard form without the token, or from another origin, is refused.
    let no_token = call(
        &s,
        "POST",
        "/ui/review/1",
        &[("cookie", &cookie), ("content-type", FORM)],
        "action=approve",
    );
    assert_eq!(no_token.status, 403);
    assert!(no_token.body.contains("CSRF"), "{}", no_token.body);
    let elsewhere = call(
        &s,
        "POST",
        "/ui/review/1",
        &[
            ("cookie", &cookie),
            ("content-type", FORM),
            ("origin", "http://127.0.0.1:1"),
        ],
        &format!("action=approve&csrf={token}"),
    );
    assert_eq!(elsewhere.status, 403);
    assert!(
        elsewhere.body.contains("another site"),
        "{}",
        elsewhere.body
    );
    // Another session's token is not this one's.
    let other = login(&s, "rob");
    let other_token = csrf_of(&s, &other);
    let swapped = call(
        &s,
        "POST",
        "/api/v1/review/1/approve",
        &[("cookie", &cookie), ("x-csrf-token", &other_token)],
        "",
    );
    assert_eq!(swapped.status, 403);
}

#[test]
fn logout_and_a_disabled_account_end_the_session() {
    let s = Server::start();
    let cookie = login(&s, "rita");
    let token = csrf_of(&s, &cookie);
    let out = call(
        &s,
        "POST",
        "/ui/logout",
        &[("cookie", &cookie), ("content-type", FORM)],
        &format!("csrf={token}"),
    );
    assert_eq!(out.status, 303);
    assert!(out.cookie.contains("Max-Age=0"));
    let after = call(&s, "GET", "/ui/", &[("cookie", &cookie)], "");
    assert_eq!(after.status, 303, "the session ended");
    let api = call(&s, "GET", "/api/v1/status", &[("cookie", &cookie)], "");
    assert_eq!(api.status, 401);

    let cookie = login(&s, "rob");
    let mut rob = s.node.db().user("rob").unwrap().unwrap();
    rob.disabled = true;
    s.node.db().update_user(&rob).unwrap();
    let page = call(&s, "GET", "/ui/", &[("cookie", &cookie)], "");
    assert_eq!(
        page.status, 303,
        "a disabled account's session ends at once"
    );
}

#[test]
fn an_analyst_sees_no_review_queue_and_a_string_is_escaped() {
    let s = Server::start();
    let evil = "<script>alert(1)</script>";
    let id = new_indicator_id();
    let obj = indicator(&id, "2026-03-01T10:00:00.000Z", TLP_GREEN, evil);
    let r = s
        .req("POST", "/api/v1/objects?sector=finance", Some("alice"))
        .post("application/json", &bundle(&[obj]));
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = login(&s, "alice");
    let queue = call(&s, "GET", "/ui/review", &[("cookie", &cookie)], "");
    assert_eq!(queue.status, 403);
    let page = call(
        &s,
        "GET",
        &format!("/ui/objects/{id}"),
        &[("cookie", &cookie)],
        "",
    );
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(!page.body.contains(evil));
    assert!(page
        .body
        .contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
}
