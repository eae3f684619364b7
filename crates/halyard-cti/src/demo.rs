//! The demo community of `halyard-cti demo`: who is in it, and the intelligence each
//! organisation's feed produces.
//!
//! Three organisations in two sectors: an energy company and a bank each in one sector, and a
//! grid operator in both, so that what the bank shares reaches the grid operator but never the
//! energy company. Each feed produces what an analyst team publishes in a day's work, a burst
//! at a time: malware families, indicators of them with STIX patterns (addresses, domains,
//! URLs, file hashes), `indicates` relationships, sightings by the organisation itself, and
//! now and then a report whose description names an analyst's e-mail address or an internal
//! host, which the sanitiser removes and which then waits for a second reviewer. Markings are
//! mostly TLP:GREEN, some CLEAR and AMBER (which waits for review): each travels on its own
//! protected topic.
//!
//! The generator is deterministic for a seed (a small SplitMix64 stream), so tests can check
//! what it produces; every object is valid STIX 2.1 for the node's validator.

use halyard_stix::marking::Tlp;
use serde_json::{json, Value};

/// One member of the demo community.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoMember {
    /// Organisation name (its DDS Security identity).
    pub org: &'static str,
    /// Sectors it belongs to.
    pub sectors: &'static [&'static str],
    /// Its display name and industry, for its STIX identity.
    pub display: &'static str,
    /// STIX industry-sector vocabulary value.
    pub industry: &'static str,
}

/// The demo community: three organisations, two sectors.
pub const MEMBERS: [DemoMember; 3] = [
    DemoMember {
        org: "acme-energy",
        sectors: &["energy"],
        display: "ACME Energy",
        industry: "energy",
    },
    DemoMember {
        org: "borealis-grid",
        sectors: &["energy", "finance"],
        display: "Borealis Grid Operator",
        industry: "utilities",
    },
    DemoMember {
        org: "coral-bank",
        sectors: &["finance"],
        display: "Coral Bank",
        industry: "financial-services",
    },
];

/// Malware families the feeds report (name, STIX malware types).
const FAMILIES: [(&str, &str); 8] = [
    ("BlackLantern", "ransomware"),
    ("GreyHeron", "remote-access-trojan"),
    ("SilentFerry", "backdoor"),
    ("CopperMoth", "spyware"),
    ("NightOwl Loader", "dropper"),
    ("PaleWasp", "keylogger"),
    ("RustGate", "bot"),
    ("TideBreaker", "wiper"),
];

/// Deterministic pseudo-random numbers (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        self.next_u64() % n
    }

    /// A random version-4 UUID.
    fn uuid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0x0fff,
            0x8000 | (b >> 48) & 0x3fff,
            b & 0xffff_ffff_ffff
        )
    }
}

/// One organisation's feed.
#[derive(Clone, Debug)]
pub struct Feed {
    member: DemoMember,
    rng: Rng,
    /// The organisation's STIX identity id.
    identity: String,
    /// Malware objects produced so far (id, name), for relationships.
    malware: Vec<(String, String)>,
    /// Indicators produced so far, for sightings (bounded).
    indicators: Vec<String>,
    bursts: u64,
}

/// Most indicators a feed remembers for its sightings.
const REMEMBERED_INDICATORS: usize = 256;

impl Feed {
    /// The feed of `member`, from `seed`.
    pub fn new(member: DemoMember, seed: u64) -> Feed {
        let identity = crate::ids::name_based_id("identity", member.org);
        Feed {
            member,
            rng: Rng::new(seed),
            identity,
            malware: Vec::new(),
            indicators: Vec::new(),
            bursts: 0,
        }
    }

    /// The organisation's identity object, published once at start.
    pub fn identity(&self, now: &str) -> Value {
        json!({
            "type": "identity",
            "spec_version": "2.1",
            "id": self.identity,
            "created": now,
            "modified": now,
            "name": self.member.display,
            "identity_class": "organization",
            "sectors": [self.member.industry],
            "object_marking_refs": [Tlp::Clear.marking_definition_id()],
        })
    }

    /// The next burst of objects, all for `sector` (one of the member's), stamped `now`
    /// (an RFC 3339 timestamp with milliseconds).
    pub fn burst(&mut self, sector: &str, now: &str) -> Vec<Value> {
        assert!(
            self.member.sectors.contains(&sector),
            "{} is not in sector {sector}",
            self.member.org
        );
        self.bursts += 1;
        let mut out = Vec::new();
        let tlp = self.marking();
        // A new family now and then, and always for the first burst.
        if self.malware.is_empty() || self.rng.below(6) == 0 {
            let (name, kind) = FAMILIES[self.rng.below(FAMILIES.len() as u64) as usize];
            let id = format!("malware--{}", self.rng.uuid());
            let description = format!("{name}: {kind} seen by {} analysts.", self.member.display);
            out.push(self.object(
                "malware",
                &id,
                now,
                tlp,
                json!({
                    "name": name,
                    "is_family": true,
                    "malware_types": [kind],
                    "description": description,
                }),
            ));
            self.malware.push((id, name.to_string()));
        }
        let pick = self.rng.below(self.malware.len() as u64) as usize;
        let (malware_id, family) = self.malware[pick].clone();
        let (pattern, what) = self.pattern();
        let indicator = format!("indicator--{}", self.rng.uuid());
        out.push(self.object(
            "indicator",
            &indicator,
            now,
            tlp,
            json!({
                "name": format!("{family} {what}"),
                "description": format!("{what} used by {family}."),
                "indicator_types": ["malicious-activity"],
                "pattern": pattern,
                "pattern_type": "stix",
                "valid_from": now,
            }),
        ));
        let relationship = format!("relationship--{}", self.rng.uuid());
        out.push(self.object(
            "relationship",
            &relationship,
            now,
            tlp,
            json!({
                "relationship_type": "indicates",
                "source_ref": indicator,
                "target_ref": malware_id,
            }),
        ));
        if self.indicators.len() >= REMEMBERED_INDICATORS {
            self.indicators.remove(0);
        }
        self.indicators.push(indicator);
        // Sightings of an earlier indicator (they wait for review: the default configuration
        // reviews sightings).
        if self.rng.below(4) == 0 {
            let seen =
                self.indicators[self.rng.below(self.indicators.len() as u64) as usize].clone();
            let id = format!("sighting--{}", self.rng.uuid());
            let count = 1 + self.rng.below(20);
            out.push(self.object(
                "sighting",
                &id,
                now,
                Tlp::Green,
                json!({
                    "sighting_of_ref": seen,
                    "where_sighted_refs": [self.identity],
                    "count": count,
                    "first_seen": now,
                    "last_seen": now,
                }),
            ));
        }
        // A report written in haste, naming a person and an internal host: the sanitiser
        // generalises them and the object waits for a second reviewer.
        if self.rng.below(5) == 0 {
            let analyst = ["j.doe", "m.rossi", "a.novak", "k.tanaka"][self.rng.below(4) as usize];
            let host = format!(
                "10.{}.{}.{}",
                self.rng.below(256),
                self.rng.below(256),
                1 + self.rng.below(254)
            );
            let id = format!("note--{}", self.rng.uuid());
            let content = format!(
                "Reported by {analyst}@{}.example: {family} beaconing from workstation {host}.",
                self.member.org
            );
            out.push(self.object(
                "note",
                &id,
                now,
                Tlp::Green,
                json!({
                    "abstract": format!("{family} on an internal host"),
                    "content": content,
                    "object_refs": [malware_id],
                }),
            ));
        }
        out
    }

    /// An object of this feed: the common properties (created and modified `now`, by this
    /// organisation, marked `tlp`) and the type's own.
    fn object(&self, stix_type: &str, id: &str, now: &str, tlp: Tlp, own: Value) -> Value {
        let mut o = json!({
            "type": stix_type,
            "spec_version": "2.1",
            "id": id,
            "created": now,
            "modified": now,
            "created_by_ref": self.identity,
            "object_marking_refs": [tlp.marking_definition_id()],
        });
        if let (Some(o), Value::Object(own)) = (o.as_object_mut(), own) {
            o.extend(own);
        }
        o
    }

    /// Mostly GREEN, some CLEAR and AMBER. (RED goes to no sector unless the sharing policy
    /// names one, which the demo's does not.)
    fn marking(&mut self) -> Tlp {
        match self.rng.below(20) {
            0..=2 => Tlp::Clear,
            3..=16 => Tlp::Green,
            _ => Tlp::Amber,
        }
    }

    /// A STIX pattern and what it describes.
    fn pattern(&mut self) -> (String, String) {
        let r = &mut self.rng;
        match r.below(4) {
            0 => {
                let ip = format!("203.0.{}.{}", r.below(256), 1 + r.below(254));
                (
                    format!("[ipv4-addr:value = '{ip}']"),
                    format!("command-and-control server {ip}"),
                )
            }
            1 => {
                let words = ["update", "cdn", "login", "secure", "portal", "sync", "mail"];
                let d = format!(
                    "{}-{}{}.example.net",
                    words[r.below(words.len() as u64) as usize],
                    words[r.below(words.len() as u64) as usize],
                    r.below(100)
                );
                (
                    format!("[domain-name:value = '{d}']"),
                    format!("phishing domain {d}"),
                )
            }
            2 => {
                let u = format!(
                    "http://files-{}.example.org/payload{}.bin",
                    r.below(1000),
                    r.below(100)
                );
                (format!("[url:value = '{u}']"), format!("download URL {u}"))
            }
            _ => {
                let h = format!(
                    "{:016x}{:016x}{:016x}{:016x}",
                    r.next_u64(),
                    r.next_u64(),
                    r.next_u64(),
                    r.next_u64()
                );
                (
                    format!("[file:hashes.'SHA-256' = '{h}']"),
                    "dropper sample".to_string(),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_object_a_feed_produces_is_valid_stix() {
        let now = "2026-12-07T10:00:00.000Z";
        for m in MEMBERS {
            let mut feed = Feed::new(m.clone(), 7);
            let mut objects = vec![feed.identity(now)];
            for k in 0..200 {
                let sector = m.sectors[k % m.sectors.len()];
                objects.extend(feed.burst(sector, now));
            }
            let types: std::collections::BTreeSet<_> = objects
                .iter()
                .map(|o| o["type"].as_str().unwrap_or_default().to_string())
                .collect();
            for t in [
                "identity",
                "malware",
                "indicator",
                "relationship",
                "sighting",
                "note",
            ] {
                assert!(types.contains(t), "{} produced no {t}", m.org);
            }
            for o in &objects {
                if let Err(e) = halyard_stix::validate::object(o) {
                    panic!("{o}: {e}");
                }
            }
        }
    }

    #[test]
    fn a_feed_is_the_same_for_a_seed_and_differs_between_seeds() {
        let now = "2026-12-07T10:00:00.000Z";
        let run = |seed| {
            let mut f = Feed::new(MEMBERS[0].clone(), seed);
            (0..20)
                .flat_map(|_| f.burst("energy", now))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn some_notes_carry_personal_data_for_the_sanitiser() {
        let mut f = Feed::new(MEMBERS[2].clone(), 3);
        let notes: Vec<_> = (0..100)
            .flat_map(|_| f.burst("finance", "2026-12-07T10:00:00.000Z"))
            .filter(|o| o["type"] == "note")
            .collect();
        assert!(!notes.is_empty());
        assert!(notes.iter().all(|n| n["content"]
            .as_str()
            .unwrap_or_default()
            .contains("@coral-bank.example")));
    }

    #[test]
    fn a_sector_the_member_is_not_in_is_a_programming_error() {
        let r = std::panic::catch_unwind(|| {
            Feed::new(MEMBERS[0].clone(), 1).burst("finance", "2026-12-07T10:00:00.000Z")
        });
        assert!(r.is_err());
    }
}
