//! Helpers shared by the store's integration tests: scratch directories and samples.
#![allow(dead_code)]

use halyard_store::{ChannelSpec, Limits, SampleKind, StoredSample};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A scratch directory removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("halyard-store-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn spec(topic: &str, limits: Limits) -> ChannelSpec {
    ChannelSpec {
        topic: topic.to_string(),
        type_name: "Shape".to_string(),
        partitions: vec!["b".to_string(), "a".to_string()],
        type_identity: vec![1, 2, 3],
        persistent: true,
        limits,
        writer_qos: vec![9, 9],
    }
}

pub fn key(k: u8) -> [u8; 16] {
    [k; 16]
}

pub fn writer(w: u8) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[0] = w;
    g[15] = 0xc2;
    g
}

/// Sample `sn` of writer `w` for instance `k`, payload of `len` bytes derived from sn.
pub fn sample(w: u8, sn: i64, k: u8, len: usize) -> StoredSample {
    StoredSample {
        writer: writer(w),
        sn,
        kind: SampleKind::Alive,
        key_hash: key(k),
        source_time: sn * 1_000,
        payload: (0..len).map(|i| (sn as usize + i) as u8).collect(),
    }
}

pub fn sns(store: &halyard_store::Store, ch: halyard_store::ChannelId) -> Vec<i64> {
    let mut out = Vec::new();
    store
        .for_each_sample(ch, |s| out.push(s.sn))
        .expect("read samples");
    out
}
