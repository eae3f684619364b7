//! Accounts are created once, updated only when they exist, and read back exactly; tokens
//! work until they expire or their account is disabled.

use super::*;
use crate::store::testutil::{db, TempDir};
use halyard_stix::marking::Tlp;

fn user(name: &str) -> User {
    User {
        name: name.into(),
        role: Role::Analyst,
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        sectors: Some(vec!["energy".into()]),
        max_tlp: Tlp::Amber,
        disabled: false,
    }
}

const TOKEN: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

#[test]
fn store_users_create_read_list() {
    let dir = TempDir::new("users");
    let mut db = db(&dir);
    assert_eq!(db.user("alice").unwrap(), None);
    let bob = User {
        role: Role::ReadOnly,
        sectors: None,
        max_tlp: Tlp::Clear,
        ..user("bob")
    };
    db.create_user(&bob).unwrap();
    db.create_user(&user("alice")).unwrap();
    assert_eq!(db.user("alice").unwrap(), Some(user("alice")));
    assert_eq!(db.users().unwrap(), [user("alice"), bob]);
    let err = db.create_user(&user("alice")).unwrap_err();
    assert!(
        matches!(&err, DbError::Account(m) if m == "user alice exists"),
        "{err}"
    );
}

#[test]
fn store_users_update_existing_only() {
    let dir = TempDir::new("users-update");
    let mut db = db(&dir);
    let err = db.update_user(&user("alice")).unwrap_err();
    assert!(
        matches!(&err, DbError::Account(m) if m.contains("alice")),
        "{err}"
    );
    db.create_user(&user("alice")).unwrap();
    let changed = User {
        role: Role::Admin,
        password_hash: "new".into(),
        sectors: Some(vec![]),
        max_tlp: Tlp::Red,
        disabled: true,
        ..user("alice")
    };
    db.update_user(&changed).unwrap();
    assert_eq!(db.user("alice").unwrap(), Some(changed));
}

#[test]
fn store_tokens_expire_and_follow_their_account() {
    let dir = TempDir::new("tokens");
    let mut db = db(&dir);
    let err = db.create_token("alice", TOKEN, "ci", None).unwrap_err();
    assert!(matches!(err, DbError::Account(_)), "{err}");
    db.create_user(&user("alice")).unwrap();
    db.create_token("alice", TOKEN, "ci", Some(1_000)).unwrap();
    db.create_token("alice", &"ab".repeat(32), "forever", None)
        .unwrap();
    let err = db.create_token("alice", TOKEN, "again", None).unwrap_err();
    assert!(matches!(err, DbError::Account(_)), "{err}");
    assert_eq!(db.user_by_token(TOKEN, 999).unwrap(), Some(user("alice")));
    // Hex case does not matter.
    assert_eq!(
        db.user_by_token(&TOKEN.to_ascii_uppercase(), 999).unwrap(),
        Some(user("alice"))
    );
    assert_eq!(db.user_by_token(TOKEN, 1_000).unwrap(), None);
    assert_eq!(
        db.user_by_token(&"ab".repeat(32), i64::MAX).unwrap(),
        Some(user("alice"))
    );
    assert_eq!(db.user_by_token(&"cd".repeat(32), 0).unwrap(), None);
    // A disabled account's tokens stop working.
    let off = User {
        disabled: true,
        ..user("alice")
    };
    db.update_user(&off).unwrap();
    assert_eq!(db.user_by_token(&"ab".repeat(32), 0).unwrap(), None);
}

#[test]
fn store_users_corrupt_role_is_schema_error() {
    let dir = TempDir::new("users-corrupt");
    let mut db = db(&dir);
    db.create_user(&user("alice")).unwrap();
    db.conn
        .execute("UPDATE users SET role = 'root'", [])
        .unwrap();
    let err = db.user("alice").unwrap_err();
    assert!(
        matches!(&err, DbError::Schema(m) if m.contains("\"alice\"") && m.contains("unknown role \"root\"")),
        "{err}"
    );
    db.conn
        .execute("UPDATE users SET role = 'admin', max_tlp = 'plaid'", [])
        .unwrap();
    assert!(matches!(db.users(), Err(DbError::Schema(_))));
    db.conn
        .execute("UPDATE users SET max_tlp = 'red', sectors = 'x'", [])
        .unwrap();
    assert!(matches!(db.users(), Err(DbError::Schema(_))));
}
