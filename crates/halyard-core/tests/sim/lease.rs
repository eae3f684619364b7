//! Proves that when a participant vanishes without a goodbye, its peer reports ParticipantLost
//! and unmatches its writer (SubscriptionMatched matched=false) once its lease elapses in
//! virtual time, and not before.

use crate::net::*;
use halyard_core::Event;
use std::time::Duration;

#[test]
fn lease_expiry_reports_participant_lost_and_unmatches() {
    for_each_seed(
        "lease_expiry_reports_participant_lost_and_unmatches",
        50,
        |seed| {
            let mut net = SimNet::new(
                seed,
                Faults {
                    jitter_ns: 300_000,
                    ..Faults::lossy(0.05)
                },
            );
            let mut c1 = node_config(1);
            c1.lease_duration = Duration::from_secs(3);
            c1.spdp_interval = Duration::from_millis(500);
            net.add_node(c1);
            net.add_node(node_config(2));
            let p0 = net.p(0).guid_prefix();
            let (w, r) = matched_pair(
                &mut net,
                "Lease",
                reliable_keep_all_writer(),
                reliable_keep_all_reader(),
            );
            net.run_for(2 * SEC);
            net.kill(0);
            let killed_at = net.now;
            let lost = |e: &Event| matches!(e, Event::ParticipantLost(p) if *p == p0);
            let unmatched = |e: &Event| matches!(e, Event::SubscriptionMatched { reader, writer, matched: false } if *reader == r && writer.prefix == p0 && writer.entity == w);
            let ok = net.run_until(30 * SEC, |n| {
                n.node(1).saw(lost) && n.node(1).saw(unmatched)
            });
            assert!(ok, "seed {seed:#x}: no ParticipantLost/unmatch within 30 s virtual after the peer vanished");
            let at = net
                .node(1)
                .events
                .iter()
                .find(|(_, e)| lost(e))
                .map(|(t, _)| *t)
                .expect("seen");
            // The lease (3 s) runs from the last datagram heard from node 0: SPDP goes out every
            // 500 ms, so that was well within 2 s before the kill (4 lost announcements in a row at
            // 5% loss is negligible), and at most a few ms of latency after it.
            assert!(
                at >= killed_at + SEC,
                "seed {seed:#x}: lost too early: {} ns after the kill",
                at - killed_at
            );
            assert!(
                at <= killed_at + 3 * SEC + 50 * MS,
                "seed {seed:#x}: lost too late: {} ns after the kill",
                at - killed_at
            );
            assert!(
                net.p(1).matched_writers(r).is_empty(),
                "seed {seed:#x}: writer still matched"
            );
        },
    );
}
