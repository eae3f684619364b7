//! The full-text index of objects, filled behind the writes.
//!
//! `fts_state.indexed_row` is the last row whose text is in `objects_fts`. Rows are indexed
//! in row order, a chunk per transaction that also moves the watermark, so the index and
//! the watermark agree after any crash; and since row ids only grow (`AUTOINCREMENT`, rows
//! never removed), every row above the watermark is a row still to index.

use super::{sql_int, Db, DbError, Reader};
use rusqlite::{params, Connection, Transaction, TransactionBehavior};

/// Rows indexed per transaction when a search catches up.
const CHUNK_ROWS: usize = 10_000;

impl Db {
    /// Adds up to `max_rows` stored versions not yet in the full-text index to it, oldest
    /// first; returns how many. A search indexes what is left by itself before it looks;
    /// calling this when idle (after a bulk import) keeps that wait away from searches.
    pub fn index_pending(&mut self, max_rows: usize) -> Result<usize, DbError> {
        index_chunk(&self.conn, i64::MAX, max_rows)
    }
}

/// Indexes every row stored when called.
pub(super) fn catch_up(conn: &Connection) -> Result<(), DbError> {
    let end: i64 = conn.query_row("SELECT coalesce(max(row), 0) FROM objects", [], |r| {
        r.get(0)
    })?;
    // Each chunk that indexes something moves the watermark towards `end`.
    while index_chunk(conn, end, CHUNK_ROWS)? > 0 {}
    Ok(())
}

/// Indexes up to `max_rows` rows above the watermark and at most `end_row`, in one
/// transaction with the watermark's move.
fn index_chunk(conn: &Connection, end_row: i64, max_rows: usize) -> Result<usize, DbError> {
    if max_rows == 0 {
        return Ok(0);
    }
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let from: i64 = tx
        .query_row("SELECT indexed_row FROM fts_state WHERE id = 1", [], |r| {
            r.get(0)
        })
        .map_err(|e| DbError::Schema(format!("corrupt table fts_state: {e}")))?;
    let mut indexed = 0;
    let mut last = from;
    {
        let mut select = tx.prepare_cached(
            "SELECT row, id, stix_type, json FROM objects WHERE row > ?1 AND row <= ?2 \
             ORDER BY row LIMIT ?3",
        )?;
        let mut insert =
            tx.prepare_cached("INSERT INTO objects_fts (rowid, body) VALUES (?1, ?2)")?;
        let mut rows = select.query(params![from, end_row, sql_int(max_rows)])?;
        let mut text = String::new();
        while let Some(row) = rows.next()? {
            let r = Reader::new(row, "objects");
            let (id, stix_type, json): (String, String, String) =
                (r.get(1, "id")?, r.get(2, "stix_type")?, r.get(3, "json")?);
            last = r.get(0, "row")?;
            searchable_text(&id, &stix_type, &json, &mut text);
            insert.execute(params![last, text])?;
            indexed += 1;
        }
    }
    if indexed > 0 {
        tx.execute(
            "UPDATE fts_state SET indexed_row = ?1 WHERE id = 1",
            params![last],
        )?;
        tx.commit()?;
    }
    Ok(indexed)
}

/// The text indexed for an object: its id, its type and every string value of its JSON
/// (names, descriptions, patterns, labels, aliases, references ...), one per line. JSON that
/// does not parse is indexed as it is.
pub(super) fn searchable_text(id: &str, stix_type: &str, json: &str, out: &mut String) {
    out.clear();
    out.push_str(id);
    out.push('\n');
    out.push_str(stix_type);
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(v) => push_strings(&v, out),
        Err(_) => {
            out.push('\n');
            out.push_str(json);
        }
    }
}

/// Appends every string of `v`, depth first, each on its own line.
fn push_strings(v: &serde_json::Value, out: &mut String) {
    // serde_json's parser bounds the nesting depth, which bounds this recursion.
    match v {
        serde_json::Value::String(s) => {
            out.push('\n');
            out.push_str(s);
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| push_strings(v, out)),
        serde_json::Value::Object(m) => m.values().for_each(|v| push_strings(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    //! The index gathers every string, follows the writes, survives reopening, and a search
    //! never misses a committed row.
    use super::*;
    use crate::store::testutil::{db, indicator, key, s, TempDir};
    use crate::store::SearchQuery;
    use halyard_stix::marking::Tlp;

    fn watermark(db: &Db) -> i64 {
        db.conn
            .query_row("SELECT indexed_row FROM fts_state", [], |r| r.get(0))
            .unwrap()
    }

    fn find(db: &Db, text: &str) -> usize {
        let q = SearchQuery {
            text: text.into(),
            visible: vec![key(Some("e"), Tlp::Green)],
            limit: 100_000,
            ..Default::default()
        };
        db.search(&q).unwrap().len()
    }

    #[test]
    fn store_searchable_text_has_every_string_value() {
        let json = r#"{"id":"x--1","name":"Emotet","aliases":["Heodo",{"deep":"Geodo"}],"n":5}"#;
        let mut t = String::new();
        searchable_text("malware--1", "malware", json, &mut t);
        let mut lines: Vec<_> = t.lines().collect();
        assert_eq!(lines[..2], ["malware--1", "malware"]);
        lines[2..].sort_unstable();
        assert_eq!(lines[2..], ["Emotet", "Geodo", "Heodo", "x--1"]);
        searchable_text("x--2", "x", "{not json", &mut t);
        assert_eq!(t, "x--2\nx\n{not json");
    }

    #[test]
    fn store_index_pending_moves_the_watermark_in_order() {
        let dir = TempDir::new("fts-pending");
        let mut db = db(&dir);
        let items: Vec<_> = (0..5)
            .map(|i| indicator(i, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "walrus"))
            .collect();
        db.insert_objects(&items).unwrap();
        assert_eq!(watermark(&db), 0);
        assert_eq!(db.index_pending(0).unwrap(), 0);
        assert_eq!(db.index_pending(2).unwrap(), 2);
        assert_eq!(watermark(&db), 2);
        assert_eq!(db.index_pending(10).unwrap(), 3);
        assert_eq!(db.index_pending(10).unwrap(), 0);
        assert_eq!(watermark(&db), 5);
        assert_eq!(find(&db, "walrus"), 5);
    }

    #[test]
    fn store_search_catches_up_across_chunks_and_reopen() {
        let dir = TempDir::new("fts-catch-up");
        let n = CHUNK_ROWS as u32 + 5;
        {
            let mut db = db(&dir);
            let items: Vec<_> = (0..n)
                .map(|i| indicator(i, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "narwhal"))
                .collect();
            db.insert_objects(&items).unwrap();
            db.index_pending(3).unwrap();
        }
        let mut db = db(&dir);
        assert_eq!(find(&db, "narwhal"), n as usize);
        assert_eq!(watermark(&db), i64::from(n));
        db.insert_objects(&[indicator(
            n,
            "2024-01-01T00:00:00Z",
            s("e"),
            Tlp::Green,
            "orca",
        )])
        .unwrap();
        assert_eq!(find(&db, "orca"), 1);
        // A search without text needs no index.
        assert_eq!(find(&db, ""), n as usize + 1);
    }
}
