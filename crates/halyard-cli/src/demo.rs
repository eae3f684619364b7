//! `halyard demo`: a real publish/subscribe between two processes on this machine, with the
//! figures printed: a pong process answers a pinger (latency), then a sub process receives a
//! publisher's stream (throughput, losses). Traffic stays on the chosen interface (the demo
//! defaults to loopback unless HALYARD_INTERFACE is set).

use std::process::{Command, Stdio};

pub fn main(args: &[String]) -> i32 {
    let secs: u32 = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(2);
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
            .args(["perf", "-D", &d])
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
            .args(["perf", "-D", &d])
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
