//! Proves assignability between type versions when matching (XTypes 1.3 §7.6.3.4, §7.2.4):
//! two participants whose endpoints of one topic and type name announce different
//! TypeInformation fetch each other's types by TypeLookup (also under loss) and match when the
//! reader's type is assignable from the writer's (appendable with an extra trailing member,
//! mutable with members reordered and added), and deliver; a final type with a changed member
//! type and DISALLOW_TYPE_COERCION are refused, reported as incompatible
//! TYPE_CONSISTENCY_ENFORCEMENT QoS with the reason kept; a peer without a TypeLookup service,
//! or one whose replies never arrive, is matched by type name and counted.
//!
//! The TypeObjects are built from IDL text by halyard-idlc, as an application's are.

use crate::net::*;
use halyard_core::wire::EntityId;
use halyard_core::xtypes::{TypeConsistency, TypeConsistencyKind};
use halyard_core::{Event, QosPolicyId, ReaderSpec, WriterSpec};

const TYPE_NAME: &str = "M::T";

const APPENDABLE_V1: &str = "module M { @appendable struct T { long a; }; };";
const APPENDABLE_V2: &str = "module M { @appendable struct T { long a; string b; }; };";
const MUTABLE_V1: &str = "module M { @mutable struct T { @id(1) long a; @id(2) long b; }; };";
const MUTABLE_V2: &str =
    "module M { @mutable struct T { @id(2) long b; @id(3) short c; @id(1) long a; }; };";
const FINAL_V1: &str = "module M { @final struct T { long a; }; };";
const FINAL_V2: &str = "module M { @final struct T { short a; }; };";

/// Registers `M::T` as `idl` describes it on node `node`.
fn register(net: &mut SimNet, node: usize, idl: &str) {
    let spec = halyard_idl::parse_str("t.idl", idl, &halyard_idl::ParseOptions::default())
        .expect("test IDL parses");
    let set = halyard_idlc::type_objects(&spec).expect("test IDL has TypeObjects");
    let d = set.topics.get(TYPE_NAME).expect("M::T is a topic type");
    let objects: Vec<&[u8]> = d.type_objects.iter().map(|o| o.as_slice()).collect();
    net.p(node)
        .register_type(TYPE_NAME, &d.type_information_bytes, &objects)
        .expect("an idlc-built description registers");
}

fn writer(net: &mut SimNet, node: usize) -> EntityId {
    let now = net.instant();
    net.p(node).create_writer(
        now,
        WriterSpec {
            topic_name: "Versions".into(),
            type_name: TYPE_NAME.into(),
            qos: reliable_keep_all_writer(),
            has_key: false,
        },
    )
}

fn reader(net: &mut SimNet, node: usize) -> EntityId {
    let now = net.instant();
    net.p(node).create_reader(
        now,
        ReaderSpec {
            topic_name: "Versions".into(),
            type_name: TYPE_NAME.into(),
            qos: reliable_keep_all_reader(),
            has_key: false,
        },
    )
}

/// Node 0 writes with type `widl`, node 1 reads with type `ridl`; both announced.
fn versions(seed: u64, faults: Faults, widl: &str, ridl: &str) -> (SimNet, EntityId, EntityId) {
    let mut net = SimNet::new(seed, faults);
    let a = net.add_node(node_config(1));
    let b = net.add_node(node_config(2));
    register(&mut net, a, widl);
    register(&mut net, b, ridl);
    let w = writer(&mut net, a);
    let r = reader(&mut net, b);
    (net, w, r)
}

/// Runs until the pair matched, then writes one sample and checks node 1 receives it.
fn assert_match_and_delivery(net: &mut SimNet, w: EntityId, r: EntityId) {
    let seed = net.seed;
    net.flush();
    assert!(
        run_until_pair_matched(net, (0, w), (1, r), 60 * SEC),
        "seed {seed:#x}: assignable versions did not match; {:?} {:?}",
        net.p(1).stats(),
        net.p(1).type_refusals().collect::<Vec<_>>()
    );
    let payload = vec![0, 1, 0, 0, 7, 0, 0, 0];
    write_retrying(net, 0, w, [0; 16], payload.clone());
    let got = net.run_until(60 * SEC, |n| {
        n.node(1)
            .samples
            .iter()
            .any(|(_, s)| s.reader == r && *s.payload == payload)
    });
    assert!(got, "seed {seed:#x}: the sample was not delivered");
    for node in [0, 1] {
        let s = net.p(node).stats();
        assert_eq!(s.type_assignable_matches, 1, "seed {seed:#x} node {node}");
        assert_eq!(s.type_not_assignable, 0, "seed {seed:#x} node {node}");
        assert_eq!(
            s.type_name_fallback_matches, 0,
            "seed {seed:#x} node {node}"
        );
    }
    assert_eq!(net.p(1).pending_type_decisions(), 0, "seed {seed:#x}");
}

#[test]
fn appendable_v2_writer_and_v1_reader_match_and_deliver() {
    for_each_seed(
        "appendable_v2_writer_and_v1_reader_match_and_deliver",
        5,
        |seed| {
            let (mut net, w, r) = versions(seed, Faults::none(), APPENDABLE_V2, APPENDABLE_V1);
            assert_match_and_delivery(&mut net, w, r);
        },
    );
}

#[test]
fn appendable_v1_writer_and_v2_reader_match_and_deliver() {
    for_each_seed(
        "appendable_v1_writer_and_v2_reader_match_and_deliver",
        5,
        |seed| {
            let (mut net, w, r) = versions(seed, Faults::none(), APPENDABLE_V1, APPENDABLE_V2);
            assert_match_and_delivery(&mut net, w, r);
        },
    );
}

#[test]
fn mutable_with_reordered_and_added_members_match() {
    for_each_seed(
        "mutable_with_reordered_and_added_members_match",
        5,
        |seed| {
            let (mut net, w, r) = versions(seed, Faults::none(), MUTABLE_V2, MUTABLE_V1);
            assert_match_and_delivery(&mut net, w, r);
        },
    );
}

#[test]
fn type_lookup_under_loss_still_decides() {
    let faults = || Faults {
        duplicate: 0.05,
        reorder: 0.1,
        reorder_delay_ns: 2 * MS,
        jitter_ns: 200_000,
        ..Faults::lossy(0.3)
    };
    for_each_seed("type_lookup_under_loss_still_decides", 20, |seed| {
        let (mut net, w, r) = versions(seed, faults(), APPENDABLE_V2, APPENDABLE_V1);
        assert_match_and_delivery(&mut net, w, r);
    });
}

/// Runs long enough for any decision, then checks the pair did not match and node `node`
/// reported why.
fn assert_refused(net: &mut SimNet, w: EntityId, r: EntityId, reader_side_only: bool) {
    let seed = net.seed;
    net.flush();
    let refused = net.run_until(60 * SEC, |n| {
        n.node(1).saw(|e| {
            matches!(e, Event::RequestedIncompatibleQos { reader, policy: QosPolicyId::TypeConsistencyEnforcement, .. } if *reader == r)
        })
    });
    assert!(
        refused,
        "seed {seed:#x}: no refusal; {:?}",
        net.p(1).stats()
    );
    net.run_for(5 * SEC);
    assert!(
        !net.node(1)
            .saw(|e| matches!(e, Event::SubscriptionMatched { matched: true, .. })),
        "seed {seed:#x}: the reader matched"
    );
    assert!(net.p(1).stats().type_not_assignable >= 1, "seed {seed:#x}");
    assert_eq!(net.p(1).stats().type_name_fallback_matches, 0);
    let refusals: Vec<_> = net.p(1).type_refusals().cloned().collect();
    assert_eq!(refusals.len(), 1, "seed {seed:#x}: {refusals:?}");
    assert_eq!(refusals[0].local, r);
    assert_eq!(refusals[0].remote.entity, w);
    if !reader_side_only {
        assert!(net.node(0).saw(|e| {
            matches!(e, Event::OfferedIncompatibleQos { writer, policy: QosPolicyId::TypeConsistencyEnforcement, .. } if *writer == w)
        }));
        assert!(!net
            .node(0)
            .saw(|e| matches!(e, Event::PublicationMatched { matched: true, .. })));
    }
}

#[test]
fn final_type_with_a_changed_member_type_does_not_match() {
    for_each_seed(
        "final_type_with_a_changed_member_type_does_not_match",
        5,
        |seed| {
            let (mut net, w, r) = versions(seed, Faults::none(), FINAL_V2, FINAL_V1);
            assert_refused(&mut net, w, r, false);
            let why = net.p(1).type_refusals().next().map(|x| x.reason.clone());
            let why = why.unwrap_or_default();
            assert!(
                why.contains('a'),
                "seed {seed:#x}: reason names no member: {why}"
            );
            eprintln!("refusal reason: {why}");
        },
    );
}

#[test]
fn disallow_type_coercion_refuses_different_types() {
    for_each_seed(
        "disallow_type_coercion_refuses_different_types",
        5,
        |seed| {
            let (mut net, w, r) = versions(seed, Faults::none(), APPENDABLE_V2, APPENDABLE_V1);
            let tc = TypeConsistency {
                kind: TypeConsistencyKind::DisallowTypeCoercion,
                ..TypeConsistency::default()
            };
            net.p(1).set_reader_type_consistency(r, tc);
            assert_refused(&mut net, w, r, true);
            let why = net.p(1).type_refusals().next().map(|x| x.reason.clone());
            assert!(why.unwrap_or_default().contains("DISALLOW_TYPE_COERCION"));
        },
    );
}

/// Clears the TypeLookup bits of every PID_BUILTIN_ENDPOINT_SET node 0 sends: node 0 looks
/// like a participant without a TypeLookup service.
fn hide_typelookup(from: usize, _to: usize, bytes: &mut [u8]) {
    if from != 0 {
        return;
    }
    let pid = [0x58, 0x00, 0x04, 0x00];
    let mut i = 0;
    while i + 8 <= bytes.len() {
        if bytes[i..i + 4] == pid {
            // Bits 12..=15 of the little-endian u32.
            bytes[i + 5] &= 0x0f;
            i += 8;
        } else {
            i += 4;
        }
    }
}

#[test]
fn a_peer_without_typelookup_is_matched_by_name() {
    for_each_seed("a_peer_without_typelookup_is_matched_by_name", 5, |seed| {
        let (mut net, w, r) = versions(seed, Faults::none(), FINAL_V2, FINAL_V1);
        net.tamper = Some(Box::new(|f, t, b: &mut Vec<u8>| hide_typelookup(f, t, b)));
        net.flush();
        // Not assignable, but node 1 cannot learn that: it matches by name at once.
        let start = net.now;
        let ok = net.run_until(30 * SEC, |n| {
            n.node(1).saw(|e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r))
        });
        assert!(ok, "seed {seed:#x}: no match by name");
        assert!(
            net.now - start < halyard_core::TYPE_LOOKUP_TIMEOUT.as_nanos() as u64,
            "seed {seed:#x}: waited for a lookup the peer cannot answer"
        );
        assert_eq!(net.p(1).stats().type_name_fallback_matches, 1);
        assert_eq!(net.p(1).stats().type_not_assignable, 0);
        let _ = w;
    });
}

/// Empties every datagram that carries the TypeLookup reply writer's entity id from node 0:
/// its replies never arrive.
fn drop_replies(from: usize, _to: usize, bytes: &mut Vec<u8>) {
    let id = EntityId::TL_SVC_REPLY_WRITER.0;
    if from == 0 && bytes.windows(4).any(|x| x == id) {
        bytes.clear();
    }
}

#[test]
fn unanswered_lookups_fall_back_to_name_matching_after_the_timeout() {
    let (mut net, _w, r) = versions(7, Faults::none(), FINAL_V2, FINAL_V1);
    net.tamper = Some(Box::new(drop_replies));
    net.flush();
    let start = net.now;
    let ok = net.run_until(60 * SEC, |n| {
        n.node(1).saw(|e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r))
    });
    assert!(ok, "no match by name after the lookup timed out");
    let waited = net.now - start;
    assert!(waited >= halyard_core::TYPE_LOOKUP_TIMEOUT.as_nanos() as u64);
    assert_eq!(net.p(1).stats().type_name_fallback_matches, 1);
    assert_eq!(net.p(1).pending_type_decisions(), 0);
    // It asked more than once meanwhile.
    assert!(net.p(1).outstanding_type_requests() >= 2);
}

#[test]
fn same_types_need_no_lookup() {
    let (mut net, w, r) = versions(9, Faults::none(), APPENDABLE_V1, APPENDABLE_V1);
    net.flush();
    assert!(run_until_pair_matched(&mut net, (0, w), (1, r), 30 * SEC));
    let s = net.p(1).stats();
    assert_eq!(
        (s.type_assignable_matches, s.type_name_fallback_matches),
        (0, 0)
    );
    assert_eq!(net.p(1).outstanding_type_requests(), 0);
}

#[test]
fn force_type_validation_refuses_a_writer_without_type_information() {
    let mut net = SimNet::new(11, Faults::none());
    let a = net.add_node(node_config(1));
    let b = net.add_node(node_config(2));
    // Node 0 registers no description: its writer announces no TypeInformation.
    register(&mut net, b, APPENDABLE_V1);
    let w = writer(&mut net, a);
    let r = reader(&mut net, b);
    let tc = TypeConsistency {
        force_type_validation: true,
        ..TypeConsistency::default()
    };
    net.p(b).set_reader_type_consistency(r, tc);
    assert_refused(&mut net, w, r, true);
    let why = net.p(1).type_refusals().next().map(|x| x.reason.clone());
    assert!(why.unwrap_or_default().contains("FORCE_TYPE_VALIDATION"));
}
