//! `halyard-cti community init`: everything a sharing community needs, in one command — the
//! identity and permissions CAs, one DDS Security identity per organisation, the signed
//! governance that protects each TLP level's topic, each organisation's signed permissions
//! (the partitions of its sectors, nothing else), and a node configuration per organisation.
//!
//! Protection by marking (the governance's topic rules, first match wins):
//!
//! | topic         | marking        | metadata (submessage)                  | payload  |
//! |---------------|----------------|----------------------------------------|----------|
//! | `CtiTlpClear` | TLP:CLEAR      | SIGN                                   | NONE     |
//! | `CtiTlpGreen` | TLP:GREEN      | SIGN                                   | NONE     |
//! | `CtiTlpAmber` | TLP:AMBER      | SIGN                                   | ENCRYPT  |
//! | `CtiTlpRed`   | TLP:RED        | SIGN_WITH_ORIGIN_AUTHENTICATION        | ENCRYPT  |
//! | anything else |                | ENCRYPT                                | ENCRYPT  |
//!
//! Discovery and liveliness are encrypted for every topic, so an outsider learns neither the
//! members nor their endpoints; join, read and write access control are on. SIGN on the
//! metadata is a MAC over the whole submessage, payload included: integrity for every level.
//! The work on certificates and signatures is `halyard_security::setup`'s, the same as
//! `halyard security init`.

use crate::dds::topic_name;
use halyard_security::random::OsRandom;
use halyard_security::setup::{self, AllowSpec, InitOptions, KeyKind, Protection};
use halyard_stix::marking::Tlp;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One organisation of the community.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Its name (DDS Security identity, node `organisation`).
    pub org: String,
    /// Its sectors.
    pub sectors: Vec<String>,
}

/// What `community init` makes.
#[derive(Clone, Debug)]
pub struct CommunityOptions {
    /// The organisations.
    pub members: Vec<Member>,
    /// The DDS domain.
    pub domain: u32,
    /// The first node's HTTP port; the others follow (0: every node picks a free port).
    pub base_port: u16,
    /// Validity of certificates and grants, in days.
    pub days: u32,
    /// Replace an existing community in the directory.
    pub force: bool,
}

/// The governance document of a community (see the module's table).
pub fn governance_xml(domain: u32) -> String {
    let mut rules = String::new();
    for tlp in crate::dds::SHARED_TLPS {
        let Some(topic) = topic_name(tlp) else {
            continue;
        };
        let (metadata, data) = match tlp {
            Tlp::Clear | Tlp::Green => ("SIGN", "NONE"),
            Tlp::Amber => ("SIGN", "ENCRYPT"),
            _ => ("SIGN_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT"),
        };
        let _ = write!(rules, "{}", topic_rule(topic, metadata, data));
    }
    rules.push_str(&topic_rule("*", "ENCRYPT", "ENCRYPT"));
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains>
        <id>{domain}</id>
      </domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>NONE</rtps_protection_kind>
      <topic_access_rules>
{rules}      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"#
    )
}

fn topic_rule(topic: &str, metadata: &str, data: &str) -> String {
    format!(
        "        <topic_rule>
          <topic_expression>{topic}</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>{metadata}</metadata_protection_kind>
          <data_protection_kind>{data}</data_protection_kind>
        </topic_rule>
"
    )
}

/// The node configuration written for a member (paths relative to `DIR/<org>/`).
pub fn node_toml(m: &Member, domain: u32, port: u16) -> String {
    let sectors: Vec<String> = m.sectors.iter().map(|s| format!("{s:?}")).collect();
    format!(
        r#"# The sharing node of {org}, made by `halyard-cti community init`.
# Run it with: halyard-cti serve --config <this file>
sectors = [{sectors}]

[node]
organisation = "{org}"
domain = {domain}
# cti.sqlite (objects, review queue, audit log, accounts) and durability.sqlite
store = "data"
# The DDS Security identity of {org} (certificate, key, signed permissions).
security = "../security/{org}"

[listen]
http = "127.0.0.1:{port}"

[sharing]
# Sectors each marking is shared with (default: all of the node's for CLEAR, GREEN and
# AMBER; RED only where named; AMBER+STRICT never leaves the organisation).
red = []

[sanitize]
internal_domains = ["{org}.example"]
internal_networks = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fd00::/8"]

[review]
# Objects at or above this marking, of these types, or changed by the sanitiser wait for a
# second person's approval.
min_tlp = "amber"
types = ["sighting", "observed-data"]
on_sanitized = true
"#,
        org = m.org,
        sectors = sectors.join(", "),
    )
}

/// Creates the community in `dir`: `dir/security/` (CAs, governance, one identity per
/// organisation) and `dir/<org>/node.toml`. Returns each member's configuration file.
pub fn init(dir: &Path, opts: &CommunityOptions) -> Result<Vec<PathBuf>, String> {
    if opts.members.is_empty() {
        return Err("no organisation: name at least one with --org NAME --sector S".into());
    }
    let mut names = std::collections::BTreeSet::new();
    for m in &opts.members {
        setup::check_name(&m.org).map_err(|e| format!("--org {}: {e}", m.org))?;
        if !names.insert(m.org.as_str()) {
            return Err(format!("--org {} is named twice", m.org));
        }
        if m.sectors.is_empty() {
            return Err(format!("--org {}: no --sector follows it", m.org));
        }
        for s in &m.sectors {
            crate::config::check_sector_name(s)?;
        }
    }
    if opts.domain > 232 {
        return Err(format!("--domain {}: at most 232", opts.domain));
    }
    let sec = dir.join("security");
    let mut allows = Vec::new();
    for m in &opts.members {
        for s in &m.sectors {
            allows.push(AllowSpec {
                participant: m.org.clone(),
                publish: true,
                subscribe: true,
                topic: "CtiTlp*".into(),
                partition: Some(s.clone()),
            });
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let init = InitOptions {
        participants: opts.members.iter().map(|m| m.org.clone()).collect(),
        protection: Protection {
            encrypt: true,
            origin_auth: false,
            none: false,
        },
        key: KeyKind::EcP256,
        days: opts.days,
        domains: vec![opts.domain],
        allows: Some(allows),
        force: opts.force,
        now,
    };
    setup::init(&sec, &init, &mut OsRandom).map_err(|e| e.to_string())?;
    std::fs::write(sec.join("governance.xml"), governance_xml(opts.domain))
        .map_err(|e| format!("{}: {e}", sec.join("governance.xml").display()))?;
    setup::resign(&sec, None).map_err(|e| e.to_string())?;
    let mut configs = Vec::new();
    for (i, m) in opts.members.iter().enumerate() {
        let odir = dir.join(&m.org);
        std::fs::create_dir_all(&odir).map_err(|e| format!("{}: {e}", odir.display()))?;
        let port = match opts.base_port {
            0 => 0,
            p => p.saturating_add(i as u16),
        };
        let path = odir.join("node.toml");
        if path.exists() && !opts.force {
            return Err(format!(
                "{} exists (use --force to replace it)",
                path.display()
            ));
        }
        std::fs::write(&path, node_toml(m, opts.domain, port))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        configs.push(path);
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_governance_protects_each_marking_as_the_table_says() {
        let g = governance_xml(7);
        assert!(g.contains("<id>7</id>"));
        let rule = |topic: &str| {
            let start = g.find(&format!("<topic_expression>{topic}<")).unwrap();
            g[start..start + 700].to_string()
        };
        assert!(rule("CtiTlpClear").contains("<data_protection_kind>NONE<"));
        assert!(rule("CtiTlpGreen").contains("<metadata_protection_kind>SIGN<"));
        assert!(rule("CtiTlpAmber").contains("<data_protection_kind>ENCRYPT<"));
        assert!(rule("CtiTlpRed")
            .contains("<metadata_protection_kind>SIGN_WITH_ORIGIN_AUTHENTICATION<"));
        // The catch-all comes last: the first matching rule applies.
        assert!(g.rfind("<topic_expression>*<").unwrap() > g.find("CtiTlpRed").unwrap());
    }

    #[test]
    fn a_member_config_parses_and_names_its_identity() {
        let m = Member {
            org: "acme".into(),
            sectors: vec!["finance".into(), "energy".into()],
        };
        let text = node_toml(&m, 3, 8441);
        let c = crate::config::Config::parse(&text, Path::new("/c/acme")).unwrap();
        assert_eq!(
            c.node.security,
            Some(PathBuf::from("/c/acme/../security/acme"))
        );
        assert_eq!(c.sectors, vec!["finance", "energy"]);
        assert!(c.sectors_for(Tlp::Red).is_empty());
        assert_eq!(c.listen.http.port(), 8441);
    }
}
