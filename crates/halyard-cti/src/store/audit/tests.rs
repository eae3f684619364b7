//! The audit log reads back in order, refuses changes, and its hash chain finds a line
//! altered, removed from the middle or cut from the end behind its back.

use super::*;
use crate::store::testutil::{db, TempDir};

fn entry(n: u32) -> AuditEntry {
    AuditEntry {
        actor: format!("user{n}"),
        action: "ingest".into(),
        object_id: (n > 2).then(|| format!("indicator--{n}")),
        detail: format!("{{\"n\":{n}}}"),
    }
}

/// A database with `n` audit lines.
fn with_lines(dir: &TempDir, n: u32) -> Db {
    let mut db = db(dir);
    for i in 1..=n {
        assert_eq!(db.audit(&entry(i)).unwrap(), i64::from(i));
    }
    db
}

/// Runs `sql` with the append-only triggers out of the way, as someone editing the file
/// would.
fn tamper(db: &Db, sql: &str) {
    db.conn
        .execute_batch(&format!(
            "DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete; {sql}"
        ))
        .unwrap();
}

#[test]
fn store_audit_appends_and_pages_oldest_first() {
    let dir = TempDir::new("audit-read");
    let db = with_lines(&dir, 5);
    let all = db.audit_log(None, 100).unwrap();
    assert_eq!(all.len(), 5);
    for (i, r) in all.iter().enumerate() {
        assert_eq!(r.seq, i as i64 + 1);
        assert_eq!(r.entry, entry(i as u32 + 1));
    }
    assert!(all.windows(2).all(|w| w[0].at_us <= w[1].at_us));
    assert_eq!(db.audit_log(Some(2), 2).unwrap(), all[2..4]);
    assert!(db.audit_log(Some(5), 10).unwrap().is_empty());
    assert_eq!(db.verify_audit().unwrap(), None);
}

#[test]
fn store_audit_chain_survives_reopen() {
    let dir = TempDir::new("audit-reopen");
    drop(with_lines(&dir, 3));
    let mut db = db(&dir);
    assert_eq!(db.audit(&entry(4)).unwrap(), 4);
    assert_eq!(db.verify_audit().unwrap(), None);
}

#[test]
fn store_audit_refuses_update_and_delete() {
    let dir = TempDir::new("audit-append-only");
    let db = with_lines(&dir, 2);
    for sql in [
        "UPDATE audit SET actor = 'mallory'",
        "DELETE FROM audit WHERE seq = 1",
    ] {
        let err = db.conn.execute(sql, []).unwrap_err();
        assert!(err.to_string().contains("append-only"), "{err}");
    }
    assert_eq!(db.verify_audit().unwrap(), None);
}

#[test]
fn store_audit_chain_finds_an_altered_line() {
    let dir = TempDir::new("audit-altered");
    let db = with_lines(&dir, 6);
    tamper(&db, "UPDATE audit SET detail = '{\"n\":0}' WHERE seq = 4;");
    assert_eq!(db.verify_audit().unwrap(), Some(4));
}

#[test]
fn store_audit_chain_finds_a_rehashed_line_by_its_successor() {
    // Someone who alters line 3 and recomputes its own hash still breaks line 4.
    let dir = TempDir::new("audit-rehashed");
    let db = with_lines(&dir, 6);
    let lines = db.audit_log(None, 10).unwrap();
    let prev: Vec<u8> = db
        .conn
        .query_row("SELECT hash FROM audit WHERE seq = 2", [], |r| r.get(0))
        .unwrap();
    let mut forged = lines[2].entry.clone();
    forged.actor = "mallory".into();
    let hash = chain_hash(&prev, 3, lines[2].at_us, &forged);
    tamper(&db, "");
    db.conn
        .execute(
            "UPDATE audit SET actor = 'mallory', hash = ?1 WHERE seq = 3",
            [&hash[..]],
        )
        .unwrap();
    assert_eq!(db.verify_audit().unwrap(), Some(4));
}

#[test]
fn store_audit_chain_finds_removed_lines() {
    let dir = TempDir::new("audit-removed");
    let db = with_lines(&dir, 6);
    tamper(&db, "DELETE FROM audit WHERE seq = 3;");
    assert_eq!(db.verify_audit().unwrap(), Some(4));
    let dir = TempDir::new("audit-cut");
    let db = with_lines(&dir, 6);
    tamper(&db, "DELETE FROM audit WHERE seq >= 5;");
    assert_eq!(db.verify_audit().unwrap(), Some(5));
}

#[test]
fn store_audit_hash_separates_fields() {
    let a = AuditEntry {
        actor: "ab".into(),
        action: "c".into(),
        object_id: None,
        detail: String::new(),
    };
    let b = AuditEntry {
        actor: "a".into(),
        action: "bc".into(),
        ..a.clone()
    };
    let c = AuditEntry {
        object_id: Some(String::new()),
        ..a.clone()
    };
    let h = |e: &AuditEntry| chain_hash(&GENESIS, 1, 0, e);
    assert_ne!(h(&a), h(&b));
    assert_ne!(h(&a), h(&c));
}
