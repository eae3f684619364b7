//! Identifiers: random UUIDs (version 4, from the OS generator) for new STIX objects, bundles
//! and TAXII status resources, and name-based ones (the same name gives the same id) for
//! objects that must not multiply, such as an organisation's identity.

use sha2::{Digest, Sha256};

/// A random RFC 4122 version 4 UUID, lower-case hyphenated.
pub fn random_uuid() -> String {
    let mut b = [0u8; 16];
    // The OS generator does not fail on Linux once booted; if it ever did, a time-derived
    // value still gives a unique, well-formed UUID.
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        b = (t ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    format_uuid(b)
}

/// A UUID derived from `kind` and `name` (SHA-256, shaped as version 4 so that every STIX
/// tool accepts it).
pub fn name_based_uuid(kind: &str, name: &str) -> String {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update([0]);
    h.update(name.as_bytes());
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    format_uuid(b)
}

/// `<stix_type>--<random UUID>`.
pub fn new_id(stix_type: &str) -> String {
    format!("{stix_type}--{}", random_uuid())
}

/// `<stix_type>--<UUID from name>`.
pub fn name_based_id(stix_type: &str, name: &str) -> String {
    format!("{stix_type}--{}", name_based_uuid(stix_type, name))
}

fn format_uuid(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_name_based_ones_repeat() {
        let u = random_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(random_uuid(), random_uuid());
        assert_eq!(
            name_based_id("identity", "acme"),
            name_based_id("identity", "acme")
        );
        assert_ne!(
            name_based_id("identity", "acme"),
            name_based_id("identity", "beta")
        );
    }
}
