//! XML QoS profiles (DDS-XML 1.0): inheritance, topic filters, every policy element, durations,
//! errors at their line and column, the `HALYARD_QOS_PROFILES` variable, validation of what a
//! lookup returns, the API's QoS types as what a lookup returns, and a writer and reader made
//! from a profile exchanging a sample.
#![cfg(feature = "xml")]
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::qos::{
    DataRepresentation, DestinationOrder, DomainParticipantQos, Durability, History,
    LivelinessKind, Ownership, Presentation, PresentationAccessScope, QosPolicyId, ReliabilityKind,
    TopicQos, INFINITE,
};
use halyard::{DataReaderQos, DataWriterQos, Error, PublisherQos, QosProvider, SubscriberQos};
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A document from lines (line `i` of the slice is line `i + 1` of the text).
fn doc(lines: &[&str]) -> String {
    lines.join("\n")
}

fn provider(lines: &[&str]) -> QosProvider {
    QosProvider::from_str(&doc(lines), "test.xml").expect("valid profiles")
}

/// The error of loading `lines`, as displayed (`file:line:column: message`).
fn load_error(lines: &[&str]) -> String {
    match QosProvider::from_str(&doc(lines), "bad.xml") {
        Ok(_) => panic!("loaded"),
        Err(e @ Error::BadProfile { .. }) => e.to_string(),
        Err(e) => panic!("not a BadProfile: {e}"),
    }
}

/// The error of a document whose one profile holds `body` inside `<datawriter_qos>`, line 4.
fn writer_error(body: &str) -> String {
    let line = format!("      {body}");
    load_error(&[
        "<dds>",
        "  <qos_library name=\"L\">",
        "    <qos_profile name=\"P\"><datawriter_qos>",
        &line,
        "    </datawriter_qos></qos_profile>",
        "  </qos_library>",
        "</dds>",
    ])
}

#[test]
fn inheritance_chain_overrides_one_field_each() {
    let p = provider(&[
        "<dds xmlns=\"http://www.omg.org/dds/\">",
        "  <qos_library name=\"Other\">",
        "    <qos_profile name=\"Root\">",
        "      <datawriter_qos>",
        "        <reliability><kind>RELIABLE_RELIABILITY_QOS</kind>",
        "          <max_blocking_time><sec>2</sec></max_blocking_time></reliability>",
        "        <history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>5</depth></history>",
        "        <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>",
        "      </datawriter_qos>",
        "      <datareader_qos><deadline><period><sec>3</sec></period></deadline></datareader_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "  <qos_library name=\"L\">",
        "    <qos_profile name=\"A\" base_name=\"Other::Root\">",
        "      <datawriter_qos><history><depth>7</depth></history></datawriter_qos>",
        "    </qos_profile>",
        "    <qos_profile name=\"B\" base_name=\"A\">",
        "      <datawriter_qos><durability><kind>VOLATILE_DURABILITY_QOS</kind></durability></datawriter_qos>",
        "    </qos_profile>",
        "    <qos_profile name=\"C\" base_name=\"L::B\">",
        "      <datawriter_qos><reliability><kind>BEST_EFFORT_RELIABILITY_QOS</kind></reliability></datawriter_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "</dds>",
    ]);
    let w = |name| p.datawriter_qos(name, Some("T")).unwrap();
    let root = w("Other::Root");
    assert_eq!(root.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(root.reliability.max_blocking_time, ms(2000));
    assert_eq!(root.history, History::KeepLast(5));
    assert_eq!(root.durability, Durability::TransientLocal);
    // Each level changes one field and inherits the rest.
    let a = w("L::A");
    assert_eq!(
        (a.history, a.durability),
        (History::KeepLast(7), Durability::TransientLocal)
    );
    assert_eq!(a.reliability.max_blocking_time, ms(2000));
    let b = w("L::B");
    assert_eq!(
        (b.history, b.durability),
        (History::KeepLast(7), Durability::Volatile)
    );
    assert_eq!(b.reliability.kind, ReliabilityKind::Reliable);
    let c = w("L::C");
    assert_eq!(c.reliability.kind, ReliabilityKind::BestEffort);
    // Only the kind was overridden: max_blocking_time still comes from Root.
    assert_eq!(c.reliability.max_blocking_time, ms(2000));
    assert_eq!(
        (c.history, c.durability),
        (History::KeepLast(7), Durability::Volatile)
    );
    // Everything not named anywhere keeps the writer default.
    let mut expected = DataWriterQos::default();
    expected.reliability.kind = ReliabilityKind::BestEffort;
    expected.reliability.max_blocking_time = ms(2000);
    expected.history = History::KeepLast(7);
    assert_eq!(c, expected);
    // Reader QoS is inherited through profiles that have no <datareader_qos>.
    let r = p.datareader_qos("L::C", None).unwrap();
    assert_eq!(r.deadline, ms(3000));
    assert_eq!(
        r.reliability.kind,
        ReliabilityKind::BestEffort,
        "reader default"
    );
    let names: Vec<&str> = p.profile_names().collect();
    assert_eq!(names, ["Other::Root", "L::A", "L::B", "L::C"]);
    assert_eq!(p.default_profile(), None);
}

#[test]
fn topic_filters_choose_the_first_matching_element() {
    let p = provider(&[
        "<dds>",
        "  <qos_library name=\"Shapes\">",
        "    <qos_profile name=\"Base\">",
        "      <datawriter_qos topic_filter=\"Tri*\"><ownership_strength><value>3</value></ownership_strength></datawriter_qos>",
        "      <datawriter_qos><transport_priority><value>1</value></transport_priority></datawriter_qos>",
        "    </qos_profile>",
        "    <qos_profile name=\"P\" base_name=\"Base\" is_default_qos=\"true\">",
        "      <datawriter_qos topic_filter=\"Square*\">",
        "        <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>",
        "        <history><depth>3</depth></history>",
        "      </datawriter_qos>",
        "      <datawriter_qos topic_filter=\"Circ?e\">",
        "        <history><kind>KEEP_ALL_HISTORY_QOS</kind></history>",
        "      </datawriter_qos>",
        "      <datawriter_qos topic_filter=\"*\"><history><depth>9</depth></history></datawriter_qos>",
        "      <datareader_qos topic_filter=\"Square\"><history><depth>2</depth></history></datareader_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "</dds>",
    ]);
    assert_eq!(p.default_profile(), Some("Shapes::P"));
    let w = |t| p.datawriter_qos("Shapes::P", t).unwrap();
    let square = w(Some("Square"));
    assert_eq!(square.durability, Durability::TransientLocal);
    assert_eq!(square.history, History::KeepLast(3));
    assert_eq!(
        square.transport_priority, 1,
        "the base's unfiltered element applies too"
    );
    assert_eq!(w(Some("SquareBig")).history, History::KeepLast(3));
    let circle = w(Some("Circle"));
    assert_eq!(circle.history, History::KeepAll);
    assert_eq!(circle.durability, Durability::Volatile);
    assert_eq!(
        w(Some("Cirle")).history,
        History::KeepLast(9),
        "? matches one character"
    );
    let triangle = w(Some("Triangle"));
    assert_eq!(triangle.history, History::KeepLast(9));
    assert_eq!(
        (triangle.ownership_strength, triangle.transport_priority),
        (3, 0)
    );
    // Without a topic, only elements without a filter apply.
    let none = w(None);
    assert_eq!(
        (none.history, none.transport_priority),
        (History::KeepLast(1), 1)
    );
    let reader = |t| p.datareader_qos("Shapes::P", Some(t)).unwrap().history;
    assert_eq!(reader("Square"), History::KeepLast(2));
    assert_eq!(
        reader("Squares"),
        History::KeepLast(1),
        "no wildcard: exact match"
    );
}

#[test]
fn every_policy_element_lands_in_its_field() {
    let p = provider(&[
        "<dds>",
        "  <qos_library name=\"All\">",
        "    <qos_profile name=\"Everything\">",
        "      <datawriter_qos>",
        "        <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>",
        "        <durability_service>",
        "          <service_cleanup_delay><sec>3</sec><nanosec>0</nanosec></service_cleanup_delay>",
        "          <history_kind>KEEP_LAST_HISTORY_QOS</history_kind><history_depth>4</history_depth>",
        "          <max_samples>100</max_samples><max_instances>10</max_instances>",
        "          <max_samples_per_instance>LENGTH_UNLIMITED</max_samples_per_instance>",
        "        </durability_service>",
        "        <deadline><period><sec>1</sec><nanosec>500000000</nanosec></period></deadline>",
        "        <latency_budget><duration><nanosec>250000000</nanosec></duration></latency_budget>",
        "        <liveliness><kind>MANUAL_BY_TOPIC_LIVELINESS_QOS</kind>",
        "          <lease_duration><sec>2</sec></lease_duration></liveliness>",
        "        <reliability><kind>RELIABLE_RELIABILITY_QOS</kind>",
        "          <max_blocking_time><nanosec>500000000</nanosec></max_blocking_time></reliability>",
        "        <destination_order><kind>BY_SOURCE_TIMESTAMP_DESTINATIONORDER_QOS</kind></destination_order>",
        "        <history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>8</depth></history>",
        "        <resource_limits><max_samples>1000</max_samples>",
        "          <max_instances>LENGTH_UNLIMITED</max_instances>",
        "          <max_samples_per_instance>100</max_samples_per_instance></resource_limits>",
        "        <transport_priority><value>12</value></transport_priority>",
        "        <lifespan><duration><sec>30</sec></duration></lifespan>",
        "        <user_data><value>aGFseWFyZA==</value></user_data>",
        "        <ownership><kind>EXCLUSIVE_OWNERSHIP_QOS</kind></ownership>",
        "        <ownership_strength><value>-7</value></ownership_strength>",
        "        <writer_data_lifecycle>",
        "          <autodispose_unregistered_instances>false</autodispose_unregistered_instances>",
        "        </writer_data_lifecycle>",
        "        <representation><value><element>XCDR2_DATA_REPRESENTATION</element></value></representation>",
        "      </datawriter_qos>",
        "      <datareader_qos>",
        "        <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>",
        "        <deadline><period><sec>1</sec></period></deadline>",
        "        <latency_budget><duration><sec>DURATION_ZERO_SEC</sec><nanosec>5</nanosec></duration></latency_budget>",
        "        <liveliness><kind>MANUAL_BY_PARTICIPANT_LIVELINESS_QOS</kind></liveliness>",
        "        <reliability><kind>RELIABLE_RELIABILITY_QOS</kind></reliability>",
        "        <destination_order><kind>BY_RECEPTION_TIMESTAMP_DESTINATIONORDER_QOS</kind></destination_order>",
        "        <history><kind>KEEP_ALL_HISTORY_QOS</kind></history>",
        "        <resource_limits><max_instances>50</max_instances></resource_limits>",
        "        <user_data><value>1, 2,0x03</value></user_data>",
        "        <ownership><kind>SHARED_OWNERSHIP_QOS</kind></ownership>",
        "        <time_based_filter><minimum_separation><nanosec>100000000</nanosec></minimum_separation></time_based_filter>",
        "        <reader_data_lifecycle>",
        "          <autopurge_nowriter_samples_delay><sec>5</sec></autopurge_nowriter_samples_delay>",
        "          <autopurge_disposed_samples_delay><sec>DURATION_INFINITE_SEC</sec>",
        "            <nanosec>DURATION_INFINITE_NSEC</nanosec></autopurge_disposed_samples_delay>",
        "        </reader_data_lifecycle>",
        "        <data_representation><id><element>XCDR1</element><element>XCDR2</element></id></data_representation>",
        "      </datareader_qos>",
        "      <topic_qos>",
        "        <topic_data><value>dG9waWM=</value></topic_data>",
        "        <history><kind>KEEP_ALL_HISTORY_QOS</kind></history>",
        "      </topic_qos>",
        "      <publisher_qos>",
        "        <partition><name><element>A</element><element>B*</element></name></partition>",
        "        <group_data><value>Z3JvdXA=</value></group_data>",
        "        <presentation><access_scope>INSTANCE_PRESENTATION_QOS</access_scope>",
        "          <coherent_access>0</coherent_access><ordered_access>FALSE</ordered_access></presentation>",
        "        <entity_factory><autoenable_created_entities>true</autoenable_created_entities></entity_factory>",
        "      </publisher_qos>",
        "      <subscriber_qos><partition><name><element>C</element></name></partition></subscriber_qos>",
        "      <domain_participant_qos><user_data><value>0xff</value></user_data></domain_participant_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "</dds>",
    ]);
    let w = p.datawriter_qos("All::Everything", Some("T")).unwrap();
    let mut ew = DataWriterQos::default();
    ew.durability = Durability::TransientLocal;
    ew.durability_service.service_cleanup_delay = ms(3000);
    ew.durability_service.history = History::KeepLast(4);
    ew.durability_service.resource_limits.max_samples = Some(100);
    ew.durability_service.resource_limits.max_instances = Some(10);
    ew.durability_service
        .resource_limits
        .max_samples_per_instance = None;
    ew.deadline = ms(1500);
    ew.latency_budget = ms(250);
    ew.liveliness.kind = LivelinessKind::ManualByTopic;
    ew.liveliness.lease_duration = ms(2000);
    ew.reliability.kind = ReliabilityKind::Reliable;
    ew.reliability.max_blocking_time = ms(500);
    ew.destination_order = DestinationOrder::BySourceTimestamp;
    ew.history = History::KeepLast(8);
    ew.resource_limits.max_samples = Some(1000);
    ew.resource_limits.max_instances = None;
    ew.resource_limits.max_samples_per_instance = Some(100);
    ew.transport_priority = 12;
    ew.lifespan = ms(30_000);
    ew.user_data = b"halyard".to_vec();
    ew.ownership = Ownership::Exclusive;
    ew.ownership_strength = -7;
    ew.writer_data_lifecycle.autodispose_unregistered_instances = false;
    ew.data_representation = Some(DataRepresentation::Xcdr2);
    ew.topic_data = b"topic".to_vec(); // from <topic_qos>
    assert_eq!(w, ew);

    let r = p.datareader_qos("All::Everything", Some("T")).unwrap();
    let mut er = DataReaderQos::default();
    er.durability = Durability::TransientLocal;
    er.deadline = ms(1000);
    er.latency_budget = Duration::from_nanos(5);
    er.liveliness.kind = LivelinessKind::ManualByParticipant;
    er.reliability.kind = ReliabilityKind::Reliable;
    er.history = History::KeepAll;
    er.resource_limits.max_instances = Some(50);
    er.user_data = vec![1, 2, 3];
    er.time_based_filter = ms(100);
    er.reader_data_lifecycle.autopurge_nowriter_samples_delay = ms(5000);
    er.reader_data_lifecycle.autopurge_disposed_samples_delay = INFINITE;
    er.data_representation = vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];
    er.topic_data = b"topic".to_vec();
    assert_eq!(r, er);

    let t = p.topic_qos("All::Everything", Some("T")).unwrap();
    assert_eq!(
        (t.history, t.topic_data.as_slice()),
        (History::KeepAll, &b"topic"[..])
    );
    assert_eq!(
        p.publisher_qos("All::Everything").unwrap(),
        PublisherQos::default()
            .partition(["A", "B*"])
            .group_data(*b"group")
    );
    assert_eq!(
        p.subscriber_qos("All::Everything").unwrap(),
        SubscriberQos::default().partition(["C"])
    );
    assert_eq!(
        p.participant_options("All::Everything").unwrap().user_data,
        [0xff]
    );
}

#[test]
fn durations_numbers_and_infinity() {
    let deadline = |period: &str| {
        let line = format!("<deadline><period>{period}</period></deadline>");
        let p = QosProvider::from_str(
            &doc(&[
                "<dds><qos_library name=\"L\"><qos_profile name=\"P\"><datawriter_qos>",
                &line,
                "</datawriter_qos></qos_profile></qos_library></dds>",
            ]),
            "d.xml",
        )?;
        p.datawriter_qos("L::P", None).map(|q| q.deadline)
    };
    let inf = INFINITE;
    assert_eq!(
        deadline("<sec>DURATION_INFINITE_SEC</sec><nanosec>DURATION_INFINITE_NSEC</nanosec>")
            .unwrap(),
        inf
    );
    assert_eq!(deadline("<sec>DURATION_INFINITY</sec>").unwrap(), inf);
    assert_eq!(
        deadline("<nanosec>DURATION_INFINITY</nanosec>").unwrap(),
        inf
    );
    assert_eq!(deadline("DURATION_INFINITY").unwrap(), inf);
    assert_eq!(
        deadline("<sec>2147483647</sec><nanosec>2147483647</nanosec>").unwrap(),
        inf
    );
    assert_eq!(
        deadline("<sec>0</sec><nanosec>1</nanosec>").unwrap(),
        Duration::from_nanos(1)
    );
    assert_eq!(
        deadline("<nanosec>999999999</nanosec><sec>4</sec>").unwrap(),
        Duration::from_nanos(4_999_999_999)
    );
    assert_eq!(deadline("<sec> 86400 </sec>").unwrap(), ms(86_400_000));
    // A zero deadline parses, then validation refuses it as any zero deadline.
    assert!(matches!(
        deadline("<sec>DURATION_ZERO_SEC</sec>"),
        Err(Error::BadQos {
            policy: QosPolicyId::Deadline,
            ..
        })
    ));
    for (bad, why) in [
        (
            "<nanosec>1000000000</nanosec>",
            "<nanosec> 1000000000 is out of range 0..999999999",
        ),
        ("<sec>-1</sec>", "<sec> -1 is out of range 0..2147483646"),
        ("<sec>1.5</sec>", "bad number \"1.5\" in <sec>"),
        ("<sec>1</sec><sec>2</sec>", "<sec> given twice in <period>"),
        (
            "<seconds>1</seconds>",
            "unknown element <seconds> in <period>; expected sec or nanosec",
        ),
        ("", "<period> needs <sec> and/or <nanosec>"),
    ] {
        let e = deadline(bad).unwrap_err().to_string();
        assert!(e.starts_with("d.xml:2:") && e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn a_bad_enumerator_is_reported_at_its_line_and_column() {
    let e = load_error(&[
        "<dds>",
        "  <qos_library name=\"L\">",
        "    <qos_profile name=\"P\">",
        "      <datawriter_qos>",
        "        <reliability><kind>RELIABLE</kind></reliability>",
        "      </datawriter_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "</dds>",
    ]);
    assert_eq!(
        e,
        "bad.xml:5:28: unknown <reliability> kind \"RELIABLE\"; expected \
         RELIABLE_RELIABILITY_QOS or BEST_EFFORT_RELIABILITY_QOS"
    );
}

#[test]
fn malformed_xml_is_reported_at_its_line_and_column() {
    let e = load_error(&[
        "<dds>",
        "  <qos_library name=\"L\">",
        "    <qos_profile name=\"P\">",
        "      <datawriter_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "</dds>",
    ]);
    assert!(e.starts_with("bad.xml:5:5: malformed XML: "), "{e}");
    assert!(
        e.contains("datawriter_qos") && e.contains("qos_profile"),
        "{e}"
    );
    let e = load_error(&["<dds>", "  <qos_library name=\"L\">", "</dds"]);
    assert_eq!(e, "bad.xml:3:6: malformed XML: unexpected end of stream");
    let e = load_error(&["<dds attr=\"x\"></dds>"]);
    assert_eq!(
        e,
        "bad.xml:1:6: unknown attribute attr on <dds>; expected version"
    );
}

#[test]
fn unknown_base_names_and_cycles_are_refused_where_they_are_named() {
    let e = load_error(&[
        "<dds>",
        "  <qos_library name=\"L\">",
        "    <qos_profile name=\"P\" base_name=\"Nope\"/>",
        "  </qos_library>",
        "</dds>",
    ]);
    assert_eq!(
        e,
        "bad.xml:3:38: unknown base_name \"Nope\": no QoS profile \"L::Nope\""
    );
    let e = load_error(&[
        "<dds>",
        "  <qos_library name=\"L\">",
        "    <qos_profile name=\"A\" base_name=\"C\"/>",
        "    <qos_profile name=\"B\" base_name=\"A\"/>",
        "    <qos_profile name=\"C\" base_name=\"L::B\"/>",
        "    <qos_profile name=\"D\" base_name=\"D\"/>",
        "  </qos_library>",
        "</dds>",
    ]);
    // Found from A: A -> C -> B -> A, closed by B's base_name.
    assert_eq!(
        e,
        "bad.xml:4:38: base_name cycle: L::A -> L::C -> L::B -> L::A"
    );
    let e = load_error(&[
        "<dds><qos_library name=\"L\">",
        "<qos_profile name=\"D\" base_name=\"D\"/>",
        "</qos_library></dds>",
    ]);
    assert_eq!(e, "bad.xml:2:34: base_name cycle: L::D -> L::D");
}

#[test]
fn unknown_and_unsupported_elements_are_errors() {
    let cases = [
        ("<relaibility/>", "bad.xml:4:7: unknown element <relaibility> in <datawriter_qos>; expected durability, "),
        ("<time_based_filter/>", "bad.xml:4:7: <time_based_filter> is not a policy of <datawriter_qos>"),
        ("<property/>", "bad.xml:4:7: <property> is not supported by Halyard"),
        ("<history><depth>ten</depth></history>", "bad.xml:4:23: bad number \"ten\" in <depth>: expected a decimal integer"),
        ("<history><depth>99999999999</depth></history>", "bad.xml:4:23: bad number \"99999999999\" in <depth>: out of range"),
        ("<history><kind>KEEP_LAST_HISTORY_QOS</kind><kind>KEEP_ALL_HISTORY_QOS</kind></history>", "bad.xml:4:50: <kind> given twice in <history>"),
        ("<history><kind x=\"1\">KEEP_ALL_HISTORY_QOS</kind></history>", "bad.xml:4:22: unexpected attribute x on <kind>"),
        ("<history>KEEP_ALL</history>", "bad.xml:4:16: unexpected text in <history>"),
        ("<history><kind><a/></kind></history>", "bad.xml:4:22: <kind> takes a value, not elements"),
        ("<writer_data_lifecycle><autodispose_unregistered_instances>yes</autodispose_unregistered_instances></writer_data_lifecycle>", "bad boolean \"yes\""),
        ("<resource_limits><initial_samples>1</initial_samples></resource_limits>", "unknown element <initial_samples> in <resource_limits>"),
        ("<user_data><value>not base64!</value></user_data>", "bad <user_data> value"),
        ("<representation><value><element>XML_DATA_REPRESENTATION</element></value></representation>", "XML data representation is not supported"),
    ];
    for (body, want) in cases {
        let e = writer_error(body);
        assert!(
            e.starts_with(want) || (!want.starts_with("bad.xml") && e.contains(want)),
            "{body}:\n  {e}\n  wanted {want}"
        );
    }
    let group = |body: &str| {
        let line = format!("      <publisher_qos>{body}</publisher_qos>");
        load_error(&[
            "<dds>",
            "  <qos_library name=\"L\">",
            "    <qos_profile name=\"P\">",
            &line,
            "</qos_profile></qos_library></dds>",
        ])
    };
    assert!(group(
        "<presentation><access_scope>ANY_PRESENTATION_QOS</access_scope></presentation>"
    )
    .contains("TOPIC_PRESENTATION_QOS"));
    assert!(load_error(&[
        "<dds><qos_library name=\"L\"><qos_profile name=\"P\"><domain_participant_qos>",
        "<entity_factory><autoenable_created_entities>false</autoenable_created_entities></entity_factory>",
        "</domain_participant_qos></qos_profile></qos_library></dds>",
    ])
    .contains("not supported"));
    assert!(group("<history/>")
        .starts_with("bad.xml:4:22: <history> is not a policy of <publisher_qos>"));
    let e = load_error(&[
        "<dds><qos_library name=\"L\"><qos_profile name=\"P\">",
        "<datawriter_qos/>",
        "<datawriter_qos topic_filter=\"X\"/>",
        "</qos_profile></qos_library></dds>",
    ]);
    assert!(
        e.starts_with("bad.xml:3:1: this <datawriter_qos> can never apply"),
        "{e}"
    );
    let e = load_error(&["<dds><qos_profile name=\"P\"/></dds>"]);
    assert!(
        e.starts_with("bad.xml:1:6: <qos_profile> must be inside a <qos_library>"),
        "{e}"
    );
    let e = load_error(&["<dds><qos_library name=\"L\"><qos_profile name=\"P\"/><qos_profile name=\"P\"/></qos_library></dds>"]);
    assert_eq!(
        e,
        "bad.xml:1:51: QoS profile \"L::P\" is already defined at bad.xml:1:28"
    );
    let e = load_error(&["<qos_library name=\"L\"/>"]);
    assert_eq!(
        e,
        "bad.xml:1:1: the root element must be <dds>, not <qos_library>"
    );
}

#[test]
fn an_unknown_profile_at_lookup_names_the_known_ones() {
    let p =
        provider(&["<dds><qos_library name=\"L\"><qos_profile name=\"P\"/></qos_library></dds>"]);
    assert_eq!(
        p.datawriter_qos("L::P", Some("T")).unwrap(),
        DataWriterQos::default()
    );
    let e = p.datareader_qos("L::Q", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.xml: no QoS profile \"L::Q\" (known: L::P)"
    );
    assert!(matches!(
        e,
        Error::BadProfile {
            line: 0,
            column: 0,
            ..
        }
    ));
    let e = p.publisher_qos("P").unwrap_err().to_string();
    assert!(e.contains("names are \"Library::Profile\""), "{e}");
}

#[test]
fn inconsistent_profiles_are_refused_by_validation_at_lookup() {
    let p = provider(&[
        "<dds><qos_library name=\"L\">",
        "  <qos_profile name=\"Zero\"><datawriter_qos><history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>0</depth></history></datawriter_qos></qos_profile>",
        "  <qos_profile name=\"Transient\"><datawriter_qos><durability><kind>TRANSIENT_DURABILITY_QOS</kind></durability><durability_service><max_samples>2</max_samples><max_samples_per_instance>3</max_samples_per_instance></durability_service></datawriter_qos></qos_profile>",
        "  <qos_profile name=\"Limits\"><datareader_qos><resource_limits><max_samples>2</max_samples><max_samples_per_instance>3</max_samples_per_instance></resource_limits></datareader_qos></qos_profile>",
        "</qos_library></dds>",
    ]);
    assert!(matches!(
        p.datawriter_qos("L::Zero", None),
        Err(Error::BadQos {
            policy: QosPolicyId::History,
            ..
        })
    ));
    // The profile's reader QoS is fine: only what is looked up is validated.
    assert!(p.datareader_qos("L::Zero", None).is_ok());
    assert!(matches!(
        p.datawriter_qos("L::Transient", None),
        Err(Error::BadQos {
            policy: QosPolicyId::DurabilityService,
            ..
        })
    ));
    assert!(matches!(
        p.datareader_qos("L::Limits", None),
        Err(Error::BadQos {
            policy: QosPolicyId::ResourceLimits,
            ..
        })
    ));
}

#[test]
fn files_and_the_environment_variable() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let base = format!("{data}/qos_base.xml");
    let derived = format!("{data}/qos_derived.xml");
    // The derived profile's base is in the other file: alone, it does not load.
    let e = QosProvider::from_file(&derived).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{derived}:5:"))
            && e.contains("unknown base_name \"Base::Reliable\""),
        "{e}"
    );

    // The only test that touches the variable (tests share the process environment).
    std::env::remove_var("HALYARD_QOS_PROFILES");
    assert!(QosProvider::from_env().unwrap().is_none());
    std::env::set_var("HALYARD_QOS_PROFILES", format!("{base}; {derived};"));
    let p = QosProvider::from_env()
        .unwrap()
        .expect("profiles from the variable");
    assert_eq!(p.default_profile(), Some("App::Durable"));
    let w = p.datawriter_qos("App::Durable", Some("T")).unwrap();
    assert_eq!(w.durability, Durability::TransientLocal);
    assert_eq!(
        w.history,
        History::KeepLast(4),
        "inherited from the other file"
    );
    assert_eq!(w.reliability.kind, ReliabilityKind::Reliable);
    let missing = format!("{data}/no_such_profiles.xml");
    std::env::set_var("HALYARD_QOS_PROFILES", format!("{base};{missing}"));
    let e = QosProvider::from_env().unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{missing}: cannot read the QoS profile file")),
        "{e}"
    );
    std::env::remove_var("HALYARD_QOS_PROFILES");
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "ProfileSample")]
struct ProfileSample {
    #[key]
    id: u32,
    text: String,
}

#[test]
fn a_writer_and_reader_from_profiles_exchange_a_sample() {
    let p = provider(&[
        "<dds xmlns=\"http://www.omg.org/dds/\">",
        "  <qos_library name=\"App\">",
        "    <qos_profile name=\"Durable\">",
        "      <datawriter_qos topic_filter=\"Profile*\">",
        "        <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>",
        "        <history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>10</depth></history>",
        "      </datawriter_qos>",
        "      <datareader_qos>",
        "        <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>",
        "        <reliability><kind>RELIABLE_RELIABILITY_QOS</kind></reliability>",
        "        <history><kind>KEEP_ALL_HISTORY_QOS</kind></history>",
        "      </datareader_qos>",
        "      <publisher_qos><partition><name><element>profiles</element></name></partition></publisher_qos>",
        "      <subscriber_qos><partition><name><element>prof*</element></name></partition></subscriber_qos>",
        "    </qos_profile>",
        "  </qos_library>",
        "</dds>",
    ]);
    let (a, b) = (
        common::loopback_participant(141),
        common::loopback_participant(141),
    );
    let ta = a.create_topic::<ProfileSample>("ProfileTopic").unwrap();
    let tb = b.create_topic::<ProfileSample>("ProfileTopic").unwrap();
    let wq = p.datawriter_qos("App::Durable", Some(ta.name())).unwrap();
    assert_eq!(wq.durability, Durability::TransientLocal);
    let w = a
        .create_publisher(p.publisher_qos("App::Durable").unwrap())
        .create_datawriter(&ta, wq)
        .unwrap();
    let sent = ProfileSample {
        id: 7,
        text: "from a profile".into(),
    };
    // Written before the reader exists: only TRANSIENT_LOCAL (from the profile) delivers it.
    w.write(&sent).unwrap();
    let rq = p.datareader_qos("App::Durable", Some(tb.name())).unwrap();
    let r = b
        .create_subscriber(p.subscriber_qos("App::Durable").unwrap())
        .create_datareader(&tb, rq)
        .unwrap();
    w.wait_for_matched(1, Duration::from_secs(10))
        .expect("matched through the partitions");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while got.is_empty() && std::time::Instant::now() < deadline {
        r.wait_for_data(Duration::from_millis(200));
        got.extend(r.take(10).unwrap().into_iter().filter_map(|s| s.data));
    }
    assert_eq!(got, [sent]);
}

#[test]
fn presentation_is_a_publisher_and_subscriber_policy() {
    let xml = r#"<dds><qos_library name="L"><qos_profile name="Sets">
        <publisher_qos><presentation><access_scope>TOPIC_PRESENTATION_QOS</access_scope>
          <coherent_access>true</coherent_access><ordered_access>true</ordered_access></presentation></publisher_qos>
        </qos_profile></qos_library></dds>"#;
    let p = QosProvider::from_str(xml, "sets.xml").unwrap();
    let g = p.publisher_qos("L::Sets").unwrap();
    assert_eq!(
        (
            g.presentation.access_scope,
            g.presentation.coherent_access,
            g.presentation.ordered_access
        ),
        (PresentationAccessScope::Topic, true, true)
    );
}

/// Every lookup returns the API's QoS type of its entity, equal to the same QoS built with
/// that type's builder methods.
#[test]
fn lookups_return_the_qos_the_builders_make() {
    let xml = r#"<dds><qos_library name="L"><qos_profile name="P">
      <datawriter_qos>
        <reliability><kind>BEST_EFFORT_RELIABILITY_QOS</kind></reliability>
        <history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>4</depth></history>
        <lifespan><duration><sec>2</sec></duration></lifespan>
        <ownership_strength><value>3</value></ownership_strength>
        <representation><value><element>XCDR2_DATA_REPRESENTATION</element></value></representation>
      </datawriter_qos>
      <datareader_qos>
        <reliability><kind>RELIABLE_RELIABILITY_QOS</kind></reliability>
        <history><kind>KEEP_ALL_HISTORY_QOS</kind></history>
        <durability><kind>PERSISTENT_DURABILITY_QOS</kind></durability>
        <time_based_filter><minimum_separation><nanosec>5000000</nanosec></minimum_separation></time_based_filter>
      </datareader_qos>
      <topic_qos>
        <topic_data><value>AQI=</value></topic_data>
        <history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>3</depth></history>
      </topic_qos>
      <publisher_qos>
        <partition><name><element>a</element></name></partition>
        <presentation><access_scope>GROUP_PRESENTATION_QOS</access_scope><coherent_access>true</coherent_access></presentation>
      </publisher_qos>
      <subscriber_qos><entity_factory><autoenable_created_entities>false</autoenable_created_entities></entity_factory></subscriber_qos>
      <domain_participant_qos><user_data><value>AQI=</value></user_data></domain_participant_qos>
    </qos_profile></qos_library></dds>"#;
    let p = QosProvider::from_str(xml, "types.xml").unwrap();
    assert_eq!(
        p.datawriter_qos("L::P", Some("T")).unwrap(),
        DataWriterQos::default()
            .best_effort()
            .keep_last(4)
            .lifespan(Duration::from_secs(2))
            .ownership_strength(3)
            .data_representation(DataRepresentation::Xcdr2)
            .topic_data([1, 2])
    );
    assert_eq!(
        p.datareader_qos("L::P", Some("T")).unwrap(),
        DataReaderQos::default()
            .reliable()
            .keep_all()
            .durability(Durability::Persistent)
            .time_based_filter(ms(5))
            .topic_data([1, 2])
    );
    let topic = TopicQos::default().topic_data([1, 2]).keep_last(3);
    assert_eq!(p.topic_qos("L::P", Some("T")).unwrap(), topic);
    assert_eq!(
        DataReaderQos::default().copy_from_topic_qos(&topic).history,
        History::KeepLast(3)
    );
    assert_eq!(
        p.publisher_qos("L::P").unwrap(),
        PublisherQos::default()
            .partition(["a"])
            .presentation(Presentation {
                access_scope: PresentationAccessScope::Group,
                coherent_access: true,
                ordered_access: false,
            })
    );
    assert_eq!(
        p.subscriber_qos("L::P").unwrap(),
        SubscriberQos::default().autoenable_created_entities(false)
    );
    assert_eq!(
        p.domain_participant_qos("L::P").unwrap(),
        DomainParticipantQos::default().user_data([1, 2])
    );
}
