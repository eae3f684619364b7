//! TAXII pages (paging, `match[version]`, `added_after`, filters, collections) and the
//! full-text search (prefix terms, hostile input, filters, visibility).

use super::*;
use crate::store::testutil::{db, indicator, key, s, TempDir};
use crate::store::{CollectionKey, NewObject};
use halyard_stix::marking::Tlp;

fn page_query(c: CollectionKey, versions: VersionMatch, limit: usize) -> ObjectQuery {
    ObjectQuery {
        collection: Some(c),
        versions,
        limit,
        ..Default::default()
    }
}

/// Every page of `q`, following `more` with the last row.
fn all_pages(db: &Db, mut q: ObjectQuery) -> Vec<Vec<StoredObject>> {
    let mut pages = Vec::new();
    for _ in 0..1000 {
        let p = db.query_objects(&q).unwrap();
        assert!(p.objects.len() <= q.limit);
        q.after_row = p.objects.last().map(|o| o.row).or(q.after_row);
        let more = p.more;
        pages.push(p.objects);
        if !more {
            return pages;
        }
    }
    panic!("paging did not end");
}

fn ids_versions(objects: &[StoredObject]) -> Vec<(String, String)> {
    objects
        .iter()
        .map(|o| (o.id.clone(), o.version.clone()))
        .collect()
}

#[test]
fn store_taxii_pages_2500_rows_by_1000() {
    let dir = TempDir::new("paging");
    let mut db = db(&dir);
    let items: Vec<_> = (0..2500)
        .map(|i| indicator(i, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "x"))
        .collect();
    db.insert_objects(&items).unwrap();
    // Noise in other collections.
    db.insert_objects(&[
        indicator(1, "2024-01-01T00:00:00Z", s("f"), Tlp::Green, "x"),
        indicator(1, "2024-01-01T00:00:00Z", s("e"), Tlp::Amber, "x"),
    ])
    .unwrap();
    let pages = all_pages(
        &db,
        page_query(key(Some("e"), Tlp::Green), VersionMatch::Last, 1000),
    );
    let sizes: Vec<_> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [1000, 1000, 500]);
    let all: Vec<_> = pages.concat();
    assert!(all
        .windows(2)
        .all(|w| w[0].added_us < w[1].added_us && w[0].row < w[1].row));
    let want: Vec<_> = items.iter().map(|o| o.id.clone()).collect();
    let got: Vec<_> = all.iter().map(|o| o.id.clone()).collect();
    assert_eq!(got, want);
    // Exactly one full page: `more` is false.
    let mut q = page_query(key(Some("e"), Tlp::Green), VersionMatch::All, 500);
    q.after_row = Some(all[1999].row);
    let p = db.query_objects(&q).unwrap();
    assert_eq!((p.objects.len(), p.more), (500, false));
}

/// Three objects: A with versions 1, 3, 2 (added in that order: 2 arrives late), B with one
/// version, C with versions 2 then 1.
fn versioned(db: &mut Db) -> [String; 3] {
    let e = || s("e");
    let v = |n: u32| format!("2024-01-0{n}T00:00:00.{n}Z");
    db.insert_objects(&[
        indicator(1, &v(1), e(), Tlp::Green, "a"),
        indicator(1, &v(3), e(), Tlp::Green, "a"),
        indicator(2, &v(1), e(), Tlp::Green, "b"),
        indicator(3, &v(2), e(), Tlp::Green, "c"),
        indicator(1, &v(2), e(), Tlp::Green, "a"),
        indicator(3, &v(1), e(), Tlp::Green, "c"),
        // Later versions elsewhere do not count for this collection.
        indicator(2, &v(9), s("f"), Tlp::Green, "b"),
        indicator(2, &v(8), e(), Tlp::Amber, "b"),
    ])
    .unwrap();
    [1, 2, 3].map(|n| indicator(n, "", None, Tlp::Green, "").id)
}

#[test]
fn store_taxii_version_match_last_first_all_specific() {
    let dir = TempDir::new("versions");
    let mut db = db(&dir);
    let [a, b, c] = versioned(&mut db);
    let v = |n: u32| format!("2024-01-0{n}T00:00:00.{n}Z");
    let run = |m: VersionMatch| {
        let p = db
            .query_objects(&page_query(key(Some("e"), Tlp::Green), m, 100))
            .unwrap();
        assert!(!p.more);
        ids_versions(&p.objects)
    };
    let iv = |id: &String, n| (id.clone(), v(n));
    assert_eq!(run(VersionMatch::Last), [iv(&a, 3), iv(&b, 1), iv(&c, 2)]);
    assert_eq!(run(VersionMatch::First), [iv(&a, 1), iv(&b, 1), iv(&c, 1)]);
    assert_eq!(run(VersionMatch::All).len(), 6);
    assert_eq!(
        run(VersionMatch::Specific(vec![v(2), v(9)])),
        [iv(&c, 2), iv(&a, 2)]
    );
    assert!(run(VersionMatch::Specific(vec![])).is_empty());
}

#[test]
fn store_taxii_last_pages_over_the_filtered_set() {
    let dir = TempDir::new("last-paging");
    let mut db = db(&dir);
    // 30 objects, each with 3 versions, added interleaved: only 30 rows are "last".
    for round in 0..3u32 {
        let batch: Vec<_> = (0..30)
            .map(|i| {
                let version = format!("2024-01-01T00:00:0{round}Z");
                indicator(i, &version, s("e"), Tlp::Green, "x")
            })
            .collect();
        db.insert_objects(&batch).unwrap();
    }
    let pages = all_pages(
        &db,
        page_query(key(Some("e"), Tlp::Green), VersionMatch::Last, 7),
    );
    let sizes: Vec<_> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [7, 7, 7, 7, 2]);
    let all = pages.concat();
    assert!(all.iter().all(|o| o.version == "2024-01-01T00:00:02Z"));
    let mut ids: Vec<_> = all.iter().map(|o| o.id.clone()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 30);
}

#[test]
fn store_taxii_added_after_is_strict() {
    let dir = TempDir::new("added-after");
    let mut db = db(&dir);
    let items: Vec<_> = (0..10)
        .map(|i| indicator(i, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "x"))
        .collect();
    db.insert_objects(&items).unwrap();
    let all = db
        .query_objects(&page_query(
            key(Some("e"), Tlp::Green),
            VersionMatch::All,
            100,
        ))
        .unwrap()
        .objects;
    let mut q = page_query(key(Some("e"), Tlp::Green), VersionMatch::All, 100);
    q.added_after_us = Some(all[3].added_us);
    let got = db.query_objects(&q).unwrap().objects;
    assert_eq!(got, all[4..]);
    q.added_after_us = Some(all[9].added_us);
    let p = db.query_objects(&q).unwrap();
    assert!(p.objects.is_empty() && !p.more);
}

#[test]
fn store_taxii_filters_and_collection_bounds() {
    let dir = TempDir::new("taxii-filters");
    let mut db = db(&dir);
    let mut malware = indicator(7, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "m");
    malware.id = "malware--00000000-0000-4000-8000-000000000007".into();
    malware.stix_type = "malware".into();
    let mut old_spec = indicator(8, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "o");
    old_spec.spec_version = "2.0".into();
    let gone = indicator(9, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "gone");
    let local = indicator(10, "2024-01-01T00:00:00Z", None, Tlp::Green, "local");
    let plain = indicator(11, "2024-01-01T00:00:00Z", s("e"), Tlp::Green, "plain");
    db.insert_objects(&[
        malware.clone(),
        old_spec.clone(),
        gone.clone(),
        local.clone(),
        plain.clone(),
    ])
    .unwrap();
    db.mark_deleted(&gone.id, &s("e")).unwrap();
    let base = page_query(key(Some("e"), Tlp::Green), VersionMatch::Last, 100);
    let ids = |q: &ObjectQuery| -> Vec<String> {
        db.query_objects(q)
            .unwrap()
            .objects
            .into_iter()
            .map(|o| o.id)
            .collect()
    };
    assert_eq!(ids(&base), [&*malware.id, &*old_spec.id, &*plain.id]);
    let q = ObjectQuery {
        types: vec!["malware".into(), "tool".into()],
        ..base.clone()
    };
    assert_eq!(ids(&q), [&*malware.id]);
    let q = ObjectQuery {
        ids: vec![plain.id.clone(), local.id.clone(), gone.id.clone()],
        ..base.clone()
    };
    assert_eq!(ids(&q), [&*plain.id]);
    let q = ObjectQuery {
        spec_versions: vec!["2.0".into()],
        ..base.clone()
    };
    assert_eq!(ids(&q), [&*old_spec.id]);
    let q = page_query(key(None, Tlp::Green), VersionMatch::Last, 100);
    assert_eq!(ids(&q), [&*local.id]);
    let q = ObjectQuery {
        collection: None,
        ..base.clone()
    };
    assert_eq!(db.query_objects(&q).unwrap(), ObjectPage::default());
    // A limit of zero is taken as one.
    let q = ObjectQuery { limit: 0, ..base };
    let p = db.query_objects(&q).unwrap();
    assert_eq!((p.objects.len(), p.more), (1, true));
}

fn searchable(n: u32, sector: Option<&str>, tlp: Tlp, name: &str) -> NewObject {
    indicator(
        n,
        "2024-01-01T00:00:00Z",
        sector.map(str::to_string),
        tlp,
        name,
    )
}

fn everywhere() -> Vec<CollectionKey> {
    let mut v = Vec::new();
    for sector in [None, Some("e"), Some("f")] {
        for tlp in [
            Tlp::Clear,
            Tlp::Green,
            Tlp::Amber,
            Tlp::AmberStrict,
            Tlp::Red,
        ] {
            v.push(key(sector, tlp));
        }
    }
    v
}

fn names(found: &[StoredObject]) -> Vec<String> {
    found
        .iter()
        .map(|o| {
            let v: serde_json::Value = serde_json::from_str(&o.json).unwrap();
            v["name"].as_str().unwrap().to_string()
        })
        .collect()
}

fn search_text(db: &Db, text: &str) -> Vec<String> {
    let q = SearchQuery {
        text: text.into(),
        visible: everywhere(),
        limit: 100,
        ..Default::default()
    };
    names(&db.search(&q).unwrap())
}

#[test]
fn store_search_words_are_and_ed_prefixes_newest_first() {
    let dir = TempDir::new("search-fts");
    let mut db = db(&dir);
    db.insert_objects(&[
        searchable(1, Some("e"), Tlp::Green, "Emotet loader"),
        searchable(2, Some("e"), Tlp::Green, "emotet dropper"),
        searchable(3, Some("e"), Tlp::Green, "TrickBot loader"),
        searchable(4, Some("e"), Tlp::Green, "Évasion Café"),
    ])
    .unwrap();
    assert_eq!(
        search_text(&db, "emot"),
        ["emotet dropper", "Emotet loader"]
    );
    assert_eq!(search_text(&db, "EMOTET   load"), ["Emotet loader"]);
    assert_eq!(search_text(&db, "cafe evasion"), ["Évasion Café"]);
    assert_eq!(search_text(&db, "").len(), 4);
    assert!(search_text(&db, "emotet trickbot").is_empty());
    // Ids (split by the tokenizer into a phrase), patterns and labels are indexed.
    assert_eq!(
        search_text(&db, "indicator--00000000-0000-4000-8000-000000000003"),
        ["TrickBot loader"]
    );
    assert_eq!(search_text(&db, "198.51.100.7").len(), 4);
    assert_eq!(search_text(&db, "malicious-act").len(), 4);
}

#[test]
fn store_search_hostile_input_is_only_text() {
    let dir = TempDir::new("search-hostile");
    let mut db = db(&dir);
    db.insert_objects(&[
        searchable(1, Some("e"), Tlp::Green, "near or not"),
        searchable(2, Some("e"), Tlp::Green, "quote\"d"),
    ])
    .unwrap();
    for hostile in [
        "'; DROP TABLE objects; --",
        "\"",
        "\"\"\"",
        "*",
        "NEAR(",
        "NEAR(a b)",
        "OR",
        "AND NOT",
        "a OR b",
        "body:x",
        "^start",
        "(((",
        "\0",
        "x\"* OR \"y",
        "-",
        "+",
        "%_",
        "?1 ?2",
    ] {
        assert!(search_text(&db, hostile).len() <= 2, "{hostile}");
    }
    assert_eq!(db.object_count().unwrap(), 2);
    // Operators are words like any other.
    assert_eq!(search_text(&db, "OR"), ["near or not"]);
    assert_eq!(search_text(&db, "NEAR("), ["near or not"]);
    assert_eq!(search_text(&db, "quote\"d"), ["quote\"d"]);
    // Only punctuation: no word to look for, so no text filter.
    assert_eq!(search_text(&db, "* -").len(), 2);
}

#[test]
fn store_match_expression_quotes_every_word() {
    assert_eq!(match_expression(""), None);
    assert_eq!(match_expression("  \t "), None);
    assert_eq!(match_expression("* --"), None);
    assert_eq!(
        match_expression("a\"b NEAR( x"),
        Some("\"a\"\"b\"* AND \"NEAR(\"* AND \"x\"*".to_string())
    );
}

#[test]
fn store_search_filters_and_paging() {
    let dir = TempDir::new("search-filters");
    let mut db = db(&dir);
    let mut tool = searchable(5, Some("f"), Tlp::Clear, "five");
    tool.stix_type = "tool".into();
    tool.origin = "org-b".into();
    db.insert_objects(&[
        searchable(1, None, Tlp::Green, "one"),
        searchable(2, Some("e"), Tlp::Green, "two"),
        searchable(3, Some("e"), Tlp::Amber, "three"),
        searchable(4, Some("f"), Tlp::Red, "four"),
        tool,
    ])
    .unwrap();
    let deleted = searchable(6, Some("e"), Tlp::Green, "six deleted");
    db.insert_objects(std::slice::from_ref(&deleted)).unwrap();
    db.mark_deleted(&deleted.id, &s("e")).unwrap();
    let base = SearchQuery {
        visible: everywhere(),
        limit: 100,
        ..Default::default()
    };
    let run = |q: SearchQuery| names(&db.search(&q).unwrap());
    assert_eq!(run(base.clone()), ["five", "four", "three", "two", "one"]);
    assert_eq!(
        run(SearchQuery {
            types: vec!["tool".into()],
            ..base.clone()
        }),
        ["five"]
    );
    assert_eq!(
        run(SearchQuery {
            tlps: vec![Tlp::Green, Tlp::Red],
            ..base.clone()
        }),
        ["four", "two", "one"]
    );
    assert_eq!(
        run(SearchQuery {
            sectors: vec![None, s("f")],
            ..base.clone()
        }),
        ["five", "four", "one"]
    );
    assert_eq!(
        run(SearchQuery {
            origins: vec!["org-b".into()],
            ..base.clone()
        }),
        ["five"]
    );
    let all = db.search(&base).unwrap();
    let (t2, t4) = (all[3].added_us, all[1].added_us);
    assert_eq!(
        run(SearchQuery {
            since_us: Some(t2),
            until_us: Some(t4),
            ..base.clone()
        }),
        ["three", "two"]
    );
    assert_eq!(
        run(SearchQuery {
            limit: 2,
            offset: 1,
            ..base.clone()
        }),
        ["four", "three"]
    );
    assert!(run(SearchQuery {
        limit: 0,
        ..base.clone()
    })
    .is_empty());
    assert!(run(SearchQuery {
        text: "deleted".into(),
        ..base
    })
    .is_empty());
}

#[test]
fn store_search_sees_only_visible_collections() {
    let dir = TempDir::new("search-visible");
    let mut db = db(&dir);
    db.insert_objects(&[
        searchable(1, None, Tlp::Red, "secret local"),
        searchable(2, Some("e"), Tlp::Amber, "secret amber"),
        searchable(3, Some("e"), Tlp::Green, "secret green"),
        searchable(4, Some("f"), Tlp::Green, "secret other sector"),
    ])
    .unwrap();
    let run = |visible: Vec<CollectionKey>, sectors: Vec<Option<String>>| {
        let q = SearchQuery {
            text: "secret".into(),
            visible,
            sectors,
            limit: 10,
            ..Default::default()
        };
        names(&db.search(&q).unwrap())
    };
    assert!(run(vec![], vec![]).is_empty());
    assert_eq!(
        run(vec![key(Some("e"), Tlp::Green)], vec![]),
        ["secret green"]
    );
    assert_eq!(
        run(
            vec![key(Some("e"), Tlp::Green), key(Some("e"), Tlp::Amber)],
            vec![]
        ),
        ["secret green", "secret amber"]
    );
    // Asking for a sector does not widen what is visible.
    assert!(run(vec![key(Some("e"), Tlp::Green)], vec![s("f"), None]).is_empty());
    assert_eq!(run(vec![key(None, Tlp::Red)], vec![None]), ["secret local"]);
}

#[test]
fn store_taxii_query_plan_seeks_instead_of_scanning() {
    let dir = TempDir::new("plan");
    let db = db(&dir);
    let q = ObjectQuery {
        added_after_us: Some(1),
        after_row: Some(5),
        ..page_query(key(Some("e"), Tlp::Green), VersionMatch::Last, 10)
    };
    let c = q.collection.clone().unwrap();
    let (sql, f) = taxii_sql(&c, &q, q.limit);
    let mut st = db
        .conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap();
    let plan: Vec<String> = st
        .query_map(rusqlite::params_from_iter(f.params.iter()), |r| r.get(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let plan = plan.join("\n");
    assert!(
        plan.contains(
            "SEARCH o USING INDEX objects_collection (sector=? AND tlp=? AND added_us>?)"
        ),
        "{plan}"
    );
    assert!(
        plan.contains("SEARCH n USING INDEX objects_version (id=?)"),
        "{plan}"
    );
    assert!(
        !plan.contains("SCAN") && !plan.contains("TEMP B-TREE"),
        "{plan}"
    );
}
