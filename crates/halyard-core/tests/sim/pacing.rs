//! Proves that a best-effort writer of large samples paces itself to what the path absorbs: a
//! writer offering 1 MiB samples at five times what its reader drains (100 MB/s into a 4 MB
//! receive buffer, as a socket) delivers whole samples at close to the reader's rate (at least
//! three quarters of it, what probing for more costs being the rest) once the reader's
//! reception reports set its pace; without the reports (the old behaviour) no sample arrives
//! whole. A KEEP_LAST writer drops superseded samples whole, before
//! sending them, and counts them; a configured bandwidth limit holds without any report.

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, History, ReliabilityKind};
use halyard_core::{ChangeKind, NewChange, ParticipantConfig, ReaderSpec, WriteError, WriterSpec};
use std::sync::Arc;

/// The reader drains its socket at 100 MB/s into a 4 MB buffer.
const DRAIN: (u64, u64) = (100_000_000, 4_000_000);
/// Bytes per sample.
const SAMPLE: usize = 1 << 20;
/// The reader's rate in whole samples per second.
fn drain_samples_per_s() -> f64 {
    DRAIN.0 as f64 / (SAMPLE + 4) as f64
}

fn best_effort(history: History) -> EndpointQos {
    let mut q = EndpointQos::writer_default();
    q.reliability.kind = ReliabilityKind::BestEffort;
    q.history = history;
    q
}

/// What a run of `secs` seconds delivered: whole samples per second over its last
/// `secs - 1` seconds, samples written, samples dropped by the pacer, the final rate.
struct Run {
    delivered_per_s: f64,
    written: u64,
    dropped: u64,
    rate: Option<f64>,
}

/// A writer on node 1 offering a 1 MiB sample every 2 ms (500 samples/s) to a best-effort
/// reader on node 2, for `secs` seconds of virtual time.
fn offer(seed: u64, history: History, tune: fn(&mut ParticipantConfig), secs: u64) -> Run {
    let mut net = SimNet::new(seed, Faults::none());
    let mut a = node_config(1);
    tune(&mut a);
    net.add_node(a);
    let mut b = node_config(2);
    tune(&mut b);
    let reader_node = net.add_node(b);
    net.nodes[reader_node].receive_limit = Some(DRAIN);
    let now = net.instant();
    let w = net.p(0).create_writer(
        now,
        WriterSpec {
            topic_name: "Video".into(),
            type_name: "Frame".into(),
            qos: best_effort(history),
            has_key: false,
        },
    );
    let mut rq = EndpointQos::reader_default();
    rq.reliability.kind = ReliabilityKind::BestEffort;
    let r = net.p(1).create_reader(
        now,
        ReaderSpec {
            topic_name: "Video".into(),
            type_name: "Frame".into(),
            qos: rq,
            has_key: false,
        },
    );
    net.flush();
    assert!(
        run_until_pair_matched(&mut net, (0, w), (1, r), 30 * SEC),
        "seed {seed:#x}: no match"
    );
    let start = net.now;
    let mut written = 0u64;
    let mut counted_from = None;
    while net.now < start + secs * SEC {
        if counted_from.is_none() && net.now >= start + SEC {
            counted_from = Some(net.node(1).samples.len());
        }
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: [0; 16],
            payload: Arc::new(indexed_payload(written, SAMPLE)),
            timestamp: None,
            original: None,
        };
        let now = net.instant();
        match net.write(0, now, w, change) {
            Ok(_) => written += 1,
            Err(WriteError::Full) => {}
            Err(e) => panic!("seed {seed:#x}: write failed: {e:?}"),
        }
        net.flush();
        net.run_for(2 * MS);
    }
    net.run_for(SEC / 2);
    let samples = &net.node(1).samples;
    for (_, s) in samples {
        assert!(
            parse_indexed(&s.payload).is_some(),
            "seed {seed:#x}: a delivered sample is not whole and intact"
        );
    }
    let late = samples.len() - counted_from.unwrap_or(0);
    Run {
        delivered_per_s: late as f64 / (secs - 1) as f64,
        written,
        dropped: net.nodes[0].p.writer_paced_drops(w),
        rate: net.nodes[0].p.writer_paced_rate(w),
    }
}

fn defaults(_: &mut ParticipantConfig) {}

fn no_reports(cfg: &mut ParticipantConfig) {
    cfg.reception_report_interval = std::time::Duration::from_secs(3600);
}

/// The scenario has no random faults: one seed (the writer's and reader's behaviour is the
/// same for every seed) keeps the suite fast.
#[test]
fn a_paced_best_effort_writer_delivers_whole_samples_at_the_path_rate() {
    let seed = 3;
    let link = drain_samples_per_s();
    let paced = offer(seed, History::KeepAll, defaults, 4);
    println!(
        "paced: {:.1} whole samples/s of {link:.1} the reader drains; {} written, rate {:?} B/s",
        paced.delivered_per_s, paced.written, paced.rate
    );
    assert!(
        paced.delivered_per_s >= 0.75 * link,
        "paced writer delivered {:.1} samples/s, the path takes {link:.1}",
        paced.delivered_per_s
    );
    let unpaced = offer(seed, History::KeepAll, no_reports, 4);
    println!(
        "without reports: {:.1} whole samples/s; {} written",
        unpaced.delivered_per_s, unpaced.written
    );
    assert!(
        unpaced.delivered_per_s < 0.5 * paced.delivered_per_s,
        "without pacing {:.1} samples/s arrived whole: the test proves nothing",
        unpaced.delivered_per_s
    );
}

#[test]
fn a_keep_last_writer_drops_superseded_samples_whole_and_counts_them() {
    let run = offer(7, History::KeepLast(1), defaults, 3);
    assert!(run.dropped > 0, "nothing was dropped at 5x the path rate");
    assert!(
        run.delivered_per_s >= 0.75 * drain_samples_per_s(),
        "KEEP_LAST delivered {:.1} samples/s",
        run.delivered_per_s
    );
    println!(
        "KEEP_LAST: {} written, {} dropped whole before sending, {:.1} delivered/s",
        run.written, run.dropped, run.delivered_per_s
    );
}

#[test]
fn a_configured_bandwidth_limit_holds_without_reports() {
    fn limited(cfg: &mut ParticipantConfig) {
        no_reports(cfg);
        cfg.bandwidth_limit = Some(50_000_000);
    }
    let run = offer(9, History::KeepAll, limited, 3);
    let expected = 50_000_000.0 / (SAMPLE + 4) as f64;
    assert!(
        run.delivered_per_s <= expected * 1.1 && run.delivered_per_s >= expected * 0.8,
        "a 50 MB/s limit delivered {:.1} samples/s (expected about {expected:.1})",
        run.delivered_per_s
    );
}
