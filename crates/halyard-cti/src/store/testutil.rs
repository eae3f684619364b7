//! Helpers of the store's tests: temporary directories and sample objects.

use super::{CollectionKey, Db, NewObject, Sector};
use halyard_stix::marking::Tlp;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory removed when dropped.
pub(super) struct TempDir(PathBuf);

impl TempDir {
    /// A new, empty directory named after the test.
    pub(super) fn new(name: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "halyard-cti-store-{}-{n}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// A path inside.
    pub(super) fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new database in `dir`.
pub(super) fn db(dir: &TempDir) -> Db {
    Db::open(&dir.file("cti.db")).unwrap()
}

/// A collection key.
pub(super) fn key(sector: Option<&str>, tlp: Tlp) -> CollectionKey {
    CollectionKey {
        sector: sector.map(str::to_string),
        tlp,
    }
}

/// An indicator version with a name and a description.
pub(super) fn indicator(n: u32, version: &str, sector: Sector, tlp: Tlp, name: &str) -> NewObject {
    let id = format!("indicator--00000000-0000-4000-8000-{n:012}");
    let json = serde_json::json!({
        "type": "indicator",
        "spec_version": "2.1",
        "id": id,
        "created": "2024-01-01T00:00:00.000Z",
        "modified": version,
        "name": name,
        "description": format!("Sample indicator number {n}"),
        "pattern": "[ipv4-addr:value = '198.51.100.7']",
        "pattern_type": "stix",
        "labels": ["malicious-activity"],
        "valid_from": "2024-01-01T00:00:00Z",
    });
    NewObject {
        id,
        stix_type: "indicator".into(),
        spec_version: "2.1".into(),
        version: version.into(),
        tlp,
        sector,
        origin: "org-a".into(),
        shared_at_ns: 0,
        json: json.to_string(),
        revoked: false,
        pending_share: false,
    }
}

/// A sector name.
pub(super) fn s(name: &str) -> Sector {
    Some(name.to_string())
}
