//! The governance and permissions XML that `halyard security init` writes (DDS Security 1.1
//! §9.4.1.2, §9.4.1.3), in the shapes Cyclone DDS 0.10 reads: every required element present,
//! domain ranges with an explicit `<max>`, dates `YYYY-MM-DDTHH:MM:SSZ`, subject names
//! `CN=<name>,O=Halyard`.

use std::fmt::Write;

use crate::access::{xml_date, ProtectionKind};

/// The largest domain id the documents' schema allows (`DomainId_t`, maxInclusive 230; Cyclone
/// DDS 0.10 refuses a document naming a larger one); "all domains" is `0..=230`.
pub const MAX_DOMAIN_ID: u32 = crate::access::MAX_DOMAIN_ID;

/// What one participant may do under `--allow NAME:pub|sub|pubsub:TOPIC[@PARTITION]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowSpec {
    /// The participant name.
    pub participant: String,
    /// May publish.
    pub publish: bool,
    /// May subscribe.
    pub subscribe: bool,
    /// fnmatch topic expression.
    pub topic: String,
    /// fnmatch partition expression; `None` means any partition (`*`).
    pub partition: Option<String>,
}

impl AllowSpec {
    /// Parses `NAME:pub|sub|pubsub:TOPIC_EXPR[@PARTITION_EXPR]`.
    pub fn parse(s: &str) -> Option<AllowSpec> {
        let mut it = s.splitn(3, ':');
        let (participant, what, rest) = (it.next()?, it.next()?, it.next()?);
        let (publish, subscribe) = match what {
            "pub" => (true, false),
            "sub" => (false, true),
            "pubsub" => (true, true),
            _ => return None,
        };
        let (topic, partition) = match rest.split_once('@') {
            Some((t, p)) => (t, Some(p.to_string())),
            None => (rest, None),
        };
        if participant.is_empty() || topic.is_empty() {
            return None;
        }
        Some(AllowSpec {
            participant: participant.to_string(),
            publish,
            subscribe,
            topic: topic.to_string(),
            partition,
        })
    }
}

/// How the governance protects the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protection {
    /// SIGN or ENCRYPT.
    pub encrypt: bool,
    /// Use the `*_WITH_ORIGIN_AUTHENTICATION` kinds for RTPS, discovery, liveliness and
    /// metadata (data protection has no such kind).
    pub origin_auth: bool,
    /// No cryptographic protection at all (every kind NONE, no secure discovery or liveliness
    /// endpoints): authentication and access control only. Overrides the two above.
    pub none: bool,
}

impl Protection {
    fn kind(self) -> ProtectionKind {
        if self.none {
            return ProtectionKind::None;
        }
        match (self.encrypt, self.origin_auth) {
            (true, false) => ProtectionKind::Encrypt,
            (true, true) => ProtectionKind::EncryptWithOriginAuthentication,
            (false, false) => ProtectionKind::Sign,
            (false, true) => ProtectionKind::SignWithOriginAuthentication,
        }
    }
}

fn domains_xml(domains: &[u32], indent: &str) -> String {
    let mut s = format!("{indent}<domains>\n");
    if domains.is_empty() {
        let _ = writeln!(
            s,
            "{indent}  <id_range><min>0</min><max>{MAX_DOMAIN_ID}</max></id_range>"
        );
    }
    for d in domains {
        let _ = writeln!(s, "{indent}  <id>{d}</id>");
    }
    let _ = writeln!(s, "{indent}</domains>");
    s
}

/// The governance document: one domain rule for `domains` (empty: all) with join access
/// control, and one topic rule `*` with read and write access control, all protected by
/// `protection`.
pub fn governance_xml(domains: &[u32], protection: Protection) -> String {
    let k = protection.kind().as_str();
    let data = match (protection.none, protection.encrypt) {
        (true, _) => "NONE",
        (false, true) => "ENCRYPT",
        (false, false) => "SIGN",
    };
    // Secure discovery and liveliness endpoints only where something is protected.
    let secure_endpoints = !protection.none;
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
{domains}      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>{k}</discovery_protection_kind>
      <liveliness_protection_kind>{k}</liveliness_protection_kind>
      <rtps_protection_kind>{k}</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>{secure_endpoints}</enable_discovery_protection>
          <enable_liveliness_protection>{secure_endpoints}</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>{k}</metadata_protection_kind>
          <data_protection_kind>{data}</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"#,
        domains = domains_xml(domains, "      ")
    )
}

/// Escapes text for XML element content.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The permissions document for one participant: a grant for `subject` valid over
/// `[not_before, not_after]`; with `allows == None` one allow rule for every topic and
/// partition, otherwise one allow rule per [`AllowSpec`] of this participant; default DENY.
pub fn permissions_xml(
    name: &str,
    subject: &str,
    not_before: i64,
    not_after: i64,
    domains: &[u32],
    allows: Option<&[AllowSpec]>,
) -> String {
    let mut rules = String::new();
    let all = [AllowSpec {
        participant: name.to_string(),
        publish: true,
        subscribe: true,
        topic: "*".into(),
        partition: None,
    }];
    let mine = allows
        .unwrap_or(&all)
        .iter()
        .filter(|a| a.participant == name);
    for a in mine {
        let _ = writeln!(rules, "      <allow_rule>");
        rules.push_str(&domains_xml(domains, "        "));
        let part = escape(a.partition.as_deref().unwrap_or("*"));
        let topic = escape(&a.topic);
        for (on, tag) in [(a.publish, "publish"), (a.subscribe, "subscribe")] {
            if on {
                let _ = writeln!(rules, "        <{tag}>\n          <topics><topic>{topic}</topic></topics>\n          <partitions><partition>{part}</partition></partitions>\n        </{tag}>");
            }
        }
        let _ = writeln!(rules, "      </allow_rule>");
    }
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="{name}">
      <subject_name>{subject}</subject_name>
      <validity>
        <not_before>{nb}</not_before>
        <not_after>{na}</not_after>
      </validity>
{rules}      <default>DENY</default>
    </grant>
  </permissions>
</dds>
"#,
        name = escape(name),
        subject = escape(subject),
        nb = xml_date(not_before),
        na = xml_date(not_after),
    )
}
