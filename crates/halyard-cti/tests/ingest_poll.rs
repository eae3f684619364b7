//! Proves that the TAXII 2.1 poller, against a small canned server, follows `next` while
//! `more`, ingests every page into a real node, stores the `X-TAXII-Date-Added-Last`
//! bookmark and sends it as `added_after` on later polls and after a restart, skips a page it
//! refuses (counted and audited) past the bookmark, keeps the bookmark on server and transient
//! node failures, and ends promptly when stopped even while a request hangs.
#![allow(clippy::disallowed_methods)]

mod ingest_util;

use halyard_cti::config::Config;
use halyard_cti::ingest;
use halyard_cti::ingest::poll::{backoff, PollError, Poller};
use halyard_cti::node::Node;
use halyard_cti::store::Db;
use halyard_stix::marking::Tlp;
use ingest_util::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const T1: &str = "2026-02-01T00:00:01.000000Z";
const T2: &str = "2026-02-01T00:00:02.000000Z";
const T3: &str = "2026-02-01T00:00:03.000000Z";

/// Two pages (`more` and `next` between them), then, after T2, one new object.
fn two_pages(req: &Request) -> Answer {
    match (
        req.query.get("added_after").map(String::as_str),
        req.query.get("next").map(String::as_str),
    ) {
        (None, None) => Answer::envelope(
            vec![indicator(1, Tlp::Green), indicator(2, Tlp::Green)],
            true,
            Some("page-2"),
            Some(T1),
        ),
        (None, Some("page-2")) => {
            Answer::envelope(vec![indicator(3, Tlp::Green)], false, None, Some(T2))
        }
        (Some(T2), None) => Answer::envelope(vec![indicator(4, Tlp::Green)], false, None, Some(T3)),
        (Some(T3), None) => Answer::envelope(vec![], false, None, None),
        _ => Answer {
            status: 400,
            headers: vec![],
            body: r#"{"title": "unexpected query"}"#.into(),
        },
    }
}

fn poll_section(url: &str, extra: &str) -> String {
    format!(
        "[[poll]]\nname = \"remote\"\ncollection_url = \"{url}\"\nusername = \"halyard\"\n\
         password = \"s3cret\"\ninterval_secs = 1\n{extra}"
    )
}

fn poller(node: &Arc<Node>) -> Poller {
    Poller::new(node.clone(), node.config().polls[0].clone()).unwrap()
}

fn bookmark(node: &Node) -> Option<String> {
    node.db().bookmark("poll:remote").unwrap()
}

#[test]
fn pages_are_followed_ingested_and_the_bookmark_stored() {
    let server = CannedServer::start(two_pages);
    let dir = tmp("poll-pages");
    let (node, rec) = node_in(&dir, &poll_section(&server.collection_url(), ""));
    let never = AtomicBool::new(false);
    let report = poller(&node).poll_once(&never).unwrap();
    assert_eq!(
        (report.pages, report.objects, report.refused_pages),
        (2, 3, 0)
    );
    assert_eq!(report.bookmark.as_deref(), Some(T2));
    assert_eq!(bookmark(&node).as_deref(), Some(T2));
    for n in 1..=3 {
        assert!(has(&node, &indicator_id(n)), "indicator {n}");
    }
    assert_eq!(rec.shared_ids().len(), 3);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/api1/collections/c1/objects/");
        assert_eq!(
            r.headers.get("accept").map(String::as_str),
            Some("application/taxii+json;version=2.1")
        );
        // "halyard:s3cret"
        assert_eq!(
            r.headers.get("authorization").map(String::as_str),
            Some("Basic aGFseWFyZDpzM2NyZXQ=")
        );
        assert!(r.query.contains_key("limit"));
        assert!(!r.query.contains_key("added_after"));
    }
    assert_eq!(
        reqs[1].query.get("next").map(String::as_str),
        Some("page-2")
    );
    assert_eq!(reqs[0].query.get("limit"), reqs[1].query.get("limit"));
}

#[test]
fn later_polls_and_a_restarted_node_send_the_bookmark_as_added_after() {
    let server = CannedServer::start(two_pages);
    let dir = tmp("poll-restart");
    let extra = poll_section(&server.collection_url(), "");
    let (node, _rec) = node_in(&dir, &extra);
    let never = AtomicBool::new(false);
    let mut p = poller(&node);
    p.poll_once(&never).unwrap();
    let report = p.poll_once(&never).unwrap();
    assert_eq!((report.pages, report.objects), (1, 1));
    assert_eq!(bookmark(&node).as_deref(), Some(T3));
    assert!(has(&node, &indicator_id(4)));
    let reqs = server.requests();
    assert_eq!(
        reqs[2].query.get("added_after").map(String::as_str),
        Some(T2)
    );
    drop(p);
    drop(node);

    // A new node over the same database resumes after T3.
    let cfg = Config::parse(&format!("{BASE}{extra}"), &dir).unwrap();
    let db = Db::open(&cfg.db_path()).unwrap();
    let node = Arc::new(Node::new(cfg, db, Arc::new(Recorder::default())).unwrap());
    let report = poller(&node).poll_once(&never).unwrap();
    assert_eq!((report.pages, report.objects), (1, 0));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(
        reqs[3].query.get("added_after").map(String::as_str),
        Some(T3)
    );
    // No header on an empty page: the bookmark stays.
    assert_eq!(bookmark(&node).as_deref(), Some(T3));
}

#[test]
fn start_polls_in_a_thread_until_stopped() {
    let server = CannedServer::start(two_pages);
    let dir = tmp("poll-thread");
    let (node, _rec) = node_in(&dir, &poll_section(&server.collection_url(), ""));
    let stop = Arc::new(AtomicBool::new(false));
    let handles = ingest::start(&node, stop.clone());
    assert_eq!(handles.len(), 1);
    // The first poll at once, the second after one interval.
    assert!(wait_until(Duration::from_secs(10), || has(
        &node,
        &indicator_id(4)
    )));
    let t = Instant::now();
    stop.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(bookmark(&node).as_deref(), Some(T3));
}

#[test]
fn a_refused_page_is_skipped_counted_audited_and_passed_by_the_bookmark() {
    let server = CannedServer::start(|req| {
        let mut bad = indicator(21, Tlp::Green);
        bad.as_object_mut().unwrap().remove("pattern");
        match req.query.get("next").map(String::as_str) {
            None => Answer::envelope(
                vec![indicator(20, Tlp::Green), bad],
                true,
                Some("n2"),
                Some(T1),
            ),
            _ => Answer::envelope(vec![indicator(22, Tlp::Green)], false, None, Some(T2)),
        }
    });
    let dir = tmp("poll-refused");
    let (node, _rec) = node_in(&dir, &poll_section(&server.collection_url(), ""));
    let report = poller(&node).poll_once(&AtomicBool::new(false)).unwrap();
    assert_eq!(
        (report.pages, report.refused_pages, report.objects),
        (2, 1, 1)
    );
    // All or nothing per page: the valid object of the refused page is not taken.
    assert!(!has(&node, &indicator_id(20)));
    assert!(has(&node, &indicator_id(22)));
    assert_eq!(bookmark(&node).as_deref(), Some(T2));
    assert_eq!(node.counters().refused_input.load(Ordering::Relaxed), 1);
    let log = node.db().audit_log(None, 100).unwrap();
    let refusals: Vec<_> = log.iter().filter(|r| r.entry.action == "refuse").collect();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].entry.actor, "poll:remote");
    assert!(
        refusals[0].entry.detail.contains("pattern"),
        "{:?}",
        refusals[0]
    );
}

#[test]
fn server_errors_and_transient_node_failures_keep_the_bookmark() {
    let server = CannedServer::start(|req| match req.query.get("added_after") {
        None => Answer::envelope(vec![indicator(30, Tlp::Green)], false, None, Some(T1)),
        Some(_) => Answer {
            status: 503,
            headers: vec![],
            body: r#"{"title": "Service Unavailable", "description": "try later"}"#.into(),
        },
    });
    let dir = tmp("poll-errors");
    let (node, _rec) = node_in(&dir, &poll_section(&server.collection_url(), ""));
    let never = AtomicBool::new(false);
    let mut p = poller(&node);
    p.poll_once(&never).unwrap();
    assert_eq!(bookmark(&node).as_deref(), Some(T1));
    match p.poll_once(&never) {
        Err(PollError::Server(e)) => assert!(e.contains("503") && e.contains("try later"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(bookmark(&node).as_deref(), Some(T1));

    // Amber needs review and the queue holds one: a page of two is a transient refusal.
    let server = CannedServer::start(|_| {
        Answer::envelope(
            vec![indicator(31, Tlp::Amber), indicator(32, Tlp::Amber)],
            false,
            None,
            Some(T1),
        )
    });
    let dir = tmp("poll-full");
    let (node, _rec) = node_in(
        &dir,
        &format!(
            "[limits]\nmax_review_queue = 1\n{}",
            poll_section(&server.collection_url(), "")
        ),
    );
    match poller(&node).poll_once(&never) {
        Err(PollError::Node(e)) => assert!(e.contains("review queue"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(bookmark(&node), None);
    assert_eq!(node.counters().refused_input.load(Ordering::Relaxed), 0);
}

#[test]
fn a_date_added_last_that_is_not_a_timestamp_leaves_the_bookmark() {
    let server = CannedServer::start(|_| {
        Answer::envelope(
            vec![indicator(40, Tlp::Green)],
            false,
            None,
            Some("yesterday"),
        )
    });
    let dir = tmp("poll-baddate");
    let (node, _rec) = node_in(&dir, &poll_section(&server.collection_url(), ""));
    let report = poller(&node).poll_once(&AtomicBool::new(false)).unwrap();
    assert_eq!(report.objects, 1);
    assert!(has(&node, &indicator_id(40)));
    assert_eq!(bookmark(&node), None);
}

#[test]
fn backoff_doubles_up_to_five_minutes() {
    let s = Duration::from_secs;
    assert_eq!(backoff(s(30), 1), s(30));
    assert_eq!(backoff(s(30), 2), s(60));
    assert_eq!(backoff(s(30), 4), s(240));
    assert_eq!(backoff(s(30), 5), s(300));
    assert_eq!(backoff(s(30), 1000), s(300));
    assert_eq!(backoff(s(600), 3), s(600));
}

#[test]
fn stop_ends_every_thread_promptly_even_with_a_request_hanging() {
    // Accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().take(16) {
            held.push(s);
        }
    });
    let dir = tmp("poll-stop");
    let inbox = dir.join("in");
    let extra = format!(
        "[watch]\ndir = \"{}\"\ninterval_ms = 50\n{}",
        inbox.display(),
        poll_section(&format!("http://{addr}/c/"), "")
    );
    let (node, _rec) = node_in(&dir, &extra);
    let stop = Arc::new(AtomicBool::new(false));
    let handles = ingest::start(&node, stop.clone());
    assert_eq!(handles.len(), 2);
    std::thread::sleep(Duration::from_millis(400));
    let t = Instant::now();
    stop.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn a_poll_whose_password_variable_is_unset_is_not_started() {
    let dir = tmp("poll-env");
    let (node, _rec) = node_in(
        &dir,
        "[[poll]]\nname = \"p\"\ncollection_url = \"http://127.0.0.1:9/c/\"\nusername = \"u\"\n\
         password_env = \"HALYARD_CTI_TEST_UNSET_PASSWORD_VARIABLE\"\n",
    );
    let stop = Arc::new(AtomicBool::new(false));
    assert!(ingest::start(&node, stop).is_empty());
}
