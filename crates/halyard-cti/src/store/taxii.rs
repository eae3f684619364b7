//! TAXII bookkeeping: the status resources of this node's TAXII server, and the bookmarks of
//! the remote collections it polls.

use super::{Db, DbError, Reader, TaxiiStatus};
use rusqlite::params;

impl Db {
    /// Stores a TAXII status resource (replacing one of the same id).
    pub fn put_status(&mut self, s: &TaxiiStatus) -> Result<(), DbError> {
        let list = |l: &Vec<(String, String, Option<String>)>| {
            serde_json::to_string(l).map_err(|e| DbError::Schema(format!("status {}: {e}", s.id)))
        };
        let mut st = self.conn.prepare_cached(
            "INSERT INTO taxii_status (id, status, request_us, successes, failures, pendings, \
             owner) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO UPDATE SET \
             status = excluded.status, request_us = excluded.request_us, \
             successes = excluded.successes, failures = excluded.failures, \
             pendings = excluded.pendings, owner = excluded.owner",
        )?;
        st.execute(params![
            s.id,
            s.status,
            s.request_us,
            list(&s.successes)?,
            list(&s.failures)?,
            list(&s.pendings)?,
            s.owner,
        ])?;
        Ok(())
    }

    /// A TAXII status resource.
    pub fn status(&self, id: &str) -> Result<Option<TaxiiStatus>, DbError> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, status, request_us, successes, failures, pendings, owner \
             FROM taxii_status WHERE id = ?1",
        )?;
        let mut rows = st.query(params![id])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        let r = Reader::new(row, "taxii_status");
        Ok(Some(TaxiiStatus {
            id: r.get(0, "id")?,
            status: r.get(1, "status")?,
            request_us: r.get(2, "request_us")?,
            successes: r.json(3, "successes")?,
            failures: r.json(4, "failures")?,
            pendings: r.json(5, "pendings")?,
            owner: r.get(6, "owner")?,
        }))
    }

    /// The bookmark of a polled collection (the last `X-TAXII-Date-Added-Last` seen).
    pub fn bookmark(&self, name: &str) -> Result<Option<String>, DbError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT name, value FROM bookmarks WHERE name = ?1")?;
        let mut rows = st.query(params![name])?;
        match rows.next()? {
            None => Ok(None),
            Some(row) => Reader::new(row, "bookmarks").get(1, "value").map(Some),
        }
    }

    /// Sets a bookmark.
    pub fn set_bookmark(&mut self, name: &str, value: &str) -> Result<(), DbError> {
        let mut st = self.conn.prepare_cached(
            "INSERT INTO bookmarks (name, value) VALUES (?1, ?2) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )?;
        st.execute(params![name, value])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! Status resources and bookmarks round-trip, replace, and report corruption.
    use super::*;
    use crate::store::testutil::{db, TempDir};

    fn status(id: &str) -> TaxiiStatus {
        TaxiiStatus {
            id: id.into(),
            status: "complete".into(),
            request_us: 1_700_000_000_000_000,
            successes: vec![("indicator--a".into(), "2024-01-01T00:00:00Z".into(), None)],
            failures: vec![(
                "malware--b".into(),
                "2024-01-02T00:00:00Z".into(),
                Some("bad \"quote\"".into()),
            )],
            pendings: vec![],
            owner: "alice".into(),
        }
    }

    #[test]
    fn store_status_round_trips_and_replaces() {
        let dir = TempDir::new("status");
        let mut db = db(&dir);
        assert_eq!(db.status("s1").unwrap(), None);
        let mut s = status("s1");
        db.put_status(&s).unwrap();
        assert_eq!(db.status("s1").unwrap(), Some(s.clone()));
        s.pendings
            .push(("x--c".into(), "v".into(), Some("in review".into())));
        db.put_status(&s).unwrap();
        assert_eq!(db.status("s1").unwrap(), Some(s));
    }

    #[test]
    fn store_status_corrupt_list_is_schema_error() {
        let dir = TempDir::new("status-corrupt");
        let mut db = db(&dir);
        db.put_status(&status("s1")).unwrap();
        db.conn
            .execute("UPDATE taxii_status SET failures = '[1, 2'", [])
            .unwrap();
        let err = db.status("s1").unwrap_err();
        assert!(
            matches!(&err, DbError::Schema(m) if m.contains("taxii_status") && m.contains("\"s1\"")),
            "{err}"
        );
    }

    #[test]
    fn store_bookmarks_set_and_replace() {
        let dir = TempDir::new("bookmarks");
        let mut db = db(&dir);
        assert_eq!(db.bookmark("feed").unwrap(), None);
        db.set_bookmark("feed", "2024-01-01T00:00:00.000000Z")
            .unwrap();
        db.set_bookmark("feed", "2024-02-01T00:00:00.000000Z")
            .unwrap();
        db.set_bookmark("other", "x").unwrap();
        assert_eq!(
            db.bookmark("feed").unwrap().as_deref(),
            Some("2024-02-01T00:00:00.000000Z")
        );
        assert_eq!(db.bookmark("other").unwrap().as_deref(), Some("x"));
    }
}
