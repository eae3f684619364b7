//! The two filtered reads of objects: TAXII 2.1 pages of one collection, and the full-text
//! search of the REST API.
//!
//! Both are assembled from fixed SQL fragments; every value, list elements included, is
//! bound to a `?` placeholder. The text of a search never reaches FTS5 syntax either: each
//! word becomes a quoted prefix term.

use super::objects::{read_object, OBJECT_COLUMNS};
use super::{
    sql_int, CollectionKey, Db, DbError, ObjectPage, ObjectQuery, SearchQuery, StoredObject,
    VersionMatch,
};
use rusqlite::types::Value;

impl Db {
    /// A TAXII page.
    ///
    /// The rows of the collection (its sector and marking, not deleted) that pass every
    /// filter, `match[version]` included, in `added_us` order; the page is the first `limit`
    /// of them after `after_row`. `last` and `first` are decided among all the collection's
    /// rows of each id, so a version added late that is older than one already stored is not
    /// reported as the latest. A query without a collection sees nothing.
    pub fn query_objects(&self, q: &ObjectQuery) -> Result<ObjectPage, DbError> {
        let Some(c) = &q.collection else {
            return Ok(ObjectPage::default());
        };
        let limit = q.limit.max(1);
        let (sql, f) = taxii_sql(c, q, limit);
        let mut objects = f.run(self, &sql)?;
        let more = objects.len() > limit;
        objects.truncate(limit);
        Ok(ObjectPage { objects, more })
    }

    /// Full-text search with filters, newest first.
    ///
    /// Deleted versions are never found, and nothing outside `visible` is: an empty
    /// `visible` finds nothing. A search with text first indexes the rows not yet indexed
    /// (see [`Db::index_pending`]), so it sees every committed row.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<StoredObject>, DbError> {
        if q.visible.is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        let mut f = Filter::default();
        f.and("o.deleted = 0", []);
        f.any(
            "(o.sector IS ? AND o.tlp = ?)",
            q.visible
                .iter()
                .map(|k| [text_or_null(k.sector.as_deref()), text(k.tlp.as_str())]),
        );
        if let Some(m) = match_expression(&q.text) {
            super::fts::catch_up(&self.conn)?;
            f.and(
                "o.row IN (SELECT rowid FROM objects_fts WHERE objects_fts MATCH ?)",
                [Value::Text(m)],
            );
        }
        f.and_in("o.stix_type", q.types.iter().map(|s| text(s)));
        f.and_in("o.tlp", q.tlps.iter().map(|t| text(t.as_str())));
        if !q.sectors.is_empty() {
            f.any(
                "o.sector IS ?",
                q.sectors.iter().map(|s| [text_or_null(s.as_deref())]),
            );
        }
        f.and_in("o.origin", q.origins.iter().map(|s| text(s)));
        if let Some(t) = q.since_us {
            f.and("o.added_us >= ?", [Value::Integer(t)]);
        }
        if let Some(t) = q.until_us {
            f.and("o.added_us < ?", [Value::Integer(t)]);
        }
        let sql = format!(
            "SELECT {OBJECT_COLUMNS} FROM objects o WHERE {} \
             ORDER BY o.added_us DESC, o.row DESC LIMIT ? OFFSET ?",
            f.sql
        );
        f.params.push(Value::Integer(sql_int(q.limit)));
        f.params.push(Value::Integer(sql_int(q.offset)));
        f.run(self, &sql)
    }
}

impl Db {
    /// The relationships and sightings that refer to `id` (as source, target, sighted object
    /// or any other reference), newest version first, at most `limit`, only within `visible`.
    pub fn related(
        &self,
        id: &str,
        visible: &[CollectionKey],
        limit: usize,
    ) -> Result<Vec<StoredObject>, DbError> {
        if visible.is_empty() || limit == 0 || id.is_empty() {
            return Ok(Vec::new());
        }
        let mut f = Filter::default();
        f.and("o.deleted = 0", []);
        f.any(
            "(o.sector IS ? AND o.tlp = ?)",
            visible
                .iter()
                .map(|k| [text_or_null(k.sector.as_deref()), text(k.tlp.as_str())]),
        );
        f.and_in(
            "o.stix_type",
            ["relationship", "sighting"].into_iter().map(text),
        );
        // A STIX identifier is quoted wherever the object refers to it.
        f.and("instr(o.json, ?) > 0", [Value::Text(format!("\"{id}\""))]);
        let sql = format!(
            "SELECT {OBJECT_COLUMNS} FROM objects o WHERE {} \
             ORDER BY o.added_us DESC, o.row DESC LIMIT ?",
            f.sql
        );
        f.params.push(Value::Integer(sql_int(limit)));
        f.run(self, &sql)
    }
}

/// The statement of a TAXII page of collection `c` of at most `limit` rows, plus one to
/// tell whether there are more.
fn taxii_sql(c: &CollectionKey, q: &ObjectQuery, limit: usize) -> (String, Filter) {
    let mut f = Filter::default();
    f.and(
        "o.sector IS ? AND o.tlp = ? AND o.deleted = 0",
        [text_or_null(c.sector.as_deref()), text(c.tlp.as_str())],
    );
    if let Some(t) = q.added_after_us {
        f.and("o.added_us > ?", [Value::Integer(t)]);
    }
    if let Some(row) = q.after_row {
        // The same bound as `row > after_row` (rows and `added_us` grow together), put
        // on `added_us` as well so the collection's index seeks to it.
        f.and(
            "o.row > ? AND o.added_us > coalesce((SELECT a.added_us FROM objects a \
                 WHERE a.row <= ? ORDER BY a.row DESC LIMIT 1), -9223372036854775808)",
            [Value::Integer(row), Value::Integer(row)],
        );
    }
    f.and_in("o.id", q.ids.iter().map(|s| text(s)));
    f.and_in("o.stix_type", q.types.iter().map(|s| text(s)));
    f.and_in("o.spec_version", q.spec_versions.iter().map(|s| text(s)));
    match &q.versions {
        VersionMatch::All => {}
        VersionMatch::Last => f.and(&extreme_version(">"), []),
        VersionMatch::First => f.and(&extreme_version("<"), []),
        VersionMatch::Specific(list) if list.is_empty() => f.and("0", []),
        VersionMatch::Specific(list) => f.and_in("o.version", list.iter().map(|s| text(s))),
        VersionMatch::AnyOf {
            first,
            last,
            versions,
        } => {
            let mut alternatives = Vec::new();
            if *first {
                alternatives.push(extreme_version("<"));
            }
            if *last {
                alternatives.push(extreme_version(">"));
            }
            if !versions.is_empty() {
                alternatives.push(format!(
                    "o.version IN ({})",
                    vec!["?"; versions.len()].join(", ")
                ));
            }
            if alternatives.is_empty() {
                f.and("0", []);
            } else {
                f.and(&alternatives.join(" OR "), []);
                f.params.extend(versions.iter().map(|s| text(s)));
            }
        }
    }
    let sql = format!(
        "SELECT {OBJECT_COLUMNS} FROM objects o WHERE {} ORDER BY o.added_us, o.row LIMIT ?",
        f.sql
    );
    f.params
        .push(Value::Integer(sql_int(limit).saturating_add(1)));
    (sql, f)
}

/// The condition that no other row of the same id in the same collection has a later
/// (`">"`) or earlier (`"<"`) version; equal versions are ordered by row.
///
/// The lookup goes by id (an object has few versions): left to itself, the planner would
/// scan the whole collection by its sector and marking for every row.
fn extreme_version(cmp: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM objects n INDEXED BY objects_version \
         WHERE n.id = o.id AND n.sector IS o.sector \
         AND n.tlp = o.tlp AND n.deleted = 0 AND (n.version_key {cmp} o.version_key \
         OR (n.version_key = o.version_key AND n.row {cmp} o.row)))"
    )
}

/// The FTS5 query for a search text: each whitespace-separated word as a quoted prefix
/// term (`"word"*`, inner quotes doubled), all required. `None` when there are no words.
///
/// Words without a letter or digit are dropped: the tokenizer would make nothing of them,
/// and an empty phrase is not a valid FTS5 term.
pub(super) fn match_expression(text: &str) -> Option<String> {
    let terms: Vec<String> = text
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
        .collect();
    if terms.is_empty() {
        None
    } else {
        Some(terms.join(" AND "))
    }
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn text_or_null(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

/// A `WHERE` clause under construction: fixed SQL fragments joined by `AND`, with their
/// values in placeholder order.
#[derive(Default)]
struct Filter {
    sql: String,
    params: Vec<Value>,
}

impl Filter {
    /// Adds `clause` (with one `?` per value of `values`).
    fn and<const N: usize>(&mut self, clause: &str, values: [Value; N]) {
        if !self.sql.is_empty() {
            self.sql.push_str(" AND ");
        }
        self.sql.push('(');
        self.sql.push_str(clause);
        self.sql.push(')');
        self.params.extend(values);
    }

    /// Adds `column IN (?, ?, ...)`, or nothing for an empty list (no filter).
    fn and_in(&mut self, column: &str, values: impl Iterator<Item = Value>) {
        let start = self.params.len();
        self.params.extend(values);
        let n = self.params.len() - start;
        if n == 0 {
            return;
        }
        if !self.sql.is_empty() {
            self.sql.push_str(" AND ");
        }
        self.sql.push_str(column);
        self.sql.push_str(" IN (");
        self.sql.push_str(&vec!["?"; n].join(", "));
        self.sql.push(')');
    }

    /// Adds `(clause OR clause ...)`, once per element of `each` (its values for that
    /// clause's placeholders); at least one element is expected.
    fn any<const N: usize>(&mut self, clause: &str, each: impl Iterator<Item = [Value; N]>) {
        let mut alternatives = Vec::new();
        for values in each {
            alternatives.push(clause);
            self.params.extend(values);
        }
        if !self.sql.is_empty() {
            self.sql.push_str(" AND ");
        }
        self.sql.push('(');
        self.sql.push_str(&alternatives.join(" OR "));
        if alternatives.is_empty() {
            self.sql.push('0');
        }
        self.sql.push(')');
    }

    /// Runs `sql` (built around this filter) and decodes the objects.
    fn run(&self, db: &Db, sql: &str) -> Result<Vec<StoredObject>, DbError> {
        let mut st = db.conn.prepare_cached(sql)?;
        let mut rows = st.query(rusqlite::params_from_iter(self.params.iter()))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(read_object(r)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
