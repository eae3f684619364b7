//! Who is in the community now, as DDS discovery and the writers' acknowledgments tell it:
//! the dashboard's community status.
//!
//! Every node's participant announces itself as `halyard-cti ORG` (its durability service
//! as `halyard-cti ORG durability`). A member's sectors are the partitions of its readers of
//! the CTI topics; it is alive while its participant's lease holds (discovery drops it when
//! the lease runs out, and the node then lists it as gone); its security state is whether its
//! participant announced DDS Security; what it received is what its readers acknowledged of
//! what this node's writers owed them, per sector.
//!
//! [`assemble`] does the work on plain inputs, so that it is tested without a domain.

use serde::Serialize;
use std::collections::BTreeMap;

/// The prefix of every node's participant name.
pub const PARTICIPANT_PREFIX: &str = "halyard-cti ";
/// The suffix of a node's durability service participant name.
pub const SERVICE_SUFFIX: &str = " durability";
/// Most members remembered once gone.
pub const GONE_MAX: usize = 1024;

/// A remote participant, as discovery reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenParticipant {
    /// Its GUID prefix, as hex.
    pub prefix: String,
    /// Its entity name, if it announced one.
    pub name: Option<String>,
    /// It announced DDS Security (participant security info or an identity token).
    pub secure: bool,
    /// Its lease duration, in seconds.
    pub lease_secs: f64,
}

/// A remote reader of a CTI topic.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenReader {
    /// Its participant's GUID prefix, as hex.
    pub prefix: String,
    /// Its partitions.
    pub partitions: Vec<String>,
}

/// What one of this node's writers knows of one reader.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenDelivery {
    /// The writer's sector.
    pub sector: String,
    /// The reader's participant's GUID prefix, as hex.
    pub prefix: String,
    /// Changes it acknowledged.
    pub acknowledged: u64,
    /// Changes it was owed.
    pub owed: u64,
}

/// What one sector's readers of a member acknowledged of this node's writers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectorDelivery {
    /// The sector.
    pub sector: String,
    /// Changes acknowledged, over every marking.
    pub acknowledged: u64,
    /// Changes owed, over every marking.
    pub owed: u64,
}

/// One organisation of the community.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Member {
    /// Its organisation name (or the participant's name or GUID for a participant that is
    /// not a CTI node).
    pub organisation: String,
    /// Its sectors (the partitions of its CTI readers), sorted.
    pub sectors: Vec<String>,
    /// `alive` while its participant is discovered, `gone` once it left.
    pub liveliness: &'static str,
    /// Its participant's lease, in seconds (0 when gone).
    pub lease_secs: f64,
    /// `DDS Security` or `none`.
    pub security: &'static str,
    /// Its durability service is present too.
    pub durability_service: bool,
    /// What its readers acknowledged of this node's writers, per sector.
    pub delivery: Vec<SectorDelivery>,
}

/// The organisation a participant name stands for, and whether it is a durability service.
pub fn organisation_of(name: &str) -> Option<(&str, bool)> {
    let rest = name.strip_prefix(PARTICIPANT_PREFIX)?;
    match rest.strip_suffix(SERVICE_SUFFIX) {
        Some(org) => Some((org, true)),
        None => Some((rest, false)),
    }
}

/// The members, alive ones first, from discovery and the writers' reports; `gone` holds the
/// organisations seen before (kept at most [`GONE_MAX`]) and is updated.
pub fn assemble(
    participants: &[SeenParticipant],
    readers: &[SeenReader],
    deliveries: &[SeenDelivery],
    gone: &mut BTreeMap<String, Vec<String>>,
) -> Vec<Member> {
    let mut org_of_prefix: BTreeMap<&str, String> = BTreeMap::new();
    let mut members: BTreeMap<String, Member> = BTreeMap::new();
    for p in participants {
        let (org, service) = match p.name.as_deref().and_then(organisation_of) {
            Some((org, service)) => (org.to_string(), service),
            None => (p.name.clone().unwrap_or_else(|| p.prefix.clone()), false),
        };
        org_of_prefix.insert(&p.prefix, org.clone());
        let m = members.entry(org.clone()).or_insert_with(|| Member {
            organisation: org,
            sectors: Vec::new(),
            liveliness: "alive",
            lease_secs: p.lease_secs,
            security: "none",
            durability_service: false,
            delivery: Vec::new(),
        });
        if service {
            m.durability_service = true;
        } else {
            m.lease_secs = p.lease_secs;
        }
        if p.secure {
            m.security = "DDS Security";
        }
    }
    for r in readers {
        let Some(m) = org_of_prefix
            .get(r.prefix.as_str())
            .and_then(|o| members.get_mut(o))
        else {
            continue;
        };
        for s in &r.partitions {
            if !m.sectors.contains(s) {
                m.sectors.push(s.clone());
            }
        }
    }
    for d in deliveries {
        let Some(m) = org_of_prefix
            .get(d.prefix.as_str())
            .and_then(|o| members.get_mut(o))
        else {
            continue;
        };
        match m.delivery.iter_mut().find(|x| x.sector == d.sector) {
            Some(x) => {
                x.acknowledged += d.acknowledged;
                x.owed += d.owed;
            }
            None => m.delivery.push(SectorDelivery {
                sector: d.sector.clone(),
                acknowledged: d.acknowledged,
                owed: d.owed,
            }),
        }
    }
    let mut out: Vec<Member> = members.into_values().collect();
    for m in &mut out {
        m.sectors.sort();
        m.delivery.sort_by(|a, b| a.sector.cmp(&b.sector));
        gone.remove(&m.organisation);
    }
    for (org, sectors) in gone.iter() {
        out.push(Member {
            organisation: org.clone(),
            sectors: sectors.clone(),
            liveliness: "gone",
            lease_secs: 0.0,
            security: "none",
            durability_service: false,
            delivery: Vec::new(),
        });
    }
    for m in out.iter().filter(|m| m.liveliness == "alive") {
        if gone.len() >= GONE_MAX {
            break;
        }
        // Remembered now so that it is listed as gone once discovery drops it; removed again
        // above on every call while it is alive.
        gone.insert(m.organisation.clone(), m.sectors.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn participant(prefix: &str, name: &str, secure: bool) -> SeenParticipant {
        SeenParticipant {
            prefix: prefix.into(),
            name: Some(name.into()),
            secure,
            lease_secs: 20.0,
        }
    }

    #[test]
    fn members_get_their_sectors_security_and_delivery_and_are_listed_gone_after() {
        let participants = [
            participant("aa", "halyard-cti borealis", true),
            participant("ab", "halyard-cti borealis durability", true),
            participant("cc", "halyard-cti coral", false),
        ];
        let readers = [
            SeenReader {
                prefix: "aa".into(),
                partitions: vec!["finance".into(), "energy".into()],
            },
            SeenReader {
                prefix: "aa".into(),
                partitions: vec!["energy".into()],
            },
            SeenReader {
                prefix: "cc".into(),
                partitions: vec!["finance".into()],
            },
            SeenReader {
                prefix: "zz".into(),
                partitions: vec!["unknown".into()],
            },
        ];
        let deliveries = [
            SeenDelivery {
                sector: "energy".into(),
                prefix: "aa".into(),
                acknowledged: 3,
                owed: 4,
            },
            SeenDelivery {
                sector: "energy".into(),
                prefix: "aa".into(),
                acknowledged: 2,
                owed: 2,
            },
        ];
        let mut gone = BTreeMap::new();
        let now = assemble(&participants, &readers, &deliveries, &mut gone);
        assert_eq!(now.len(), 2);
        let b = &now[0];
        assert_eq!(b.organisation, "borealis");
        assert_eq!(b.sectors, ["energy", "finance"]);
        assert_eq!(b.security, "DDS Security");
        assert!(b.durability_service);
        assert_eq!(
            b.delivery,
            [SectorDelivery {
                sector: "energy".into(),
                acknowledged: 5,
                owed: 6
            }]
        );
        assert_eq!(now[1].security, "none");
        // coral leaves: listed as gone with its sectors.
        let later = assemble(&participants[..2], &readers, &[], &mut gone);
        let coral = later.iter().find(|m| m.organisation == "coral").unwrap();
        assert_eq!(coral.liveliness, "gone");
        assert_eq!(coral.sectors, ["finance"]);
        // and alive again when it comes back.
        let back = assemble(&participants, &readers, &[], &mut gone);
        assert!(back.iter().all(|m| m.liveliness == "alive"));
    }

    #[test]
    fn participant_names_map_to_organisations() {
        assert_eq!(organisation_of("halyard-cti acme"), Some(("acme", false)));
        assert_eq!(
            organisation_of("halyard-cti acme durability"),
            Some(("acme", true))
        );
        assert_eq!(organisation_of("ddsperf"), None);
    }
}
