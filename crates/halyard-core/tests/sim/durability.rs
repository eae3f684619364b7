//! Proves that a TRANSIENT_LOCAL KEEP_LAST(5) writer gives a late-joining TRANSIENT_LOCAL reader
//! exactly the last 5 samples of an instance, in order, while a late VOLATILE reader gets none
//! of the old samples but does get those written after it matched.

use crate::net::*;
use halyard_core::wire::qos::{DurabilityKind, History};
use halyard_core::{Event, ReaderSpec, WriterSpec};

#[test]
fn transient_local_late_joiner() {
    for_each_seed("transient_local_late_joiner", 50, |seed| {
        let mut net = SimNet::new(
            seed,
            Faults {
                jitter_ns: 300_000,
                ..Faults::lossy(0.1)
            },
        );
        let a = net.add_node(node_config(1));
        let b = net.add_node(node_config(2));
        let c = net.add_node(node_config(3));
        let key = [7u8; 16];
        let mut wq = reliable_keep_all_writer();
        wq.durability = DurabilityKind::TransientLocal;
        wq.history = History::KeepLast(5);
        let now = net.instant();
        let spec = |qos| WriterSpec {
            topic_name: "Durable".into(),
            type_name: "Blob".into(),
            qos,
            has_key: true,
        };
        let w = net.p(a).create_writer(now, spec(wq));
        for i in 0..20u64 {
            write_retrying(&mut net, a, w, key, indexed_payload(i, 32));
        }
        // Let the participants discover each other before the readers exist.
        net.run_for(5 * SEC);

        let mut tq = reliable_keep_all_reader();
        tq.durability = DurabilityKind::TransientLocal;
        let rspec = |qos| ReaderSpec {
            topic_name: "Durable".into(),
            type_name: "Blob".into(),
            qos,
            has_key: true,
        };
        let now = net.instant();
        let rt = net.p(b).create_reader(now, rspec(tq));
        net.flush();
        let ok = net.run_until(120 * SEC, |n| {
            n.node(b).samples.len() >= 5 && n.nodes[a].p.writer_all_acked(w)
        });
        assert!(
            ok,
            "seed {seed:#x}: durable reader got {} samples; {:?}",
            net.node(b).samples.len(),
            net.stats
        );
        net.run_for(2 * SEC);
        let got: Vec<(i64, Option<u64>)> = net
            .node(b)
            .samples
            .iter()
            .map(|(_, s)| (s.sn.0, parse_indexed(&s.payload)))
            .collect();
        let want: Vec<(i64, Option<u64>)> = (15..20).map(|i| (i as i64 + 1, Some(i))).collect();
        assert_eq!(got, want, "seed {seed:#x}: durable late joiner");
        assert!(
            net.node(b)
                .samples
                .iter()
                .all(|(_, s)| s.reader == rt && s.key_hash.is_none_or(|k| k == key)),
            "seed {seed:#x}"
        );

        // A volatile late joiner on a third participant.
        let now = net.instant();
        let rv = net
            .p(c)
            .create_reader(now, rspec(reliable_keep_all_reader()));
        net.flush();
        let pc = net.p(c).guid_prefix();
        let ok = net.run_until(120 * SEC, |n| {
            n.node(c).saw(|e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == rv))
                && n.node(a).saw(|e| matches!(e, Event::PublicationMatched { writer, reader, matched: true } if *writer == w && reader.prefix == pc))
        });
        assert!(ok, "seed {seed:#x}: volatile reader did not match");
        net.run_for(2 * SEC);
        assert!(
            net.node(c).samples.is_empty(),
            "seed {seed:#x}: volatile late joiner got old samples: {:?}",
            net.node(c)
                .samples
                .iter()
                .map(|(_, s)| s.sn.0)
                .collect::<Vec<_>>()
        );
        for i in 20..25u64 {
            write_retrying(&mut net, a, w, key, indexed_payload(i, 32));
        }
        let ok = net.run_until(120 * SEC, |n| {
            n.node(c).samples.len() >= 5 && n.node(b).samples.len() >= 10
        });
        assert!(
            ok,
            "seed {seed:#x}: new samples not delivered: volatile {} durable {}",
            net.node(c).samples.len(),
            net.node(b).samples.len()
        );
        net.run_for(2 * SEC);
        let got: Vec<Option<u64>> = net
            .node(c)
            .samples
            .iter()
            .map(|(_, s)| parse_indexed(&s.payload))
            .collect();
        assert_eq!(
            got,
            (20..25).map(Some).collect::<Vec<_>>(),
            "seed {seed:#x}: volatile reader"
        );
        let got: Vec<Option<u64>> = net
            .node(b)
            .samples
            .iter()
            .map(|(_, s)| parse_indexed(&s.payload))
            .collect();
        assert_eq!(
            got,
            (15..25).map(Some).collect::<Vec<_>>(),
            "seed {seed:#x}: durable reader"
        );
    });
}
