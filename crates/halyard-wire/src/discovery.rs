//! SPDP and SEDP discovery data (RTPS 2.5 §8.5.3, §9.6.2): parse from and emit to PL_CDR.
//!
//! QoS parameters are handled in `discovery/qos_codec.rs`.
//! Serialized payloads here include the 4-byte encapsulation header (PL_CDR_LE = 00 03 00 00
//! when emitting; PL_CDR_BE and PL_CDR_LE accepted when parsing). Unknown parameters are
//! skipped; unknown must-understand parameters reject the whole sample (RTPS 2.5 §9.6.2.2.1);
//! vendor-specific parameters (0x8000 bit) are skipped unless understood.

use crate::error::WireError;
use crate::param::{pid, ParameterList, ParameterListWriter, ValueReader};
use crate::qos::EndpointQos;
use crate::types::*;

mod content_filter;
mod qos_codec;

pub use content_filter::{
    ContentFilterProperty, DDSSQL, MAX_EXPRESSION_PARAMETERS, MAX_FILTER_NAME_LEN,
};

/// Checks the PL_CDR encapsulation header and returns the parameter list behind it.
fn open_pl(payload: &[u8]) -> Result<ParameterList<'_>, WireError> {
    let (Some(h), Some(body)) = (payload.get(..4), payload.get(4..)) else {
        return Err(WireError::Truncated);
    };
    match u16::from_be_bytes([h[0], h[1]]) {
        0x0002 => Ok(ParameterList::new(body, false)),
        0x0003 => Ok(ParameterList::new(body, true)),
        other => Err(WireError::BadEncapsulation(other)),
    }
}

/// Rejects an unknown parameter that is must-understand and not vendor-specific.
fn check_unknown(id: u16) -> Result<(), WireError> {
    if id & pid::MUST_UNDERSTAND_FLAG != 0 && id & pid::VENDOR_SPECIFIC_FLAG == 0 {
        return Err(WireError::MustUnderstand(id));
    }
    Ok(())
}

/// Appends a locator unless the list already holds [`MAX_LOCATORS`].
fn push_locator(list: &mut Vec<Locator>, r: &mut ValueReader<'_>) -> Result<(), WireError> {
    let l = r.locator()?;
    if list.len() < MAX_LOCATORS {
        list.push(l);
    }
    Ok(())
}

/// PID_PROTOCOL_VERSION: major, minor (then padding).
fn read_version(r: &mut ValueReader<'_>) -> Result<ProtocolVersion, WireError> {
    let b = r.bytes(2)?;
    Ok(ProtocolVersion { major: b[0], minor: b[1] })
}

/// PID_VENDORID: two bytes (then padding).
fn read_vendor(r: &mut ValueReader<'_>) -> Result<VendorId, WireError> {
    let b = r.bytes(2)?;
    Ok(VendorId([b[0], b[1]]))
}

/// One-byte boolean (then padding).
fn read_bool(r: &mut ValueReader<'_>) -> Result<bool, WireError> {
    Ok(r.bytes(1)?[0] != 0)
}

/// Starts a PL_CDR_LE payload in `buf`.
fn start_pl(buf: &mut Vec<u8>) -> ParameterListWriter<'_> {
    buf.extend_from_slice(&[0x00, 0x03, 0x00, 0x00]);
    ParameterListWriter::new(buf)
}

/// Writes PROTOCOL_VERSION and VENDORID.
fn emit_version_vendor(w: &mut ParameterListWriter<'_>, v: ProtocolVersion, vendor: VendorId) {
    w.raw(pid::PROTOCOL_VERSION, &[v.major, v.minor]);
    w.raw(pid::VENDORID, &vendor.0);
}

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
    // DDS Security 1.1 §7.4.7.1: the secure builtin endpoints.
    pub const SECURE_PUBLICATION_WRITER: u32 = 1 << 16;
    pub const SECURE_PUBLICATION_READER: u32 = 1 << 17;
    pub const SECURE_SUBSCRIPTION_WRITER: u32 = 1 << 18;
    pub const SECURE_SUBSCRIPTION_READER: u32 = 1 << 19;
    pub const SECURE_PARTICIPANT_MESSAGE_WRITER: u32 = 1 << 20;
    pub const SECURE_PARTICIPANT_MESSAGE_READER: u32 = 1 << 21;
    pub const PARTICIPANT_STATELESS_MESSAGE_WRITER: u32 = 1 << 22;
    pub const PARTICIPANT_STATELESS_MESSAGE_READER: u32 = 1 << 23;
    pub const PARTICIPANT_VOLATILE_MESSAGE_SECURE_WRITER: u32 = 1 << 24;
    pub const PARTICIPANT_VOLATILE_MESSAGE_SECURE_READER: u32 = 1 << 25;
    pub const SPDP_RELIABLE_PARTICIPANT_SECURE_WRITER: u32 = 1 << 26;
    pub const SPDP_RELIABLE_PARTICIPANT_SECURE_READER: u32 = 1 << 27;
    pub const TOPICS_ANNOUNCER: u32 = 1 << 28;
    pub const TOPICS_DETECTOR: u32 = 1 << 29;
}

/// A DDS Security token (IdentityToken, PermissionsToken, IdentityStatusToken) as carried in
/// a discovery parameter: the DataHolder's CDR bytes, decoded by the security plugins.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct EncodedToken {
    /// Whether `cdr` is little-endian (the parameter list's endianness).
    pub little_endian: bool,
    /// The parameter value: a CDR-encoded DataHolder (possibly followed by padding).
    pub cdr: Vec<u8>,
}

/// PID_PARTICIPANT_SECURITY_INFO / PID_ENDPOINT_SECURITY_INFO (DDS Security 1.1 §7.4.1.5,
/// §7.4.1.6): the security attribute masks, the first in the specification's meaning, the
/// second in the builtin plugins'.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct SecurityInfo {
    /// security_attributes (bit 31 = valid).
    pub attributes: u32,
    /// plugin_security_attributes (bit 31 = valid).
    pub plugin_attributes: u32,
}

fn read_security_info(r: &mut ValueReader<'_>) -> Result<SecurityInfo, WireError> {
    Ok(SecurityInfo { attributes: r.u32()?, plugin_attributes: r.u32()? })
}

fn emit_security_info(w: &mut ParameterListWriter<'_>, id: u16, info: SecurityInfo) {
    w.with(id, |b| {
        b.extend_from_slice(&info.attributes.to_le_bytes());
        b.extend_from_slice(&info.plugin_attributes.to_le_bytes());
    });
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
    /// PID_IDENTITY_TOKEN (DDS Security), if sent. `emit` writes a token only when it is
    /// little-endian (our parameter lists are); a received big-endian one is not re-sent.
    pub identity_token: Option<EncodedToken>,
    /// PID_PERMISSIONS_TOKEN (DDS Security), if sent.
    pub permissions_token: Option<EncodedToken>,
    /// PID_PARTICIPANT_SECURITY_INFO (DDS Security), if sent.
    pub security_info: Option<SecurityInfo>,
    /// PID_PROPERTY_LIST's (name, value) pairs, at most [`MAX_PROPERTIES`] (binary properties
    /// are not kept). Cyclone DDS announces where a participant runs with `__Hostname`,
    /// `__Pid` and `__ProcessName` (its `ddsi_protocol.h`); so does Halyard.
    pub properties: Vec<(String, String)>,
}

/// Maximum properties kept from one participant announcement (more are ignored).
pub const MAX_PROPERTIES: usize = 32;

/// Maximum locators of each kind kept from one discovery sample (more are ignored).
pub const MAX_LOCATORS: usize = 16;
/// Maximum partition names kept from one discovery sample (more reject the sample).
pub const MAX_PARTITIONS: usize = 64;

impl ParticipantData {
    /// Defaults for everything but the GUID: version 2.5 (when PID_PROTOCOL_VERSION is
    /// absent), unknown vendor, 100 s lease, no locators.
    fn with_guid(guid: Guid) -> ParticipantData {
        ParticipantData {
            guid,
            protocol_version: ProtocolVersion::V2_5,
            vendor_id: VendorId::UNKNOWN,
            domain_id: None,
            domain_tag: String::new(),
            expects_inline_qos: false,
            metatraffic_unicast: Vec::new(),
            metatraffic_multicast: Vec::new(),
            default_unicast: Vec::new(),
            default_multicast: Vec::new(),
            builtin_endpoints: 0,
            lease_duration: Duration { seconds: 100, fraction: 0 },
            manual_liveliness_count: 0,
            user_data: Vec::new(),
            entity_name: None,
            identity_token: None,
            permissions_token: None,
            security_info: None,
            properties: Vec::new(),
        }
    }
    /// Applies one (non-vendor-specific) parameter.
    fn apply(&mut self, id: u16, r: &mut ValueReader<'_>) -> Result<(), WireError> {
        match id {
            pid::PARTICIPANT_GUID => self.guid = r.guid()?,
            pid::PROTOCOL_VERSION => self.protocol_version = read_version(r)?,
            pid::VENDORID => self.vendor_id = read_vendor(r)?,
            pid::DOMAIN_ID => self.domain_id = Some(r.u32()?),
            pid::DOMAIN_TAG => self.domain_tag = r.string()?.to_owned(),
            pid::EXPECTS_INLINE_QOS => self.expects_inline_qos = read_bool(r)?,
            pid::METATRAFFIC_UNICAST_LOCATOR => push_locator(&mut self.metatraffic_unicast, r)?,
            pid::METATRAFFIC_MULTICAST_LOCATOR => push_locator(&mut self.metatraffic_multicast, r)?,
            pid::DEFAULT_UNICAST_LOCATOR => push_locator(&mut self.default_unicast, r)?,
            pid::DEFAULT_MULTICAST_LOCATOR => push_locator(&mut self.default_multicast, r)?,
            pid::BUILTIN_ENDPOINT_SET => self.builtin_endpoints = r.u32()?,
            pid::PARTICIPANT_LEASE_DURATION => self.lease_duration = r.duration()?,
            pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT => self.manual_liveliness_count = r.i32()?,
            pid::USER_DATA => self.user_data = r.octets()?.to_vec(),
            pid::ENTITY_NAME => self.entity_name = Some(r.string()?.to_owned()),
            pid::IDENTITY_TOKEN => self.identity_token = Some(read_token(r)),
            pid::PERMISSIONS_TOKEN => self.permissions_token = Some(read_token(r)),
            pid::PARTICIPANT_SECURITY_INFO => self.security_info = Some(read_security_info(r)?),
            pid::PROPERTY_LIST => self.properties = read_properties(r)?,
            other => check_unknown(other)?,
        }
        Ok(())
    }
    /// Parses a serialized payload (with encapsulation header).
    pub fn parse(payload: &[u8]) -> Result<ParticipantData, WireError> {
        let pl = open_pl(payload)?;
        let mut d = ParticipantData::with_guid(Guid::default());
        let mut have_guid = false;
        for p in pl.iter() {
            let p = p?;
            if p.id & pid::VENDOR_SPECIFIC_FLAG != 0 {
                continue;
            }
            have_guid |= p.id == pid::PARTICIPANT_GUID;
            d.apply(p.id, &mut ValueReader::new(p.value, pl.little_endian))?;
        }
        if !have_guid {
            return Err(WireError::MissingParameter(pid::PARTICIPANT_GUID));
        }
        Ok(d)
    }
    /// Appends the serialized payload (PL_CDR_LE encapsulation header, parameters, sentinel).
    pub fn emit(&self, buf: &mut Vec<u8>) {
        let mut w = start_pl(buf);
        emit_version_vendor(&mut w, self.protocol_version, self.vendor_id);
        w.guid(pid::PARTICIPANT_GUID, self.guid);
        if let Some(id) = self.domain_id {
            w.u32(pid::DOMAIN_ID, id);
        }
        if !self.domain_tag.is_empty() {
            w.string(pid::DOMAIN_TAG, &self.domain_tag);
        }
        if self.expects_inline_qos {
            w.raw(pid::EXPECTS_INLINE_QOS, &[1]);
        }
        let lists = [
            (pid::METATRAFFIC_UNICAST_LOCATOR, &self.metatraffic_unicast),
            (pid::METATRAFFIC_MULTICAST_LOCATOR, &self.metatraffic_multicast),
            (pid::DEFAULT_UNICAST_LOCATOR, &self.default_unicast),
            (pid::DEFAULT_MULTICAST_LOCATOR, &self.default_multicast),
        ];
        for (id, list) in lists {
            list.iter().for_each(|l| w.locator(id, l));
        }
        w.u32(pid::BUILTIN_ENDPOINT_SET, self.builtin_endpoints);
        w.duration(pid::PARTICIPANT_LEASE_DURATION, self.lease_duration);
        w.u32(pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT, self.manual_liveliness_count as u32);
        if !self.user_data.is_empty() {
            w.octets(pid::USER_DATA, &self.user_data);
        }
        if let Some(name) = &self.entity_name {
            w.string(pid::ENTITY_NAME, name);
        }
        for (id, token) in [
            (pid::IDENTITY_TOKEN, &self.identity_token),
            (pid::PERMISSIONS_TOKEN, &self.permissions_token),
        ] {
            if let Some(t) = token.as_ref().filter(|t| t.little_endian) {
                w.raw(id, &t.cdr);
            }
        }
        if let Some(info) = self.security_info {
            emit_security_info(&mut w, pid::PARTICIPANT_SECURITY_INFO, info);
        }
        if !self.properties.is_empty() {
            w.with(pid::PROPERTY_LIST, |b| emit_properties(b, &self.properties));
        }
        w.finish();
    }
}

/// PID_PROPERTY_LIST (DDS Security 1.1 §7.4.1.3 PropertyQosPolicy on the wire): a
/// `sequence<Property_t { string name; string value; }>` then, optionally, a sequence of
/// binary properties, which is not read. At most [`MAX_PROPERTIES`] are kept.
fn read_properties(r: &mut ValueReader<'_>) -> Result<Vec<(String, String)>, WireError> {
    let n = r.u32()? as usize;
    let mut out = Vec::with_capacity(n.min(MAX_PROPERTIES));
    for _ in 0..n.min(MAX_PROPERTIES) {
        let name = r.string()?.to_owned();
        let value = r.string()?.to_owned();
        out.push((name, value));
    }
    Ok(out)
}

/// Writes `properties` as a PID_PROPERTY_LIST value (no binary properties).
fn emit_properties(b: &mut Vec<u8>, properties: &[(String, String)]) {
    let start = b.len();
    b.extend_from_slice(&(properties.len() as u32).to_le_bytes());
    for (name, value) in properties {
        crate::param::put_string(b, start, name);
        crate::param::put_string(b, start, value);
    }
    crate::param::pad4(b, start);
    b.extend_from_slice(&0u32.to_le_bytes());
}

/// A token parameter's value, kept whole for the security plugins.
fn read_token(r: &mut ValueReader<'_>) -> EncodedToken {
    EncodedToken { little_endian: r.little_endian(), cdr: r.rest().to_vec() }
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
    /// PID_CONTENT_FILTER_PROPERTY (readers of a content-filtered topic), if sent.
    pub content_filter: Option<ContentFilterProperty>,
    /// PID_GROUP_ENTITYID: the entity id of the endpoint's publisher or subscriber, if sent
    /// (PRESENTATION at GROUP scope needs to know which writers share a publisher).
    pub group_entity: Option<EntityId>,
    /// PID_ENDPOINT_SECURITY_INFO (DDS Security), if sent.
    pub security_info: Option<SecurityInfo>,
}

impl EndpointData {
    /// Defaults for an endpoint with this GUID (QoS defaults of its kind).
    fn with_guid(guid: Guid) -> EndpointData {
        let qos = if guid.entity.is_writer() {
            EndpointQos::writer_default()
        } else {
            EndpointQos::reader_default()
        };
        EndpointData {
            guid,
            participant_guid: None,
            topic_name: String::new(),
            type_name: String::new(),
            qos,
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            expects_inline_qos: false,
            protocol_version: None,
            vendor_id: None,
            type_max_size_serialized: None,
            entity_name: None,
            content_filter: None,
            group_entity: None,
            security_info: None,
        }
    }
    /// Applies one (non-vendor-specific) parameter, QoS included.
    fn apply(&mut self, id: u16, r: &mut ValueReader<'_>) -> Result<(), WireError> {
        match id {
            pid::ENDPOINT_GUID => self.guid = r.guid()?,
            pid::PARTICIPANT_GUID => self.participant_guid = Some(r.guid()?),
            pid::TOPIC_NAME => self.topic_name = r.string()?.to_owned(),
            pid::TYPE_NAME => self.type_name = r.string()?.to_owned(),
            pid::UNICAST_LOCATOR => push_locator(&mut self.unicast_locators, r)?,
            pid::MULTICAST_LOCATOR => push_locator(&mut self.multicast_locators, r)?,
            pid::EXPECTS_INLINE_QOS => self.expects_inline_qos = read_bool(r)?,
            pid::PROTOCOL_VERSION => self.protocol_version = Some(read_version(r)?),
            pid::VENDORID => self.vendor_id = Some(read_vendor(r)?),
            pid::TYPE_MAX_SIZE_SERIALIZED => self.type_max_size_serialized = Some(r.u32()?),
            pid::ENTITY_NAME => self.entity_name = Some(r.string()?.to_owned()),
            pid::GROUP_ENTITYID => self.group_entity = Some(r.entity_id()?),
            pid::ENDPOINT_SECURITY_INFO => self.security_info = Some(read_security_info(r)?),
            pid::CONTENT_FILTER_PROPERTY => {
                self.content_filter = Some(ContentFilterProperty::parse(r)?)
            }
            other => {
                if !qos_codec::parse(&mut self.qos, other, r)? {
                    check_unknown(other)?
                }
            }
        }
        Ok(())
    }
    /// Parses a serialized payload (with encapsulation header).
    pub fn parse(payload: &[u8]) -> Result<EndpointData, WireError> {
        let pl = open_pl(payload)?;
        let guid =
            pl.find(pid::ENDPOINT_GUID)?.ok_or(WireError::MissingParameter(pid::ENDPOINT_GUID))?;
        let guid = ValueReader::new(guid.value, pl.little_endian).guid()?;
        let mut d = EndpointData::with_guid(guid);
        let (mut have_topic, mut have_type) = (false, false);
        for p in pl.iter() {
            let p = p?;
            if p.id & pid::VENDOR_SPECIFIC_FLAG != 0 {
                continue;
            }
            have_topic |= p.id == pid::TOPIC_NAME;
            have_type |= p.id == pid::TYPE_NAME;
            d.apply(p.id, &mut ValueReader::new(p.value, pl.little_endian))?;
        }
        if !have_topic {
            return Err(WireError::MissingParameter(pid::TOPIC_NAME));
        }
        if !have_type {
            return Err(WireError::MissingParameter(pid::TYPE_NAME));
        }
        Ok(d)
    }
    /// Appends the serialized payload. QoS policies equal to the default for the endpoint
    /// kind may be omitted, except RELIABILITY, DURABILITY, HISTORY and PARTITION (non-empty),
    /// which are always sent (peers differ in their defaults).
    pub fn emit(&self, buf: &mut Vec<u8>) {
        let mut w = start_pl(buf);
        if let (Some(v), Some(vendor)) = (self.protocol_version, self.vendor_id) {
            emit_version_vendor(&mut w, v, vendor);
        } else {
            self.protocol_version
                .iter()
                .for_each(|v| w.raw(pid::PROTOCOL_VERSION, &[v.major, v.minor]));
            self.vendor_id.iter().for_each(|v| w.raw(pid::VENDORID, &v.0));
        }
        w.guid(pid::ENDPOINT_GUID, self.guid);
        if let Some(g) = self.participant_guid {
            w.guid(pid::PARTICIPANT_GUID, g);
        }
        w.string(pid::TOPIC_NAME, &self.topic_name);
        w.string(pid::TYPE_NAME, &self.type_name);
        qos_codec::emit(&mut w, &self.qos, self.guid.entity.is_writer());
        self.unicast_locators.iter().for_each(|l| w.locator(pid::UNICAST_LOCATOR, l));
        self.multicast_locators.iter().for_each(|l| w.locator(pid::MULTICAST_LOCATOR, l));
        if self.expects_inline_qos {
            w.raw(pid::EXPECTS_INLINE_QOS, &[1]);
        }
        if let Some(n) = self.type_max_size_serialized {
            w.u32(pid::TYPE_MAX_SIZE_SERIALIZED, n);
        }
        if let Some(name) = &self.entity_name {
            w.string(pid::ENTITY_NAME, name);
        }
        if let Some(g) = self.group_entity {
            w.raw(pid::GROUP_ENTITYID, &g.0);
        }
        if let Some(info) = self.security_info {
            emit_security_info(&mut w, pid::ENDPOINT_SECURITY_INFO, info);
        }
        // A filter too long for one parameter is not announced (writers then send everything).
        if let Some(cf) = self.content_filter.as_ref().filter(|cf| cf.encoded_len() <= 0xfffc) {
            w.with(pid::CONTENT_FILTER_PROPERTY, |b| {
                let start = b.len();
                cf.emit(b, start)
            });
        }
        w.finish();
    }
}

/// Parses only the key of a disposed/unregistered discovery sample: a serialized key payload
/// (PL_CDR with PID_ENDPOINT_GUID or PID_PARTICIPANT_GUID) or, failing that, None.
///
/// A CDR_BE / CDR_LE payload (encapsulation 0x0000 / 0x0001) is read as a bare 16-byte GUID.
pub fn parse_key_guid(payload: &[u8]) -> Result<Option<Guid>, WireError> {
    let h = payload.get(..2).ok_or(WireError::Truncated)?;
    if let 0x0000 | 0x0001 = u16::from_be_bytes([h[0], h[1]]) {
        let mut g = [0u8; 16];
        g.copy_from_slice(payload.get(4..20).ok_or(WireError::Truncated)?);
        return Ok(Some(Guid::from_bytes(g)));
    }
    let pl = open_pl(payload)?;
    let p = match pl.find(pid::ENDPOINT_GUID)? {
        Some(p) => Some(p),
        None => pl.find(pid::PARTICIPANT_GUID)?,
    };
    p.map(|p| ValueReader::new(p.value, pl.little_endian).guid()).transpose()
}
