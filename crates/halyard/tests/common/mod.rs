//! Helpers shared by the DCPS tests: a participant on loopback, reliable KEEP_ALL QoS, and
//! fake peers (crafted RTPS participants and endpoints: SPDP and SEDP DATA from a vendor id
//! that is not Halyard's, sent from plain UDP sockets).
#![allow(dead_code)]

use halyard::qos::{DataReaderQos, DataWriterQos};
use halyard_wire::discovery::{builtin_endpoint as be, EndpointData, ParticipantData};
use halyard_wire::param::{pid, ParameterList, ParameterListWriter};
use halyard_wire::qos::EndpointQos;
use halyard_wire::{
    Data, EntityId, Guid, GuidPrefix, Header, Locator, MessageBuilder, ProtocolVersion,
    SequenceNumber, VendorId,
};

/// A vendor id that is not Halyard's, as an attacker or an unknown implementation would send.
pub const FAKE_VENDOR: VendorId = VendorId([0x01, 0xfe]);

/// Every SEDP builtin endpoint.
pub const FULL_BUILTIN: u32 = be::PARTICIPANT_ANNOUNCER
    | be::PARTICIPANT_DETECTOR
    | be::PUBLICATIONS_ANNOUNCER
    | be::PUBLICATIONS_DETECTOR
    | be::SUBSCRIPTIONS_ANNOUNCER
    | be::SUBSCRIPTIONS_DETECTOR;

pub fn header(prefix: GuidPrefix) -> Header {
    Header {
        version: ProtocolVersion::V2_5,
        vendor: FAKE_VENDOR,
        guid_prefix: prefix,
    }
}

/// A GUID prefix no real participant uses: `tag` tells the tests apart.
pub fn fake_prefix(tag: u8, i: u32) -> GuidPrefix {
    let mut p = [0u8; 12];
    p[0..3].copy_from_slice(&[0xfa, 0xce, tag]);
    p[4..8].copy_from_slice(&i.to_be_bytes());
    p[8..12].copy_from_slice(&std::process::id().to_be_bytes());
    GuidPrefix(p)
}

pub fn key_hash_qos(g: Guid) -> Vec<u8> {
    let mut qos = Vec::new();
    let mut w = ParameterListWriter::new(&mut qos);
    w.raw(pid::KEY_HASH, &g.to_bytes());
    w.finish();
    qos
}

/// Appends a DATA from `ids.1` to `ids.0` (inline QoS as little-endian bytes).
pub fn push_data(
    mb: &mut MessageBuilder,
    ids: (EntityId, EntityId),
    sn: i64,
    qos: Option<&[u8]>,
    payload: &[u8],
) {
    mb.data(&Data {
        reader_id: ids.0,
        writer_id: ids.1,
        writer_sn: SequenceNumber(sn),
        inline_qos: qos.map(|q| ParameterList::new(q, true)),
        payload: Some(payload),
        key_flag: false,
        non_standard_flag: false,
    });
}

/// One SPDP DATA announcing participant `prefix` (valid ParticipantData, 100 s lease) whose
/// metatraffic and default unicast locators are `locators`.
pub fn spdp_datagram(
    domain: u32,
    prefix: GuidPrefix,
    locators: &[Locator],
    builtin: u32,
) -> Vec<u8> {
    let guid = Guid::new(prefix, EntityId::PARTICIPANT);
    let pd = ParticipantData {
        guid,
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: FAKE_VENDOR,
        domain_id: Some(domain),
        domain_tag: String::new(),
        expects_inline_qos: false,
        metatraffic_unicast: locators.to_vec(),
        metatraffic_multicast: Vec::new(),
        default_unicast: locators.to_vec(),
        default_multicast: Vec::new(),
        builtin_endpoints: builtin,
        lease_duration: halyard_wire::Duration::from_nanos(100_000_000_000),
        manual_liveliness_count: 0,
        user_data: Vec::new(),
        entity_name: None,
        identity_token: None,
        permissions_token: None,
        security_info: None,
        properties: Vec::new(),
    };
    let mut payload = Vec::new();
    pd.emit(&mut payload);
    let mut mb = MessageBuilder::new(Vec::new(), &header(prefix));
    push_data(
        &mut mb,
        (EntityId::UNKNOWN, EntityId::SPDP_WRITER),
        1,
        Some(&key_hash_qos(guid)),
        &payload,
    );
    mb.finish()
}

/// The SEDP announcement (publication or subscription, by `guid`'s kind) of endpoint `guid`.
pub fn endpoint_data(guid: Guid, topic: &str, type_name: &str, qos: EndpointQos) -> Vec<u8> {
    let ed = EndpointData {
        guid,
        participant_guid: Some(Guid::new(guid.prefix, EntityId::PARTICIPANT)),
        topic_name: topic.to_string(),
        type_name: type_name.to_string(),
        qos,
        unicast_locators: Vec::new(),
        multicast_locators: Vec::new(),
        expects_inline_qos: false,
        protocol_version: Some(ProtocolVersion::V2_5),
        vendor_id: Some(FAKE_VENDOR),
        type_max_size_serialized: None,
        entity_name: None,
        content_filter: None,
        group_entity: None,
        security_info: None,
        type_information: None,
    };
    let mut payload = Vec::new();
    ed.emit(&mut payload);
    payload
}

/// SEDP DATAs of `items` (endpoint GUID and announcement) with sequence numbers `first_sn..`,
/// packed `per_datagram` to a message, from `prefix`'s SEDP publications writer (writers in
/// `items`) or subscriptions writer (readers).
pub fn sedp_datagrams(
    prefix: GuidPrefix,
    first_sn: i64,
    items: &[(Guid, Vec<u8>)],
    per_datagram: usize,
) -> Vec<Vec<u8>> {
    items
        .chunks(per_datagram)
        .enumerate()
        .map(|(c, chunk)| {
            let mut mb = MessageBuilder::new(Vec::new(), &header(prefix));
            for (i, (g, payload)) in chunk.iter().enumerate() {
                let ids = if g.entity.is_writer() {
                    (
                        EntityId::SEDP_PUBLICATIONS_READER,
                        EntityId::SEDP_PUBLICATIONS_WRITER,
                    )
                } else {
                    (
                        EntityId::SEDP_SUBSCRIPTIONS_READER,
                        EntityId::SEDP_SUBSCRIPTIONS_WRITER,
                    )
                };
                let sn = first_sn + (c * per_datagram + i) as i64;
                push_data(&mut mb, ids, sn, Some(&key_hash_qos(*g)), payload);
            }
            mb.finish()
        })
        .collect()
}

/// A participant in `domain` on the loopback interface.
pub fn loopback_participant(domain: u32) -> halyard::DomainParticipant {
    halyard::DomainParticipant::with_options(
        domain,
        halyard::ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
    )
    .expect("participant on lo")
}

/// The builder methods a writer's and a reader's QoS share, so that one helper serves both.
pub trait EndpointQosBuilder: Sized {
    /// RELIABLE.
    fn reliable(self) -> Self;
    /// BEST_EFFORT.
    fn best_effort(self) -> Self;
    /// KEEP_ALL.
    fn keep_all(self) -> Self;
    /// KEEP_LAST `depth`.
    fn keep_last(self, depth: u32) -> Self;
    /// DURABILITY.
    fn durability(self, kind: halyard::qos::Durability) -> Self;
}

macro_rules! endpoint_qos_builder {
    ($($t:ty),*) => {$(
        impl EndpointQosBuilder for $t {
            fn reliable(self) -> Self {
                <$t>::reliable(self)
            }
            fn best_effort(self) -> Self {
                <$t>::best_effort(self)
            }
            fn keep_all(self) -> Self {
                <$t>::keep_all(self)
            }
            fn keep_last(self, depth: u32) -> Self {
                <$t>::keep_last(self, depth)
            }
            fn durability(self, kind: halyard::qos::Durability) -> Self {
                <$t>::durability(self, kind)
            }
        }
    )*};
}

endpoint_qos_builder!(DataWriterQos, DataReaderQos);

/// `q` made RELIABLE and KEEP_ALL.
pub fn reliable_keep_all<Q: EndpointQosBuilder>(q: Q) -> Q {
    q.reliable().keep_all()
}
