//! The audit log: append-only and hash-chained.
//!
//! Line `seq` stores `SHA-256(previous hash ‖ seq ‖ at_us ‖ actor ‖ action ‖ object_id ‖
//! detail)`, integers as 8 big-endian bytes, strings prefixed by their length so no two
//! different lines hash alike, the absent object id as a distinct tag; the first line's
//! previous hash is 32 zero bytes. Sequence numbers come from SQLite's `AUTOINCREMENT`
//! counter, which remembers the largest ever used: a line removed from the end leaves the
//! counter ahead of the last line, which [`Db::verify_audit`] reports.

use super::{now_us, sql_int, AuditEntry, AuditRecord, Db, DbError, Reader};
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};

/// The previous hash of the first line.
const GENESIS: [u8; 32] = [0; 32];

impl Db {
    /// Appends to the audit log; returns the line's `seq`.
    pub fn audit(&mut self, entry: &AuditEntry) -> Result<i64, DbError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let last_seq: i64 = tx
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = 'audit'",
                [],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        let prev: Vec<u8> = tx
            .query_row(
                "SELECT hash FROM audit ORDER BY seq DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or_else(|| GENESIS.to_vec());
        let seq = last_seq + 1;
        let at_us = now_us();
        let hash = chain_hash(&prev, seq, at_us, entry);
        tx.execute(
            "INSERT INTO audit (seq, at_us, actor, action, object_id, detail, hash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                seq,
                at_us,
                entry.actor,
                entry.action,
                entry.object_id,
                entry.detail,
                &hash[..]
            ],
        )?;
        tx.commit()?;
        Ok(seq)
    }

    /// Audit lines after `after_seq` (or from the start), oldest first, at most `limit`.
    pub fn audit_log(
        &self,
        after_seq: Option<i64>,
        limit: usize,
    ) -> Result<Vec<AuditRecord>, DbError> {
        let mut st = self.conn.prepare_cached(
            "SELECT seq, at_us, actor, action, object_id, detail FROM audit \
             WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let mut rows = st.query(params![after_seq.unwrap_or(i64::MIN), sql_int(limit)])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(read_record(row)?);
        }
        Ok(out)
    }

    /// The number of the newest audit line, if any.
    pub fn last_audit_seq(&self) -> Result<Option<i64>, DbError> {
        Ok(self
            .conn
            .query_row("SELECT max(seq) FROM audit", [], |r| r.get(0))?)
    }

    /// Checks the audit log's hash chain: `None` if intact, else the first line that was
    /// altered, or follows a removed line, or (for a removed tail) the first missing `seq`.
    pub fn verify_audit(&self) -> Result<Option<i64>, DbError> {
        let mut st = self.conn.prepare(
            "SELECT seq, at_us, actor, action, object_id, detail, hash FROM audit ORDER BY seq",
        )?;
        let mut rows = st.query([])?;
        let mut prev = GENESIS.to_vec();
        let mut last_seq = 0;
        while let Some(row) = rows.next()? {
            let seq: i64 = Reader::new(row, "audit").get(0, "seq")?;
            let Ok(record) = read_record(row) else {
                return Ok(Some(seq));
            };
            let stored: Vec<u8> = match row.get(6) {
                Ok(h) => h,
                Err(_) => return Ok(Some(seq)),
            };
            if stored != chain_hash(&prev, seq, record.at_us, &record.entry) {
                return Ok(Some(seq));
            }
            prev = stored;
            last_seq = seq;
        }
        let counter: i64 = self
            .conn
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = 'audit'",
                [],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        Ok((counter > last_seq).then_some(last_seq + 1))
    }
}

/// The hash of line `seq` chained to `prev`.
fn chain_hash(prev: &[u8], seq: i64, at_us: i64, e: &AuditEntry) -> [u8; 32] {
    fn field(h: &mut Sha256, s: &str) {
        h.update((s.len() as u64).to_be_bytes());
        h.update(s.as_bytes());
    }
    let mut h = Sha256::new();
    h.update(prev);
    h.update(seq.to_be_bytes());
    h.update(at_us.to_be_bytes());
    field(&mut h, &e.actor);
    field(&mut h, &e.action);
    match &e.object_id {
        None => h.update([0u8]),
        Some(id) => {
            h.update([1u8]);
            field(&mut h, id);
        }
    }
    field(&mut h, &e.detail);
    h.finalize().into()
}

/// Decodes `seq, at_us, actor, action, object_id, detail`.
fn read_record(row: &rusqlite::Row<'_>) -> Result<AuditRecord, DbError> {
    let r = Reader::new(row, "audit");
    Ok(AuditRecord {
        seq: r.get(0, "seq")?,
        at_us: r.get(1, "at_us")?,
        entry: AuditEntry {
            actor: r.get(2, "actor")?,
            action: r.get(3, "action")?,
            object_id: r.get(4, "object_id")?,
            detail: r.get(5, "detail")?,
        },
    })
}

#[cfg(test)]
mod tests;
