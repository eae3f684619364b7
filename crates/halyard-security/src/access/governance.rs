//! The governance document (DDS Security 1.1 §9.4.1.2) and the security info masks derived
//! from it.
//!
//! Masks are computed as Cyclone DDS 0.10 computes them (`access_control.c`:
//! `domain_rule_to_participant_attributes`, `get_sec_attributes`; `ddsi_security_omg.c`:
//! `ddsi_omg_get_participant_security_info`, `ddsi_omg_get_endpoint_security_info`), so the
//! PID_PARTICIPANT_SECURITY_INFO (0x1005) and PID_ENDPOINT_SECURITY_INFO (0x1004) values we
//! send equal Cyclone's for the same governance. Cyclone's matching compares them.

use roxmltree::Node;

use super::xml::{self, bool_child, elements, is, required};
use super::{smime, AccessError, BasicProtectionKind, DomainSet, ProtectionKind};

/// Bits of the security info masks (§7.4.1.5, §9.4.2.4/9.4.2.5; values from Cyclone's
/// `dds_security_api_defs.h`).
pub mod mask {
    /// ParticipantSecurityAttributesMask: RTPS messages protected.
    pub const PARTICIPANT_IS_RTPS_PROTECTED: u32 = 1;
    /// ParticipantSecurityAttributesMask: secure discovery protected.
    pub const PARTICIPANT_IS_DISCOVERY_PROTECTED: u32 = 1 << 1;
    /// ParticipantSecurityAttributesMask: secure liveliness protected.
    pub const PARTICIPANT_IS_LIVELINESS_PROTECTED: u32 = 1 << 2;
    /// Every mask: the mask is valid.
    pub const IS_VALID: u32 = 1 << 31;
    /// PluginParticipantSecurityAttributesMask: RTPS encrypted.
    pub const PLUGIN_PARTICIPANT_IS_RTPS_ENCRYPTED: u32 = 1;
    /// PluginParticipantSecurityAttributesMask: discovery encrypted.
    pub const PLUGIN_PARTICIPANT_IS_DISCOVERY_ENCRYPTED: u32 = 1 << 1;
    /// PluginParticipantSecurityAttributesMask: liveliness encrypted.
    pub const PLUGIN_PARTICIPANT_IS_LIVELINESS_ENCRYPTED: u32 = 1 << 2;
    /// PluginParticipantSecurityAttributesMask: RTPS origin-authenticated.
    pub const PLUGIN_PARTICIPANT_IS_RTPS_AUTHENTICATED: u32 = 1 << 3;
    /// PluginParticipantSecurityAttributesMask: discovery origin-authenticated.
    pub const PLUGIN_PARTICIPANT_IS_DISCOVERY_AUTHENTICATED: u32 = 1 << 4;
    /// PluginParticipantSecurityAttributesMask: liveliness origin-authenticated.
    pub const PLUGIN_PARTICIPANT_IS_LIVELINESS_AUTHENTICATED: u32 = 1 << 5;
    /// EndpointSecurityAttributesMask: read access controlled.
    pub const ENDPOINT_IS_READ_PROTECTED: u32 = 1;
    /// EndpointSecurityAttributesMask: write access controlled.
    pub const ENDPOINT_IS_WRITE_PROTECTED: u32 = 1 << 1;
    /// EndpointSecurityAttributesMask: discovered over secure discovery.
    pub const ENDPOINT_IS_DISCOVERY_PROTECTED: u32 = 1 << 2;
    /// EndpointSecurityAttributesMask: submessages protected.
    pub const ENDPOINT_IS_SUBMESSAGE_PROTECTED: u32 = 1 << 3;
    /// EndpointSecurityAttributesMask: payload protected.
    pub const ENDPOINT_IS_PAYLOAD_PROTECTED: u32 = 1 << 4;
    /// EndpointSecurityAttributesMask: key protected.
    pub const ENDPOINT_IS_KEY_PROTECTED: u32 = 1 << 5;
    /// EndpointSecurityAttributesMask: liveliness protected.
    pub const ENDPOINT_IS_LIVELINESS_PROTECTED: u32 = 1 << 6;
    /// PluginEndpointSecurityAttributesMask: submessages encrypted.
    pub const PLUGIN_ENDPOINT_IS_SUBMESSAGE_ENCRYPTED: u32 = 1;
    /// PluginEndpointSecurityAttributesMask: payload encrypted.
    pub const PLUGIN_ENDPOINT_IS_PAYLOAD_ENCRYPTED: u32 = 1 << 1;
    /// PluginEndpointSecurityAttributesMask: submessages origin-authenticated.
    pub const PLUGIN_ENDPOINT_IS_SUBMESSAGE_ORIGIN_AUTHENTICATED: u32 = 1 << 2;
}

/// A verified governance document: its domain rules in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Governance {
    /// `<domain_rule>`s in document order; the first one naming a domain governs it.
    pub domain_rules: Vec<DomainRule>,
}

/// One `<domain_rule>` (§9.4.1.2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainRule {
    /// The domains it governs.
    pub domains: DomainSet,
    /// Whether participants that fail (or skip) authentication may still match.
    pub allow_unauthenticated_participants: bool,
    /// Whether a participant must be allowed by its permissions to join.
    pub enable_join_access_control: bool,
    /// Protection of the secure builtin discovery endpoints.
    pub discovery_protection_kind: ProtectionKind,
    /// Protection of the secure builtin liveliness endpoints.
    pub liveliness_protection_kind: ProtectionKind,
    /// Protection of whole RTPS messages.
    pub rtps_protection_kind: ProtectionKind,
    /// `<topic_rule>`s in document order; the first matching one governs a topic.
    pub topic_rules: Vec<TopicRule>,
}

/// One `<topic_rule>` (§9.4.1.2.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicRule {
    /// fnmatch expression over topic names.
    pub topic_expression: String,
    /// Whether the topic's endpoints are announced over secure discovery.
    pub enable_discovery_protection: bool,
    /// Whether the topic's liveliness goes over the secure liveliness endpoint.
    pub enable_liveliness_protection: bool,
    /// Whether readers need a subscribe grant.
    pub enable_read_access_control: bool,
    /// Whether writers need a publish grant.
    pub enable_write_access_control: bool,
    /// Protection of the topic's submessages.
    pub metadata_protection_kind: ProtectionKind,
    /// Protection of the topic's serialized data.
    pub data_protection_kind: BasicProtectionKind,
}

/// ParticipantSecurityInfo (PID 0x1005, §7.4.1.6): the two masks a participant announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParticipantSecurityInfo {
    /// ParticipantSecurityAttributesMask.
    pub participant_security_attributes: u32,
    /// PluginParticipantSecurityAttributesMask.
    pub plugin_participant_security_attributes: u32,
}

/// EndpointSecurityInfo (PID 0x1004, §7.4.1.5): the two masks an endpoint announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointSecurityInfo {
    /// EndpointSecurityAttributesMask.
    pub endpoint_security_attributes: u32,
    /// PluginEndpointSecurityAttributesMask.
    pub plugin_endpoint_security_attributes: u32,
}

impl ParticipantSecurityInfo {
    /// The parameter value: both masks as 32-bit integers in the message's byte order.
    pub fn to_bytes(self, little_endian: bool) -> [u8; 8] {
        two_u32(
            self.participant_security_attributes,
            self.plugin_participant_security_attributes,
            little_endian,
        )
    }
}

impl EndpointSecurityInfo {
    /// The parameter value: both masks as 32-bit integers in the message's byte order.
    pub fn to_bytes(self, little_endian: bool) -> [u8; 8] {
        two_u32(
            self.endpoint_security_attributes,
            self.plugin_endpoint_security_attributes,
            little_endian,
        )
    }
}

fn two_u32(a: u32, b: u32, little_endian: bool) -> [u8; 8] {
    let (a, b) = if little_endian {
        (a.to_le_bytes(), b.to_le_bytes())
    } else {
        (a.to_be_bytes(), b.to_be_bytes())
    };
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
}

/// The secure builtin topics whose endpoint masks come from the domain rule rather than a
/// topic rule (§7.4.7 / Cyclone's `get_sec_attributes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinSecureTopic {
    /// DCPSParticipantsSecure, DCPSPublicationsSecure, DCPSSubscriptionsSecure: discovery kind.
    Discovery,
    /// DCPSParticipantMessageSecure: liveliness kind.
    ParticipantMessage,
    /// DCPSParticipantVolatileMessageSecure: always submessage-encrypted.
    VolatileMessage,
    /// DCPSParticipantStatelessMessage and the unsecured builtins: only the valid bit.
    Unprotected,
}

impl Governance {
    /// Verifies a signed governance document against the permissions CA (PEM) and parses it.
    pub fn from_smime(doc: &[u8], permissions_ca_pem: &[u8]) -> Result<Self, AccessError> {
        Self::from_xml(&smime::verified_text(doc, permissions_ca_pem)?)
    }

    /// Parses governance XML that is already trusted (no signature check).
    pub fn from_xml(text: &str) -> Result<Self, AccessError> {
        let doc = xml::parse(text)?;
        let root = xml::dds_root(&doc)?;
        let rules = required(root, "domain_access_rules")?;
        let mut domain_rules = Vec::new();
        for node in elements(rules) {
            if !is(node, "domain_rule") {
                return Err(xml::unexpected(node, "domain_access_rules"));
            }
            domain_rules.push(DomainRule::parse(node)?);
        }
        Ok(Governance { domain_rules })
    }

    /// The rule governing `domain_id`: the first `<domain_rule>` naming it.
    pub fn domain_rule(&self, domain_id: u32) -> Option<&DomainRule> {
        self.domain_rules
            .iter()
            .find(|r| r.domains.contains(domain_id))
    }
}

impl DomainRule {
    fn parse(node: Node) -> Result<Self, AccessError> {
        let kind = |name: &str| -> Result<ProtectionKind, AccessError> {
            let n = required(node, name)?;
            ProtectionKind::parse(xml::text(n)).ok_or_else(|| {
                xml::error(n, format!("<{name}> must be NONE, SIGN, ENCRYPT, SIGN_WITH_ORIGIN_AUTHENTICATION or ENCRYPT_WITH_ORIGIN_AUTHENTICATION, not {:?}", xml::text(n)))
            })
        };
        let mut topic_rules = Vec::new();
        for t in elements(required(node, "topic_access_rules")?) {
            if !is(t, "topic_rule") {
                return Err(xml::unexpected(t, "topic_access_rules"));
            }
            topic_rules.push(TopicRule::parse(t)?);
        }
        Ok(DomainRule {
            domains: xml::domains(required(node, "domains")?)?,
            allow_unauthenticated_participants: bool_child(
                node,
                "allow_unauthenticated_participants",
            )?,
            enable_join_access_control: bool_child(node, "enable_join_access_control")?,
            discovery_protection_kind: kind("discovery_protection_kind")?,
            liveliness_protection_kind: kind("liveliness_protection_kind")?,
            rtps_protection_kind: kind("rtps_protection_kind")?,
            topic_rules,
        })
    }

    /// The rule for a user topic: the first `<topic_rule>` whose expression matches.
    pub fn topic_rule(&self, topic_name: &str) -> Option<&TopicRule> {
        self.topic_rules
            .iter()
            .find(|t| super::fnmatch(&t.topic_expression, topic_name))
    }

    /// ParticipantSecurityInfo for a participant in this domain (Cyclone's
    /// `domain_rule_to_participant_attributes` + `ddsi_omg_get_participant_security_info`).
    /// With everything ENCRYPT this is `0x80000007`, `0x80000007`.
    pub fn participant_security_info(&self) -> ParticipantSecurityInfo {
        use mask::*;
        let mut attrs = IS_VALID;
        let mut plugin = IS_VALID;
        let parts = [
            (
                self.rtps_protection_kind,
                PARTICIPANT_IS_RTPS_PROTECTED,
                PLUGIN_PARTICIPANT_IS_RTPS_ENCRYPTED,
                PLUGIN_PARTICIPANT_IS_RTPS_AUTHENTICATED,
            ),
            (
                self.discovery_protection_kind,
                PARTICIPANT_IS_DISCOVERY_PROTECTED,
                PLUGIN_PARTICIPANT_IS_DISCOVERY_ENCRYPTED,
                PLUGIN_PARTICIPANT_IS_DISCOVERY_AUTHENTICATED,
            ),
            (
                self.liveliness_protection_kind,
                PARTICIPANT_IS_LIVELINESS_PROTECTED,
                PLUGIN_PARTICIPANT_IS_LIVELINESS_ENCRYPTED,
                PLUGIN_PARTICIPANT_IS_LIVELINESS_AUTHENTICATED,
            ),
        ];
        for (kind, protected, encrypted, authenticated) in parts {
            if kind != ProtectionKind::None {
                attrs |= protected;
            }
            if kind.is_encrypted() {
                plugin |= encrypted;
            }
            if kind.is_origin_authenticated() {
                plugin |= authenticated;
            }
        }
        ParticipantSecurityInfo {
            participant_security_attributes: attrs,
            plugin_participant_security_attributes: plugin,
        }
    }

    /// EndpointSecurityInfo for the endpoints of a secure builtin topic in this domain.
    pub fn builtin_endpoint_security_info(
        &self,
        topic: BuiltinSecureTopic,
    ) -> EndpointSecurityInfo {
        use mask::*;
        let from_kind = |kind: ProtectionKind| {
            let mut attrs = IS_VALID;
            let mut plugin = IS_VALID;
            if kind != ProtectionKind::None {
                attrs |= ENDPOINT_IS_SUBMESSAGE_PROTECTED;
            }
            if kind.is_encrypted() {
                plugin |= PLUGIN_ENDPOINT_IS_SUBMESSAGE_ENCRYPTED;
            }
            if kind.is_origin_authenticated() {
                plugin |= PLUGIN_ENDPOINT_IS_SUBMESSAGE_ORIGIN_AUTHENTICATED;
            }
            (attrs, plugin)
        };
        let (attrs, plugin) = match topic {
            BuiltinSecureTopic::Discovery => from_kind(self.discovery_protection_kind),
            BuiltinSecureTopic::ParticipantMessage => from_kind(self.liveliness_protection_kind),
            BuiltinSecureTopic::VolatileMessage => (
                IS_VALID | ENDPOINT_IS_SUBMESSAGE_PROTECTED,
                IS_VALID | PLUGIN_ENDPOINT_IS_SUBMESSAGE_ENCRYPTED,
            ),
            BuiltinSecureTopic::Unprotected => (IS_VALID, IS_VALID),
        };
        EndpointSecurityInfo {
            endpoint_security_attributes: attrs,
            plugin_endpoint_security_attributes: plugin,
        }
    }
}

impl TopicRule {
    fn parse(node: Node) -> Result<Self, AccessError> {
        let meta = required(node, "metadata_protection_kind")?;
        let data = required(node, "data_protection_kind")?;
        Ok(TopicRule {
            topic_expression: xml::text(required(node, "topic_expression")?).to_string(),
            enable_discovery_protection: bool_child(node, "enable_discovery_protection")?,
            enable_liveliness_protection: bool_child(node, "enable_liveliness_protection")?,
            enable_read_access_control: bool_child(node, "enable_read_access_control")?,
            enable_write_access_control: bool_child(node, "enable_write_access_control")?,
            metadata_protection_kind: ProtectionKind::parse(xml::text(meta)).ok_or_else(|| {
                xml::error(meta, format!("<metadata_protection_kind> must be NONE, SIGN, ENCRYPT, SIGN_WITH_ORIGIN_AUTHENTICATION or ENCRYPT_WITH_ORIGIN_AUTHENTICATION, not {:?}", xml::text(meta)))
            })?,
            data_protection_kind: BasicProtectionKind::parse(xml::text(data)).ok_or_else(|| {
                xml::error(data, format!("<data_protection_kind> must be NONE, SIGN or ENCRYPT, not {:?}", xml::text(data)))
            })?,
        })
    }

    /// EndpointSecurityInfo for a user endpoint of a topic this rule governs (Cyclone's
    /// `get_sec_attributes` + `ddsi_omg_get_endpoint_security_info`).
    pub fn endpoint_security_info(&self) -> EndpointSecurityInfo {
        use mask::*;
        let mut attrs = IS_VALID;
        let flags = [
            (self.enable_read_access_control, ENDPOINT_IS_READ_PROTECTED),
            (
                self.enable_write_access_control,
                ENDPOINT_IS_WRITE_PROTECTED,
            ),
            (
                self.enable_discovery_protection,
                ENDPOINT_IS_DISCOVERY_PROTECTED,
            ),
            (
                self.enable_liveliness_protection,
                ENDPOINT_IS_LIVELINESS_PROTECTED,
            ),
            (
                self.metadata_protection_kind != ProtectionKind::None,
                ENDPOINT_IS_SUBMESSAGE_PROTECTED,
            ),
            (
                self.data_protection_kind != BasicProtectionKind::None,
                ENDPOINT_IS_PAYLOAD_PROTECTED,
            ),
            (
                self.data_protection_kind == BasicProtectionKind::Encrypt,
                ENDPOINT_IS_KEY_PROTECTED,
            ),
        ];
        for (on, bit) in flags {
            if on {
                attrs |= bit;
            }
        }
        let mut plugin = IS_VALID;
        if self.metadata_protection_kind.is_encrypted() {
            plugin |= PLUGIN_ENDPOINT_IS_SUBMESSAGE_ENCRYPTED;
        }
        if self.data_protection_kind == BasicProtectionKind::Encrypt {
            plugin |= PLUGIN_ENDPOINT_IS_PAYLOAD_ENCRYPTED;
        }
        if self.metadata_protection_kind.is_origin_authenticated() {
            plugin |= PLUGIN_ENDPOINT_IS_SUBMESSAGE_ORIGIN_AUTHENTICATED;
        }
        EndpointSecurityInfo {
            endpoint_security_attributes: attrs,
            plugin_endpoint_security_attributes: plugin,
        }
    }
}
