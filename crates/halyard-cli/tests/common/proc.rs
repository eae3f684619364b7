//! A child process of a test whose standard output lines are collected as they come, for
//! the tests that start, wait on and kill `halyard` processes.
#![allow(dead_code)] // each test binary uses the part it needs

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A child whose stdout lines arrive on a channel; `seen` holds those collected so far.
pub struct Proc {
    pub child: Child,
    lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl Proc {
    /// Starts `c` on loopback, stdin closed, stderr inherited.
    pub fn spawn(mut c: Command) -> Proc {
        let mut child = c
            .env("HALYARD_INTERFACE", "lo")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Proc {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Collects lines until `done` holds for them (true) or `limit` passes (false).
    pub fn wait_until(&mut self, limit: Duration, done: impl Fn(&[String]) -> bool) -> bool {
        let end = Instant::now() + limit;
        loop {
            if done(&self.seen) {
                return true;
            }
            match self
                .lines
                .recv_timeout(end.saturating_duration_since(Instant::now()))
            {
                Ok(l) => self.seen.push(l),
                Err(_) => return false,
            }
        }
    }

    /// Collects lines until one holds `text` (true) or `limit` passes (false). (The test
    /// harness prints a child test's first line after its own "test NAME ... ".)
    pub fn wait_for(&mut self, text: &str, limit: Duration) -> bool {
        self.wait_until(limit, |seen| seen.iter().any(|l| l.contains(text)))
    }

    /// Collects the lines already there.
    pub fn drain(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.seen.push(l);
        }
    }

    /// SIGKILL, then its exit and the lines it printed.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(20));
        self.drain();
    }

    /// SIGINT, then its exit (within `limit`, else SIGKILL); true if it exited with status 0.
    pub fn interrupt(&mut self, limit: Duration) -> bool {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill -INT");
        assert!(sent.success());
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().expect("wait") {
                while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(100)) {
                    self.seen.push(l);
                }
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill9();
        false
    }
}
