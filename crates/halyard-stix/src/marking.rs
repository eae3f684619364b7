//! Data markings (STIX 2.1 §7.2): the Traffic Light Protocol and statement markings.
//!
//! TLP 2.0 is expressed in STIX 2.1 through the OASIS "TLP 2.0 STIX marking definitions":
//! five fixed marking-definition objects, each carrying the property extension
//! `extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d` with a `tlp_2_0` value. The
//! ids and the objects here are those OASIS publishes, byte for byte in meaning, since other
//! tools match on the ids. The four TLP 1.0 ids of STIX 2.1 §7.2.1.4 are still recognised
//! when reading (`white` reads as [`Tlp::Clear`]), but this crate only emits TLP 2.0.

use serde_json::{json, Value};

/// The id of the extension definition that TLP 2.0 marking definitions carry.
pub const TLP_2_0_EXTENSION_ID: &str = "extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d";

/// The `created` timestamp of the published TLP 2.0 marking definitions.
pub const TLP_2_0_CREATED: &str = "2022-10-01T00:00:00.000Z";

/// The TLP 1.0 marking-definition ids of STIX 2.1 §7.2.1.4 (white, green, amber, red).
const TLP_1_0_IDS: [(&str, Tlp); 4] = [
    (
        "marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9",
        Tlp::Clear,
    ),
    (
        "marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da",
        Tlp::Green,
    ),
    (
        "marking-definition--f88d31f6-486f-44da-b317-01333bde0b82",
        Tlp::Amber,
    ),
    (
        "marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed",
        Tlp::Red,
    ),
];

/// A Traffic Light Protocol 2.0 level, ordered from least to most restrictive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tlp {
    /// `TLP:CLEAR` (TLP 1.0 `WHITE`): disclosure is not limited.
    Clear,
    /// `TLP:GREEN`: limited to the community.
    Green,
    /// `TLP:AMBER`: limited to the recipient's organisation and its clients.
    Amber,
    /// `TLP:AMBER+STRICT`: limited to the recipient's organisation only.
    AmberStrict,
    /// `TLP:RED`: for the eyes and ears of the individual recipients only.
    Red,
}

impl Tlp {
    /// Every level, least restrictive first.
    pub const ALL: [Tlp; 5] = [
        Tlp::Clear,
        Tlp::Green,
        Tlp::Amber,
        Tlp::AmberStrict,
        Tlp::Red,
    ];

    /// The `tlp_2_0` value: `clear`, `green`, `amber`, `amber+strict` or `red`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Tlp::Clear => "clear",
            Tlp::Green => "green",
            Tlp::Amber => "amber",
            Tlp::AmberStrict => "amber+strict",
            Tlp::Red => "red",
        }
    }

    /// Reads a level name, case-insensitively: the [`Tlp::as_str`] names, `white` (TLP 1.0,
    /// read as `clear`) and `amber-strict`. An optional `tlp:` prefix is allowed, as MISP
    /// tags and marking names write it.
    pub fn parse(s: &str) -> Option<Tlp> {
        let lower = s.trim().to_ascii_lowercase();
        let name = lower.strip_prefix("tlp:").unwrap_or(&lower);
        match name {
            "clear" | "white" => Some(Tlp::Clear),
            "green" => Some(Tlp::Green),
            "amber" => Some(Tlp::Amber),
            "amber+strict" | "amber-strict" => Some(Tlp::AmberStrict),
            "red" => Some(Tlp::Red),
            _ => None,
        }
    }

    /// The id of the published TLP 2.0 marking definition of this level.
    pub fn marking_definition_id(&self) -> &'static str {
        match self {
            Tlp::Clear => "marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487",
            Tlp::Green => "marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb",
            Tlp::Amber => "marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421",
            Tlp::AmberStrict => "marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003",
            Tlp::Red => "marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1",
        }
    }

    /// The marking name OASIS gives the definition: `TLP:CLEAR`, `TLP:AMBER+STRICT` ...
    pub fn marking_name(&self) -> &'static str {
        match self {
            Tlp::Clear => "TLP:CLEAR",
            Tlp::Green => "TLP:GREEN",
            Tlp::Amber => "TLP:AMBER",
            Tlp::AmberStrict => "TLP:AMBER+STRICT",
            Tlp::Red => "TLP:RED",
        }
    }

    /// The whole TLP 2.0 marking-definition object as OASIS publishes it.
    pub fn marking_definition(&self) -> Value {
        json!({
            "type": "marking-definition",
            "spec_version": "2.1",
            "id": self.marking_definition_id(),
            "created": TLP_2_0_CREATED,
            "name": self.marking_name(),
            "extensions": {
                TLP_2_0_EXTENSION_ID: {
                    "extension_type": "property-extension",
                    "tlp_2_0": self.as_str(),
                }
            }
        })
    }
}

impl std::fmt::Display for Tlp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.marking_name())
    }
}

/// The TLP level a marking-definition id stands for: the TLP 2.0 ids, and the TLP 1.0 ids
/// of STIX 2.1 §7.2.1.4 (`white` as [`Tlp::Clear`]). `None` for any other marking.
pub fn tlp_of_marking_ref(id: &str) -> Option<Tlp> {
    Tlp::ALL
        .into_iter()
        .find(|tlp| tlp.marking_definition_id() == id)
        .or_else(|| {
            TLP_1_0_IDS
                .iter()
                .find(|(v1, _)| *v1 == id)
                .map(|(_, t)| *t)
        })
}

/// The TLP 1.0 id that STIX 2.1 §7.2.1.4 fixes for `definition: {"tlp": name}`, if `name`
/// is one of `white`, `green`, `amber`, `red`.
pub(crate) fn tlp_1_0_id(name: &str) -> Option<&'static str> {
    let tlp = match name {
        "white" => Tlp::Clear,
        "green" => Tlp::Green,
        "amber" => Tlp::Amber,
        "red" => Tlp::Red,
        _ => return None,
    };
    TLP_1_0_IDS
        .iter()
        .find(|(_, t)| *t == tlp)
        .map(|(id, _)| *id)
}

/// A statement marking definition (STIX 2.1 §7.2.1.3), e.g. a copyright or terms of use.
/// `created` is a STIX timestamp and `id` a `marking-definition--<UUID>`; the result passes
/// [`crate::validate::object`] when they are well formed.
pub fn statement_marking(text: &str, created: &str, id: &str) -> Value {
    json!({
        "type": "marking-definition",
        "spec_version": "2.1",
        "id": id,
        "created": created,
        "definition_type": "statement",
        "definition": { "statement": text },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_by_restriction() {
        assert!(Tlp::Clear < Tlp::Green);
        assert!(Tlp::Amber < Tlp::AmberStrict);
        assert_eq!(Tlp::ALL.iter().max(), Some(&Tlp::Red));
    }

    #[test]
    fn names_round_trip_and_aliases_parse() {
        for tlp in Tlp::ALL {
            assert_eq!(Tlp::parse(tlp.as_str()), Some(tlp));
            assert_eq!(Tlp::parse(&tlp.as_str().to_uppercase()), Some(tlp));
            assert_eq!(Tlp::parse(tlp.marking_name()), Some(tlp));
        }
        assert_eq!(Tlp::parse("WHITE"), Some(Tlp::Clear));
        assert_eq!(Tlp::parse("amber-strict"), Some(Tlp::AmberStrict));
        assert_eq!(Tlp::parse("tlp:amber+strict"), Some(Tlp::AmberStrict));
        assert_eq!(Tlp::parse("purple"), None);
    }

    #[test]
    fn ids_of_both_tlp_versions_are_recognised() {
        for tlp in Tlp::ALL {
            assert_eq!(tlp_of_marking_ref(tlp.marking_definition_id()), Some(tlp));
        }
        assert_eq!(
            tlp_of_marking_ref("marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9"),
            Some(Tlp::Clear)
        );
        assert_eq!(
            tlp_of_marking_ref("marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed"),
            Some(Tlp::Red)
        );
        assert_eq!(
            tlp_of_marking_ref("marking-definition--00000000-0000-4000-8000-000000000000"),
            None
        );
    }

    #[test]
    fn marking_definition_has_the_published_shape() {
        let md = Tlp::AmberStrict.marking_definition();
        assert_eq!(md["name"], "TLP:AMBER+STRICT");
        assert_eq!(md["created"], "2022-10-01T00:00:00.000Z");
        assert_eq!(
            md["extensions"][TLP_2_0_EXTENSION_ID]["tlp_2_0"],
            "amber+strict"
        );
        assert_eq!(md.as_object().map(|m| m.len()), Some(6));
    }
}
