//! The filter language on a derived Rust type: the grammar, parameters, errors that point at
//! their token, ORDER BY and LIKE.

use super::eval::like;
use super::*;

#[derive(halyard_derive::CdrType, Clone, Copy, Debug, Default, PartialEq)]
enum Color {
    #[default]
    Red,
    Green,
    Blue,
}

/// Values out of declaration order.
#[derive(halyard_derive::CdrType, Clone, Copy, Debug, Default, PartialEq)]
enum Urgency {
    #[default]
    Now = 9,
    Later = 1,
    Soon = 4,
}

#[derive(halyard_derive::CdrType, Clone, Debug, Default)]
struct Point {
    x: i32,
    y: f64,
}

#[derive(halyard_derive::Topic, Clone, Debug, Default)]
struct Shape {
    #[key]
    color: String,
    size: u32,
    pos: Point,
    trail: Vec<Point>,
    hue: Color,
    visible: bool,
    tag: Option<String>,
    urgency: Urgency,
}

fn shape() -> Shape {
    Shape {
        color: "BLUE".into(),
        size: 30,
        pos: Point { x: 100, y: 2.5 },
        trail: vec![Point { x: 1, y: 0.0 }, Point { x: 2, y: 0.5 }],
        hue: Color::Green,
        visible: true,
        tag: None,
        urgency: Urgency::Now,
    }
}

fn eval(expr: &str, params: &[&str]) -> bool {
    let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    Filter::new::<Shape>(expr, &params)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .matches(&shape())
}

fn error(expr: &str) -> FilterError {
    Filter::new::<Shape>(expr, &[]).expect_err(expr)
}

#[test]
fn the_annex_b_grammar_evaluates() {
    assert!(eval("size > 20 AND pos.x BETWEEN 50 AND 150", &[]));
    assert!(eval("size >= 30 and size <= 30 AND NOT size <> 30", &[]));
    assert!(!eval("size NOT BETWEEN 10 AND 40", &[]));
    assert!(eval("color = 'BLUE' OR color = 'RED'", &[]));
    assert!(eval("color LIKE 'B%' AND color LIKE '_LU_'", &[]));
    assert!(!eval("color LIKE 'R%'", &[]));
    assert!(eval("pos.y < 2.6 AND pos.y > 2.4e0", &[]));
    assert!(eval("trail[1].x = 2 AND trail[1].y = 0.5", &[]));
    assert!(
        !eval("trail[5].x = 2", &[]),
        "an element past the end is false"
    );
    assert!(
        !eval("tag = 'x'", &[]),
        "an absent optional member is false"
    );
    assert!(eval("hue = Green AND hue > Red AND hue < Color::Blue", &[]));
    assert!(eval("hue = 1", &[]), "by value");
    assert!(eval("visible = TRUE", &[]));
    assert!(eval(
        "(size < 10 OR size > 20) AND (NOT visible = FALSE)",
        &[]
    ));
    assert!(eval("20 < size", &[]), "a literal on the left");
    assert!(eval("size = 0x1e", &[]));
    assert!(eval("size != 31", &[]));
}

#[test]
fn parameters_are_typed_by_their_member_and_replaceable() {
    assert!(eval("color = %0 AND size > %1", &["'BLUE'", "10"]));
    assert!(eval("color = %0", &["BLUE"]));
    assert!(eval("hue = %0", &["Green"]));
    assert!(eval("pos.y BETWEEN %0 AND %1", &["2", "3.0"]));
    let mut f = Filter::new::<Shape>("size > %0", &["40".into()]).unwrap();
    assert!(!f.matches(&shape()));
    f.set_parameters(&["20".into()]).unwrap();
    assert!(f.matches(&shape()));
    let e = f.set_parameters(&[]).unwrap_err();
    assert_eq!(e.token, "%0");
    let e = Filter::new::<Shape>("size > %1", &["1".into()]).unwrap_err();
    assert_eq!((e.position, e.token.as_str()), (7, "%1"));
}

#[test]
fn bad_expressions_point_at_the_offending_token() {
    let e = error("size > 10 AND colour = 'x'");
    assert_eq!((e.position, e.token.as_str()), (14, "colour"), "{e}");
    assert!(e.message.contains("no such member"), "{e}");
    let e = error("size > 'big'");
    assert_eq!((e.position, e.token.as_str()), (7, "'big'"), "{e}");
    let e = error("size >");
    assert_eq!((e.position, e.token.as_str()), (6, ""), "{e}");
    let e = error("size > 1 size < 3");
    assert_eq!(e.token, "size");
    let e = error("(size > 1");
    assert!(e.message.contains(")"), "{e}");
    let e = error("color LIKE 5");
    assert_eq!(e.token, "5");
    let e = error("size LIKE '1%'");
    assert!(e.message.contains("strings"), "{e}");
    let e = error("hue = Purple");
    assert_eq!(e.token, "Purple");
    let e = error("size # 3");
    assert_eq!((e.position, e.token.as_str()), (5, "#"));
    let e = error("color = 'open");
    assert!(e.message.contains("unterminated"), "{e}");
    let e = error("size > 1 size");
    assert_eq!((e.position, e.token.as_str()), (9, "size"), "{e}");
    assert!(error("pos = 3").message.contains("no such member"));
    assert!(error("").message.contains("empty"));
}

fn query(expr: &str) -> Filter {
    Filter::new_query::<Shape>(expr, &[]).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn query_error(expr: &str) -> FilterError {
    Filter::new_query::<Shape>(expr, &[]).expect_err(expr)
}

/// `shapes` as a read through a query with `expr` returns them: those it accepts,
/// serialized, then sorted as the reader's cache sorts them.
fn through_query(expr: &str, shapes: &[Shape]) -> Vec<Shape> {
    let f = query(expr);
    let accepted: Vec<&Shape> = shapes.iter().filter(|s| f.matches(*s)).collect();
    let (q, _shared) = SampleQuery::new::<Shape>(f);
    let payloads: Vec<Vec<u8>> = accepted
        .iter()
        .map(|s| {
            let mut buf = Vec::new();
            halyard_cdr::serialize(*s, halyard_cdr::DataRepresentation::Xcdr2, &mut buf).unwrap();
            buf
        })
        .collect();
    assert!(payloads.iter().all(|p| q.accepts(Some(p))));
    let mut chosen: Vec<usize> = (0..payloads.len()).collect();
    q.sort(&mut chosen, |i| &payloads[i]);
    chosen.into_iter().map(|i| accepted[i].clone()).collect()
}

fn sized(color: &str, size: u32) -> Shape {
    Shape {
        color: color.into(),
        size,
        ..shape()
    }
}

#[test]
fn order_by_follows_a_condition_or_stands_alone_in_a_query() {
    let f = query("size > 1 ORDER BY size");
    assert_eq!(f.order_by(), vec!["size"]);
    assert_eq!(f.expression(), "size > 1 ORDER BY size");
    assert!(f.matches(&shape()));
    assert!(!query("size > 40 order by size").matches(&shape()));
    let f = query("ORDER BY color");
    assert_eq!(f.order_by(), vec!["color"]);
    assert!(f.matches(&shape()), "ORDER BY alone selects every sample");
    let f = query("(hue = Green OR size < 3) ORDER BY pos.x, trail[1].y,color,hue");
    assert_eq!(f.order_by(), vec!["pos.x", "trail[1].y", "color", "hue"]);
    assert!(query("size > 1").order_by().is_empty());
    let mut f = Filter::new_query::<Shape>("size > %0 ORDER BY pos.y", &["40".into()]).unwrap();
    assert!(!f.matches(&shape()));
    f.set_parameters(&["20".into()]).unwrap();
    assert!(f.matches(&shape()));
    assert_eq!(
        f.order_by(),
        vec!["pos.y"],
        "parameters leave ORDER BY alone"
    );
}

#[test]
fn order_by_sorts_ascending_keeping_ties_in_order() {
    let shapes = [
        sized("C", 30),
        sized("A", 10),
        sized("B", 30),
        sized("D", 20),
        sized("E", 10),
    ];
    let colors = |v: Vec<Shape>| v.into_iter().map(|s| s.color).collect::<Vec<_>>();
    assert_eq!(
        colors(through_query("ORDER BY size", &shapes)),
        ["A", "E", "D", "C", "B"],
        "equal sizes keep their order"
    );
    assert_eq!(
        colors(through_query("size >= 20 ORDER BY size, color", &shapes)),
        ["D", "B", "C"]
    );
    assert_eq!(
        colors(through_query("ORDER BY color", &shapes)),
        ["A", "B", "C", "D", "E"]
    );
    let nested: Vec<Shape> = [(5, 0.5), (-7, 2.0), (5, -1.0)]
        .iter()
        .zip(["P", "Q", "R"])
        .map(|(&(x, y), c)| Shape {
            pos: Point { x, y },
            ..sized(c, 1)
        })
        .collect();
    assert_eq!(
        colors(through_query("ORDER BY pos.x", &nested)),
        ["Q", "P", "R"]
    );
    assert_eq!(
        colors(through_query("ORDER BY pos.x, pos.y", &nested)),
        ["Q", "R", "P"]
    );
    assert_eq!(
        colors(through_query("ORDER BY pos.y", &nested)),
        ["R", "P", "Q"]
    );
}

#[test]
fn order_by_sorts_enums_by_value_and_absent_members_last() {
    let shapes: Vec<Shape> = [
        ("a", Color::Blue, Some("x"), 1, Urgency::Now),
        ("b", Color::Red, None, 0, Urgency::Soon),
        ("c", Color::Green, Some("w"), 2, Urgency::Later),
        ("d", Color::Red, Some("v"), 3, Urgency::Now),
    ]
    .iter()
    .map(|&(c, hue, tag, n, urgency)| Shape {
        hue,
        tag: tag.map(String::from),
        trail: vec![Point::default(); n],
        urgency,
        ..sized(c, 1)
    })
    .collect();
    let colors = |v: Vec<Shape>| v.into_iter().map(|s| s.color).collect::<Vec<_>>();
    assert_eq!(
        colors(through_query("ORDER BY hue", &shapes)),
        ["b", "d", "c", "a"]
    );
    assert_eq!(
        colors(through_query("ORDER BY urgency", &shapes)),
        ["c", "b", "a", "d"],
        "by value (Later 1, Soon 4, Now 9), not declaration order"
    );
    assert_eq!(
        colors(through_query("ORDER BY tag", &shapes)),
        ["d", "c", "a", "b"]
    );
    assert_eq!(
        colors(through_query("ORDER BY trail[1].x, color", &shapes)),
        ["c", "d", "a", "b"],
        "an element past the end sorts last"
    );
}

#[test]
fn bad_order_by_points_at_the_offending_token() {
    let e = query_error("size > 1 ORDER BY colour");
    assert_eq!((e.position, e.token.as_str()), (18, "colour"), "{e}");
    assert!(e.message.contains("no such member"), "{e}");
    let e = query_error("ORDER BY size, pos.z");
    assert_eq!((e.position, e.token.as_str()), (15, "pos.z"), "{e}");
    assert!(e.message.contains("no such member"), "{e}");
    for (expr, at, token) in [
        ("ORDER BY pos", 9, "pos"),
        ("ORDER BY size, trail", 15, "trail"),
        ("ORDER BY trail[0]", 9, "trail[0]"),
    ] {
        let e = query_error(expr);
        assert_eq!((e.position, e.token.as_str()), (at, token), "{e}");
        assert!(e.message.contains("cannot be ordered"), "{e}");
    }
    let e = query_error("size > 1 ORDER BY");
    assert_eq!((e.position, e.token.as_str()), (17, ""), "{e}");
    assert!(e.message.contains("member to order by"), "{e}");
    let e = query_error("ORDER BY size,");
    assert_eq!((e.position, e.token.as_str()), (14, ""), "{e}");
    let e = query_error("ORDER size");
    assert_eq!((e.position, e.token.as_str()), (6, "size"), "{e}");
    assert!(e.message.contains("BY"), "{e}");
    let e = query_error("ORDER BY size DESC");
    assert_eq!((e.position, e.token.as_str()), (14, "DESC"), "{e}");
    assert!(e.message.contains("ascending"), "{e}");
    let e = query_error("ORDER BY size asc");
    assert_eq!(e.token, "asc", "{e}");
    let e = query_error("ORDER BY size AND size > 1");
    assert_eq!((e.position, e.token.as_str()), (14, "AND"), "{e}");
    let e = query_error("ORDER BY 'size'");
    assert_eq!((e.position, e.token.as_str()), (9, "'size'"), "{e}");
    let e = query_error("size ORDER BY size");
    assert_eq!((e.position, e.token.as_str()), (5, "ORDER"), "{e}");
    assert!(query_error("size > 1 ORDER BY size, pos.x = 3")
        .message
        .contains("`,`"));
}

#[test]
fn a_content_filter_refuses_order_by_at_order() {
    let e = error("size > 1 ORDER BY size");
    assert_eq!((e.position, e.token.as_str()), (9, "ORDER"), "{e}");
    assert!(e.message.contains("query condition"), "{e}");
    let e = error("ORDER BY size");
    assert_eq!((e.position, e.token.as_str()), (0, "ORDER"), "{e}");
    assert!(e.message.contains("query condition"), "{e}");
    let e = error("size > 1, size < 3");
    assert_eq!((e.position, e.token.as_str()), (8, ","), "{e}");
}

#[test]
fn like_wildcards() {
    assert!(like("", "%"));
    assert!(like("abc", "a%c"));
    assert!(like("abc", "%b%"));
    assert!(!like("abc", "a_"));
    assert!(like("a_c", "a_c"));
    assert!(!like("abd", "%c"));
}
