//! `halyard demo`: a real publish/subscribe between two processes on this machine, with the
//! figures printed: a pong process answers a pinger (latency), then a sub process receives a
//! publisher's stream (throughput, losses). Traffic stays on the chosen interface (the demo
//! defaults to loopback unless HALYARD_INTERFACE is set).

use crate::discovery::{domain_id, is_domain_option, option_value, BadArgs};
use std::process::{Command, Stdio};

const HELP: &str = "usage: halyard demo [SECONDS] [-d DOMAIN]

Runs a real publish/subscribe between two processes on this machine and prints the figures:
`halyard perf ping` against `halyard perf pong` (latency), then `halyard perf pub` against
`halyard perf sub` (throughput, losses), each for SECONDS (default 5, at least 2).
  -d, --domain DOMAIN  the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
Traffic stays on loopback unless HALYARD_INTERFACE names another interface.

Exit status: 0, 1 if a run failed, 2 for bad arguments.";

/// Options of `demo`.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    seconds: u32,
    domain: u32,
}

fn parse(args: &[String]) -> Result<Args, BadArgs> {
    let mut a = Args {
        seconds: 5,
        domain: 0,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            o if is_domain_option(o) => a.domain = domain_id(&option_value(&mut it, o)?)?,
            s => {
                a.seconds = s
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n <= 3600)
                    .ok_or_else(|| BadArgs(format!("unknown argument {s:?}")))?
                    .max(2)
            }
        }
    }
    Ok(a)
}

/// Runs `halyard demo`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    if args
        .iter()
        .any(|a| a == "-h" || a == "--help" || a == "help")
    {
        println!("{HELP}");
        return 0;
    }
    let Args {
        seconds: secs,
        domain,
    } = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("halyard demo: {}\n\n{HELP}", e.0);
            return 2;
        }
    };
    let domain = domain.to_string();
    if std::env::var_os("HALYARD_INTERFACE").is_none() {
        std::env::set_var("HALYARD_INTERFACE", "lo");
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("demo: cannot find own executable: {e}");
            return 2;
        }
    };
    let run = |title: &str, child: &[&str], me: &[&str]| -> i32 {
        println!("== {title}");
        let d = format!("{}", secs + 1);
        let mut c = match Command::new(&exe)
            .args(["perf", "-i", &domain, "-D", &d])
            .args(child)
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("demo: cannot start the second process: {e}");
                return 2;
            }
        };
        let d = format!("{secs}");
        let mine = Command::new(&exe)
            .args(["perf", "-i", &domain, "-D", &d])
            .args(me)
            .status()
            .map(|s| s.code().unwrap_or(1))
            .unwrap_or(2);
        let theirs = c.wait().map(|s| s.code().unwrap_or(1)).unwrap_or(2);
        mine.max(theirs)
    };
    let a = run("latency: `halyard perf ping` <-> `halyard perf pong` (two processes, reliable, 1 KiB samples)", &["pong"], &["ping", "size", "1k"]);
    let b = run("throughput: `halyard perf pub` -> `halyard perf sub` (two processes, reliable KEEP_ALL, 1 KiB samples); lines from the subscriber", &["sub"], &["pub", "size", "1k"]);
    a.max(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn seconds_and_the_domain_in_any_order() {
        let p = |v: &[&str]| parse(&strings(v));
        assert_eq!(
            p(&[]).unwrap(),
            Args {
                seconds: 5,
                domain: 0
            }
        );
        assert_eq!(
            p(&["3", "-d", "192"]).unwrap(),
            Args {
                seconds: 3,
                domain: 192
            }
        );
        assert_eq!(
            p(&["--domain", "192", "1"]).unwrap(),
            Args {
                seconds: 2,
                domain: 192
            }
        );
        assert_eq!(p(&["-i", "9"]).unwrap().domain, 9);
        assert!(p(&["-d", "233"]).is_err());
        assert!(p(&["-d"]).is_err());
        assert!(p(&["--bogus"]).unwrap_err().0.contains("--bogus"));
    }
}
