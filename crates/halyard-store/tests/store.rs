//! Proves the store's behaviour: durability across reopen, idempotence, history and resource
//! limits, the disk cap, instance state, purge and type identity.

mod common;

use common::{key, sample, sns, spec, Scratch};
use halyard_store::{
    FullLimit, Inserted, Limits, SampleKind, Store, StoreError, StoreOptions, SyncLevel,
};

fn keep_all() -> Limits {
    Limits::default()
}

fn keep_last(depth: u32) -> Limits {
    Limits {
        history_depth: Some(depth),
        ..Limits::default()
    }
}

#[test]
fn round_trip_and_reopen() {
    let dir = Scratch::new("roundtrip");
    let path = dir.file("s.db");
    let written: Vec<_> = (1..=50)
        .map(|sn| sample(1, sn, (sn % 3) as u8, 100))
        .collect();
    {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", keep_all())).unwrap();
        for s in &written {
            assert!(matches!(store.insert(ch, s).unwrap(), Inserted::Stored(_)));
        }
        assert_eq!(store.pending(), 50);
        assert_eq!(store.commit().unwrap(), 50);
        assert_eq!(store.pending(), 0);
        assert_eq!(store.commit().unwrap(), 0);
    }
    let mut store = Store::open(
        &path,
        StoreOptions {
            sync: SyncLevel::Full,
            max_bytes: None,
        },
    )
    .unwrap();
    let chans = store.channels().unwrap();
    assert_eq!(chans.len(), 1);
    assert_eq!(chans[0].1, spec("T", keep_all()));
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    assert_eq!(ch, chans[0].0);
    let mut read = Vec::new();
    assert_eq!(store.for_each_sample(ch, |s| read.push(s)).unwrap(), 50);
    assert_eq!(read, written);
    let stats = store.stats().unwrap();
    assert_eq!((stats.samples, stats.instances, stats.channels), (50, 3, 1));
    assert_eq!(stats.payload_bytes, 5000);
    assert!(stats.file_bytes > 5000, "{stats:?}");
    store.check().unwrap();
}

#[test]
fn partition_order_and_duplicates_name_the_same_channel() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let a = store.channel(&spec("T", keep_all())).unwrap();
    let mut other = spec("T", keep_all());
    other.partitions = vec!["a".into(), "b".into(), "a".into()];
    assert_eq!(store.channel(&other).unwrap(), a);
    other.partitions = vec!["a".into()];
    assert_ne!(store.channel(&other).unwrap(), a);
    let mut t2 = spec("T", keep_all());
    t2.type_name = "Other".into();
    assert_ne!(store.channel(&t2).unwrap(), a);
    assert_eq!(store.channels().unwrap().len(), 3);
    assert_eq!(store.stats().unwrap().file_bytes, 0);
}

#[test]
fn uncommitted_inserts_are_gone_after_reopen() {
    let dir = Scratch::new("uncommitted");
    let path = dir.file("s.db");
    {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", keep_all())).unwrap();
        store.commit().unwrap();
        for sn in 1..=3 {
            let _ = store.insert(ch, &sample(1, sn, 1, 10)).unwrap();
        }
        assert_eq!(store.commit().unwrap(), 3);
        for sn in 4..=6 {
            let _ = store.insert(ch, &sample(1, sn, 1, 10)).unwrap();
        }
        assert_eq!(sns(&store, ch), vec![1, 2, 3, 4, 5, 6]);
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    assert_eq!(sns(&store, ch), vec![1, 2, 3]);
    assert_eq!(store.stats().unwrap().samples, 3);
}

#[test]
fn duplicates_are_detected_across_reopen() {
    let dir = Scratch::new("dup");
    let path = dir.file("s.db");
    {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", keep_all())).unwrap();
        assert!(matches!(
            store.insert(ch, &sample(1, 1, 1, 10)).unwrap(),
            Inserted::Stored(_)
        ));
        assert_eq!(
            store.insert(ch, &sample(1, 1, 1, 10)).unwrap(),
            Inserted::Duplicate
        );
        assert_eq!(store.commit().unwrap(), 1);
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    assert_eq!(
        store.insert(ch, &sample(1, 1, 1, 10)).unwrap(),
        Inserted::Duplicate
    );
    // Same sn from another writer, or in another channel, is another sample.
    assert!(matches!(
        store.insert(ch, &sample(2, 1, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    let other = store.channel(&spec("U", keep_all())).unwrap();
    assert!(matches!(
        store.insert(other, &sample(1, 1, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    assert_eq!(store.commit().unwrap(), 2);
    assert_eq!(sns(&store, ch), vec![1, 1]);
}

#[test]
fn keep_last_evicts_the_oldest_of_the_instance() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let limits = Limits {
        history_depth: Some(2),
        max_samples: Some(4),
        ..Limits::default()
    };
    let ch = store.channel(&spec("T", limits)).unwrap();
    // Instance 1 gets sn 1,3,5,7; instance 2 gets sn 2,4,6.
    for sn in 1..=7 {
        let k = if sn % 2 == 1 { 1 } else { 2 };
        assert!(matches!(
            store.insert(ch, &sample(1, sn, k, 10)).unwrap(),
            Inserted::Stored(_)
        ));
    }
    store.commit().unwrap();
    assert_eq!(sns(&store, ch), vec![4, 5, 6, 7]);
    // Insertion order, not sn order, decides which one is oldest.
    let _ = store.insert(ch, &sample(2, 0, 1, 10)).unwrap();
    assert_eq!(sns(&store, ch), vec![4, 6, 7, 0]);
    let stats = store.stats().unwrap();
    assert_eq!((stats.samples, stats.instances), (4, 2));
}

/// Inserts until `limit` refuses; checks that nothing was removed and that the pending
/// transaction still commits the earlier inserts.
fn assert_full(
    store: &mut Store,
    ch: halyard_store::ChannelId,
    refused: &halyard_store::StoredSample,
    limit: FullLimit,
    max: u64,
) {
    let before = sns(store, ch);
    let pending = store.pending();
    match store.insert(ch, refused) {
        Err(StoreError::Full {
            limit: l,
            max: m,
            channel,
            ..
        }) => {
            assert_eq!((l, m, channel), (limit, max, Some(ch)));
        }
        other => panic!("expected Full {limit:?}, got {other:?}"),
    }
    assert_eq!(sns(store, ch), before);
    assert_eq!(store.pending(), pending);
    assert_eq!(store.commit().unwrap(), pending);
    assert_eq!(sns(store, ch), before);
}

#[test]
fn max_samples_per_instance_refuses_under_keep_all() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let limits = Limits {
        max_samples_per_instance: Some(2),
        ..Limits::default()
    };
    let ch = store.channel(&spec("T", limits)).unwrap();
    for sn in 1..=2 {
        let _ = store.insert(ch, &sample(1, sn, 1, 10)).unwrap();
    }
    assert_full(
        &mut store,
        ch,
        &sample(1, 3, 1, 10),
        FullLimit::PerInstance,
        2,
    );
    // Another instance still fits, and after a purge the first one does again.
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 2, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    assert_eq!(store.purge_instance(ch, key(1)).unwrap(), 2);
    assert!(matches!(
        store.insert(ch, &sample(1, 3, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    store.commit().unwrap();
    assert_eq!(sns(&store, ch), vec![4, 3]);
}

#[test]
fn max_samples_refuses() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let limits = Limits {
        max_samples: Some(3),
        ..Limits::default()
    };
    let ch = store.channel(&spec("T", limits)).unwrap();
    for sn in 1..=3 {
        let _ = store.insert(ch, &sample(1, sn, sn as u8, 10)).unwrap();
    }
    assert_full(&mut store, ch, &sample(1, 4, 1, 10), FullLimit::Samples, 3);
    // Raising the limit through the spec lets the next insert in.
    let raised = Limits {
        max_samples: Some(4),
        ..Limits::default()
    };
    assert_eq!(store.channel(&spec("T", raised)).unwrap(), ch);
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    assert_eq!(store.commit().unwrap(), 1);
}

#[test]
fn max_instances_refuses_a_new_instance_only() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let limits = Limits {
        max_instances: Some(2),
        ..Limits::default()
    };
    let ch = store.channel(&spec("T", limits)).unwrap();
    let _ = store.insert(ch, &sample(1, 1, 1, 10)).unwrap();
    let _ = store.insert(ch, &sample(1, 2, 2, 10)).unwrap();
    assert_full(
        &mut store,
        ch,
        &sample(1, 3, 3, 10),
        FullLimit::Instances,
        2,
    );
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    store.commit().unwrap();
    assert_eq!(store.instances(ch).unwrap().len(), 2);
}

#[test]
fn disk_cap_refuses_and_keeps_the_store_usable() {
    // Small samples fill pages; large ones (overflow pages) fill the cap in chunks.
    for len in [1000, 10_000, 100_000] {
        disk_cap_case(len);
    }
}

fn disk_cap_case(len: usize) {
    let dir = Scratch::new("diskcap");
    let path = dir.file("s.db");
    let max_bytes = (len as u64 * 8).max(256 * 1024);
    let options = StoreOptions {
        sync: SyncLevel::Normal,
        max_bytes: Some(max_bytes),
    };
    let mut store = Store::open(&path, options).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    for sn in 1..=2 {
        let _ = store.insert(ch, &sample(1, sn, 1, len)).unwrap();
    }
    assert_eq!(store.commit().unwrap(), 2);
    // Pending inserts, then inserts until the cap refuses one.
    let mut sn = 3;
    let refused = loop {
        match store.insert(ch, &sample(1, sn, 1, len)) {
            Ok(_) => sn += 1,
            Err(e) => break e,
        }
        assert!(sn < 10_000, "the cap never refused");
    };
    match &refused {
        StoreError::Full {
            limit: FullLimit::Disk,
            max,
            ..
        } => assert_eq!(*max, max_bytes),
        other => panic!("expected Full Disk, got {other:?}"),
    }
    assert!(
        refused.to_string().contains(&path.display().to_string()),
        "{refused}"
    );
    // At the cap a sample already stored is still recognised.
    assert_eq!(
        store.insert(ch, &sample(1, 1, 1, len)).unwrap(),
        Inserted::Duplicate
    );
    let pending = store.pending();
    assert_eq!(pending as i64, sn - 3);
    assert!(pending > 0);
    assert_eq!(store.commit().unwrap(), pending);
    let expected: Vec<i64> = (1..sn).collect();
    assert_eq!(sns(&store, ch), expected);
    assert!(store.stats().unwrap().file_bytes <= max_bytes);
    // Purging makes room again; after a reopen everything committed is there.
    assert!(store.purge_instance(ch, key(1)).unwrap() > 0);
    assert!(matches!(
        store.insert(ch, &sample(1, sn, 2, len)).unwrap(),
        Inserted::Stored(_)
    ));
    store.commit().unwrap();
    drop(store);
    let store = Store::open(&path, options).unwrap();
    assert_eq!(sns(&store, ch), vec![sn]);
    store.check().unwrap();
}

#[test]
fn dispose_and_unregister_set_the_instance_state() {
    let dir = Scratch::new("state");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    let kinds = [
        (1, 1, SampleKind::Alive),
        (2, 1, SampleKind::Disposed),
        (3, 2, SampleKind::Alive),
        (4, 2, SampleKind::Unregistered),
        (5, 3, SampleKind::Alive),
        (6, 3, SampleKind::DisposedUnregistered),
        (7, 4, SampleKind::Alive),
    ];
    for (sn, k, kind) in kinds {
        let mut s = sample(1, sn, k, 4);
        s.kind = kind;
        assert!(matches!(store.insert(ch, &s).unwrap(), Inserted::Stored(_)));
    }
    // A state change of an instance the store holds nothing of says nothing: not stored.
    for (sn, kind) in [(8, SampleKind::Disposed), (9, SampleKind::Unregistered)] {
        let mut s = sample(1, sn, 5, 4);
        s.kind = kind;
        assert_eq!(store.insert(ch, &s).unwrap(), Inserted::Obsolete);
    }
    store.commit().unwrap();
    drop(store);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(
        store.instances(ch).unwrap(),
        vec![
            (key(1), SampleKind::Disposed, 2_000),
            (key(2), SampleKind::Unregistered, 4_000),
            (key(3), SampleKind::DisposedUnregistered, 6_000),
            (key(4), SampleKind::Alive, 7_000),
        ]
    );
    let mut read = Vec::new();
    store
        .for_each_sample(ch, |s| read.push((s.sn, s.kind)))
        .unwrap();
    assert_eq!(
        read,
        kinds.iter().map(|(sn, _, k)| (*sn, *k)).collect::<Vec<_>>()
    );
}

/// (sn, kind) of every stored sample of `ch`, in order.
fn kinds_of(store: &Store, ch: halyard_store::ChannelId) -> Vec<(i64, SampleKind)> {
    let mut read = Vec::new();
    store
        .for_each_sample_meta(ch, |m| read.push((m.sn, m.kind)))
        .unwrap();
    read
}

/// Sample `sn` of writer `w` for instance `k`, of `kind`.
fn change(w: u8, sn: i64, k: u8, kind: SampleKind) -> halyard_store::StoredSample {
    let mut s = sample(w, sn, k, 4);
    s.kind = kind;
    s
}

/// The user guide's durability example: a writer of KEEP_LAST 1 (the default DURABILITY_SERVICE history)
/// writes, then unregisters its instance as it leaves. The unregistration evicts no data:
/// the last sample is kept beside it, on disk too, and the evicted samples are reported.
#[test]
fn an_unregistration_or_a_dispose_never_takes_the_last_data_sample_place() {
    let dir = Scratch::new("state-depth");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_last(1))).unwrap();
    for sn in 1..=5 {
        let _ = store
            .insert(ch, &change(1, sn, 1, SampleKind::Alive))
            .unwrap();
    }
    let _ = store
        .insert(ch, &change(1, 6, 1, SampleKind::Unregistered))
        .unwrap();
    // Another instance, disposed and then unregistered by its writer leaving.
    let _ = store
        .insert(ch, &change(1, 7, 2, SampleKind::Alive))
        .unwrap();
    let _ = store
        .insert(ch, &change(1, 8, 2, SampleKind::Disposed))
        .unwrap();
    let _ = store
        .insert(ch, &change(1, 9, 2, SampleKind::Unregistered))
        .unwrap();
    store.commit().unwrap();
    let removed: Vec<[u8; 16]> = store.take_removed().iter().map(|r| r.2).collect();
    assert_eq!(removed, vec![key(1); 4], "samples 1 to 4 evicted");
    assert!(store.take_removed().is_empty(), "taken once");
    drop(store);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(
        kinds_of(&store, ch),
        vec![
            (5, SampleKind::Alive),
            (6, SampleKind::Unregistered),
            (7, SampleKind::Alive),
            (8, SampleKind::Disposed),
            (9, SampleKind::Unregistered),
        ]
    );
    let stats = store.stats().unwrap();
    assert_eq!(stats.instances, 2);
}

/// State changes go once a later change makes them obsolete, so an instance holds its data
/// and a few of them however often its writers come and go.
#[test]
fn obsolete_state_changes_are_removed_and_reported() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_last(2))).unwrap();
    let mut sn = 0;
    let mut next = |w: u8, kind: SampleKind| {
        sn += 1;
        change(w, sn, 1, kind)
    };
    // A hundred short-lived writers, each writing once and leaving (unregistering).
    for w in 1..=100u8 {
        for kind in [SampleKind::Alive, SampleKind::Unregistered] {
            let s = next(w, kind);
            assert!(matches!(store.insert(ch, &s).unwrap(), Inserted::Stored(_)));
        }
    }
    store.commit().unwrap();
    // Depth 2: the last two writers' samples, and their unregistrations.
    assert_eq!(
        kinds_of(&store, ch),
        vec![
            (197, SampleKind::Alive),
            (198, SampleKind::Unregistered),
            (199, SampleKind::Alive),
            (200, SampleKind::Unregistered),
        ]
    );
    assert_eq!(store.take_removed().len(), 98 * 2);
    // A dispose, then a write: the write revives the instance, the dispose goes.
    let _ = store.insert(ch, &next(7, SampleKind::Disposed)).unwrap();
    let _ = store.insert(ch, &next(7, SampleKind::Alive)).unwrap();
    store.commit().unwrap();
    // Writer 99's data was evicted by the write: its unregistration went with it.
    assert_eq!(
        kinds_of(&store, ch),
        vec![
            (199, SampleKind::Alive),
            (200, SampleKind::Unregistered),
            (202, SampleKind::Alive),
        ]
    );
    // Writer 7 disposes and unregisters in one change, twice: the second replaces the first.
    let _ = store
        .insert(ch, &next(7, SampleKind::DisposedUnregistered))
        .unwrap();
    let _ = store.insert(ch, &next(7, SampleKind::Alive)).unwrap();
    let _ = store
        .insert(ch, &next(7, SampleKind::DisposedUnregistered))
        .unwrap();
    // An unregistration by a writer with no data in the instance is not stored.
    assert_eq!(
        store
            .insert(ch, &next(50, SampleKind::Unregistered))
            .unwrap(),
        Inserted::Obsolete
    );
    store.commit().unwrap();
    assert_eq!(
        kinds_of(&store, ch),
        vec![
            (202, SampleKind::Alive),
            (204, SampleKind::Alive),
            (205, SampleKind::DisposedUnregistered),
        ]
    );
    assert_eq!(
        store.instances(ch).unwrap(),
        vec![(key(1), SampleKind::DisposedUnregistered, 205_000)]
    );
}

/// Under KEEP_ALL the limits count data samples: an instance at its
/// max_samples_per_instance, or a channel at max_samples, still takes its state changes.
#[test]
fn state_changes_are_not_refused_by_the_sample_limits() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let limits = Limits {
        max_samples: Some(3),
        max_samples_per_instance: Some(2),
        ..keep_all()
    };
    let ch = store.channel(&spec("T", limits)).unwrap();
    for (sn, k) in [(1, 1), (2, 1), (3, 2)] {
        let _ = store
            .insert(ch, &change(1, sn, k, SampleKind::Alive))
            .unwrap();
    }
    for (sn, k, kind) in [
        (4, 1, SampleKind::Disposed),
        (5, 1, SampleKind::Unregistered),
        (6, 2, SampleKind::Unregistered),
    ] {
        assert!(matches!(
            store.insert(ch, &change(1, sn, k, kind)).unwrap(),
            Inserted::Stored(_)
        ));
    }
    assert!(store
        .insert(ch, &change(1, 7, 2, SampleKind::Alive))
        .is_err());
    store.commit().unwrap();
    assert_eq!(sns(&store, ch), vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn purge_instance_removes_samples_and_state() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    for sn in 1..=6 {
        let _ = store
            .insert(ch, &sample(1, sn, (sn % 2) as u8, 10))
            .unwrap();
    }
    store.commit().unwrap();
    assert_eq!(store.purge_instance(ch, key(1)).unwrap(), 3);
    assert_eq!(store.purge_instance(ch, key(1)).unwrap(), 0);
    assert_eq!(sns(&store, ch), vec![2, 4, 6]);
    assert_eq!(
        store
            .instances(ch)
            .unwrap()
            .iter()
            .map(|i| i.0)
            .collect::<Vec<_>>(),
        vec![key(0)]
    );
    let stats = store.stats().unwrap();
    assert_eq!((stats.samples, stats.instances), (3, 1));
}

#[test]
fn a_changed_type_identity_is_refused_and_samples_kept() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    let _ = store.insert(ch, &sample(1, 1, 1, 10)).unwrap();
    store.commit().unwrap();
    let mut changed = spec("T", keep_all());
    changed.type_identity = vec![7, 7];
    let err = store.channel(&changed).unwrap_err();
    assert!(
        matches!(&err, StoreError::TypeChanged { topic, type_name } if topic == "T" && type_name == "Shape")
    );
    assert!(err.to_string().contains("stored samples are kept"), "{err}");
    // An unknown (empty) identity is not compared; the stored one stays.
    changed.type_identity.clear();
    changed.writer_qos = vec![1];
    assert_eq!(store.channel(&changed).unwrap(), ch);
    let (_, stored) = store.channels().unwrap().remove(0);
    assert_eq!(stored.type_identity, vec![1, 2, 3]);
    assert_eq!(stored.writer_qos, vec![1]);
    assert_eq!(sns(&store, ch), vec![1]);
}

#[test]
fn unknown_channel_and_bad_limits_are_errors() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    let mut other = Store::in_memory(StoreOptions::default()).unwrap();
    assert!(matches!(
        other.insert(ch, &sample(1, 1, 1, 1)),
        Err(StoreError::UnknownChannel { .. })
    ));
    assert!(matches!(
        other.for_each_sample(ch, |_| ()),
        Err(StoreError::UnknownChannel { .. })
    ));
    let zero = Limits {
        history_depth: Some(0),
        ..Limits::default()
    };
    assert!(matches!(
        store.channel(&spec("Z", zero)),
        Err(StoreError::InvalidLimits { .. })
    ));
}

#[test]
fn interleaved_channels_stream_their_own_samples_in_order_across_reopen() {
    let dir = Scratch::new("interleave");
    let path = dir.file("s.db");
    let mut expected_a = Vec::new();
    let mut expected_b = Vec::new();
    for round in 0..3 {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let a = store.channel(&spec("A", keep_all())).unwrap();
        let b = store.channel(&spec("B", keep_all())).unwrap();
        for i in 0..20 {
            // Descending sequence numbers in B: order is insertion order, not sn order.
            let sn = round * 100 + i;
            let _ = store.insert(a, &sample(1, sn, 1, 5)).unwrap();
            let _ = store.insert(b, &sample(1, 10_000 - sn, 1, 5)).unwrap();
            expected_a.push(sn);
            expected_b.push(10_000 - sn);
        }
        store.commit().unwrap();
        assert_eq!(sns(&store, a), expected_a);
        assert_eq!(sns(&store, b), expected_b);
    }
}

#[test]
fn limits_hold_across_reopen() {
    let dir = Scratch::new("limits-reopen");
    let path = dir.file("s.db");
    let limits = Limits {
        max_samples: Some(3),
        max_instances: Some(2),
        ..Limits::default()
    };
    {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", limits)).unwrap();
        for sn in 1..=3 {
            let _ = store
                .insert(ch, &sample(1, sn, (sn % 2) as u8, 10))
                .unwrap();
        }
        store.commit().unwrap();
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    // The limits come back with the channel; the counts are reloaded from the file.
    let (ch, stored) = store.channels().unwrap().remove(0);
    assert_eq!(stored.limits, limits);
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 0, 10)),
        Err(StoreError::Full {
            limit: FullLimit::Samples,
            ..
        })
    ));
    let deeper = Limits {
        history_depth: Some(1),
        ..limits
    };
    assert_eq!(store.channel(&spec("T", deeper)).unwrap(), ch);
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 2, 10)),
        Err(StoreError::Full {
            limit: FullLimit::Instances,
            ..
        })
    ));
    // KEEP_LAST 1 trims instance 1 (sn 1 and 3) to the new sample.
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    store.commit().unwrap();
    assert_eq!(sns(&store, ch), vec![2, 4]);
}

#[test]
fn store_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<Store>();
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    let store = std::thread::spawn(move || {
        let _ = store.insert(ch, &sample(1, 1, 1, 1)).unwrap();
        store.commit().unwrap();
        store
    })
    .join()
    .unwrap();
    assert_eq!(sns(&store, ch), vec![1]);
}

#[test]
fn two_stores_on_one_file_see_each_others_samples() {
    // Two processes whose embedded services use the same default store path share a file.
    // Each store keeps an index in memory; when another connection committed, it reloads it,
    // so a sample the other stored is a duplicate here too and KEEP_LAST counts its rows.
    let dir = Scratch::new("two");
    let path = dir.file("s.db");
    let mut a = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = a.channel(&spec("T", keep_last(2))).unwrap();
    a.commit().unwrap();
    let mut b = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(b.channel(&spec("T", keep_last(2))).unwrap(), ch);
    let stored = |r: Inserted| matches!(r, Inserted::Stored(_));
    assert!(stored(a.insert(ch, &sample(1, 1, 1, 10)).unwrap()));
    a.commit().unwrap();
    assert!(stored(b.insert(ch, &sample(2, 1, 1, 10)).unwrap()));
    assert_eq!(
        b.insert(ch, &sample(1, 1, 1, 10)).unwrap(),
        Inserted::Duplicate
    );
    b.commit().unwrap();
    assert_eq!(
        a.insert(ch, &sample(2, 1, 1, 10)).unwrap(),
        Inserted::Duplicate
    );
    // The instance holds two samples (one from each store): a third evicts the oldest.
    assert!(stored(a.insert(ch, &sample(1, 2, 1, 10)).unwrap()));
    a.commit().unwrap();
    let both: Vec<_> = {
        let mut out = Vec::new();
        b.for_each_sample(ch, |s| out.push((s.writer[0], s.sn)))
            .unwrap();
        out
    };
    assert_eq!(both, vec![(2, 1), (1, 2)]);
    assert!(stored(b.insert(ch, &sample(2, 2, 1, 10)).unwrap()));
    b.commit().unwrap();
    assert_eq!(sns(&a, ch), vec![2, 2]);
    assert_eq!(a.purge_instance(ch, key(1)).unwrap(), 2);
    assert!(sns(&b, ch).is_empty());
    assert!(stored(b.insert(ch, &sample(2, 1, 1, 10)).unwrap()));
    b.commit().unwrap();
}

#[test]
fn a_duplicate_or_a_refusal_leaves_no_transaction_open() {
    // The service commits only when inserts are pending: an insert that writes nothing must
    // not keep the write lock from another store on the file.
    let dir = Scratch::new("idle");
    let path = dir.file("s.db");
    let limits = Limits {
        max_samples: Some(1),
        ..Limits::default()
    };
    let mut a = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = a.channel(&spec("T", limits)).unwrap();
    assert!(matches!(
        a.insert(ch, &sample(1, 1, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    a.commit().unwrap();
    let mut b = Store::open(&path, StoreOptions::default()).unwrap();
    let other = b.channel(&spec("U", keep_all())).unwrap();
    b.commit().unwrap();
    assert_eq!(
        a.insert(ch, &sample(1, 1, 1, 10)).unwrap(),
        Inserted::Duplicate
    );
    assert!(matches!(
        a.insert(ch, &sample(1, 2, 1, 10)),
        Err(StoreError::Full { .. })
    ));
    assert_eq!(a.pending(), 0);
    // With a's transaction left open, this fails with SQLITE_BUSY (after the busy timeout).
    assert!(matches!(
        b.insert(other, &sample(2, 1, 1, 10)).unwrap(),
        Inserted::Stored(_)
    ));
    b.commit().unwrap();
}

#[test]
fn a_version_1_store_is_converted_and_keeps_its_samples_and_duplicates() {
    // Schema version 1 had two SQLite indexes on the samples table; version 2 drops them
    // when it opens such a store and answers from its in-memory index instead.
    let dir = Scratch::new("v1");
    let path = dir.file("s.db");
    let ch = {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", keep_last(2))).unwrap();
        for sn in 1..=3 {
            let _ = store.insert(ch, &sample(1, sn, 1, 100)).unwrap();
        }
        store.commit().unwrap();
        ch
    };
    {
        // Make it what version 1 wrote.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE channel_types;
             DROP TABLE segments;
             ALTER TABLE samples DROP COLUMN seg;
             ALTER TABLE samples DROP COLUMN seg_off;
             ALTER TABLE samples DROP COLUMN seg_len;
             CREATE UNIQUE INDEX samples_writer_sn ON samples (channel, writer, sn);
             CREATE INDEX samples_instance ON samples (channel, key_hash, id);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.channel(&spec("T", keep_last(2))).unwrap(), ch);
    assert_eq!(sns(&store, ch), vec![2, 3]);
    assert_eq!(
        store.insert(ch, &sample(1, 3, 1, 100)).unwrap(),
        Inserted::Duplicate
    );
    assert!(matches!(
        store.insert(ch, &sample(1, 4, 1, 100)).unwrap(),
        Inserted::Stored(_)
    ));
    store.commit().unwrap();
    assert_eq!(sns(&store, ch), vec![3, 4]);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'samples_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!((version, indexes), (halyard_store::SCHEMA_VERSION, 0));
}

#[test]
fn a_version_2_store_is_converted_and_keeps_old_payloads_in_rows_new_ones_in_segments() {
    // Schema version 2 kept every payload in its row; version 3 adds payload segments.
    let dir = Scratch::new("v2");
    let path = dir.file("s.db");
    let ch = {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", Limits::default())).unwrap();
        store.commit().unwrap();
        ch
    };
    {
        // Make it what version 2 wrote, with 1 KB payloads in their rows.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE channel_types;
             DROP TABLE segments;
             ALTER TABLE samples DROP COLUMN seg;
             ALTER TABLE samples DROP COLUMN seg_off;
             ALTER TABLE samples DROP COLUMN seg_len;
             PRAGMA user_version = 2;",
        )
        .unwrap();
        for sn in 1..=3i64 {
            let s = sample(1, sn, 1, 1000);
            conn.execute(
                "INSERT INTO samples (id, channel, writer, sn, kind, key_hash, source_time, \
                 payload) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7)",
                rusqlite::params![
                    (ch.raw() << 40) | sn,
                    ch.raw(),
                    &s.writer[..],
                    sn,
                    &s.key_hash[..],
                    s.source_time,
                    s.payload
                ],
            )
            .unwrap();
        }
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    for sn in 4..=6 {
        let _ = store.insert(ch, &sample(1, sn, 1, 1000)).unwrap();
    }
    store.commit().unwrap();
    let mut got = Vec::new();
    store.for_each_sample(ch, |s| got.push(s)).unwrap();
    assert_eq!(
        got,
        (1..=6).map(|sn| sample(1, sn, 1, 1000)).collect::<Vec<_>>()
    );
    let in_rows: i64 = store_conn(&path)
        .query_row("SELECT count(*) FROM samples WHERE seg IS NULL", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(
        in_rows, 3,
        "the converted rows keep their payloads, new ones go to segments"
    );
}

fn store_conn(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

#[test]
fn a_store_changes_journal_with_its_sync_level_and_keeps_its_samples() {
    // A store at the Normal level keeps a write-ahead log. A service killed with samples
    // committed to the log only (not checkpointed) leaves the file and its log: the next
    // open, at the Process level, must serve them, then keep the store in the rollback
    // journal; opened at Normal again, it is back in WAL mode with every sample.
    let dir = Scratch::new("wal");
    let path = dir.file("s.db");
    let copy = dir.file("copy.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    for sn in 1..=5 {
        let _ = store.insert(ch, &sample(1, sn, 1, 100)).unwrap();
    }
    store.commit().unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    conn.execute_batch(
        "PRAGMA wal_autocheckpoint = 0; \
         INSERT INTO samples (id, channel, writer, sn, kind, key_hash, source_time, payload) \
         SELECT id + 5, channel, writer, sn + 5, kind, key_hash, source_time, payload \
         FROM samples;",
    )
    .unwrap();
    let wal = |p: &std::path::Path| format!("{}-wal", p.display());
    std::fs::copy(&path, &copy).unwrap();
    std::fs::copy(wal(&path), wal(&copy)).unwrap();
    drop(conn);
    let process = StoreOptions {
        sync: SyncLevel::Process,
        max_bytes: None,
    };
    let mut store = Store::open(&copy, process).unwrap();
    let ch = store.channel(&spec("T", keep_all())).unwrap();
    assert_eq!(sns(&store, ch), (1..=10).collect::<Vec<_>>());
    let _ = store.insert(ch, &sample(1, 11, 1, 100)).unwrap();
    store.commit().unwrap();
    drop(store);
    assert!(
        !std::path::Path::new(&wal(&copy)).exists(),
        "the log is gone"
    );
    let normal = StoreOptions {
        sync: SyncLevel::Normal,
        max_bytes: None,
    };
    let mut store = Store::open(&copy, normal).unwrap();
    assert_eq!(sns(&store, ch), (1..=11).collect::<Vec<_>>());
    let _ = store.insert(ch, &sample(1, 12, 1, 100)).unwrap();
    store.commit().unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "Normal keeps a write-ahead log");
    drop(conn);
    let store = Store::open(&copy, process).unwrap();
    assert_eq!(sns(&store, ch), (1..=12).collect::<Vec<_>>());
}

#[test]
fn samples_are_read_back_by_identity_and_listed_without_payloads() {
    // A durability service's relay keeps only what `for_each_sample_meta` lists and reads
    // payloads back by identity when a reader asks: identities survive a reopen, evicted
    // samples read back as `None`, and runs of identities in any shape come back in order.
    let dir = Scratch::new("payloads");
    let path = dir.file("s.db");
    let mut ids = Vec::new();
    {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let limits = Limits {
            history_depth: Some(3),
            ..Limits::default()
        };
        let ch = store.channel(&spec("T", limits)).unwrap();
        // Instance 1 gets sn 1..=5 (the first two evicted by depth 3), instance 2 sn 6..=8.
        for sn in 1..=8 {
            let k = if sn <= 5 { 1 } else { 2 };
            match store
                .insert(ch, &sample(1, sn, k, 10 + sn as usize))
                .unwrap()
            {
                Inserted::Stored(id) => ids.push(id),
                other => panic!("sn {sn}: {other:?}"),
            }
        }
        store.commit().unwrap();
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store
        .channel(&spec(
            "T",
            Limits {
                history_depth: Some(3),
                ..Limits::default()
            },
        ))
        .unwrap();
    let mut metas = Vec::new();
    let n = store.for_each_sample_meta(ch, |m| metas.push(m)).unwrap();
    assert_eq!(n, 6);
    let listed: Vec<(i64, usize)> = metas.iter().map(|m| (m.sn, m.payload_len)).collect();
    assert_eq!(
        listed,
        vec![(3, 13), (4, 14), (5, 15), (6, 16), (7, 17), (8, 18)]
    );
    assert_eq!(
        metas.iter().map(|m| m.id).collect::<Vec<_>>(),
        ids[2..].to_vec(),
        "identities are those the inserts returned"
    );
    assert!(metas.iter().all(|m| m.kind == SampleKind::Alive));
    // From an identity on (a relay whose history was held back from there): that sample
    // and the later ones, in order; from an evicted one, the next still stored.
    for (from, want) in [(ids[4], vec![5, 6, 7, 8]), (ids[1], vec![3, 4, 5, 6, 7, 8])] {
        let mut from_sns = Vec::new();
        let n = store
            .for_each_sample_meta_from(ch, from, |m| from_sns.push(m.sn))
            .unwrap();
        assert_eq!((n, from_sns), (want.len(), want));
    }
    // Asked: two evicted, a run, a lone one, the last; one never stored beyond.
    let beyond = halyard_store::SampleId(ids[7].0 + 100);
    let asked = vec![ids[0], ids[1], ids[2], ids[3], ids[5], ids[7], beyond];
    let mut got = Vec::new();
    store
        .payloads(&asked, |id, p| got.push((id, p.map(|p| p.len()))))
        .unwrap();
    assert_eq!(
        got,
        vec![
            (ids[0], None),
            (ids[1], None),
            (ids[2], Some(13)),
            (ids[3], Some(14)),
            (ids[5], Some(16)),
            (ids[7], Some(18)),
            (beyond, None),
        ]
    );
    // The payload read back is the one stored.
    let mut bytes = None;
    store.payloads(&[ids[4]], |_, p| bytes = p).unwrap();
    assert_eq!(bytes, Some(sample(1, 5, 1, 15).payload));
}

/// With the write-ahead log (SyncLevel::Normal), checkpoints run on the store's own thread:
/// a long stream of committed samples reaches the database file and the log stays bounded
/// (commits restart it past a quarter of the store's size cap, and wait for that past
/// twice as much), and the store reopens with every sample.
#[test]
fn the_log_is_checkpointed_into_the_file_and_stays_bounded() {
    let dir = Scratch::new("checkpoint");
    let path = dir.file("s.db");
    let mut log = path.as_os_str().to_owned();
    log.push("-wal");
    let log = std::path::PathBuf::from(log);
    // 100 000 samples of 1 KB (about 110 MB with the log's own copies) in a store capped at
    // 128 MB, whose log owes a restart past 32 MB: past it three times at least, however
    // the checkpoint thread keeps up.
    let total = 100_000i64;
    let cap: u64 = 128 << 20;
    let options = StoreOptions {
        max_bytes: Some(cap),
        ..StoreOptions::default()
    };
    let mut longest_log = 0;
    {
        let mut store = Store::open(&path, options).unwrap();
        let ch = store.channel(&spec("T", keep_all())).unwrap();
        for sn in 1..=total {
            let s = sample(1, sn, (sn % 7) as u8, 1024);
            assert!(matches!(store.insert(ch, &s).unwrap(), Inserted::Stored(_)));
            if sn % 1024 == 0 {
                store.commit().unwrap();
                longest_log = longest_log.max(std::fs::metadata(&log).map_or(0, |m| m.len()));
            }
        }
        store.commit().unwrap();
        // Give the thread up to 10 s to copy the last frames, then see them in the file.
        for _ in 0..500 {
            if std::fs::metadata(&path).unwrap().len() >= 100 * 1024 * 1024 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let file = std::fs::metadata(&path).unwrap().len();
        assert!(
            file >= 100 * 1024 * 1024,
            "the checkpoints should have copied the samples into the file: {file} bytes"
        );
    }
    // Twice the bound at worst (restarts tried while the checkpoint thread is busy fail),
    // looked at every commit once owed, else every 4 MB committed: a few MB more.
    assert!(
        longest_log <= 2 * (cap / 4) + (8 << 20),
        "the log grew to {longest_log} bytes"
    );
    let store = Store::open(&path, options).unwrap();
    let ch = store.channels().unwrap()[0].0;
    let mut n = 0i64;
    store
        .for_each_sample_meta(ch, |m| {
            n += 1;
            assert_eq!(m.sn, n, "in order, none missing");
        })
        .unwrap();
    assert_eq!(n, total);
    store.check().unwrap();
}

/// The payload segment files of the store at `path`, sorted.
fn segment_files(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = match std::fs::read_dir(Store::payload_dir(path)) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

#[test]
fn payloads_go_to_segments_and_a_segment_whose_samples_are_all_evicted_is_removed() {
    // KEEP_LAST 1 on one instance: every 1 MB sample evicts the one before. Past the first
    // segment (64 MB) that segment holds no live sample and is removed at a commit.
    let dir = Scratch::new("reclaim");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", keep_last(1))).unwrap();
    let mb = 1 << 20;
    for sn in 1..=80 {
        let _ = store.insert(ch, &sample(1, sn, 1, mb)).unwrap();
        if sn % 4 == 0 {
            store.commit().unwrap();
        }
    }
    store.commit().unwrap();
    let files = segment_files(&path);
    assert_eq!(files.len(), 1, "the first segment was reclaimed: {files:?}");
    assert!(files[0].ends_with("00000002.seg"), "{files:?}");
    let mut got = Vec::new();
    store.for_each_sample(ch, |s| got.push(s)).unwrap();
    assert_eq!(got, vec![sample(1, 80, 1, mb)]);
    let stats = store.stats().unwrap();
    assert_eq!(stats.payload_bytes, mb as u64);
    assert!(
        stats.file_bytes < 40 * mb as u64,
        "{} bytes on disk for one live sample",
        stats.file_bytes
    );
    drop(store);
    // Reopened: the same, and the next samples append to segment 2.
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let _ = store.insert(ch, &sample(1, 81, 1, 1000)).unwrap();
    store.commit().unwrap();
    assert_eq!(sns(&store, ch), vec![81]);
    assert_eq!(segment_files(&path).len(), 1);
}

#[test]
fn an_orphan_segment_is_removed_at_open_and_other_files_are_kept() {
    // A process killed after its transaction created a segment (or before it removed a
    // reclaimed one) leaves a file no row names: the next open removes it. Files that are
    // not segments are not the store's to remove.
    let dir = Scratch::new("orphan");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    for sn in 1..=10 {
        let _ = store.insert(ch, &sample(1, sn, 1, 2000)).unwrap();
    }
    store.commit().unwrap();
    drop(store);
    let payloads = Store::payload_dir(&path);
    std::fs::write(payloads.join("00000007.seg"), vec![1u8; 5000]).unwrap();
    std::fs::write(payloads.join("notes.txt"), b"mine").unwrap();
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert!(!payloads.join("00000007.seg").exists());
    assert!(payloads.join("notes.txt").exists());
    assert_eq!(sns(&store, ch), (1..=10).collect::<Vec<_>>());
}

#[test]
fn small_payloads_stay_in_rows_and_a_capped_store_keeps_every_payload_in_rows() {
    let dir = Scratch::new("inrows");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    for (sn, len) in [(1, 511), (2, 512), (3, 32), (4, 5000)] {
        let _ = store.insert(ch, &sample(1, sn, 1, len)).unwrap();
    }
    store.commit().unwrap();
    let in_rows = |p: &std::path::Path| -> i64 {
        store_conn(p)
            .query_row("SELECT count(*) FROM samples WHERE seg IS NULL", [], |r| {
                r.get(0)
            })
            .unwrap()
    };
    assert_eq!(in_rows(&path), 2);
    let mut got = Vec::new();
    store.for_each_sample(ch, |s| got.push(s)).unwrap();
    let want: Vec<_> = [(1, 511), (2, 512), (3, 32), (4, 5000)]
        .into_iter()
        .map(|(sn, len)| sample(1, sn, 1, len))
        .collect();
    assert_eq!(got, want);
    drop(store);
    let capped = dir.file("capped.db");
    let options = StoreOptions {
        max_bytes: Some(64 << 20),
        ..StoreOptions::default()
    };
    let mut store = Store::open(&capped, options).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    let _ = store.insert(ch, &sample(1, 1, 1, 5000)).unwrap();
    store.commit().unwrap();
    assert_eq!(in_rows(&capped), 1);
    assert!(segment_files(&capped).is_empty());
}

#[test]
fn pending_payloads_in_segments_are_read_before_their_commit_and_gone_after_a_rollback() {
    let dir = Scratch::new("pendingseg");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    for sn in 1..=3 {
        let _ = store.insert(ch, &sample(1, sn, 1, 3000)).unwrap();
    }
    store.commit().unwrap();
    for sn in 4..=6 {
        let _ = store.insert(ch, &sample(1, sn, 1, 3000)).unwrap();
    }
    // Pending, not committed: a read of the store includes them.
    let mut got = Vec::new();
    store.for_each_sample(ch, |s| got.push(s)).unwrap();
    assert_eq!(
        got,
        (1..=6).map(|sn| sample(1, sn, 1, 3000)).collect::<Vec<_>>()
    );
    drop(store); // rolls back 4..=6
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(sns(&store, ch), vec![1, 2, 3]);
    // What the rolled-back inserts wrote is written over.
    for sn in 4..=5 {
        let _ = store.insert(ch, &sample(2, sn, 1, 700)).unwrap();
    }
    store.commit().unwrap();
    let mut got = Vec::new();
    store.for_each_sample(ch, |s| got.push(s)).unwrap();
    let mut want: Vec<_> = (1..=3).map(|sn| sample(1, sn, 1, 3000)).collect();
    want.extend((4..=5).map(|sn| sample(2, sn, 1, 700)));
    assert_eq!(got, want);
}

#[test]
fn a_segment_emptied_while_it_was_being_appended_is_removed_once_left() {
    // Instance 1's samples fill most of segment 1, then the instance is purged while segment
    // 1 is still the one appended to (so it stays). The next sample does not fit and goes to
    // segment 2: segment 1, left with nothing live, is removed at that commit.
    let dir = Scratch::new("reclaimactive");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    let mb = 1 << 20;
    for sn in 1..=20 {
        let _ = store.insert(ch, &sample(1, sn, 1, 3 * mb)).unwrap();
    }
    store.commit().unwrap();
    assert_eq!(store.purge_instance(ch, key(1)).unwrap(), 20);
    assert_eq!(segment_files(&path).len(), 1, "the active segment stays");
    let _ = store.insert(ch, &sample(1, 21, 2, 5 * mb)).unwrap();
    store.commit().unwrap();
    let files = segment_files(&path);
    assert_eq!(files.len(), 1, "segment 1 was reclaimed: {files:?}");
    assert!(files[0].ends_with("00000002.seg"), "{files:?}");
    assert_eq!(sns(&store, ch), vec![21]);
}

#[test]
fn a_store_reopened_with_a_size_cap_reads_its_segments_and_keeps_new_payloads_in_rows() {
    let dir = Scratch::new("capreopen");
    let path = dir.file("s.db");
    let ch = {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", Limits::default())).unwrap();
        for sn in 1..=5 {
            let _ = store.insert(ch, &sample(1, sn, 1, 5000)).unwrap();
        }
        store.commit().unwrap();
        ch
    };
    let options = StoreOptions {
        max_bytes: Some(64 << 20),
        ..StoreOptions::default()
    };
    let mut store = Store::open(&path, options).unwrap();
    for sn in 6..=8 {
        let _ = store.insert(ch, &sample(1, sn, 1, 5000)).unwrap();
    }
    store.commit().unwrap();
    let mut got = Vec::new();
    store.for_each_sample(ch, |s| got.push(s)).unwrap();
    assert_eq!(
        got,
        (1..=8).map(|sn| sample(1, sn, 1, 5000)).collect::<Vec<_>>()
    );
    let in_rows: i64 = store_conn(&path)
        .query_row("SELECT count(*) FROM samples WHERE seg IS NULL", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(in_rows, 3, "the capped store's own inserts stay in rows");
}

#[test]
fn a_batch_of_rows_that_fails_part_way_loses_its_transaction_whole_and_says_so() {
    // Rows of segment payloads are INSERTed 32 to a statement that does not undo itself when
    // a row fails (`OR FAIL`); the store must then roll the whole transaction back and report
    // it lost, never commit the rows before the failing one, nor count the others stored.
    let dir = Scratch::new("failbatch");
    let path = dir.file("s.db");
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    for sn in 1..=10 {
        let _ = store.insert(ch, &sample(1, sn, 1, 1000)).unwrap();
    }
    assert_eq!(store.commit().unwrap(), 10);
    // A row of the next batch fails (another connection's trigger stands for any failure).
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch(
            "CREATE TRIGGER fail_one BEFORE INSERT ON samples WHEN NEW.sn = 40 \
             BEGIN SELECT RAISE(FAIL, 'injected'); END;",
        )
        .unwrap();
    let mut failed = None;
    for sn in 11..=60 {
        if let Err(e) = store.insert(ch, &sample(1, sn, 1, 1000)) {
            failed = Some((sn, e));
            break;
        }
    }
    let (at, err) = failed.expect("the batch holding sn 40 fails");
    assert!(at >= 40, "failed at {at}: {err}");
    let committed = store.commit();
    assert!(
        matches!(committed, Ok(0) | Err(_)),
        "nothing of the failed transaction is committed: {committed:?}"
    );
    other.execute_batch("DROP TRIGGER fail_one").unwrap();
    drop(store);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(sns(&store, ch), (1..=10).collect::<Vec<_>>());
}
