//! "DDS:Access:Permissions" (DDS Security 1.1 §9.4): the governance and permissions documents.
//!
//! Both documents arrive as S/MIME signed by the permissions CA ([`smime`]). The governance
//! ([`Governance`], §9.4.1.2) says, per domain, how the domain is protected (join control,
//! RTPS / discovery / liveliness protection) and, per topic expression, whether access is
//! controlled and how metadata and data are protected; it yields the ParticipantSecurityInfo
//! and EndpointSecurityInfo masks sent in discovery ([`ParticipantSecurityInfo`],
//! [`EndpointSecurityInfo`]). The permissions ([`Permissions`], §9.4.1.3) hold one grant per
//! subject: a validity window, ordered allow/deny rules over domains, topics and partitions,
//! and a default; [`Grant::check`] answers whether a publish or subscribe is allowed, and why.
//!
//! Where the spec leaves room, this follows Cyclone DDS 0.10 (the peer we must agree with):
//! element names compare case-insensitively; subject names match as unordered `name=value`
//! sets ([`subjects_match`]); the first rule that matches decides; an allow rule matches when
//! every partition of the endpoint is allowed, a deny rule when any one is denied; the empty
//! partition list means the default partition `""`; a criteria without `<partitions>` covers
//! only the default partition. Nothing here reads the clock: validity is checked against a time
//! passed in.

mod fnmatch;
mod governance;
mod permissions;
pub mod smime;
mod xml;

pub use fnmatch::fnmatch;
pub use governance::{
    mask, BuiltinSecureTopic, DomainRule, EndpointSecurityInfo, Governance,
    ParticipantSecurityInfo, TopicRule,
};
pub use permissions::{Action, Criteria, Decision, Grant, Permissions, Reason, Rule, RuleKind};

use openssl::nid::Nid;
use openssl::x509::{X509NameRef, X509Ref};
use std::fmt;

/// Why a governance or permissions document was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum AccessError {
    /// The document is plain XML, not S/MIME: it was never signed.
    Unsigned,
    /// The document is neither XML nor a readable S/MIME message.
    NotSmime(String),
    /// The document is signed, but not by the permissions CA (nor a certificate it issued).
    WrongSigner {
        /// Subject of the certificate that signed.
        signer: String,
        /// Subject of the permissions CA the document was checked against.
        ca: String,
    },
    /// Signed by the permissions CA, but the signature does not cover this content: the
    /// document changed after signing.
    BadSignature(String),
    /// The permissions CA certificate given could not be read.
    BadCaCertificate(String),
    /// The signed content is not UTF-8 text.
    NotUtf8,
    /// The XML is malformed or does not follow the schema, at this line and column (1-based).
    Xml {
        /// Line, from 1.
        line: u32,
        /// Column, from 1.
        column: u32,
        /// What is wrong there.
        message: String,
    },
    /// OpenSSL failed for a reason that is not about the document.
    Crypto(openssl::error::ErrorStack),
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessError::Unsigned => write!(f, "the document is not signed: it is plain XML where S/MIME signed by the permissions CA is required"),
            AccessError::NotSmime(why) => write!(f, "the document is not a signed S/MIME message: {why}"),
            AccessError::WrongSigner { signer, ca } => write!(f, "the document is signed by \"{signer}\", not by the permissions CA \"{ca}\""),
            AccessError::BadSignature(why) => write!(f, "the signature does not match the document: it was changed after signing ({why})"),
            AccessError::BadCaCertificate(why) => write!(f, "the permissions CA certificate cannot be read: {why}"),
            AccessError::NotUtf8 => write!(f, "the signed document is not UTF-8 text"),
            AccessError::Xml { line, column, message } => write!(f, "{line}:{column}: {message}"),
            AccessError::Crypto(e) => write!(f, "OpenSSL failed: {e}"),
        }
    }
}

impl std::error::Error for AccessError {}

/// The largest domain id a document may name (the schema's `DomainId_t` maximum; Cyclone DDS
/// 0.10's parser refuses larger ones, `access_control_parser.c`).
pub const MAX_DOMAIN_ID: u32 = 230;

/// A set of domain ids (§9.4.1.2.5.1 `<domains>`): single ids and inclusive ranges. A range
/// without `<max>` goes up to [`MAX_DOMAIN_ID`], one without `<min>` starts at 0 (the spec's reading; Cyclone
/// 0.10 takes a range without `<max>` as the single id `<min>`, so documents meant for both
/// should always give `<max>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainSet {
    /// Inclusive `(min, max)` ranges; a single id is `(id, id)`.
    pub ranges: Vec<(u32, u32)>,
}

impl DomainSet {
    /// Whether `domain_id` is in the set.
    pub fn contains(&self, domain_id: u32) -> bool {
        self.ranges
            .iter()
            .any(|&(lo, hi)| lo <= domain_id && domain_id <= hi)
    }
}

/// ProtectionKind (§9.4.1.2.5): how RTPS messages, discovery, liveliness or metadata are
/// protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectionKind {
    /// No protection.
    None,
    /// Authenticated (MAC), not encrypted.
    Sign,
    /// Encrypted and authenticated.
    Encrypt,
    /// Signed with a MAC per receiver as well.
    SignWithOriginAuthentication,
    /// Encrypted, with a MAC per receiver as well.
    EncryptWithOriginAuthentication,
}

impl ProtectionKind {
    /// The document spelling (`NONE`, `SIGN`, `ENCRYPT`, `SIGN_WITH_ORIGIN_AUTHENTICATION`,
    /// `ENCRYPT_WITH_ORIGIN_AUTHENTICATION`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProtectionKind::None => "NONE",
            ProtectionKind::Sign => "SIGN",
            ProtectionKind::Encrypt => "ENCRYPT",
            ProtectionKind::SignWithOriginAuthentication => "SIGN_WITH_ORIGIN_AUTHENTICATION",
            ProtectionKind::EncryptWithOriginAuthentication => "ENCRYPT_WITH_ORIGIN_AUTHENTICATION",
        }
    }

    /// Parses the document spelling (exact, as Cyclone compares it).
    pub fn parse(s: &str) -> Option<Self> {
        [
            ProtectionKind::None,
            ProtectionKind::Sign,
            ProtectionKind::Encrypt,
            ProtectionKind::SignWithOriginAuthentication,
            ProtectionKind::EncryptWithOriginAuthentication,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// Whether this kind encrypts.
    pub fn is_encrypted(self) -> bool {
        matches!(
            self,
            ProtectionKind::Encrypt | ProtectionKind::EncryptWithOriginAuthentication
        )
    }

    /// Whether this kind adds receiver-specific MACs.
    pub fn is_origin_authenticated(self) -> bool {
        matches!(
            self,
            ProtectionKind::SignWithOriginAuthentication
                | ProtectionKind::EncryptWithOriginAuthentication
        )
    }
}

/// BasicProtectionKind (§9.4.1.2.7.7): how serialized data is protected; no origin
/// authentication kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BasicProtectionKind {
    /// No protection.
    None,
    /// Authenticated, not encrypted.
    Sign,
    /// Encrypted and authenticated.
    Encrypt,
}

impl BasicProtectionKind {
    /// The document spelling (`NONE`, `SIGN`, `ENCRYPT`).
    pub fn as_str(self) -> &'static str {
        match self {
            BasicProtectionKind::None => "NONE",
            BasicProtectionKind::Sign => "SIGN",
            BasicProtectionKind::Encrypt => "ENCRYPT",
        }
    }

    /// Parses the document spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "NONE" => Some(BasicProtectionKind::None),
            "SIGN" => Some(BasicProtectionKind::Sign),
            "ENCRYPT" => Some(BasicProtectionKind::Encrypt),
            _ => None,
        }
    }
}

/// A distinguished name in the RFC 2253 form OpenSSL prints (`XN_FLAG_RFC2253`): the last
/// RDN first, `,` between them, short attribute names, `,+"\<>;` escaped with `\`. Cyclone
/// DDS 0.10's access control compares this form of the identity certificate's subject with
/// the permissions' `<subject_name>` (`access_control_utils.c`).
pub fn name_to_string(name: &X509NameRef) -> String {
    let mut parts = Vec::new();
    for entry in name.entries() {
        let nid = entry.object().nid();
        let key = match nid {
            Nid::UNDEF => entry.object().to_string(),
            _ => nid.short_name().unwrap_or("UNKNOWN").to_string(),
        };
        let value = entry
            .data()
            .to_string()
            .unwrap_or_else(|_| String::from_utf8_lossy(entry.data().as_slice()).into_owned());
        parts.push(format!("{key}={}", escape_rfc2253(&value)));
    }
    parts.reverse();
    parts.join(",")
}

fn escape_rfc2253(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let last = v.chars().count().saturating_sub(1);
    for (i, c) in v.chars().enumerate() {
        let edge = (i == 0 && (c == ' ' || c == '#')) || (i == last && c == ' ');
        if edge || matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The subject of an identity certificate, in the form [`subjects_match`] compares.
pub fn identity_subject(cert: &X509Ref) -> String {
    name_to_string(cert.subject_name())
}

/// Whether a permissions `<subject_name>` accepts an identity certificate's subject, as Cyclone
/// DDS 0.10 decides it (`ac_check_subjects_are_equal`): both are split into `name=value` parts
/// on `,` `/` `|`; every part of the identity subject must appear in the permissions subject
/// with the same value; order is free, comparison is exact (case- and space-sensitive), empty
/// parts in the permissions subject are skipped, and an identity part without `=` fails.
pub fn subjects_match(permissions_subject: &str, identity_subject: &str) -> bool {
    let mut granted = Vec::new();
    for part in permissions_subject.split([',', '/', '|']) {
        if part.is_empty() {
            continue;
        }
        match part.split_once('=') {
            Some(kv) if granted.len() < 20 => granted.push(kv),
            _ => return false,
        }
    }
    identity_subject.split([',', '/', '|']).all(|part| {
        part.split_once('=').is_some_and(|(name, value)| {
            granted
                .iter()
                .find(|(n, _)| *n == name)
                .is_some_and(|(_, v)| *v == value)
        })
    })
}

/// Formats Unix seconds as the document date form `YYYY-MM-DDTHH:MM:SSZ`.
pub fn xml_date(unix: i64) -> String {
    xml::format_date(unix)
}

/// Parses a document date (`YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]`) to Unix seconds.
pub fn parse_xml_date(text: &str) -> Option<i64> {
    xml::parse_date(text)
}

/// PermissionsToken class id (§9.4.2.1).
pub const PERMISSIONS_TOKEN_CLASS_ID: &str = "DDS:Access:Permissions:1.0";
/// PermissionsToken property: the permissions CA's subject name.
pub const PERM_CA_SN_PROPERTY: &str = "dds.perm_ca.sn";
/// PermissionsToken property: the permissions CA's key algorithm.
pub const PERM_CA_ALGO_PROPERTY: &str = "dds.perm_ca.algo";

/// The PermissionsToken's properties (§9.4.2.1) for a permissions CA: `dds.perm_ca.sn` (its
/// subject, RFC 2253) and `dds.perm_ca.algo` (`RSA-2048` or `EC-prime256v1`). Cyclone DDS
/// 0.10 sends the token with its class id only and ignores these (`get_permissions_token` in
/// `access_control.c`), so they are informative.
pub fn permissions_token_properties(ca: &X509Ref) -> Result<Vec<(String, String)>, AccessError> {
    let key = ca.public_key().map_err(AccessError::Crypto)?;
    let algo = match (key.rsa(), key.ec_key()) {
        (Ok(rsa), _) => format!("RSA-{}", rsa.size() * 8),
        (_, Ok(ec)) => {
            let curve = ec.group().curve_name().and_then(|n| n.short_name().ok());
            format!("EC-{}", curve.unwrap_or("unknown"))
        }
        _ => "unknown".to_string(),
    };
    Ok(vec![
        (
            PERM_CA_SN_PROPERTY.to_string(),
            name_to_string(ca.subject_name()),
        ),
        (PERM_CA_ALGO_PROPERTY.to_string(), algo),
    ])
}

#[cfg(test)]
mod tests;
