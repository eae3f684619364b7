//! Object versions: storing them (with their full-text entry), reading them back, and the
//! flags (`deleted`, `pending_share`) that change after storing.

use super::{
    now_us, sql_int, CollectionKey, Db, DbError, InsertOutcome, NewObject, Reader, Sector,
    StoredObject,
};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

/// The columns of [`StoredObject`], in [`read_object`]'s order, from the table aliased `o`.
pub(super) const OBJECT_COLUMNS: &str = "o.row, o.id, o.stix_type, o.spec_version, o.version, \
     o.tlp, o.sector, o.origin, o.added_us, o.shared_at_ns, o.json, o.revoked, o.deleted";

const INSERT: &str = "INSERT INTO objects (id, stix_type, spec_version, version, version_key, \
     tlp, sector, origin, added_us, shared_at_ns, json, revoked, pending_share) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT DO NOTHING";

impl Db {
    /// Stores versions in one transaction: all are stored or, on error, none.
    pub fn insert_objects(&mut self, items: &[NewObject]) -> Result<Vec<InsertOutcome>, DbError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let outcomes = insert_in(&tx, items)?;
        tx.commit()?;
        Ok(outcomes)
    }

    /// Stores received versions as [`Db::insert_objects`] does and, in the same transaction,
    /// the DDS instance each came as (`(instance handle, id)`), for [`Db::id_of_instance`].
    pub fn insert_received(
        &mut self,
        items: &[NewObject],
        instances: &[([u8; 16], String)],
    ) -> Result<Vec<InsertOutcome>, DbError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut st = tx.prepare_cached(
                "INSERT INTO instance_ids (handle, id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            )?;
            for (handle, id) in instances {
                st.execute(params![&handle[..], id])?;
            }
        }
        let outcomes = insert_in(&tx, items)?;
        tx.commit()?;
        Ok(outcomes)
    }

    /// The object a received DDS instance carries, if one was received as it.
    pub fn id_of_instance(&self, handle: &[u8; 16]) -> Result<Option<String>, DbError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT id FROM instance_ids WHERE handle = ?1")?;
        Ok(st
            .query_row(params![&handle[..]], |r| r.get(0))
            .optional()?)
    }

    /// This version of this object is stored (in any sector, or locally).
    pub fn has_version(&self, id: &str, version: &str) -> Result<bool, DbError> {
        let mut st = self.conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM objects WHERE id = ?1 AND version = ?2)",
        )?;
        Ok(st.query_row(params![id, version], |r| r.get(0))?)
    }

    /// Every stored version of `id` visible in `visible`, oldest first (deleted included,
    /// flagged).
    pub fn versions_of(
        &self,
        id: &str,
        visible: &[CollectionKey],
    ) -> Result<Vec<StoredObject>, DbError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {OBJECT_COLUMNS} FROM objects o WHERE o.id = ?1 \
             ORDER BY o.version_key, o.row"
        ))?;
        let mut rows = st.query(params![id])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let o = read_object(r)?;
            if visible
                .iter()
                .any(|k| k.sector == o.sector && k.tlp == o.tlp)
            {
                out.push(o);
            }
        }
        Ok(out)
    }

    /// Marks every version of `id` in `sector` deleted; returns how many rows changed.
    pub fn mark_deleted(&mut self, id: &str, sector: &Sector) -> Result<usize, DbError> {
        let mut st = self.conn.prepare_cached(
            "UPDATE objects SET deleted = 1 WHERE id = ?1 AND sector IS ?2 AND deleted = 0",
        )?;
        Ok(st.execute(params![id, sector])?)
    }

    /// Versions with `pending_share` set, oldest first, at most `limit`.
    pub fn pending_shares(&self, limit: usize) -> Result<Vec<StoredObject>, DbError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {OBJECT_COLUMNS} FROM objects o WHERE o.pending_share <> 0 \
             ORDER BY o.row LIMIT ?1"
        ))?;
        let mut rows = st.query(params![sql_int(limit)])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(read_object(r)?);
        }
        Ok(out)
    }

    /// Versions with `pending_share` set whose row is after `after_row`, oldest first, at
    /// most `limit` (the outbox walks the pending rows with it).
    pub fn pending_shares_after(
        &self,
        after_row: i64,
        limit: usize,
    ) -> Result<Vec<StoredObject>, DbError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {OBJECT_COLUMNS} FROM objects o WHERE o.pending_share <> 0 AND o.row > ?1 \
             ORDER BY o.row LIMIT ?2"
        ))?;
        let mut rows = st.query(params![after_row, sql_int(limit)])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(read_object(r)?);
        }
        Ok(out)
    }

    /// The row of a stored version in a sector (`None`: the local copy), if stored.
    pub fn row_of(
        &self,
        id: &str,
        version: &str,
        sector: Option<&str>,
    ) -> Result<Option<i64>, DbError> {
        let mut st = self.conn.prepare_cached(
            "SELECT row FROM objects WHERE id = ?1 AND version = ?2 \
             AND coalesce(sector, X'') = coalesce(?3, X'')",
        )?;
        let mut rows = st.query(params![id, version, sector])?;
        Ok(match rows.next()? {
            Some(r) => Some(r.get(0)?),
            None => None,
        })
    }

    /// Clears `pending_share` on these rows.
    pub fn mark_shared(&mut self, rows: &[i64]) -> Result<(), DbError> {
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "UPDATE objects SET pending_share = 0 WHERE row = ?1 AND pending_share <> 0",
            )?;
            for row in rows {
                st.execute(params![row])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Number of stored versions (all sectors).
    pub fn object_count(&self) -> Result<u64, DbError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM objects", [], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// Stores `items` inside the caller's transaction (see [`Db::insert_objects`]).
///
/// `added_us` continues from the largest value stored (that of the last row), so it
/// increases across restarts and clock steps; only a stored row consumes a value. The
/// full-text index is left to [`super::fts`].
pub(super) fn insert_in(
    conn: &Connection,
    items: &[NewObject],
) -> Result<Vec<InsertOutcome>, DbError> {
    let mut last_us: i64 = conn
        .query_row("SELECT max(added_us) FROM objects", [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .map_err(|e| DbError::Schema(format!("corrupt table objects: column added_us: {e}")))?
        .unwrap_or(0);
    let mut known = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM objects WHERE id = ?1 AND version = ?2)")?;
    let mut insert = conn.prepare_cached(INSERT)?;
    let mut outcomes = Vec::with_capacity(items.len());
    for o in items {
        let existed: bool = known.query_row(params![o.id, o.version], |r| r.get(0))?;
        let added_us = now_us().max(last_us.saturating_add(1));
        let stored = insert.execute(params![
            o.id,
            o.stix_type,
            o.spec_version,
            o.version,
            version_key(&o.version),
            o.tlp.as_str(),
            o.sector,
            o.origin,
            added_us,
            o.shared_at_ns,
            o.json,
            o.revoked,
            o.pending_share,
        ])?;
        if stored == 0 {
            outcomes.push(InsertOutcome::Duplicate);
            continue;
        }
        last_us = added_us;
        outcomes.push(if existed {
            InsertOutcome::NewInSector
        } else {
            InsertOutcome::New
        });
    }
    Ok(outcomes)
}

/// Decodes a row selected with [`OBJECT_COLUMNS`].
pub(super) fn read_object(row: &rusqlite::Row<'_>) -> Result<StoredObject, DbError> {
    let r = Reader::new(row, "objects");
    Ok(StoredObject {
        row: r.get(0, "row")?,
        id: r.get(1, "id")?,
        stix_type: r.get(2, "stix_type")?,
        spec_version: r.get(3, "spec_version")?,
        version: r.get(4, "version")?,
        tlp: r.tlp(5, "tlp")?,
        sector: r.get(6, "sector")?,
        origin: r.get(7, "origin")?,
        added_us: r.get(8, "added_us")?,
        shared_at_ns: r.get(9, "shared_at_ns")?,
        json: r.get(10, "json")?,
        revoked: r.get(11, "revoked")?,
        deleted: r.get(12, "deleted")?,
    })
}

/// A version (an RFC 3339 timestamp) as a key whose text order is time order: the fractional
/// seconds padded to nine digits and the `Z` dropped, so `…:48Z`, `…:48.5Z` and
/// `…:48.123456789Z` compare as instants. Anything else is its own key.
pub(super) fn version_key(version: &str) -> String {
    let b = version.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let shaped = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && matches!(b[b.len() - 1], b'Z' | b'z');
    if !shaped {
        return version.to_string();
    }
    let frac = match &version[19..version.len() - 1] {
        "" => "",
        f if f.len() > 1 && f.starts_with('.') && digits(20..b.len() - 1) => &f[1..],
        _ => return version.to_string(),
    };
    format!("{}T{}.{frac:0<9}", &version[..10], &version[11..19])
}

#[cfg(test)]
mod tests;
