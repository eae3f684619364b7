//! Proves that reliable samples of 300 KB and 3 MB, fragmented (fragment_size 16000,
//! max_message_size 65000), arrive intact byte for byte under 10% loss.

use crate::net::*;

#[test]
fn large_fragmented_samples_under_loss() {
    for_each_seed("large_fragmented_samples_under_loss", 50, |seed| {
        let mut net = SimNet::new(
            seed,
            Faults {
                jitter_ns: 300_000,
                ..Faults::lossy(0.10)
            },
        );
        for i in 1..=2 {
            let mut c = node_config(i);
            c.fragment_size = 16_000;
            c.max_message_size = 65_000;
            net.add_node(c);
        }
        net.nodes[0].capacity = Some(125_000_000); // 1 Gbit/s
        let (_w, _r) = matched_pair(
            &mut net,
            "Large",
            reliable_keep_all_writer(),
            reliable_keep_all_reader(),
        );
        let sizes = [300_000usize, 3_000_000];
        let mut sent = Vec::new();
        for (i, &len) in sizes.iter().enumerate() {
            let p = indexed_payload(i as u64, len);
            sent.push(p.clone());
            write_retrying(&mut net, 0, _w, [0; 16], p);
        }
        let ok = net.run_until(120 * SEC, |n| n.node(1).samples.len() >= sizes.len());
        assert!(
            ok,
            "seed {seed:#x}: only {} of {} large samples delivered in 120 s virtual; {:?}",
            net.node(1).samples.len(),
            sizes.len(),
            net.stats
        );
        let got: Vec<&Vec<u8>> = net
            .node(1)
            .samples
            .iter()
            .map(|(_, s)| &*s.payload)
            .collect();
        assert_eq!(got.len(), sent.len(), "seed {seed:#x}");
        for (i, (g, s)) in got.iter().zip(&sent).enumerate() {
            assert_eq!(g.len(), s.len(), "seed {seed:#x}: sample {i} length");
            assert!(*g == s, "seed {seed:#x}: sample {i} content differs");
        }
        assert!(
            net.run_until(60 * SEC, |n| n.nodes[0].p.writer_all_acked(_w)),
            "seed {seed:#x}: not acked"
        );
    });
}
