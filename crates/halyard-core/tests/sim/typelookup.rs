//! Proves XTypes type discovery between simulated participants: a writer's TypeInformation
//! reaches the other side in SEDP, the TypeLookup service delivers a type and all it depends
//! on (hashes verified) under 30 % loss with duplication and reordering, a peer without type
//! information still matches by type name, and unrelated types of one name are refused once
//! looked up.

use crate::net::*;
use halyard_core::wire::qos::EndpointQos;
use halyard_core::xtypes::{TypeIdentifier, TypeInformation};
use halyard_core::{Event, ReaderSpec, WriterSpec};

// The description of `Rich::Derived` (with its dependencies Rich::Base, Rich::Color and
// Rich::LongSeq) as Cyclone DDS 11's Python package builds it, and of HelloWorldData::Msg.
#[allow(dead_code)]
mod rich_derived {
    include!("../../../halyard/tests/data/typelookup/rich_derived.rs");
}
#[allow(dead_code)]
mod hello_world {
    include!("../../../halyard/tests/data/typelookup/hello_world.rs");
}

const TYPE_NAME: &str = "Rich::Derived";

fn writer(net: &mut SimNet, node: usize) -> halyard_core::wire::EntityId {
    let now = net.instant();
    net.p(node).create_writer(
        now,
        WriterSpec {
            topic_name: "Typed".into(),
            type_name: TYPE_NAME.into(),
            qos: EndpointQos::writer_default(),
            has_key: true,
        },
    )
}

fn reader(net: &mut SimNet, node: usize) -> halyard_core::wire::EntityId {
    let now = net.instant();
    net.p(node).create_reader(
        now,
        ReaderSpec {
            topic_name: "Typed".into(),
            type_name: TYPE_NAME.into(),
            qos: EndpointQos::reader_default(),
            has_key: true,
        },
    )
}

fn register(net: &mut SimNet, node: usize, info: &[u8], objects: &[&[u8]]) -> TypeInformation {
    net.p(node)
        .register_type(TYPE_NAME, info, objects)
        .expect("a Cyclone-built description registers")
}

fn rich(net: &mut SimNet, node: usize) -> TypeInformation {
    register(
        net,
        node,
        rich_derived::TYPE_INFORMATION,
        rich_derived::TYPE_OBJECTS,
    )
}

fn faults() -> Faults {
    Faults {
        duplicate: 0.05,
        reorder: 0.1,
        reorder_delay_ns: 2 * MS,
        jitter_ns: 200_000,
        ..Faults::lossy(0.3)
    }
}

#[test]
fn typelookup_fetches_a_type_and_its_dependencies_under_loss() {
    for_each_seed(
        "typelookup_fetches_a_type_and_its_dependencies_under_loss",
        30,
        |seed| {
            let mut net = SimNet::new(seed, faults());
            let a = net.add_node(node_config(1));
            let b = net.add_node(node_config(2));
            let info = rich(&mut net, a);
            let w = writer(&mut net, a);
            net.flush();
            // B learns the writer and its TypeInformation by SEDP.
            let pa = net.p(a).guid_prefix();
            let ok = net.run_until(60 * SEC, |n| {
                n.node(b).p.remote_publications().iter().any(|p| {
                    p.guid.prefix == pa && p.guid.entity == w && p.type_information.is_some()
                })
            });
            assert!(ok, "seed {seed:#x}: no typed publication; {:?}", net.stats);
            let announced = net
                .p(b)
                .remote_publications()
                .into_iter()
                .find_map(|p| p.type_information)
                .expect("announced");
            let decoded = TypeInformation::from_xcdr2(&announced.xcdr2).expect("decodes");
            assert_eq!(decoded, info, "seed {seed:#x}");
            // B asks for the complete type; asks again every 500 ms for what is still missing.
            let roots = [info.complete.typeid_with_size.type_id.clone()];
            let mut complete = false;
            for _ in 0..120 {
                let missing = net.p(b).type_closure(&roots).missing;
                if missing.is_empty() {
                    complete = true;
                    break;
                }
                let now = net.instant();
                net.p(b).request_types(now, &missing).expect("hashed ids");
                net.flush();
                net.run_for(500 * MS);
            }
            assert!(
                complete,
                "seed {seed:#x}: type not resolved in 60 s; {:?}",
                net.stats
            );
            let closure = net.p(b).type_closure(&roots);
            let deps = &info.complete.dependent_typeids;
            assert_eq!(closure.found.len(), 1 + deps.len(), "seed {seed:#x}");
            for d in deps {
                assert!(
                    closure.found.iter().any(|(id, _)| *id == d.type_id),
                    "seed {seed:#x}"
                );
            }
            for (id, obj) in &closure.found {
                assert_eq!(&obj.type_identifier().expect("hash"), id, "seed {seed:#x}");
            }
            assert_eq!(net.p(b).stats().typelookup_bad_objects, 0, "seed {seed:#x}");
            assert_eq!(net.p(b).stats().typelookup_malformed, 0, "seed {seed:#x}");
        },
    );
}

#[test]
fn an_untyped_peer_still_matches_by_type_name() {
    for_each_seed("an_untyped_peer_still_matches_by_type_name", 10, |seed| {
        let mut net = SimNet::new(seed, Faults::lossy(0.1));
        let a = net.add_node(node_config(1));
        let b = net.add_node(node_config(2));
        rich(&mut net, a);
        let w = writer(&mut net, a);
        let r = reader(&mut net, b);
        net.flush();
        assert!(
            run_until_pair_matched(&mut net, (a, w), (b, r), 60 * SEC),
            "seed {seed:#x}: typed writer and untyped reader did not match"
        );
        assert_eq!(
            net.p(b).stats().type_name_fallback_matches,
            0,
            "seed {seed:#x}"
        );
    });
}

#[test]
fn unrelated_types_of_one_name_are_looked_up_and_refused() {
    // Before assignability was judged these matched by name; now each side fetches the
    // other's type and finds it not assignable (see `assign.rs` for the assignable cases).
    let mut net = SimNet::new(1, Faults::none());
    let a = net.add_node(node_config(1));
    let b = net.add_node(node_config(2));
    rich(&mut net, a);
    register(
        &mut net,
        b,
        hello_world::TYPE_INFORMATION,
        hello_world::TYPE_OBJECTS,
    );
    let w = writer(&mut net, a);
    let r = reader(&mut net, b);
    net.flush();
    assert!(!run_until_pair_matched(&mut net, (a, w), (b, r), 30 * SEC));
    for n in [a, b] {
        let s = net.p(n).stats();
        assert_eq!(s.type_name_fallback_matches, 0);
        assert_eq!(s.type_not_assignable, 1);
        assert_eq!(net.p(n).type_refusals().count(), 1);
    }
}

#[test]
fn a_malformed_type_information_is_counted_and_the_endpoint_kept() {
    let mut net = SimNet::new(2, Faults::none());
    let a = net.add_node(node_config(1));
    let b = net.add_node(node_config(2));
    // A description whose TypeInformation is cut short cannot be registered ...
    let cut = &rich_derived::TYPE_INFORMATION[..20];
    assert!(net.p(a).register_type(TYPE_NAME, cut, &[]).is_err());
    // ... so a peer's malformed one is made here: B's reader sees A's writer announced with
    // PID_TYPE_INFORMATION bytes that do not decode.
    rich(&mut net, a);
    assert!(net
        .p(a)
        .danger_announce_type_information_bytes(TYPE_NAME, vec![0xff; 8]));
    let w = writer(&mut net, a);
    let r = reader(&mut net, b);
    net.flush();
    assert!(run_until_pair_matched(&mut net, (a, w), (b, r), 30 * SEC));
    assert_eq!(net.p(b).stats().malformed_type_information, 1);
    let p = net.p(b).remote_publications();
    assert!(p.iter().all(|p| p.type_information.is_none()));
    assert!(!net.node(b).saw(|e| matches!(e, Event::PublicationLost(_))));
}

#[test]
fn request_types_refuses_non_hashed_identifiers() {
    let mut net = SimNet::new(3, Faults::none());
    let a = net.add_node(node_config(1));
    let now = net.instant();
    let err = net
        .p(a)
        .request_types(now, &[TypeIdentifier::string8(0)])
        .unwrap_err();
    assert_eq!(err, halyard_core::TypeLookupError::NotAHash);
}

#[test]
fn registering_again_is_idempotent_and_another_description_conflicts() {
    let mut net = SimNet::new(4, Faults::none());
    let a = net.add_node(node_config(1));
    let first = rich(&mut net, a);
    assert_eq!(rich(&mut net, a), first);
    let other = net.p(a).register_type(
        TYPE_NAME,
        hello_world::TYPE_INFORMATION,
        hello_world::TYPE_OBJECTS,
    );
    assert_eq!(
        other.unwrap_err(),
        halyard_core::TypeRegistrationError::Conflict
    );
    assert_eq!(net.p(a).registered_type(TYPE_NAME), Some(&first));
}

#[test]
fn unanswered_requests_are_bounded() {
    let mut net = SimNet::new(5, Faults::none());
    let a = net.add_node(node_config(1));
    for i in 0..100u8 {
        let now = net.instant();
        let id = TypeIdentifier::Hash {
            kind: halyard_core::xtypes::EquivalenceKind::Minimal,
            hash: [i; 14],
        };
        assert_eq!(net.p(a).request_types(now, &[id]), Ok(1));
    }
    assert_eq!(
        net.p(a).outstanding_type_requests(),
        halyard_core::MAX_OUTSTANDING_REQUESTS
    );
}
