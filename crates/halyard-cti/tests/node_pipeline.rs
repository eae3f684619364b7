//! The node's pipeline without DDS or HTTP: what is shared where, what waits for review, the
//! four-eyes rule, duplicates, refusals that store nothing, received samples checked again,
//! and re-sharing after a restart until the community acknowledged.

use halyard_cti::config::Config;
use halyard_cti::node::{
    Decision, Disposition, Incoming, IngestRequest, Node, NodeError, Outgoing, Sharer, Source,
};
use halyard_cti::store::{CollectionKey, Db, ReviewState, Role, SearchQuery, User};
use halyard_stix::marking::Tlp;
use halyard_stix::object::StixObject;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Records what the node shares; acknowledges only when told to.
#[derive(Default)]
struct Recorder {
    shared: Mutex<Vec<Outgoing>>,
    disposed: Mutex<Vec<(String, Tlp, String)>>,
    acked: AtomicBool,
}

impl Sharer for Recorder {
    fn share(&self, out: &[Outgoing]) -> Result<(), String> {
        self.shared.lock().unwrap().extend_from_slice(out);
        Ok(())
    }
    fn dispose(&self, id: &str, tlp: Tlp, sector: &str) -> Result<(), String> {
        self.disposed
            .lock()
            .unwrap()
            .push((id.into(), tlp, sector.into()));
        Ok(())
    }
    fn acknowledged(&self, _timeout: std::time::Duration) -> bool {
        self.acked.load(Ordering::SeqCst)
    }
}

impl Recorder {
    fn sectors_of(&self, id: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .shared
            .lock()
            .unwrap()
            .iter()
            .filter(|o| o.object.id == id)
            .map(|o| o.sector.clone())
            .collect();
        v.sort();
        v
    }
}

const CONFIG: &str = r#"
sectors = ["energy", "finance"]

[node]
organisation = "acme"
store = "data"
insecure = true

[sanitize]
internal_domains = ["acme.example"]
internal_networks = ["10.0.0.0/8"]

[limits]
max_review_queue = 3
"#;

const REVIEW: &str = r#"
[review]
min_tlp = "amber"
types = ["sighting"]
on_sanitized = true
"#;

fn node_in(dir: &Path, extra: &str) -> (Arc<Node>, Arc<Recorder>) {
    let review = if extra.contains("[review]") {
        ""
    } else {
        REVIEW
    };
    let cfg = Config::parse(&format!("{CONFIG}{review}{extra}"), dir).unwrap();
    std::fs::create_dir_all(&cfg.node.store).unwrap();
    let db = Db::open(&cfg.db_path()).unwrap();
    let rec = Arc::new(Recorder::default());
    let node = Node::new(cfg, db, rec.clone()).unwrap();
    (Arc::new(node), rec)
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-cti-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tlp_ref(t: Tlp) -> &'static str {
    match t {
        Tlp::Clear => "marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487",
        Tlp::Green => "marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb",
        Tlp::Amber => "marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421",
        Tlp::AmberStrict => "marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003",
        Tlp::Red => "marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1",
    }
}

/// An indicator as validation would give it.
fn indicator(n: u32, tlp: Option<Tlp>, description: &str) -> StixObject {
    let id = format!("indicator--6b0e1d2c-0000-4000-8000-{n:012}");
    let mut json = serde_json::json!({
        "type": "indicator",
        "spec_version": "2.1",
        "id": id,
        "created": "2026-01-01T00:00:00.000Z",
        "modified": "2026-01-01T00:00:00.000Z",
        "name": format!("indicator {n}"),
        "description": description,
        "pattern": "[ipv4-addr:value = '198.51.100.7']",
        "pattern_type": "stix",
        "valid_from": "2026-01-01T00:00:00Z",
    });
    if let Some(t) = tlp {
        json["object_marking_refs"] = serde_json::json!([tlp_ref(t)]);
    }
    let serde_json::Value::Object(map) = json else {
        unreachable!()
    };
    StixObject {
        id,
        stix_type: "indicator".into(),
        spec_version: "2.1".into(),
        created: Some("2026-01-01T00:00:00.000Z".into()),
        modified: Some("2026-01-01T00:00:00.000Z".into()),
        created_by_ref: None,
        revoked: false,
        tlp,
        marking_refs: tlp
            .map(|t| vec![tlp_ref(t).to_string()])
            .unwrap_or_default(),
        json: map,
    }
}

fn user(name: &str, role: Role) -> User {
    User {
        name: name.into(),
        role,
        password_hash: String::new(),
        sectors: None,
        max_tlp: Tlp::Red,
        disabled: false,
    }
}

fn ingest(node: &Node, objects: Vec<StixObject>, by: &str) -> Result<Vec<Disposition>, NodeError> {
    node.ingest(IngestRequest {
        objects,
        source: Source::User(by.into()),
        sectors: None,
        default_tlp: None,
    })
    .map(|r| r.results.into_iter().map(|(_, _, d)| d).collect())
}

fn everything() -> Vec<CollectionKey> {
    let mut v = Vec::new();
    for sector in [
        None,
        Some("energy".to_string()),
        Some("finance".to_string()),
    ] {
        for tlp in [
            Tlp::Clear,
            Tlp::Green,
            Tlp::Amber,
            Tlp::AmberStrict,
            Tlp::Red,
        ] {
            v.push(CollectionKey {
                sector: sector.clone(),
                tlp,
            });
        }
    }
    v
}

#[test]
fn green_is_shared_with_every_sector_once_and_a_replay_shares_nothing() {
    let dir = tmp("green");
    let (node, rec) = node_in(&dir, "");
    let d = ingest(
        &node,
        vec![indicator(1, Some(Tlp::Green), "a C2 server")],
        "alice",
    )
    .unwrap();
    assert_eq!(
        d,
        vec![Disposition::Shared {
            sectors: vec!["energy".into(), "finance".into()]
        }]
    );
    assert_eq!(
        rec.sectors_of(&indicator(1, None, "").id),
        vec!["energy", "finance"]
    );
    // The same version again (a replayed request, a re-sent file): a duplicate.
    let d = ingest(
        &node,
        vec![indicator(1, Some(Tlp::Green), "a C2 server")],
        "alice",
    )
    .unwrap();
    assert_eq!(d, vec![Disposition::Duplicate]);
    assert_eq!(rec.shared.lock().unwrap().len(), 2);
    // Stored locally and in both sectors.
    let versions = node
        .db()
        .versions_of(&indicator(1, None, "").id, &everything())
        .unwrap();
    let mut sectors: Vec<Option<String>> = versions.iter().map(|v| v.sector.clone()).collect();
    sectors.sort();
    assert_eq!(
        sectors,
        vec![None, Some("energy".into()), Some("finance".into())]
    );
}

#[test]
fn amber_waits_for_a_second_person_and_then_reaches_its_sectors() {
    let dir = tmp("amber");
    let (node, rec) = node_in(&dir, "");
    let d = ingest(
        &node,
        vec![indicator(2, Some(Tlp::Amber), "phishing kit")],
        "alice",
    )
    .unwrap();
    let Disposition::Queued { review, reasons } = &d[0] else {
        panic!("{d:?}")
    };
    assert!(reasons.iter().any(|r| r.contains("AMBER")), "{reasons:?}");
    assert!(
        rec.shared.lock().unwrap().is_empty(),
        "nothing leaves before review"
    );
    // An analyst may not decide; the submitter may not either (four eyes).
    let e = node
        .decide(*review, approve(), &user("carol", Role::Analyst))
        .unwrap_err();
    assert!(matches!(e, NodeError::Forbidden(_)), "{e}");
    let e = node
        .decide(*review, approve(), &user("alice", Role::Reviewer))
        .unwrap_err();
    assert!(e.to_string().contains("four eyes"), "{e}");
    let item = node
        .decide(*review, approve(), &user("bob", Role::Reviewer))
        .unwrap();
    assert_eq!(item.state, ReviewState::Approved);
    assert_eq!(item.decided_by.as_deref(), Some("bob"));
    assert_eq!(
        rec.sectors_of(&indicator(2, None, "").id),
        vec!["energy", "finance"]
    );
    // Decided once only.
    assert!(node
        .decide(*review, approve(), &user("dave", Role::Admin))
        .is_err());
    let log = node.db().audit_log(None, 100).unwrap();
    assert!(log
        .iter()
        .any(|a| a.entry.action == "approve" && a.entry.actor == "bob"));
}

fn approve() -> Decision {
    Decision::Approve {
        edited: None,
        note: None,
    }
}

#[test]
fn a_rejected_object_never_leaves_and_amber_strict_stays_local() {
    let dir = tmp("reject");
    let (node, rec) = node_in(&dir, "");
    let d = ingest(
        &node,
        vec![
            indicator(3, Some(Tlp::Amber), "x"),
            indicator(4, Some(Tlp::AmberStrict), "ours only"),
            indicator(5, Some(Tlp::Red), "named recipients only"),
        ],
        "alice",
    )
    .unwrap();
    assert_eq!(d[1], Disposition::Local);
    assert_eq!(
        d[2],
        Disposition::Local,
        "RED is shared nowhere unless configured"
    );
    let Disposition::Queued { review, .. } = d[0] else {
        panic!()
    };
    let item = node
        .decide(
            review,
            Decision::Reject {
                note: Some("internal".into()),
            },
            &user("bob", Role::Reviewer),
        )
        .unwrap();
    assert_eq!(item.state, ReviewState::Rejected);
    assert!(rec.shared.lock().unwrap().is_empty());
}

#[test]
fn a_sector_the_policy_does_not_allow_is_refused_and_nothing_is_stored() {
    let dir = tmp("policy");
    let (node, rec) = node_in(&dir, "[sharing]\ngreen = [\"finance\"]\n");
    let e = node
        .ingest(IngestRequest {
            objects: vec![
                indicator(6, Some(Tlp::Clear), "ok"),
                indicator(7, Some(Tlp::Green), "no"),
            ],
            source: Source::User("alice".into()),
            sectors: Some(vec!["energy".into()]),
            default_tlp: None,
        })
        .unwrap_err();
    assert!(e.to_string().contains("energy"), "{e}");
    assert_eq!(node.db().object_count().unwrap(), 0, "all or nothing");
    assert!(rec.shared.lock().unwrap().is_empty());
}

#[test]
fn a_full_review_queue_refuses_new_work_without_storing_any() {
    let dir = tmp("full");
    let (node, _rec) = node_in(&dir, "");
    let many: Vec<StixObject> = (10..14)
        .map(|n| indicator(n, Some(Tlp::Amber), "x"))
        .collect();
    let e = ingest(&node, many, "alice").unwrap_err();
    assert!(matches!(e, NodeError::Full(_)), "{e}");
    assert_eq!(node.db().object_count().unwrap(), 0);
    assert_eq!(node.db().pending_reviews().unwrap(), 0);
}

#[test]
fn personal_data_is_sanitised_before_sharing_and_the_original_stays_local() {
    let dir = tmp("sanitise");
    let (node, rec) = node_in(&dir, "[review]\non_sanitized = false\nmin_tlp = \"red\"\n");
    let d = ingest(
        &node,
        vec![indicator(
            20,
            Some(Tlp::Green),
            "reported by jane.doe@acme.example from 10.1.2.3",
        )],
        "alice",
    )
    .unwrap();
    assert!(matches!(d[0], Disposition::Shared { .. }), "{d:?}");
    let shared = rec.shared.lock().unwrap();
    let text = shared[0].object.to_json_string();
    assert!(!text.contains("jane.doe"), "{text}");
    assert!(!text.contains("10.1.2.3"), "{text}");
    drop(shared);
    let versions = node
        .db()
        .versions_of(&indicator(20, None, "").id, &everything())
        .unwrap();
    let local = versions.iter().find(|v| v.sector.is_none()).unwrap();
    assert!(
        local.json.contains("jane.doe@acme.example"),
        "the local copy is the original"
    );
    let log = node.db().audit_log(None, 100).unwrap();
    assert!(log.iter().any(|a| a.entry.action == "sanitise"));
}

#[test]
fn received_samples_are_checked_again_and_bad_ones_counted_and_dropped() {
    let dir = tmp("receive");
    let (node, _rec) = node_in(&dir, "");
    let good = indicator(30, Some(Tlp::Green), "from beta");
    let sample = |obj: &StixObject, tlp: Tlp| Incoming {
        key: obj.id.clone(),
        stix_type: obj.stix_type.clone(),
        tlp_field: tlp.as_str().into(),
        tlp,
        sector: "finance".into(),
        origin: "beta".into(),
        shared_at_ns: 1,
        json: obj.to_json_string(),
        instance: instance_of(&obj.id),
    };
    let mut wrong_key = sample(&good, Tlp::Green);
    wrong_key.key = "indicator--00000000-0000-4000-8000-000000000000".into();
    let leaked_red = sample(&indicator(31, Some(Tlp::Red), "leak"), Tlp::Green);
    let mut garbage = sample(&good, Tlp::Green);
    garbage.json = "{\"type\": \"indicator\", ".into();
    let mut feed = node.feed().subscribe().expect("the feed is open");
    node.receive(vec![
        sample(&good, Tlp::Green),
        wrong_key,
        leaked_red,
        garbage,
    ]);
    assert_eq!(node.counters().received.load(Ordering::Relaxed), 1);
    assert_eq!(node.counters().refused_samples.load(Ordering::Relaxed), 3);
    let found = node
        .db()
        .search(&SearchQuery {
            text: "beta".into(),
            visible: everything(),
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].origin, "beta");
    assert_eq!(found[0].sector.as_deref(), Some("finance"));
    // The live feed shows what was stored, once.
    let e = feed.try_recv().expect("an event for the stored object");
    assert_eq!((e.id.as_str(), e.received), (good.id.as_str(), true));
    assert_eq!(
        (e.origin.as_str(), e.sector.as_deref()),
        ("beta", Some("finance"))
    );
    assert!(feed.try_recv().is_err(), "refused samples make no event");
    // The same sample again (another member's durability service): a duplicate.
    node.receive(vec![sample(&good, Tlp::Green)]);
    assert_eq!(node.counters().received.load(Ordering::Relaxed), 1);
    assert!(feed.try_recv().is_err(), "a duplicate makes no event");
    // A disposal of an instance never received here changes nothing.
    node.receive_dispose_instance(&[9; 16], Tlp::Green, "finance");
    drop(node);
    // Disposed, naming the instance only, after a restart: deleted in that sector.
    let (node, _rec) = node_in(&dir, "");
    node.receive_dispose_instance(&instance_of(&good.id), Tlp::Green, "finance");
    let v = node.db().versions_of(&good.id, &everything()).unwrap();
    assert!(!v.is_empty() && v.iter().all(|v| v.deleted));
}

/// A stand-in for an instance handle: distinct per id.
fn instance_of(id: &str) -> [u8; 16] {
    let mut h = [0u8; 16];
    for (k, b) in id.bytes().enumerate() {
        h[k % 16] = h[k % 16].wrapping_mul(31).wrapping_add(b);
    }
    h
}

#[test]
fn what_the_community_did_not_acknowledge_is_shared_again_after_a_restart() {
    let dir = tmp("restart");
    {
        let (node, rec) = node_in(&dir, "");
        ingest(&node, vec![indicator(40, Some(Tlp::Clear), "x")], "alice").unwrap();
        assert_eq!(rec.shared.lock().unwrap().len(), 2);
        // Not acknowledged: confirming changes nothing.
        node.confirm_shares(std::time::Duration::ZERO).unwrap();
        assert_eq!(node.db().pending_shares(100).unwrap().len(), 2);
    }
    // "Restart": the pending versions are written again.
    let (node, rec) = node_in(&dir, "");
    assert_eq!(
        rec.sectors_of(&indicator(40, None, "").id),
        vec!["energy", "finance"]
    );
    rec.acked.store(true, Ordering::SeqCst);
    node.confirm_shares(std::time::Duration::ZERO).unwrap();
    assert!(node.db().pending_shares(100).unwrap().is_empty());
    drop(node);
    let (_node, rec) = node_in(&dir, "");
    assert!(
        rec.shared.lock().unwrap().is_empty(),
        "acknowledged: not shared again"
    );
}

#[test]
fn deleting_disposes_in_every_sector_it_was_shared_with_admins_only() {
    let dir = tmp("delete");
    let (node, rec) = node_in(&dir, "");
    let obj = indicator(50, Some(Tlp::Green), "x");
    ingest(&node, vec![obj.clone()], "alice").unwrap();
    assert!(matches!(
        node.delete(&obj.id, &user("bob", Role::Reviewer)),
        Err(NodeError::Forbidden(_))
    ));
    node.delete(&obj.id, &user("root", Role::Admin)).unwrap();
    let mut d: Vec<String> = rec
        .disposed
        .lock()
        .unwrap()
        .iter()
        .map(|x| x.2.clone())
        .collect();
    d.sort();
    assert_eq!(d, vec!["energy", "finance"]);
}

#[test]
fn a_large_batch_is_left_to_the_outbox_and_shared_once() {
    let dir = tmp("outbox");
    let (node, rec) = node_in(&dir, "");
    let many: Vec<StixObject> = (1000..1300)
        .map(|n| indicator(n, Some(Tlp::Green), "x"))
        .collect();
    ingest(&node, many, "alice").unwrap();
    // The request did not wait for the community: the outbox writes it.
    assert!(rec.shared.lock().unwrap().is_empty());
    let mut written = 0;
    loop {
        let n = node.pump_outbox(128).unwrap();
        if n == 0 {
            break;
        }
        written += n;
    }
    assert_eq!(written, 600, "300 objects in two sectors");
    assert_eq!(rec.shared.lock().unwrap().len(), 600);
    // Nothing is written twice while it waits for acknowledgment.
    assert_eq!(node.pump_outbox(1000).unwrap(), 0);
    rec.acked.store(true, Ordering::SeqCst);
    node.confirm_shares(std::time::Duration::ZERO).unwrap();
    assert!(node.db().pending_shares(10).unwrap().is_empty());
}
