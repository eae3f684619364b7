//! `#[topic(type_description = "...")]` makes a derived type announce its XTypes description.

use halyard_cdr::{Topic, TopicType, TypeDescription};

static POINT_TYPE: TypeDescription = TypeDescription {
    type_information: &[1, 2, 3],
    type_objects: &[&[4, 5], &[6]],
};

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "M::Point", type_description = "POINT_TYPE")]
struct Point {
    #[key]
    id: i32,
    x: f64,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
struct Plain {
    v: u32,
}

#[test]
fn a_type_with_a_description_announces_exactly_it_and_others_announce_none() {
    let d = Point::type_description().expect("Point has a description");
    assert!(std::ptr::eq(d, &POINT_TYPE));
    assert_eq!(d.type_information, &[1, 2, 3]);
    assert_eq!(d.type_objects.len(), 2);
    assert!(Plain::type_description().is_none());
}
