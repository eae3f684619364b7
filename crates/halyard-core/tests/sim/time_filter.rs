//! Proves writer-side TIME_BASED_FILTER on a lossy simulated network: a writer streaming two
//! instances at 100 Hz sends a Halyard reader that asks for a 100 ms minimum separation exactly
//! the samples the reader's own filter admits (one per instance per 100 ms, measured on source
//! timestamps) and GAPs, never DATA, for the others, so the reader's filter has nothing left to
//! drop, while an unfiltered reader beside it gets every sample; the writer counts what it
//! withheld. Also for a late joiner of a TRANSIENT_LOCAL writer (the history is filtered the
//! same way), for a reader that changes its separation at run time, and for a best-effort
//! reader (nothing, not even a GAP, for what is withheld).

use crate::net::*;
use halyard_core::wire::qos::{DurabilityKind, EndpointQos, ReliabilityKind};
use halyard_core::wire::{Duration as WireDuration, EntityId, Time};
use halyard_core::{ChangeKind, Event, NewChange, ReaderSpec, WriterSpec};
use std::sync::Arc;

const TOPIC: &str = "Timed";

/// One sample written: its instance, index and source timestamp (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Written {
    key: u8,
    index: u64,
    ts: i64,
}

/// A keyed sample: encapsulation header, the instance's key byte, padding, the index.
fn payload(key: u8, index: u64) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 0, key, 0, 0, 0];
    v.extend_from_slice(&index.to_le_bytes());
    v
}

fn key_of(p: &[u8], _key_only: bool) -> Option<[u8; 16]> {
    p.get(4).map(|&k| [k; 16])
}

fn index_of(p: &[u8]) -> u64 {
    p.get(8..16)
        .and_then(|b| b.try_into().ok())
        .map_or(u64::MAX, u64::from_le_bytes)
}

fn wire_ms(ms: u64) -> WireDuration {
    WireDuration::from_nanos(ms as i64 * 1_000_000)
}

/// Node `i`'s configuration. These tests are about filtering: a 100 s lease keeps a run of
/// lost SPDP announcements at 20 % loss from expiring a participant (as in content_filter).
fn config(i: u8) -> halyard_core::ParticipantConfig {
    let mut c = node_config(i);
    c.lease_duration = std::time::Duration::from_secs(100);
    c
}

fn writer(net: &mut SimNet, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = WriterSpec {
        topic_name: TOPIC.into(),
        type_name: "Keyed".into(),
        qos,
        has_key: true,
    };
    net.p(0).create_writer(now, spec)
}

fn reader(net: &mut SimNet, node: usize, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = ReaderSpec {
        topic_name: TOPIC.into(),
        type_name: "Keyed".into(),
        qos,
        has_key: true,
    };
    let r = net.p(node).create_reader(now, spec);
    net.p(node)
        .set_reader_key_fn(r, Some(std::sync::Arc::new(key_of)));
    r
}

fn with_separation(mut q: EndpointQos, ms: u64) -> EndpointQos {
    q.time_based_filter = wire_ms(ms);
    q
}

fn durable(mut q: EndpointQos) -> EndpointQos {
    q.durability = DurabilityKind::TransientLocal;
    q
}

/// Runs until writer `w` on node 0 has matched `n` readers (panics with the seed otherwise).
fn until_matched(net: &mut SimNet, w: EntityId, n: usize) {
    let seed = net.seed;
    let ok = net.run_until(120 * SEC, |net| {
        let matched = net.node(0).events.iter().filter(|(_, e)| {
            matches!(e, Event::PublicationMatched { writer, matched: true, .. } if *writer == w)
        });
        matched.count() >= n
    });
    assert!(ok, "seed {seed:#x}: the writer did not match {n} readers");
}

/// Writes one sample of instance 1 and one of instance 2 every 10 ms (100 Hz) for `rounds`
/// rounds, stamped with the virtual time of the write (a full writer is retried every
/// millisecond); indices continue from `first`. Returns what was written, in order.
fn write_100hz(net: &mut SimNet, w: EntityId, rounds: u64, first: u64) -> Vec<Written> {
    let mut out = Vec::new();
    for round in 0..rounds {
        for key in [1u8, 2] {
            let index = first + 2 * round + u64::from(key) - 1;
            out.push(write_stamped(net, w, key, index));
        }
        net.run_for(10 * MS);
    }
    out
}

/// Writes sample `index` of instance `key`, stamped when it is accepted.
fn write_stamped(net: &mut SimNet, w: EntityId, key: u8, index: u64) -> Written {
    for _ in 0..100_000 {
        let ts = net.now as i64;
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: [key; 16],
            payload: Arc::new(payload(key, index)),
            timestamp: Some(Time::from_nanos(ts)),
            original: None,
        };
        let now = net.instant();
        match net.write(0, now, w, change) {
            Ok(_) => {
                net.flush();
                return Written { key, index, ts };
            }
            Err(halyard_core::WriteError::Full) => net.run_for(MS),
            Err(e) => panic!("seed {:#x}: write failed: {e:?}", net.seed),
        }
    }
    panic!("seed {:#x}: write blocked for 100 s virtual", net.seed);
}

/// What a reader filtering with `separation_ms` admits of `written`, in order: per instance,
/// a sample stamped at least the separation after the last one admitted (the reader side's
/// rule, and so what the writer must send).
fn admitted(written: &[Written], separation_ms: u64) -> Vec<Written> {
    let sep = separation_ms as i64 * MS as i64;
    let mut last: [Option<i64>; 256] = [None; 256];
    written
        .iter()
        .filter(|s| {
            let mark = &mut last[usize::from(s.key)];
            if mark.is_some_and(|m| s.ts < m + sep) {
                return false;
            }
            *mark = Some(s.ts);
            true
        })
        .copied()
        .collect()
}

/// What reader `r` of node `node` delivered, in order.
fn delivered(net: &SimNet, node: usize, r: EntityId) -> Vec<Written> {
    net.node(node)
        .samples
        .iter()
        .filter(|(_, s)| s.reader == r)
        .map(|(_, s)| Written {
            key: s.payload.get(4).copied().unwrap_or(0),
            index: index_of(&s.payload),
            ts: s.source_timestamp.map_or(-1, |t| t.to_nanos()),
        })
        .collect()
}

/// Lines of writer `w`'s submessages of kind `what` ("DATA", "Gap(") recorded as delivered to
/// node `to`.
fn lines<'a>(net: &'a SimNet, what: &'a str, w: EntityId, to: usize) -> Vec<&'a str> {
    let writer = format!("{w:?}");
    let log = net.record.as_deref().unwrap_or_default();
    log.iter()
        .filter(|d| d.to == to && d.line.starts_with(what) && d.line.contains(&writer))
        .map(|d| d.line.as_str())
        .collect()
}

/// Sequence numbers of writer `w`'s DATA delivered to node `to`, and their payload bytes.
fn data_to(net: &SimNet, w: EntityId, to: usize) -> (Vec<i64>, u64) {
    let mut sns = Vec::new();
    let mut bytes = 0;
    for line in lines(net, "DATA ", w, to) {
        let sn = line.split(" sn ").nth(1).and_then(|r| r.split(' ').next());
        sns.extend(sn.and_then(|s| s.parse::<i64>().ok()));
        let b = line.rsplit('(').next().and_then(|r| r.split(' ').next());
        bytes += b.and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    }
    (sns, bytes)
}

/// Sequence numbers writer `w`'s GAPs delivered to node `to` declared irrelevant.
fn gapped_to(net: &SimNet, w: EntityId, to: usize) -> Vec<i64> {
    let number = |line: &str, after: &str| -> Option<i64> {
        let rest = line.split(after).nth(1)?;
        rest.split(')').next()?.parse().ok()
    };
    let mut out = Vec::new();
    for line in lines(net, "Gap(", w, to) {
        // gap_start..gap_list.base (the tests' GAPs carry no bitmap beyond it).
        let start = number(line, "gap_start: SequenceNumber(");
        let end = number(line, "base: SequenceNumber(");
        if let (Some(s), Some(e)) = (start, end) {
            out.extend(s..e);
        }
    }
    out
}

/// The sequence numbers of `written` (the writer wrote nothing else), given the first one.
fn sn_of(written: &[Written], s: &Written, first_sn: i64) -> i64 {
    first_sn + written.iter().position(|x| x == s).unwrap_or(usize::MAX) as i64
}

/// Checks that what reader `r` on node `node` got is exactly what its filter admits of
/// `written` (sequence numbers from `first_sn`), that it was sent DATA for nothing else, GAPs
/// for the rest if `reliable`, nothing at all otherwise, and that its own filter dropped
/// nothing. Returns how many were withheld.
fn check_filtered(
    net: &SimNet,
    (w, node, r): (EntityId, usize, EntityId),
    written: &[Written],
    want: &[Written],
    first_sn: i64,
    reliable: bool,
) -> u64 {
    let seed = net.seed;
    let got = delivered(net, node, r);
    assert_eq!(got, want, "seed {seed:#x}: the filtered reader's samples");
    let sent: Vec<i64> = want.iter().map(|s| sn_of(written, s, first_sn)).collect();
    let withheld: Vec<i64> = written
        .iter()
        .map(|s| sn_of(written, s, first_sn))
        .filter(|sn| !sent.contains(sn))
        .collect();
    let (data, _) = data_to(net, w, node);
    let stray: Vec<&i64> = data.iter().filter(|sn| withheld.contains(sn)).collect();
    assert!(
        stray.is_empty(),
        "seed {seed:#x}: DATA of withheld samples sent: {stray:?}"
    );
    let gaps = gapped_to(net, w, node);
    if reliable {
        let missing: Vec<&i64> = withheld.iter().filter(|sn| !gaps.contains(sn)).collect();
        assert!(
            missing.is_empty(),
            "seed {seed:#x}: withheld without a GAP: {missing:?}"
        );
    } else {
        assert!(
            gaps.is_empty(),
            "seed {seed:#x}: GAPs to a best-effort reader"
        );
    }
    assert_eq!(
        net.node(node).p.stats().filtered_by_time,
        0,
        "seed {seed:#x}: the reader's own filter dropped samples the writer sent"
    );
    withheld.len() as u64
}

#[test]
fn a_time_filtered_reader_gets_one_sample_per_separation_at_20pct_loss() {
    let name = "a_time_filtered_reader_gets_one_sample_per_separation_at_20pct_loss";
    for_each_seed(name, 20, |seed| {
        const ROUNDS: u64 = 300;
        let mut net = SimNet::new(seed, Faults::lossy(0.2));
        for i in 1..=3 {
            net.add_node(config(i));
        }
        let w = writer(&mut net, reliable_keep_all_writer());
        let filtered = reader(
            &mut net,
            1,
            with_separation(reliable_keep_all_reader(), 100),
        );
        let plain = reader(&mut net, 2, reliable_keep_all_reader());
        net.flush();
        until_matched(&mut net, w, 2);
        net.record = Some(Vec::new());
        let written = write_100hz(&mut net, w, ROUNDS, 0);
        let n = written.len();
        let done = net.run_until(300 * SEC, |net| {
            delivered(net, 2, plain).len() >= n && net.nodes[0].p.writer_all_acked(w)
        });
        assert!(done, "seed {seed:#x}: stalled; {:?}", net.stats);
        assert_eq!(
            delivered(&net, 2, plain),
            written,
            "seed {seed:#x}: the unfiltered reader"
        );
        let want = admitted(&written, 100);
        let withheld = check_filtered(&net, (w, 1, filtered), &written, &want, 1, true);
        assert_eq!(
            net.nodes[0].p.writer_time_filtered_out(w),
            withheld,
            "seed {seed:#x}: the writer's count"
        );
        // About one sample per instance per 100 ms: never two closer, never much further apart
        // than the writer's own pauses allow.
        let gap_max = written.windows(3).map(|s| s[2].ts - s[0].ts).max();
        for key in [1, 2] {
            let ts: Vec<i64> = want.iter().filter(|s| s.key == key).map(|s| s.ts).collect();
            for pair in ts.windows(2) {
                let d = pair[1] - pair[0];
                assert!(
                    d >= 100 * MS as i64 && d <= 100 * MS as i64 + gap_max.unwrap_or(0),
                    "seed {seed:#x}: instance {key}: {} ms between samples",
                    d as f64 / 1e6
                );
            }
            let span = ts.last().unwrap_or(&0) - ts.first().unwrap_or(&0);
            assert!(
                ts.len() as i64 >= span / (200 * MS as i64) && ts.len() >= 10,
                "seed {seed:#x}: instance {key}: {} samples over {} ms",
                ts.len(),
                span / MS as i64
            );
        }
        // The filtered reader was sent a fraction of the DATA bytes.
        let (_, bytes_filtered) = data_to(&net, w, 1);
        let (_, bytes_plain) = data_to(&net, w, 2);
        assert!(
            bytes_filtered * 5 < bytes_plain,
            "seed {seed:#x}: {bytes_filtered} DATA bytes to the filtered reader, \
             {bytes_plain} to the other"
        );
    });
}

#[test]
fn a_late_joiner_of_a_transient_local_writer_gets_the_history_filtered() {
    let name = "a_late_joiner_of_a_transient_local_writer_gets_the_history_filtered";
    for_each_seed(name, 20, |seed| {
        let mut net = SimNet::new(seed, Faults::lossy(0.2));
        net.add_node(config(1));
        net.add_node(config(2));
        let w = writer(&mut net, durable(reliable_keep_all_writer()));
        let written = write_100hz(&mut net, w, 100, 0);
        net.record = Some(Vec::new());
        let rq = with_separation(durable(reliable_keep_all_reader()), 100);
        let r = reader(&mut net, 1, rq);
        net.flush();
        let want = admitted(&written, 100);
        let done = net.run_until(300 * SEC, |net| {
            delivered(net, 1, r).len() >= want.len() && net.nodes[0].p.writer_all_acked(w)
        });
        assert!(done, "seed {seed:#x}: stalled; {:?}", net.stats);
        let withheld = check_filtered(&net, (w, 1, r), &written, &want, 1, true);
        assert_eq!(net.nodes[0].p.writer_time_filtered_out(w), withheld);
        assert!(withheld >= 150, "seed {seed:#x}: {withheld} withheld");
    });
}

#[test]
fn a_changed_separation_applies_once_announced() {
    for_each_seed("a_changed_separation_applies_once_announced", 20, |seed| {
        let mut net = SimNet::new(seed, Faults::lossy(0.2));
        net.add_node(config(1));
        net.add_node(config(2));
        let w = writer(&mut net, reliable_keep_all_writer());
        let rq = with_separation(reliable_keep_all_reader(), 100);
        let r = reader(&mut net, 1, rq.clone());
        net.flush();
        until_matched(&mut net, w, 1);
        let mut written = Vec::new();
        let mut want = Vec::new();
        for (i, separation_ms) in [100u64, 300, 0, 50].into_iter().enumerate() {
            if i > 0 {
                // What was written under the previous separation is delivered under it.
                let settled = net.run_until(300 * SEC, |net| {
                    delivered(net, 1, r).len() >= want.len() && net.nodes[0].p.writer_all_acked(w)
                });
                assert!(settled, "seed {seed:#x}: stalled; {:?}", net.stats);
                let now = net.instant();
                net.p(1)
                    .set_reader_qos(now, r, with_separation(rq.clone(), separation_ms))
                    .expect("a changeable policy");
                net.flush();
                // The new announcement reaches the writer (SEDP repairs it under loss).
                net.run_for(20 * SEC);
            }
            let phase = write_100hz(&mut net, w, 100, written.len() as u64);
            want.extend(admitted(&phase, separation_ms));
            written.extend(phase);
        }
        let done = net.run_until(300 * SEC, |net| {
            delivered(net, 1, r).len() >= want.len() && net.nodes[0].p.writer_all_acked(w)
        });
        assert!(
            done,
            "seed {seed:#x}: stalled: {} of {} delivered; {:?}; acked {}; missing {:?}",
            delivered(&net, 1, r).len(),
            want.len(),
            net.stats,
            net.nodes[0].p.writer_all_acked(w),
            want.iter()
                .filter(|s| !delivered(&net, 1, r).contains(s))
                .collect::<Vec<_>>()
        );
        assert_eq!(delivered(&net, 1, r), want, "seed {seed:#x}");
        assert_eq!(
            net.nodes[0].p.writer_time_filtered_out(w),
            (written.len() - want.len()) as u64,
            "seed {seed:#x}"
        );
        assert_eq!(net.node(1).p.stats().filtered_by_time, 0, "seed {seed:#x}");
    });
}

#[test]
fn a_best_effort_reader_is_sent_nothing_for_what_is_withheld() {
    for_each_seed(
        "a_best_effort_reader_is_sent_nothing_for_what_is_withheld",
        5,
        |seed| {
            let mut net = SimNet::new(seed, Faults::none());
            net.add_node(config(1));
            net.add_node(config(2));
            let w = writer(&mut net, reliable_keep_all_writer());
            let mut rq = EndpointQos::reader_default();
            rq.reliability.kind = ReliabilityKind::BestEffort;
            let r = reader(&mut net, 1, with_separation(rq, 100));
            net.flush();
            until_matched(&mut net, w, 1);
            net.record = Some(Vec::new());
            let written = write_100hz(&mut net, w, 100, 0);
            net.run_for(SEC);
            let want = admitted(&written, 100);
            let withheld = check_filtered(&net, (w, 1, r), &written, &want, 1, false);
            assert_eq!(net.nodes[0].p.writer_time_filtered_out(w), withheld);
        },
    );
}
