//! `halyard durability --store PATH`: a standalone durability service (like RTI's Persistence
//! Service or OpenSplice's durability daemon) that keeps the domain's TRANSIENT data in memory
//! and its PERSISTENT data in the store file, and serves both to readers that come later. The
//! work is done by `halyard::durability`; this is the command line around it.

use halyard::durability::{
    CommitPolicy, DurabilityConfig, DurabilityService, EmbeddedDurability, SyncLevel,
};
use halyard::ParticipantOptions;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const USAGE: &str = "usage:
  halyard durability --store PATH [-d ID] [--commit POLICY] [--sync process|normal|full]
                     [--max-bytes N] [--status SECONDS]
      serves the domain's TRANSIENT (in memory) and PERSISTENT (in the store file PATH,
      created if absent, with PATH-payloads/ and its journal files beside it) data to
      readers that start later, until SIGINT or SIGTERM.
      -d, --domain ID: the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
      --commit sample | batch (default: 4096 samples or 10 ms) | batch:N[:MS] | interval:MS
          when received samples are committed; a writer's samples are acknowledged to it
          only once committed
      --sync process: a commit survives a crash of the process (kill -9), but a power loss
          may damage the store; normal (default): a power loss may lose the latest commits,
          never damages the store; full: every commit survives a power loss
      --max-bytes N: the store file's size limit; a full store refuses samples and says so
      --status S: a status line every S seconds (default 5; 0: none)
  environment: HALYARD_INTERFACE selects the network interface";

/// `println!` that ignores a closed standard output.
macro_rules! out {
    ($($arg:tt)*) => {{
        let mut o = std::io::stdout();
        let _ = writeln!(o, $($arg)*);
        let _ = o.flush();
    }};
}

struct Args {
    domain: u32,
    config: DurabilityConfig,
    status: Duration,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut domain = 0u32;
    let mut status = Duration::from_secs(5);
    let mut config = DurabilityConfig {
        participant: ParticipantOptions {
            durability: EmbeddedDurability::Off,
            entity_name: Some("halyard durability service".into()),
            ..ParticipantOptions::from_env().map_err(|e| e.to_string())?
        },
        ..Default::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--store" => config.store = Some(PathBuf::from(value()?)),
            o if crate::discovery::is_domain_option(o) => {
                domain = crate::discovery::domain_id(&value()?).map_err(|e| e.0)?
            }
            "--commit" => config.commit = value()?.parse::<CommitPolicy>()?,
            "--sync" => config.sync = value()?.parse::<SyncLevel>()?,
            "--max-bytes" => {
                let v = value()?;
                config.max_store_bytes = Some(
                    v.parse()
                        .ok()
                        .filter(|&n: &u64| n > 0)
                        .ok_or_else(|| format!("--max-bytes takes a positive number, not {v:?}"))?,
                )
            }
            "--status" => {
                let v = value()?;
                status = Duration::from_secs(
                    v.parse()
                        .map_err(|_| format!("--status takes seconds, not {v:?}"))?,
                )
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if config.store.is_none() {
        return Err("--store PATH is required (the file of the PERSISTENT data)".into());
    }
    Ok(Args {
        domain,
        config,
        status,
    })
}

/// Entry point: `args` follow `durability`.
pub fn main(args: &[String]) -> i32 {
    if args
        .iter()
        .any(|a| a == "-h" || a == "--help" || a == "help")
    {
        out!("{USAGE}");
        return 0;
    }
    let a = match parse(args) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("halyard durability: {msg}\n{USAGE}");
            return 2;
        }
    };
    let store = a.config.store.clone().unwrap_or_default();
    let service = match DurabilityService::start(a.domain, a.config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("halyard durability: {e}");
            return 2;
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst)) {
            eprintln!("halyard durability: cannot handle SIGINT/SIGTERM: {e}");
            return 2;
        }
    }
    let s = service.stats();
    out!(
        "durability service ready: domain {} store {} loaded {} samples in {} channels",
        a.domain,
        store.display(),
        s.loaded,
        s.channels
    );
    let mut problems_seen = 0usize;
    let mut last_status = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        let s = service.stats();
        // Problems are the latest few: print those not printed yet.
        let total = s.problems.len();
        if total < problems_seen {
            problems_seen = 0;
        }
        for p in &s.problems[problems_seen.min(total)..] {
            out!("problem: {p}");
        }
        problems_seen = total;
        if !a.status.is_zero() && last_status.elapsed() >= a.status {
            last_status = Instant::now();
            out!("{}", status_line(&s));
        }
    }
    let s = service.stop();
    out!("stopped: {}", status_line(&s));
    0
}

fn status_line(s: &halyard::durability::ServiceStats) -> String {
    format!(
        "channels {} loaded {} stored {} duplicates {} commits {} refused-full {} purged {} relay-bytes {}",
        s.channels,
        s.loaded,
        s.stored,
        s.duplicates,
        s.commits,
        s.refused_full,
        s.purged_instances,
        s.relay_payload_bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_parse_and_bad_ones_say_why() {
        let a = parse(&args(&[
            "--store",
            "/tmp/x.sqlite",
            "--domain",
            "7",
            "--commit",
            "interval:20",
            "--sync",
            "full",
            "--max-bytes",
            "1000000",
            "--status",
            "0",
        ]))
        .expect("parses");
        assert_eq!(a.domain, 7);
        assert_eq!(
            a.config.commit,
            CommitPolicy::Interval(Duration::from_millis(20))
        );
        assert_eq!(a.config.sync, SyncLevel::Full);
        assert_eq!(a.config.max_store_bytes, Some(1_000_000));
        assert!(a.status.is_zero());
        for (bad, why) in [
            (&[][..], "--store PATH is required"),
            (&["--store"][..], "--store needs a value"),
            (&["--store", "s", "--domain", "300"][..], "domain id"),
            (
                &["--store", "s", "--commit", "often"][..],
                "bad commit policy",
            ),
            (
                &["--store", "s", "--sync", "maybe"][..],
                "bad sync level \"maybe\"",
            ),
            (&["--store", "s", "--max-bytes", "0"][..], "positive"),
            (&["--store", "s", "--frobnicate"][..], "unknown option"),
        ] {
            let e = parse(&args(bad)).err().expect("refused");
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
