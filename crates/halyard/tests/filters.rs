//! Proves content-filtered topics and query conditions between two participants over
//! loopback UDP: a filtered reader stores only what its expression accepts, new parameters
//! apply to later samples, a Halyard writer filters for a Halyard filtered reader (it does not
//! send what the reader's filter rejects, with the parameters the reader last set), a
//! QueryCondition selects (and triggers a WaitSet) by its query, one with ORDER BY returns
//! what it selects sorted (ties in reception order), an untyped reader given its type as a
//! dynamic type filters and queries with the same language, an untyped writer whose type
//! comes with its description filters for its readers, and bad expressions (ORDER BY in a
//! content filter among them) are refused with the offending token.
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::{
    DataReaderQos, DataWriterQos, DomainParticipant, Error, PublisherQos, StateMask, SubscriberQos,
    WaitSet,
};
use std::time::Duration;

#[derive(halyard::CdrType, Clone, Copy, Debug, Default, PartialEq)]
enum Level {
    #[default]
    Low,
    Mid,
    High,
}

#[derive(halyard::CdrType, Clone, Debug, Default, PartialEq)]
struct Where {
    x: i32,
    y: i32,
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "FilterTest")]
struct Reading {
    #[key]
    id: u32,
    value: f64,
    name: String,
    at: Where,
    level: Level,
}

const T: Duration = Duration::from_secs(10);

fn participant(domain: u32) -> DomainParticipant {
    common::loopback_participant(domain)
}

fn reliable<Q: common::EndpointQosBuilder>(q: Q) -> Q {
    common::reliable_keep_all(q)
}

fn reading(id: u32) -> Reading {
    Reading {
        id,
        value: id as f64 * 1.5,
        name: format!("sensor-{id}"),
        at: Where {
            x: id as i32 * 10,
            y: -(id as i32),
        },
        level: [Level::Low, Level::Mid, Level::High][id as usize % 3],
    }
}

fn ids(samples: Vec<halyard::Sample<Reading>>) -> Vec<u32> {
    samples
        .into_iter()
        .filter_map(|s| s.data.map(|d| d.id))
        .collect()
}

#[test]
fn a_filtered_reader_stores_only_what_its_expression_accepts() {
    let (a, b) = (participant(130), participant(130));
    let ta = a.create_topic::<Reading>("Readings").unwrap();
    let tb = b.create_topic::<Reading>("Readings").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, reliable(DataWriterQos::default()))
        .unwrap();
    let cft = b
        .create_contentfilteredtopic(
            "HighOnes",
            &tb,
            "level = High OR (at.x BETWEEN %0 AND %1 AND name LIKE 'sensor-_')",
            vec!["20".into(), "40".into()],
        )
        .unwrap();
    let sub = b.create_subscriber(SubscriberQos::default());
    let r = sub
        .create_datareader_filtered(&cft, reliable(DataReaderQos::default()), None)
        .unwrap();
    let plain = sub
        .create_datareader(&tb, reliable(DataReaderQos::default()))
        .unwrap();
    w.wait_for_matched(2, T).unwrap();
    for id in 0..12 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    // High: 2, 5, 8, 11; x in 20..=40 with a one-character suffix: 2, 3, 4.
    assert_eq!(ids(r.take(100).unwrap()), vec![2, 3, 4, 5, 8, 11]);
    assert_eq!(
        plain.take(100).unwrap().len(),
        12,
        "the unfiltered reader has all"
    );
    // New parameters apply to later samples.
    cft.set_expression_parameters(vec!["90".into(), "100".into()])
        .unwrap();
    assert_eq!(cft.expression_parameters(), vec!["90", "100"]);
    for id in 0..12 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(ids(r.take(100).unwrap()), vec![2, 5, 8, 9, 11]);
    assert!(matches!(
        cft.set_expression_parameters(vec!["1".into()]),
        Err(Error::BadFilter(_))
    ));
}

#[test]
fn a_halyard_writer_filters_for_a_halyard_filtered_reader() {
    let (a, b) = (participant(133), participant(133));
    let ta = a.create_topic::<Reading>("WriterFiltered").unwrap();
    let tb = b.create_topic::<Reading>("WriterFiltered").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, reliable(DataWriterQos::default()))
        .unwrap();
    let cft = b
        .create_contentfilteredtopic(
            "HighOrLate",
            &tb,
            "level = High OR id > %0",
            vec!["100".into()],
        )
        .unwrap();
    assert_eq!(cft.content_filter_property().filter_class_name, "DDSSQL");
    let sub = b.create_subscriber(SubscriberQos::default());
    let r = sub
        .create_datareader_filtered(&cft, reliable(DataReaderQos::default()), None)
        .unwrap();
    let plain = sub
        .create_datareader(&tb, reliable(DataReaderQos::default()))
        .unwrap();
    w.wait_for_matched(2, T).unwrap();
    // The writer's participant learnt the filter from the subscription it discovered.
    let announced = a
        .discovered_subscriptions()
        .into_iter()
        .find_map(|s| s.content_filter)
        .expect("the filtered reader announces its filter");
    assert_eq!(announced.filter_expression, "level = High OR id > %0");
    assert_eq!(
        (
            announced.content_filtered_topic_name.as_str(),
            announced.related_topic_name.as_str()
        ),
        ("HighOrLate", "WriterFiltered")
    );
    for id in 0..12 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(ids(r.take(100).unwrap()), vec![2, 5, 8, 11]);
    assert_eq!(plain.take(100).unwrap().len(), 12);
    // The 8 samples the filter rejects were not sent to it: it had none to drop.
    assert!(
        w.stats().unwrap().filtered_out >= 8,
        "{}",
        w.stats().unwrap().filtered_out
    );
    assert_eq!(r.stats().unwrap().filtered_samples, 0);
    // New parameters change what the writer sends.
    cft.set_expression_parameters(vec!["9".into()]).unwrap();
    let before = w.stats().unwrap().filtered_out;
    for id in 0..12 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(ids(r.take(100).unwrap()), vec![2, 5, 8, 10, 11]);
    assert!(
        w.stats().unwrap().filtered_out - before >= 7,
        "{}",
        w.stats().unwrap().filtered_out - before
    );
    assert_eq!(r.stats().unwrap().filtered_samples, 0);
    assert_eq!(plain.take(100).unwrap().len(), 12);
}

#[test]
fn a_query_condition_selects_and_triggers_by_its_query() {
    let (a, b) = (participant(131), participant(131));
    let ta = a.create_topic::<Reading>("Queried").unwrap();
    let tb = b.create_topic::<Reading>("Queried").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, reliable(DataWriterQos::default()))
        .unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tb, reliable(DataReaderQos::default()))
        .unwrap();
    w.wait_for_matched(1, T).unwrap();
    let q = r
        .create_querycondition(StateMask::NOT_READ_ONLY, "value > %0", vec!["100".into()])
        .unwrap();
    let ws = WaitSet::new();
    ws.attach_condition(&q).unwrap();
    for id in 0..10 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert!(!q.trigger_value(), "no value above 100");
    assert!(ws.wait(Duration::from_millis(100)).is_err());
    q.set_query_parameters(vec!["9.5".into()]).unwrap();
    assert!(q.trigger_value());
    assert!(ws.wait(T).is_ok());
    // value = 1.5 id > 9.5: ids 7, 8, 9.
    assert_eq!(
        ids(r.read_w_condition(100, q.read_condition()).unwrap()),
        vec![7, 8, 9]
    );
    // They are READ now: the NOT_READ query selects nothing more.
    assert!(!q.trigger_value());
    assert!(r
        .take_w_condition(100, q.read_condition())
        .unwrap()
        .is_empty());
    assert_eq!(
        r.take(100).unwrap().len(),
        10,
        "the query left the others in the cache"
    );
    assert_eq!(q.query_expression(), "value > %0");
}

/// A sample of `id` whose ORDER BY members are `level` and `at.x`.
fn ranked(id: u32, level: Level, x: i32) -> Reading {
    Reading {
        level,
        at: Where { x, y: 0 },
        ..reading(id)
    }
}

#[test]
fn a_query_with_order_by_returns_samples_sorted_ties_in_reception_order() {
    let (a, b) = (participant(134), participant(134));
    let ta = a.create_topic::<Reading>("Ordered").unwrap();
    let tb = b.create_topic::<Reading>("Ordered").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, reliable(DataWriterQos::default()))
        .unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tb, reliable(DataReaderQos::default()))
        .unwrap();
    w.wait_for_matched(1, T).unwrap();
    let expression = "value < %0 ORDER BY level, at.x";
    let q = r
        .create_querycondition(StateMask::ANY, expression, vec!["100".into()])
        .unwrap();
    let by_x = r
        .create_querycondition(StateMask::ANY, "ORDER BY at.x", vec![])
        .unwrap();
    // Written out of order of (level, at.x); 5 and 1, 7 and 4 tie, against their ids'
    // order; 8 has value 12 (1.5 id), above the 11 set below.
    use Level::{High, Low, Mid};
    for s in [
        ranked(5, High, 5),
        ranked(2, Low, 7),
        ranked(3, Mid, 1),
        ranked(7, Low, 3),
        ranked(1, High, 5),
        ranked(6, Mid, 9),
        ranked(4, Low, 3),
        ranked(8, Low, 0),
    ] {
        w.write(&s).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    let read =
        |c: &halyard::QueryCondition| ids(r.read_w_condition(100, c.read_condition()).unwrap());
    assert_eq!(read(&q), [8, 7, 4, 2, 3, 6, 5, 1]);
    assert_eq!(read(&by_x), [8, 3, 7, 4, 5, 1, 2, 6]);
    q.set_query_parameters(vec!["11".into()]).unwrap();
    assert_eq!(read(&q), [7, 4, 2, 3, 6, 5, 1], "8 no longer selected");
    assert_eq!(q.query_expression(), expression);
    // A take returns the first of the sorted samples, and leaves the others.
    let take = |max| ids(r.take_w_condition(max, q.read_condition()).unwrap());
    assert_eq!(take(3), [7, 4, 2]);
    assert_eq!(take(100), [3, 6, 5, 1]);
    assert_eq!(ids(r.take(100).unwrap()), [8]);
}

#[test]
fn bad_expressions_are_refused_with_the_offending_token() {
    let p = participant(132);
    let t = p.create_topic::<Reading>("Bad").unwrap();
    let e = p
        .create_contentfilteredtopic("B", &t, "value > 1 AND colour = 'red'", vec![])
        .err()
        .expect("refused");
    let Error::BadFilter(f) = &e else {
        panic!("{e}")
    };
    assert_eq!((f.position, f.token.as_str()), (14, "colour"));
    assert!(e.to_string().contains("colour"), "{e}");
    let r = p
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&t, DataReaderQos::default())
        .unwrap();
    let e = r
        .create_querycondition(StateMask::ANY, "level = Extreme", vec![])
        .err()
        .expect("refused");
    assert!(e.to_string().contains("Extreme"), "{e}");
    // ORDER BY belongs to queries only.
    let e = p
        .create_contentfilteredtopic("C", &t, "value > 1 ORDER BY value", vec![])
        .err()
        .expect("refused");
    let Error::BadFilter(f) = &e else {
        panic!("{e}")
    };
    assert_eq!((f.position, f.token.as_str()), (10, "ORDER"), "{e}");
    for (expression, position, token) in [
        ("value > 1 ORDER BY at", 19, "at"),
        ("ORDER BY value DESC", 15, "DESC"),
        ("ORDER BY name, nme", 15, "nme"),
    ] {
        let e = r
            .create_querycondition(StateMask::ANY, expression, vec![])
            .err()
            .expect("refused");
        let Error::BadFilter(f) = &e else {
            panic!("{e}")
        };
        assert_eq!((f.position, f.token.as_str()), (position, token), "{e}");
    }
}

/// `Reading` as a reader that learnt it at run time sees it.
fn dynamic_reading() -> halyard::xtypes::DynamicType {
    use halyard::cdr::TopicType;
    use halyard::xtypes::{TypeInformation, TypeObject, TypeRegistry};
    let d = Reading::type_description().expect("described");
    let info = TypeInformation::from_xcdr2(d.type_information).unwrap();
    let mut reg = TypeRegistry::new();
    for o in d.type_objects {
        reg.insert_object(TypeObject::from_xcdr2(o).unwrap())
            .unwrap();
    }
    reg.build(&info.complete.typeid_with_size.type_id).unwrap()
}

fn untyped_ids(samples: Vec<halyard::Sample<Vec<u8>>>) -> Vec<u32> {
    samples
        .into_iter()
        .filter_map(|s| s.data)
        .map(|d| halyard::cdr::deserialize::<Reading>(&d).unwrap().id)
        .collect()
}

#[test]
fn an_untyped_reader_filters_and_queries_with_its_dynamic_type() {
    let (a, b) = (participant(135), participant(135));
    let ta = a.create_topic::<Reading>("UntypedFiltered").unwrap();
    let ty = dynamic_reading();
    let tb = b
        .create_untyped_topic("UntypedFiltered", halyard::UntypedType::of::<Reading>())
        .unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, reliable(DataWriterQos::default()))
        .unwrap();
    let cft = b
        .create_untyped_contentfilteredtopic(
            "UntypedHigh",
            &tb,
            "level = High OR (at.x BETWEEN %0 AND %1 AND name LIKE 'sensor-_')",
            vec!["20".into(), "40".into()],
            &ty,
        )
        .unwrap();
    let sub = b.create_subscriber(SubscriberQos::default());
    let r = sub
        .create_untyped_datareader_filtered(&cft, reliable(DataReaderQos::default()), None)
        .unwrap();
    let plain = sub
        .create_untyped_datareader(&tb, reliable(DataReaderQos::default()), None)
        .unwrap();
    let q = plain
        .create_querycondition(
            StateMask::ANY,
            "value > %0 ORDER BY level, id",
            vec!["6".into()],
            &ty,
        )
        .unwrap();
    w.wait_for_matched(2, T).unwrap();
    for id in 0..12 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(untyped_ids(r.take(100).unwrap()), vec![2, 3, 4, 5, 8, 11]);
    // value = 1.5 id > 6: ids 5 to 11, by level (Low 6, 9; Mid 7, 10; High 5, 8, 11).
    assert_eq!(
        untyped_ids(plain.read_w_condition(100, q.read_condition()).unwrap()),
        vec![6, 9, 7, 10, 5, 8, 11]
    );
    cft.set_expression_parameters(vec!["90".into(), "100".into()])
        .unwrap();
    for id in 0..12 {
        w.write(&reading(id)).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(untyped_ids(r.take(100).unwrap()), vec![2, 5, 8, 9, 11]);
    let e = b
        .create_untyped_contentfilteredtopic("Bad", &tb, "at.z = 1", vec![], &ty)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("no member z"), "{e}");
}

#[test]
fn an_untyped_writer_with_a_type_description_filters_for_a_filtered_reader() {
    let (a, b) = (participant(136), participant(136));
    let ta = a
        .create_untyped_topic("UntypedWriter", halyard::UntypedType::of::<Reading>())
        .unwrap();
    let tb = b.create_topic::<Reading>("UntypedWriter").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_untyped_datawriter(&ta, reliable(DataWriterQos::default()), None)
        .unwrap();
    let cft = b
        .create_contentfilteredtopic("UntypedHigh", &tb, "level = High", vec![])
        .unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader_filtered(&cft, reliable(DataReaderQos::default()), None)
        .unwrap();
    w.wait_for_matched(1, T).unwrap();
    for id in 0..12 {
        let mut buf = Vec::new();
        halyard::cdr::serialize(
            &reading(id),
            halyard::cdr::DataRepresentation::Xcdr1,
            &mut buf,
        )
        .unwrap();
        w.write(&buf).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(ids(r.take(100).unwrap()), vec![2, 5, 8, 11]);
    // The writer decoded its samples with the type's description and sent only those.
    let filtered_out = w.stats().unwrap().filtered_out;
    assert!(filtered_out >= 8, "{filtered_out}");
    assert_eq!(r.stats().unwrap().filtered_samples, 0);
}
