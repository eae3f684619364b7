//! The permissions document (DDS Security 1.1 §9.4.1.3): grants and their rules.
//!
//! Evaluation follows §9.4.1.3.2.3 as Cyclone DDS 0.10 implements it
//! (`is_readwrite_allowed_by_permissions` in `access_control.c`): outside the grant's validity
//! window everything is denied; otherwise the rules are tried in document order, skipping those
//! whose `<domains>` do not name the domain, and the first criteria of the asked action whose
//! topic expression matches and whose partitions match decides (allow or deny). For an allow
//! rule *every* partition of the endpoint must match one of the rule's partition expressions;
//! for a deny rule *one* is enough. An endpoint with no partition is in the default partition
//! `""`, and a criteria without `<partitions>` covers the default partition only. When no rule
//! decides, `<default>` does.

use roxmltree::Node;
use std::fmt;

use super::xml::{self, elements, is, required};
use super::{fnmatch, smime, subjects_match, AccessError, DomainSet};

/// A verified permissions document: its grants in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permissions {
    /// `<grant>`s in document order.
    pub grants: Vec<Grant>,
}

/// One `<grant>` (§9.4.1.3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The `name` attribute.
    pub name: String,
    /// `<subject_name>`, compared with [`subjects_match`].
    pub subject_name: String,
    /// `<validity><not_before>`, seconds since the Unix epoch.
    pub not_before: i64,
    /// `<validity><not_after>`, seconds since the Unix epoch.
    pub not_after: i64,
    /// `<allow_rule>` / `<deny_rule>` in document order.
    pub rules: Vec<Rule>,
    /// `<default>`: what happens when no rule decides.
    pub default: RuleKind,
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// `<allow_rule>` / `ALLOW`.
    Allow,
    /// `<deny_rule>` / `DENY`.
    Deny,
}

/// One `<allow_rule>` or `<deny_rule>` (§9.4.1.3.2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Allow or deny.
    pub kind: RuleKind,
    /// The domains it applies to.
    pub domains: DomainSet,
    /// Its `<publish>` and `<subscribe>` criteria, in document order.
    pub criteria: Vec<Criteria>,
    /// The line of the rule in the document, for explanations.
    pub line: u32,
}

/// What an endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A DataWriter (`<publish>`).
    Publish,
    /// A DataReader (`<subscribe>`).
    Subscribe,
}

/// One `<publish>` or `<subscribe>` criteria.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criteria {
    /// Which endpoints it is about.
    pub action: Action,
    /// fnmatch expressions over topic names.
    pub topics: Vec<String>,
    /// fnmatch expressions over partition names; `[""]` when the document gives none.
    pub partitions: Vec<String>,
    /// `<data_tags>` as (name, value) pairs. Parsed, not yet enforced (Cyclone 0.10 ignores
    /// them too).
    pub data_tags: Vec<(String, String)>,
}

/// The answer of [`Grant::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed, for this reason.
    Allow(Reason),
    /// Denied, for this reason.
    Deny(Reason),
}

/// What decided a [`Decision`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// A rule matched: its kind, its position among the grant's rules (from 1), its line.
    Rule {
        /// Allow or deny rule.
        kind: RuleKind,
        /// Position among the grant's rules, from 1.
        index: usize,
        /// Line in the document.
        line: u32,
    },
    /// No rule matched; the grant's `<default>` decided.
    Default(RuleKind),
    /// The grant's validity has not started (`not_before`, Unix seconds).
    NotYetValid(i64),
    /// The grant's validity has ended (`not_after`, Unix seconds).
    Expired(i64),
}

impl Decision {
    /// Whether access is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }

    /// Why.
    pub fn reason(&self) -> &Reason {
        match self {
            Decision::Allow(r) | Decision::Deny(r) => r,
        }
    }
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuleKind::Allow => "ALLOW",
            RuleKind::Deny => "DENY",
        })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Rule {
                kind: RuleKind::Allow,
                index,
                line,
            } => write!(f, "allow_rule #{index} (line {line}) matches"),
            Reason::Rule {
                kind: RuleKind::Deny,
                index,
                line,
            } => write!(f, "deny_rule #{index} (line {line}) matches"),
            Reason::Default(kind) => write!(f, "no rule matches, default {kind}"),
            Reason::NotYetValid(t) => write!(
                f,
                "grant not yet valid (valid from {})",
                xml::format_date(*t)
            ),
            Reason::Expired(t) => write!(f, "grant expired (valid until {})", xml::format_date(*t)),
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Allow(r) => write!(f, "allowed: {r}"),
            Decision::Deny(r) => write!(f, "denied: {r}"),
        }
    }
}

impl Permissions {
    /// Verifies a signed permissions document against the permissions CA (PEM) and parses it.
    pub fn from_smime(doc: &[u8], permissions_ca_pem: &[u8]) -> Result<Self, AccessError> {
        Self::from_xml(&smime::verified_text(doc, permissions_ca_pem)?)
    }

    /// Parses permissions XML that is already trusted (no signature check).
    pub fn from_xml(text: &str) -> Result<Self, AccessError> {
        let doc = xml::parse(text)?;
        let root = xml::dds_root(&doc)?;
        let mut grants = Vec::new();
        for node in elements(required(root, "permissions")?) {
            if !is(node, "grant") {
                return Err(xml::unexpected(node, "permissions"));
            }
            grants.push(Grant::parse(node)?);
        }
        Ok(Permissions { grants })
    }

    /// The grant for an identity: the first whose `<subject_name>` accepts `identity_subject`
    /// (see [`subjects_match`]; pass [`super::identity_subject`] of the certificate).
    pub fn grant_for(&self, identity_subject: &str) -> Option<&Grant> {
        self.grants
            .iter()
            .find(|g| subjects_match(&g.subject_name, identity_subject))
    }
}

impl Grant {
    fn parse(node: Node) -> Result<Self, AccessError> {
        let validity = required(node, "validity")?;
        let default = required(node, "default")?;
        let mut rules = Vec::new();
        for child in elements(node) {
            let kind = if is(child, "allow_rule") {
                RuleKind::Allow
            } else if is(child, "deny_rule") {
                RuleKind::Deny
            } else if ["subject_name", "validity", "default"]
                .iter()
                .any(|n| is(child, n))
            {
                continue;
            } else {
                return Err(xml::unexpected(child, "grant"));
            };
            rules.push(Rule::parse(child, kind)?);
        }
        Ok(Grant {
            name: node.attribute("name").unwrap_or("").to_string(),
            subject_name: xml::text(required(node, "subject_name")?).to_string(),
            not_before: xml::date(required(validity, "not_before")?)?,
            not_after: xml::date(required(validity, "not_after")?)?,
            rules,
            default: match xml::text(default) {
                "ALLOW" => RuleKind::Allow,
                "DENY" => RuleKind::Deny,
                t => {
                    return Err(xml::error(
                        default,
                        format!("<default> must be ALLOW or DENY, not {t:?}"),
                    ))
                }
            },
        })
    }

    /// Whether the grant is valid at `now` (Unix seconds); Cyclone refuses at the boundaries.
    pub fn validity_at(&self, now: i64) -> Result<(), Reason> {
        if now <= self.not_before {
            Err(Reason::NotYetValid(self.not_before))
        } else if now >= self.not_after {
            Err(Reason::Expired(self.not_after))
        } else {
            Ok(())
        }
    }

    /// Whether an endpoint of this identity may `action` on `topic` in `partitions` (empty:
    /// the default partition) in `domain_id` at `now` (Unix seconds), and which rule decided.
    pub fn check(
        &self,
        domain_id: u32,
        action: Action,
        topic: &str,
        partitions: &[&str],
        now: i64,
    ) -> Decision {
        if let Err(reason) = self.validity_at(now) {
            return Decision::Deny(reason);
        }
        let partitions: &[&str] = if partitions.is_empty() {
            &[""]
        } else {
            partitions
        };
        let in_domain = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.domains.contains(domain_id));
        for (i, rule) in in_domain {
            let decides = rule.criteria.iter().any(|c| {
                c.action == action
                    && c.topics.iter().any(|t| fnmatch(t, topic))
                    && c.partitions_match(rule.kind, partitions)
            });
            if decides {
                let reason = Reason::Rule {
                    kind: rule.kind,
                    index: i + 1,
                    line: rule.line,
                };
                return match rule.kind {
                    RuleKind::Allow => Decision::Allow(reason),
                    RuleKind::Deny => Decision::Deny(reason),
                };
            }
        }
        match self.default {
            RuleKind::Allow => Decision::Allow(Reason::Default(RuleKind::Allow)),
            RuleKind::Deny => Decision::Deny(Reason::Default(RuleKind::Deny)),
        }
    }

    /// Whether the identity may join `domain_id` (enable_join_access_control): some allow rule
    /// names the domain, or the default is ALLOW (Cyclone's `is_participant_allowed_by_permissions`).
    pub fn may_join(&self, domain_id: u32, now: i64) -> Decision {
        if let Err(reason) = self.validity_at(now) {
            return Decision::Deny(reason);
        }
        let allow = self
            .rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.kind == RuleKind::Allow && r.domains.contains(domain_id));
        match (allow, self.default) {
            (Some((i, r)), _) => Decision::Allow(Reason::Rule {
                kind: RuleKind::Allow,
                index: i + 1,
                line: r.line,
            }),
            (None, RuleKind::Allow) => Decision::Allow(Reason::Default(RuleKind::Allow)),
            (None, RuleKind::Deny) => Decision::Deny(Reason::Default(RuleKind::Deny)),
        }
    }
}

impl Rule {
    fn parse(node: Node, kind: RuleKind) -> Result<Self, AccessError> {
        let name = node.tag_name().name().to_string();
        let mut criteria = Vec::new();
        for child in elements(node) {
            let action = if is(child, "publish") {
                Action::Publish
            } else if is(child, "subscribe") {
                Action::Subscribe
            } else if is(child, "domains") || is(child, "relay") {
                continue; // relay: not used by the builtin plugins
            } else {
                return Err(xml::unexpected(child, &name));
            };
            criteria.push(Criteria::parse(child, action)?);
        }
        Ok(Rule {
            kind,
            domains: xml::domains(required(node, "domains")?)?,
            criteria,
            line: xml::line(node),
        })
    }
}

impl Criteria {
    fn parse(node: Node, action: Action) -> Result<Self, AccessError> {
        let (mut topics, mut partitions, mut data_tags) =
            (Vec::new(), None::<Vec<String>>, Vec::new());
        for group in elements(node) {
            if is(group, "topics") {
                topics.extend(items(group, "topic")?);
            } else if is(group, "partitions") {
                partitions
                    .get_or_insert_with(Vec::new)
                    .extend(items(group, "partition")?);
            } else if is(group, "data_tags") {
                for tag in elements(group) {
                    if !is(tag, "tag") {
                        return Err(xml::unexpected(tag, "data_tags"));
                    }
                    let name = xml::text(required(tag, "name")?).to_string();
                    data_tags.push((name, xml::text(required(tag, "value")?).to_string()));
                }
            } else {
                return Err(xml::unexpected(group, node.tag_name().name()));
            }
        }
        let partitions = match partitions {
            Some(p) if !p.is_empty() => p,
            _ => vec![String::new()],
        };
        Ok(Criteria {
            action,
            topics,
            partitions,
            data_tags,
        })
    }

    fn partitions_match(&self, kind: RuleKind, partitions: &[&str]) -> bool {
        let covered = |p: &&str| self.partitions.iter().any(|e| fnmatch(e, p));
        match kind {
            RuleKind::Allow => partitions.iter().all(covered),
            RuleKind::Deny => partitions.iter().any(covered),
        }
    }
}

fn items(group: Node, name: &str) -> Result<Vec<String>, AccessError> {
    elements(group)
        .map(|n| {
            if is(n, name) {
                Ok(xml::text(n).to_string())
            } else {
                Err(xml::unexpected(n, group.tag_name().name()))
            }
        })
        .collect()
}
