//! Proves that the description of an IDL type, as the generated Rust type carries it, gives
//! back exactly what `halyard idl` computed when a derived type composes it as a member
//! (`NamedType::from_description`: the minimal objects derived from the complete ones, the
//! dependencies found in the objects and ordered as the Python `cyclonedds` package does),
//! for every struct, union and enum of the corpus (inheritance, typedefs, unions, maps,
//! bitmasks, nested modules).

use std::path::PathBuf;

use halyard_cdr::{NamedType, TypeDescription};

fn corpus(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file)
}

fn leak(d: &halyard_idlc::TopicDescription) -> TypeDescription {
    let objects: Vec<&'static [u8]> = d.type_objects.iter().map(|o| &*o.clone().leak()).collect();
    TypeDescription {
        type_information: d.type_information_bytes.clone().leak(),
        type_objects: objects.leak(),
    }
}

#[test]
fn every_description_composes_back_to_itself() {
    let mut checked = 0;
    for file in [
        "tests/corpus/corpus.idl",
        "tests/corpus/HelloWorldData.idl",
        "tests/data/rich_py.idl",
    ] {
        let mut options = halyard_idl::ParseOptions::default();
        options.include_paths.push(corpus("tests/corpus"));
        let spec = halyard_idl::parse_file(&corpus(file), &options)
            .unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let set = halyard_idlc::type_objects(&spec).unwrap();
        assert!(!set.descriptions.is_empty(), "{file}");
        for (name, d) in &set.descriptions {
            let node = NamedType::from_description(&leak(d))
                .unwrap_or_else(|e| panic!("{file} {name}: {e}"));
            assert_eq!(node.name(), name);
            let back = node
                .topic_description()
                .unwrap_or_else(|e| panic!("{file} {name}: {e}"));
            assert_eq!(
                back.type_information, d.type_information,
                "{file} {name}: TypeInformation"
            );
            assert_eq!(back.type_objects, d.type_objects, "{file} {name}: objects");
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked} types checked");
}
