//! Proves that the store keeps a channel's XTypes type (schema version 4): across a reopen,
//! replaced when set again, in memory too, and that a version-3 store is converted (its
//! channels without a type) and keeps its samples.

mod common;

use common::{sample, sns, spec, Scratch};
use halyard_store::{ChannelType, Limits, Store, StoreOptions, SCHEMA_VERSION};

fn described(tag: u8) -> ChannelType {
    ChannelType {
        type_information: vec![tag; 40],
        type_objects: vec![vec![tag, 1, 2], Vec::new(), vec![tag; 700]],
    }
}

#[test]
fn a_channels_type_survives_a_reopen_and_is_replaced_when_set_again() {
    let dir = Scratch::new("channel-types");
    let path = dir.file("s.db");
    let (a, b) = {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let a = store.channel(&spec("A", Limits::default())).unwrap();
        let b = store.channel(&spec("B", Limits::default())).unwrap();
        store.set_channel_type(a, &described(1)).unwrap();
        assert_eq!(store.channel_type(a).unwrap(), Some(described(1)));
        assert_eq!(store.channel_type(b).unwrap(), None);
        (a, b)
    };
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.channel_type(a).unwrap(), Some(described(1)));
    assert_eq!(store.channel_type(b).unwrap(), None);
    store.set_channel_type(a, &described(2)).unwrap();
    // Within a pending transaction, it is committed with it.
    let _ = store.insert(b, &sample(1, 1, 1, 10)).unwrap();
    store.set_channel_type(b, &described(3)).unwrap();
    store.commit().unwrap();
    drop(store);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.channel_type(a).unwrap(), Some(described(2)));
    assert_eq!(store.channel_type(b).unwrap(), Some(described(3)));
    assert_eq!(sns(&store, b), vec![1]);
}

#[test]
fn an_in_memory_store_keeps_types_too() {
    let mut store = Store::in_memory(StoreOptions::default()).unwrap();
    let ch = store.channel(&spec("T", Limits::default())).unwrap();
    store.set_channel_type(ch, &described(7)).unwrap();
    assert_eq!(store.channel_type(ch).unwrap(), Some(described(7)));
}

#[test]
fn a_version_3_store_is_converted_and_keeps_its_samples() {
    let dir = Scratch::new("channel-types-v3");
    let path = dir.file("s.db");
    let ch = {
        let mut store = Store::open(&path, StoreOptions::default()).unwrap();
        let ch = store.channel(&spec("T", Limits::default())).unwrap();
        for sn in 1..=3 {
            let _ = store.insert(ch, &sample(1, sn, 1, 100)).unwrap();
        }
        store.commit().unwrap();
        ch
    };
    {
        // Make it what version 3 wrote.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("DROP TABLE channel_types; PRAGMA user_version = 3;")
            .unwrap();
    }
    let mut store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(sns(&store, ch), vec![1, 2, 3]);
    assert_eq!(store.channel_type(ch).unwrap(), None);
    store.set_channel_type(ch, &described(4)).unwrap();
    drop(store);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.channel_type(ch).unwrap(), Some(described(4)));
    drop(store);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}
