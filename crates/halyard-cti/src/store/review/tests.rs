//! The review queue's state machine: pending items are decided once, a decision and its
//! objects are stored together or not at all, and listings come newest first.

use super::*;
use crate::store::testutil::{db, indicator, key, s, TempDir};
use crate::store::InsertOutcome;
use halyard_stix::marking::Tlp;

fn submission(n: u32) -> NewReview {
    NewReview {
        object_id: format!("indicator--00000000-0000-4000-8000-{n:012}"),
        version: "2024-01-01T00:00:00Z".into(),
        stix_type: "indicator".into(),
        tlp: Tlp::Amber,
        sectors: vec!["energy".into(), "finance".into()],
        submitted_by: "alice".into(),
        original_json: r#"{"name":"with alice@example.org"}"#.into(),
        sanitized_json: r#"{"name":"with [email]"}"#.into(),
        changes_json: r#"[{"path":"name"}]"#.into(),
        reasons: vec!["marking amber".into(), "sanitised".into()],
    }
}

#[test]
fn store_review_enqueue_and_read_back() {
    let dir = TempDir::new("review-read");
    let mut db = db(&dir);
    assert_eq!(db.review_item(1).unwrap(), None);
    let id = db.enqueue_review(&submission(1)).unwrap();
    let item = db.review_item(id).unwrap().unwrap();
    assert_eq!(item.id, id);
    assert_eq!(item.item, submission(1));
    assert_eq!(item.state, ReviewState::Pending);
    assert!(item.submitted_us > 0);
    assert_eq!(
        (item.decided_by, item.decided_us, item.final_json, item.note),
        (None, None, None, None)
    );
    assert_eq!(db.pending_reviews().unwrap(), 1);
}

#[test]
fn store_review_approve_stores_objects_once() {
    let dir = TempDir::new("review-approve");
    let mut db = db(&dir);
    let id = db.enqueue_review(&submission(1)).unwrap();
    let store = [
        indicator(1, "2024-01-01T00:00:00Z", s("energy"), Tlp::Amber, "x"),
        indicator(1, "2024-01-01T00:00:00Z", s("finance"), Tlp::Amber, "x"),
    ];
    let decided = db
        .decide_review(
            id,
            ReviewState::Approved,
            "bob",
            Some("{\"final\":1}"),
            Some("ok"),
            &store,
        )
        .unwrap();
    assert_eq!(decided.state, ReviewState::Approved);
    assert_eq!(decided.decided_by.as_deref(), Some("bob"));
    assert!(decided.decided_us.is_some());
    assert_eq!(decided.final_json.as_deref(), Some("{\"final\":1}"));
    assert_eq!(decided.note.as_deref(), Some("ok"));
    assert_eq!(db.review_item(id).unwrap(), Some(decided));
    assert_eq!(db.pending_reviews().unwrap(), 0);
    let vis = [
        key(Some("energy"), Tlp::Amber),
        key(Some("finance"), Tlp::Amber),
    ];
    assert_eq!(db.versions_of(&store[0].id, &vis).unwrap().len(), 2);
    // Decided once: a second decision is refused and stores nothing.
    let err = db
        .decide_review(id, ReviewState::Rejected, "carol", None, None, &[])
        .unwrap_err();
    assert!(
        matches!(&err, DbError::Review(m) if m == &format!("review {id} is already approved by bob")),
        "{err}"
    );
    // The stored versions are known to a later insert.
    assert_eq!(
        db.insert_objects(&store[..1]).unwrap(),
        [InsertOutcome::Duplicate]
    );
}

#[test]
fn store_review_reject_and_refusals() {
    let dir = TempDir::new("review-reject");
    let mut db = db(&dir);
    let id = db.enqueue_review(&submission(1)).unwrap();
    let obj = indicator(1, "2024-01-01T00:00:00Z", s("energy"), Tlp::Amber, "x");
    let refuse = |r: Result<ReviewItem, DbError>, text: &str| match r {
        Err(DbError::Review(m)) => assert!(m.contains(text), "{m}"),
        other => panic!("{other:?}"),
    };
    refuse(
        db.decide_review(id, ReviewState::Pending, "bob", None, None, &[]),
        "approves or rejects",
    );
    refuse(
        db.decide_review(id, ReviewState::Rejected, "bob", None, None, &[obj]),
        "not stored",
    );
    refuse(
        db.decide_review(99, ReviewState::Approved, "bob", None, None, &[]),
        "review 99 does not exist",
    );
    let r = db
        .decide_review(id, ReviewState::Rejected, "bob", None, Some("no"), &[])
        .unwrap();
    assert_eq!(r.state, ReviewState::Rejected);
    assert_eq!(db.object_count().unwrap(), 0);
    refuse(
        db.decide_review(id, ReviewState::Approved, "carol", None, None, &[]),
        "is already rejected by bob",
    );
}

#[test]
fn store_review_decision_and_objects_are_one_transaction() {
    let dir = TempDir::new("review-atomic");
    let mut db = db(&dir);
    let id = db.enqueue_review(&submission(1)).unwrap();
    let mut bad = indicator(1, "2024-01-01T00:00:00Z", s("finance"), Tlp::Amber, "x");
    bad.stix_type.clear(); // Refused by the table's CHECK constraint.
    let store = [
        indicator(1, "2024-01-01T00:00:00Z", s("energy"), Tlp::Amber, "x"),
        bad,
    ];
    let err = db
        .decide_review(id, ReviewState::Approved, "bob", None, None, &store)
        .unwrap_err();
    assert!(matches!(err, DbError::Sqlite(_)), "{err}");
    assert_eq!(
        db.review_item(id).unwrap().unwrap().state,
        ReviewState::Pending
    );
    assert_eq!(db.object_count().unwrap(), 0);
    // And it can still be decided.
    db.decide_review(id, ReviewState::Approved, "bob", None, None, &store[..1])
        .unwrap();
    assert_eq!(db.object_count().unwrap(), 1);
}

#[test]
fn store_review_items_newest_first_by_state() {
    let dir = TempDir::new("review-list");
    let mut db = db(&dir);
    let ids: Vec<i64> = (1..=5)
        .map(|n| db.enqueue_review(&submission(n)).unwrap())
        .collect();
    db.decide_review(ids[1], ReviewState::Approved, "bob", None, None, &[])
        .unwrap();
    db.decide_review(ids[3], ReviewState::Rejected, "bob", None, None, &[])
        .unwrap();
    let list = |state, limit| -> Vec<i64> {
        db.review_items(state, limit)
            .unwrap()
            .iter()
            .map(|i| i.id)
            .collect()
    };
    assert_eq!(list(None, 10), [ids[4], ids[3], ids[2], ids[1], ids[0]]);
    assert_eq!(list(None, 2), [ids[4], ids[3]]);
    assert_eq!(
        list(Some(ReviewState::Pending), 10),
        [ids[4], ids[2], ids[0]]
    );
    assert_eq!(list(Some(ReviewState::Approved), 10), [ids[1]]);
    assert_eq!(list(Some(ReviewState::Rejected), 10), [ids[3]]);
    assert_eq!(db.pending_reviews().unwrap(), 3);
}

#[test]
fn store_review_corrupt_rows_are_schema_errors() {
    let dir = TempDir::new("review-corrupt");
    let mut db = db(&dir);
    let id = db.enqueue_review(&submission(1)).unwrap();
    db.conn
        .execute("UPDATE reviews SET reasons = '{\"not\":\"a list\"}'", [])
        .unwrap();
    let err = db.review_item(id).unwrap_err();
    assert!(
        matches!(&err, DbError::Schema(m) if m.contains("reviews") && m.contains("reasons")),
        "{err}"
    );
    db.conn
        .execute("UPDATE reviews SET reasons = '[]', tlp = 'beige'", [])
        .unwrap();
    assert!(matches!(db.review_items(None, 5), Err(DbError::Schema(_))));
}
