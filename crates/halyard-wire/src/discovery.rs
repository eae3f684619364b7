//! SPDP and SEDP discovery data (RTPS 2.5 §8.5.3, §9.6.2): parse from and emit to PL_CDR.
//!
//! TO BE IMPLEMENTED by the wire helper; signatures are the contract.
//! Serialized payloads here include the 4-byte encapsulation header (PL_CDR_LE = 00 03 00 00
//! when emitting; PL_CDR_BE and PL_CDR_LE accepted when parsing). Unknown parameters are
//! skipped; unknown must-understand parameters reject the whole sample (RTPS 2.5 §9.6.2.2.1);
//! vendor-specific parameters (0x8000 bit) are skipped unless understood.

use crate::error::WireError;
use crate::qos::EndpointQos;
use crate::types::*;

/// Builtin endpoint set bits (RTPS 2.5 §8.5.3.2, Table 9.?).
#[allow(missing_docs)]
pub mod builtin_endpoint {
    pub const PARTICIPANT_ANNOUNCER: u32 = 1 << 0;
    pub const PARTICIPANT_DETECTOR: u32 = 1 << 1;
    pub const PUBLICATIONS_ANNOUNCER: u32 = 1 << 2;
    pub const PUBLICATIONS_DETECTOR: u32 = 1 << 3;
    pub const SUBSCRIPTIONS_ANNOUNCER: u32 = 1 << 4;
    pub const SUBSCRIPTIONS_DETECTOR: u32 = 1 << 5;
    pub const PARTICIPANT_MESSAGE_DATA_WRITER: u32 = 1 << 10;
    pub const PARTICIPANT_MESSAGE_DATA_READER: u32 = 1 << 11;
    pub const TOPICS_ANNOUNCER: u32 = 1 << 28;
    pub const TOPICS_DETECTOR: u32 = 1 << 29;
}

/// SPDPdiscoveredParticipantData (RTPS 2.5 §8.5.3.2 + DDS ParticipantBuiltinTopicData).
#[derive(Clone, PartialEq, Debug)]
pub struct ParticipantData {
    /// Participant GUID (PID_PARTICIPANT_GUID; entity part ENTITYID_PARTICIPANT).
    pub guid: Guid,
    /// PID_PROTOCOL_VERSION
    pub protocol_version: ProtocolVersion,
    /// PID_VENDORID
    pub vendor_id: VendorId,
    /// PID_DOMAIN_ID, if sent.
    pub domain_id: Option<u32>,
    /// PID_DOMAIN_TAG ("" if absent).
    pub domain_tag: String,
    /// PID_EXPECTS_INLINE_QOS (default false).
    pub expects_inline_qos: bool,
    /// PID_METATRAFFIC_UNICAST_LOCATOR (all of them).
    pub metatraffic_unicast: Vec<Locator>,
    /// PID_METATRAFFIC_MULTICAST_LOCATOR
    pub metatraffic_multicast: Vec<Locator>,
    /// PID_DEFAULT_UNICAST_LOCATOR
    pub default_unicast: Vec<Locator>,
    /// PID_DEFAULT_MULTICAST_LOCATOR
    pub default_multicast: Vec<Locator>,
    /// PID_BUILTIN_ENDPOINT_SET
    pub builtin_endpoints: u32,
    /// PID_PARTICIPANT_LEASE_DURATION (default 100 s).
    pub lease_duration: Duration,
    /// PID_PARTICIPANT_MANUAL_LIVELINESS_COUNT (default 0).
    pub manual_liveliness_count: i32,
    /// PID_USER_DATA
    pub user_data: Vec<u8>,
    /// PID_ENTITY_NAME, if sent.
    pub entity_name: Option<String>,
}

/// Maximum locators of each kind kept from one discovery sample (more are ignored).
pub const MAX_LOCATORS: usize = 16;
/// Maximum partition names kept from one discovery sample (more reject the sample).
pub const MAX_PARTITIONS: usize = 64;

impl ParticipantData {
    /// Parses a serialized payload (with encapsulation header).
    pub fn parse(payload: &[u8]) -> Result<ParticipantData, WireError> {
        todo!()
    }
    /// Appends the serialized payload (PL_CDR_LE encapsulation header, parameters, sentinel).
    pub fn emit(&self, buf: &mut Vec<u8>) {
        todo!()
    }
}

/// DiscoveredWriterData / DiscoveredReaderData (RTPS 2.5 §8.5.4.2, §9.6.2.2).
#[derive(Clone, PartialEq, Debug)]
pub struct EndpointData {
    /// PID_ENDPOINT_GUID (required).
    pub guid: Guid,
    /// PID_PARTICIPANT_GUID, if sent (otherwise derive from `guid.prefix`).
    pub participant_guid: Option<Guid>,
    /// PID_TOPIC_NAME (required).
    pub topic_name: String,
    /// PID_TYPE_NAME (required).
    pub type_name: String,
    /// QoS; absent policies get the defaults of the endpoint kind (writer or reader),
    /// which `parse` takes from `guid.entity.is_writer()`.
    pub qos: EndpointQos,
    /// PID_UNICAST_LOCATOR
    pub unicast_locators: Vec<Locator>,
    /// PID_MULTICAST_LOCATOR
    pub multicast_locators: Vec<Locator>,
    /// PID_EXPECTS_INLINE_QOS (readers).
    pub expects_inline_qos: bool,
    /// PID_PROTOCOL_VERSION, if sent.
    pub protocol_version: Option<ProtocolVersion>,
    /// PID_VENDORID, if sent.
    pub vendor_id: Option<VendorId>,
    /// PID_TYPE_MAX_SIZE_SERIALIZED, if sent.
    pub type_max_size_serialized: Option<u32>,
    /// PID_ENTITY_NAME, if sent.
    pub entity_name: Option<String>,
}

impl EndpointData {
    /// Parses a serialized payload (with encapsulation header).
    pub fn parse(payload: &[u8]) -> Result<EndpointData, WireError> {
        todo!()
    }
    /// Appends the serialized payload. QoS policies equal to the default for the endpoint
    /// kind may be omitted, except RELIABILITY, DURABILITY, HISTORY and PARTITION (non-empty),
    /// which are always sent (peers differ in their defaults).
    pub fn emit(&self, buf: &mut Vec<u8>) {
        todo!()
    }
}

/// Parses only the key of a disposed/unregistered discovery sample: a serialized key payload
/// (PL_CDR with PID_ENDPOINT_GUID or PID_PARTICIPANT_GUID) or, failing that, None.
pub fn parse_key_guid(payload: &[u8]) -> Result<Option<Guid>, WireError> {
    todo!()
}
