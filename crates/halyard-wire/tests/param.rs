//! Proves the parameter list rules: iteration, PAD skipping, sentinel handling, missing-sentinel
//! and overrun errors, key hash / status info access, CDR strings, and the writer's padding.

use halyard_wire::param::*;
use halyard_wire::*;

#[test]
fn writer_pads_values_and_ends_with_sentinel() {
    let mut v = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut v);
    w.raw(0x1234, &[1, 2, 3]);
    w.string(pid::TOPIC_NAME, "abcd");
    w.octets(pid::USER_DATA, &[9]);
    w.with(pid::PARTITION, |b| b.push(7));
    w.finish();
    assert_eq!(&v[4..12], &[0x34, 0x12, 4, 0, 1, 2, 3, 0]);
    assert_eq!(&v[12..16], &[0x05, 0, 12, 0]);
    assert_eq!(&v[16..28], &[5, 0, 0, 0, b'a', b'b', b'c', b'd', 0, 0, 0, 0]);
    assert_eq!(&v[v.len() - 4..], &[1, 0, 0, 0]);
    let pl = ParameterList::new(&v[4..], true);
    assert_eq!(pl.encoded_len().unwrap(), v.len() - 4);
    let lens: Vec<usize> = pl.iter().map(|p| p.unwrap().value.len()).collect();
    assert_eq!(lens, vec![4, 12, 8, 4]);
}

#[test]
fn sentinel_length_is_ignored() {
    let b = [0x16, 0, 4, 0, 1, 2, 0, 0, 1, 0, 8, 0];
    let pl = ParameterList::new(&b, true);
    assert_eq!(pl.encoded_len().unwrap(), 12);
    assert_eq!(pl.iter().count(), 1);
    let b = [0x16, 0, 4, 0, 1, 2, 0, 0, 1, 0, 0xff, 0xff, 0, 0];
    assert_eq!(ParameterList::new(&b, true).encoded_len().unwrap(), 12);
}

#[test]
fn list_errors() {
    for b in [
        &[][..],
        &[0x16, 0, 4, 0, 1, 2, 0, 0][..],
        &[0x16, 0, 8, 0, 1, 2, 0, 0, 1, 0, 0, 0][..],
        &[1, 0][..],
    ] {
        let pl = ParameterList::new(b, true);
        assert_eq!(pl.encoded_len(), Err(WireError::BadParameterList), "{b:?}");
        let items: Vec<_> = pl.iter().collect();
        assert!(items.last().unwrap().is_err());
        assert_eq!(pl.find(pid::KEY_HASH).err(), Some(WireError::BadParameterList));
    }
}

#[test]
fn key_hash_and_status_info() {
    let mut v = Vec::new();
    let mut w = ParameterListWriter::new(&mut v);
    w.raw(pid::KEY_HASH, &[3; 16]);
    w.raw(
        pid::STATUS_INFO,
        &[0, 0, 0, STATUS_INFO_DISPOSED as u8 | STATUS_INFO_UNREGISTERED as u8],
    );
    w.finish();
    for le in [true, false] {
        // Status info is big-endian regardless of the list's byte order; flip the headers only.
        let mut b = v.clone();
        if !le {
            for at in [0usize, 20, 28] {
                b.swap(at, at + 1);
                b.swap(at + 2, at + 3);
            }
        }
        let pl = ParameterList::new(&b, le);
        assert_eq!(pl.key_hash().unwrap(), Some([3; 16]));
        assert_eq!(pl.status_info().unwrap(), 3);
    }
    let mut v = Vec::new();
    let mut w = ParameterListWriter::new(&mut v);
    w.raw(pid::KEY_HASH, &[3; 8]);
    w.raw(pid::STATUS_INFO, &[]);
    w.finish();
    let pl = ParameterList::new(&v, true);
    assert!(matches!(pl.key_hash(), Err(WireError::InvalidField(_))));
    assert!(matches!(pl.status_info(), Err(WireError::InvalidField(_))));
    let empty = [1, 0, 0, 0];
    assert_eq!(ParameterList::new(&empty, true).status_info().unwrap(), 0);
    assert_eq!(ParameterList::new(&empty, true).key_hash().unwrap(), None);
}

#[test]
fn value_reader_alignment_and_strings() {
    let b = [7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut r = ValueReader::new(&b, true);
    assert_eq!(r.bytes(1).unwrap(), &[7]);
    assert_eq!(r.u16().unwrap(), 0); // aligned to 2
    assert_eq!(r.u32().unwrap(), 1); // aligned to 4
    assert_eq!(r.string().unwrap(), ""); // length 0 accepted
    assert_eq!(r.string().unwrap(), "");
    assert_eq!(r.u32(), Err(WireError::Truncated));
    let s = [3, 0, 0, 0, b'h', b'i', 0, 0];
    assert_eq!(ValueReader::new(&s, true).string().unwrap(), "hi");
    let s = [0, 0, 0, 9, b'h', b'i', 0, 0];
    assert_eq!(ValueReader::new(&s, false).string(), Err(WireError::Truncated));
    let s = [2, 0, 0, 0, 0xc3, 0];
    assert!(matches!(ValueReader::new(&s, true).string(), Err(WireError::InvalidField(_))));
    let s = [0xff, 0xff, 0xff, 0xff, 1];
    assert_eq!(ValueReader::new(&s, true).octets(), Err(WireError::Truncated));
}

#[test]
fn value_reader_structures() {
    let mut v = Vec::new();
    let mut w = ParameterListWriter::new(&mut v);
    let l = Locator { kind: 2, port: 7777, address: [9; 16] };
    let g = Guid::new(GuidPrefix([5; 12]), EntityId::SPDP_WRITER);
    let d = Duration { seconds: -1, fraction: 77 };
    w.locator(pid::UNICAST_LOCATOR, &l);
    w.guid(pid::PARTICIPANT_GUID, g);
    w.duration(pid::LIFESPAN, d);
    w.u32(pid::DOMAIN_ID, 0xdead_beef);
    w.finish();
    let pl = ParameterList::new(&v, true);
    let val = |id| ValueReader::new(pl.find(id).unwrap().unwrap().value, true);
    assert_eq!(val(pid::UNICAST_LOCATOR).locator().unwrap(), l);
    assert_eq!(val(pid::PARTICIPANT_GUID).guid().unwrap(), g);
    assert_eq!(val(pid::LIFESPAN).duration().unwrap(), d);
    assert_eq!(val(pid::DOMAIN_ID).i32().unwrap(), 0xdead_beefu32 as i32);
    assert!(pl.find(pid::TOPIC_NAME).unwrap().is_none());
}

#[test]
fn original_writer_info_round_trips_and_short_values_are_errors() {
    let writer = Guid::new(GuidPrefix([7; 12]), EntityId([0, 0, 1, 2]));
    let sn = SequenceNumber((3i64 << 32) | 5);
    let mut v = Vec::new();
    let mut w = ParameterListWriter::new(&mut v);
    w.original_writer(writer, sn);
    w.finish();
    // GUID (16) + SequenceNumber_t (8) + the empty QoS list's sentinel (4).
    assert_eq!(&v[..4], &[0x61, 0, 28, 0]);
    let pl = ParameterList::new(&v, true);
    assert_eq!(pl.original_writer().unwrap(), Some((writer, sn)));
    assert_eq!(ParameterList::new(&[1, 0, 0, 0], true).original_writer().unwrap(), None);
    let short = [0x61, 0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 0];
    assert!(ParameterList::new(&short, true).original_writer().is_err());
}

#[test]
fn group_members_round_trip_and_bad_lengths_are_errors() {
    let ids = [EntityId([0, 0, 1, 2]), EntityId([0, 0, 2, 2]), EntityId([0, 0, 3, 3])];
    let mut v = Vec::new();
    let mut w = ParameterListWriter::new(&mut v);
    w.entity_ids(pid::HALYARD_GROUP_MEMBERS, &ids);
    w.finish();
    // Count (4) + three ids (12).
    assert_eq!(&v[..8], &[0x01, 0x80, 16, 0, 3, 0, 0, 0]);
    let pl = ParameterList::new(&v, true);
    assert_eq!(pl.group_members(8).unwrap(), Some(ids.to_vec()));
    assert!(pl.group_members(2).is_err(), "more ids than the bound");
    assert_eq!(ParameterList::new(&[1, 0, 0, 0], true).group_members(8).unwrap(), None);
    // A count of 2 with one id's bytes.
    let short = [0x01, 0x80, 8, 0, 2, 0, 0, 0, 0, 0, 1, 2, 1, 0, 0, 0];
    assert!(ParameterList::new(&short, true).group_members(8).is_err());
    // A count near u32::MAX is refused by the bound before anything is allocated.
    let huge = [0x01, 0x80, 4, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0];
    assert!(ParameterList::new(&huge, true).group_members(usize::MAX).is_err());
}
