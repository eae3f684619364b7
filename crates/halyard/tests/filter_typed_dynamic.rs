//! Proves that one filter expression gives the same answer on a typed sample (through
//! `Reflect`) and on the dynamic value of the same sample (its bytes decoded with the type's
//! XTypes description), for seeded random expressions and samples, and that both refuse the
//! same bad expressions at the same token.

use halyard::cdr::{DataRepresentation, TopicType};
use halyard::filter::DynamicSample;
use halyard::xtypes::{dynamic, DynamicType, TypeInformation, TypeObject, TypeRegistry};
use halyard::Filter;

#[derive(halyard::CdrType, Clone, Copy, Debug, Default, PartialEq)]
enum Mode {
    #[default]
    Off,
    Idle,
    Run,
}

#[derive(halyard::CdrType, Clone, Debug, Default, PartialEq)]
struct Pos {
    x: i32,
    y: f64,
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
struct Probe {
    #[key]
    id: u32,
    name: String,
    level: i64,
    big: u64,
    ratio: f32,
    on: bool,
    mode: Mode,
    pos: Pos,
    trail: Vec<Pos>,
    note: Option<String>,
    grid: [[i16; 3]; 2],
    small: i8,
}

/// The type as a peer that learnt it from discovery sees it.
fn dynamic_type<T: TopicType>() -> DynamicType {
    let d = T::type_description().expect("derived types describe themselves");
    let info = TypeInformation::from_xcdr2(d.type_information).expect("information");
    let mut reg = TypeRegistry::new();
    for o in d.type_objects {
        reg.insert_object(TypeObject::from_xcdr2(o).expect("object"))
            .expect("valid object");
    }
    reg.build(&info.complete.typeid_with_size.type_id)
        .expect("builds")
}

/// splitmix64: a small seeded generator (the test prints its seed on failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

const WORDS: [&str; 5] = ["alpha", "beta", "", "al", "Beta"];

fn sample(r: &mut Rng) -> Probe {
    let pos = |r: &mut Rng| Pos {
        x: r.int(-3, 3) as i32,
        y: r.int(-4, 4) as f64 / 2.0,
    };
    let trail = (0..r.below(4)).map(|_| pos(r)).collect();
    let mut grid = [[0i16; 3]; 2];
    for row in &mut grid {
        for v in row.iter_mut() {
            *v = r.int(-2, 2) as i16;
        }
    }
    Probe {
        id: r.int(0, 5) as u32,
        name: r.pick(&WORDS).to_string(),
        level: r.int(-5, 5),
        big: if r.below(4) == 0 {
            u64::MAX
        } else {
            r.int(0, 5) as u64
        },
        ratio: r.int(-4, 4) as f32 / 4.0,
        on: r.below(2) == 0,
        mode: [Mode::Off, Mode::Idle, Mode::Run][r.below(3)],
        pos: pos(r),
        trail,
        note: (r.below(2) == 0).then(|| r.pick(&WORDS).to_string()),
        grid,
        small: r.int(-3, 3) as i8,
    }
}

const NUMBERS: [&str; 14] = [
    "id",
    "level",
    "big",
    "ratio",
    "pos.x",
    "pos.y",
    "trail[0].x",
    "trail[1].y",
    "trail[3].x",
    "grid[0][1]",
    "grid[1][2]",
    "small",
    "mode",
    "level",
];
const OPS: [&str; 8] = ["=", "<>", "!=", "<", "<=", ">", ">=", "="];

fn number(r: &mut Rng) -> String {
    match r.below(6) {
        0 => format!("{}.5", r.int(-3, 3)),
        1 => format!("0x{:x}", r.int(0, 5)),
        2 => "18446744073709551615".into(),
        _ => r.int(-5, 5).to_string(),
    }
}

/// A predicate; `params` collects the values of the `%n` it uses.
fn predicate(r: &mut Rng, params: &mut Vec<String>) -> String {
    match r.below(9) {
        0 | 1 => {
            let m = r.pick(&NUMBERS);
            let value = if r.below(5) == 0 {
                params.push(number(r));
                format!("%{}", params.len() - 1)
            } else {
                number(r)
            };
            if r.below(4) == 0 {
                format!("{value} {} {m}", r.pick(&OPS))
            } else {
                format!("{m} {} {value}", r.pick(&OPS))
            }
        }
        2 => {
            let m = r.pick(&NUMBERS);
            let not = if r.below(2) == 0 { "NOT " } else { "" };
            let lo = r.int(-4, 2);
            format!("{m} {not}BETWEEN {lo} AND {}", lo + r.int(0, 4))
        }
        3 => {
            let m = r.pick(&["name", "note"]);
            let op = r.pick(&["=", "<>", "<", ">=", "LIKE", "NOT LIKE", "like"]);
            let lit = r.pick(&[
                "'alpha'", "'beta'", "'%a%'", "'_l%'", "''", "'B%'", "\"al\"",
            ]);
            format!("{m} {op} {lit}")
        }
        4 => format!("on = {}", r.pick(&["TRUE", "FALSE", "true", "1", "0"])),
        5 => {
            let lit = r.pick(&["Off", "Idle", "Run", "Mode::Run", "'Idle'", "1", "2"]);
            format!("mode {} {lit}", r.pick(&OPS))
        }
        6 => format!("mode BETWEEN Idle AND {}", r.pick(&["Run", "Idle", "Off"])),
        7 => format!("pos.x {} trail[0].x", r.pick(&OPS)),
        _ => {
            params.push(r.pick(&["'alpha'", "beta", "TRUE", "3", "Run"]).to_string());
            let m = r.pick(&["name", "on", "level", "mode"]);
            format!("{m} = %{}", params.len() - 1)
        }
    }
}

fn condition(r: &mut Rng, depth: usize, params: &mut Vec<String>) -> String {
    if depth == 0 {
        return predicate(r, params);
    }
    match r.below(5) {
        0 => format!(
            "{} AND {}",
            condition(r, depth - 1, params),
            condition(r, depth - 1, params)
        ),
        1 => format!(
            "{} OR {}",
            condition(r, depth - 1, params),
            condition(r, depth - 1, params)
        ),
        2 => format!("NOT ({})", condition(r, depth - 1, params)),
        3 => format!("({})", condition(r, depth - 1, params)),
        _ => predicate(r, params),
    }
}

#[test]
fn an_expression_gives_the_same_answer_on_typed_and_dynamic_samples() {
    let ty = dynamic_type::<Probe>();
    let seed = 0x5eed_f117_e125;
    let mut r = Rng(seed);
    let (mut accepted, mut evaluated) = (0, 0);
    for round in 0..2000 {
        let s = sample(&mut r);
        let mut buf = Vec::new();
        halyard::cdr::serialize(&s, DataRepresentation::Xcdr2, &mut buf).expect("serializes");
        let v = dynamic::decode(&ty, &buf).expect("decodes");
        let mut params = Vec::new();
        let e = condition(&mut r, 3, &mut params);
        let typed = Filter::new::<Probe>(&e, &params);
        let dynamic = Filter::for_schema(&e, &params, &ty);
        let why = || format!("seed {seed:#x} round {round}: {e} {params:?} on {s:?}");
        match (typed, dynamic) {
            (Ok(t), Ok(d)) => {
                let got = t.matches(&s);
                assert_eq!(got, d.matches(&DynamicSample::new(&ty, &v)), "{}", why());
                accepted += usize::from(got);
                evaluated += 1;
            }
            (Err(t), Err(d)) => {
                assert_eq!((t.position, &t.token), (d.position, &d.token), "{}", why())
            }
            (t, d) => panic!("{}: typed {t:?}, dynamic {d:?}", why()),
        }
    }
    // The generator must exercise both answers, not only refusals.
    assert!(evaluated > 1000, "{evaluated} evaluated");
    assert!(
        accepted > 100 && accepted < evaluated - 100,
        "{accepted} of {evaluated}"
    );
}

#[test]
fn bad_expressions_are_refused_alike() {
    let ty = dynamic_type::<Probe>();
    for e in [
        "nosuch = 1",
        "pos.z = 1",
        "pos = 1",
        "grid[2][0] = 1",
        "trail = 1",
        "name > 3",
        "on = 1.5",
        "mode = Fast",
        "level LIKE 'x'",
        "level >",
        "(level > 1",
        "level > 1 ORDER BY level",
        "level NOT = 1",
        "5 BETWEEN level AND 6",
    ] {
        let t = Filter::new::<Probe>(e, &[]).expect_err(e);
        let d = Filter::for_schema(e, &[], &ty).expect_err(e);
        assert_eq!(
            (t.position, &t.token),
            (d.position, &d.token),
            "{e}: {t} / {d}"
        );
    }
}
