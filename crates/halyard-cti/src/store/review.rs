//! The review queue: objects that wait for a second person, and their decisions.
//!
//! An item is created `pending` and decided once, to `approved` or `rejected`; the decision
//! and the approved object's versions are one transaction, so an approved item is never
//! left without its objects, nor objects stored for an item still pending.

use super::objects::insert_in;
use super::{now_us, sql_int, Db, DbError, NewObject, NewReview, Reader, ReviewItem, ReviewState};
use rusqlite::{params, Connection, TransactionBehavior};

const COLUMNS: &str = "id, submitted_us, state, object_id, version, stix_type, tlp, sectors, \
     submitted_by, original_json, sanitized_json, changes_json, reasons, decided_by, \
     decided_us, final_json, note";

impl Db {
    /// Queues an object for review; returns its number.
    pub fn enqueue_review(&mut self, item: &NewReview) -> Result<i64, DbError> {
        let mut st = self.conn.prepare_cached(
            "INSERT INTO reviews (submitted_us, state, object_id, version, stix_type, tlp, \
             sectors, submitted_by, original_json, sanitized_json, changes_json, reasons) \
             VALUES (?1, 'pending', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        st.execute(params![
            now_us(),
            item.object_id,
            item.version,
            item.stix_type,
            item.tlp.as_str(),
            json_list(&item.sectors),
            item.submitted_by,
            item.original_json,
            item.sanitized_json,
            item.changes_json,
            json_list(&item.reasons),
        ])?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Review items, newest first, in `state` (or all), at most `limit`.
    pub fn review_items(
        &self,
        state: Option<ReviewState>,
        limit: usize,
    ) -> Result<Vec<ReviewItem>, DbError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM reviews WHERE ?1 IS NULL OR state = ?1 \
             ORDER BY id DESC LIMIT ?2"
        ))?;
        let mut rows = st.query(params![state.map(ReviewState::as_str), sql_int(limit)])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(read_item(r)?);
        }
        Ok(out)
    }

    /// One review item.
    pub fn review_item(&self, id: i64) -> Result<Option<ReviewItem>, DbError> {
        item_in(&self.conn, id)
    }

    /// Items pending.
    pub fn pending_reviews(&self) -> Result<usize, DbError> {
        let n: i64 = self.conn.query_row(
            "SELECT count(*) FROM reviews WHERE state = 'pending'",
            [],
            |r| r.get(0),
        )?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Decides a pending item (Approved with the final JSON, or Rejected): refused with
    /// [`DbError::Review`] when it is not pending or does not exist. The item's decision and
    /// the object versions to store (`store`, the approved object in each of its sectors) are
    /// written in one transaction.
    ///
    /// Also refused: deciding to `Pending`, and rejecting with objects to store.
    pub fn decide_review(
        &mut self,
        id: i64,
        state: ReviewState,
        by: &str,
        final_json: Option<&str>,
        note: Option<&str>,
        store: &[NewObject],
    ) -> Result<ReviewItem, DbError> {
        match state {
            ReviewState::Pending => {
                return Err(DbError::Review(format!(
                    "review {id}: a decision approves or rejects"
                )))
            }
            ReviewState::Rejected if !store.is_empty() => {
                return Err(DbError::Review(format!(
                    "review {id}: a rejected object is not stored"
                )))
            }
            _ => {}
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let Some(item) = item_in(&tx, id)? else {
            return Err(DbError::Review(format!("review {id} does not exist")));
        };
        if item.state != ReviewState::Pending {
            return Err(DbError::Review(format!(
                "review {id} is already {} by {}",
                item.state.as_str(),
                item.decided_by.as_deref().unwrap_or("someone unrecorded")
            )));
        }
        tx.execute(
            "UPDATE reviews SET state = ?2, decided_by = ?3, decided_us = ?4, final_json = ?5, \
             note = ?6 WHERE id = ?1 AND state = 'pending'",
            params![id, state.as_str(), by, now_us(), final_json, note],
        )?;
        insert_in(&tx, store)?;
        let decided = item_in(&tx, id)?
            .ok_or_else(|| DbError::Review(format!("review {id} vanished while decided")))?;
        tx.commit()?;
        Ok(decided)
    }
}

/// One item, read through `conn` (the connection or an open transaction).
fn item_in(conn: &Connection, id: i64) -> Result<Option<ReviewItem>, DbError> {
    let mut st = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM reviews WHERE id = ?1"))?;
    let mut rows = st.query(params![id])?;
    rows.next()?.map(read_item).transpose()
}

/// A list column's JSON text.
fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items).to_string()
}

/// Decodes a row selected with [`COLUMNS`].
fn read_item(row: &rusqlite::Row<'_>) -> Result<ReviewItem, DbError> {
    let r = Reader::new(row, "reviews");
    let state: String = r.get(2, "state")?;
    let state = match state.as_str() {
        "pending" => ReviewState::Pending,
        "approved" => ReviewState::Approved,
        "rejected" => ReviewState::Rejected,
        other => return Err(r.corrupt(&format!("column state: unknown state {other:?}"))),
    };
    Ok(ReviewItem {
        id: r.get(0, "id")?,
        submitted_us: r.get(1, "submitted_us")?,
        state,
        item: NewReview {
            object_id: r.get(3, "object_id")?,
            version: r.get(4, "version")?,
            stix_type: r.get(5, "stix_type")?,
            tlp: r.tlp(6, "tlp")?,
            sectors: r.json(7, "sectors")?,
            submitted_by: r.get(8, "submitted_by")?,
            original_json: r.get(9, "original_json")?,
            sanitized_json: r.get(10, "sanitized_json")?,
            changes_json: r.get(11, "changes_json")?,
            reasons: r.json(12, "reasons")?,
        },
        decided_by: r.get(13, "decided_by")?,
        decided_us: r.get(14, "decided_us")?,
        final_json: r.get(15, "final_json")?,
        note: r.get(16, "note")?,
    })
}

#[cfg(test)]
mod tests;
