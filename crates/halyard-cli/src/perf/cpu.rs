//! ddsperf's CPU statistics (cputime.c): once a second the RSS, context switches per second
//! and each thread's user/system CPU percentage, printed when some thread used >= 0.5% and
//! published as a `CPUStats` sample. Read from /proc (Linux).

use std::collections::BTreeMap;
use std::time::Instant;

/// ddsperf's per-thread CPU record (`@final @nested struct CPUStatThread`).
#[derive(halyard::CdrType, Clone, Debug, Default)]
#[topic(nested)]
pub struct CPUStatThread {
    pub name: String,
    pub u_pct: i32,
    pub s_pct: i32,
}

/// ddsperf's CPU statistics type (topic `DDSPerfCPUStats`).
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "CPUStats")]
pub struct CPUStats {
    #[key]
    #[must_understand]
    pub hostname: String,
    #[key]
    #[must_understand]
    pub pid: u32,
    pub maxrss: f64,
    pub vcsw: u32,
    pub ivcsw: u32,
    pub some_above: bool,
    pub cpu: Vec<CPUStatThread>,
}

/// Clock ticks per second of /proc/*/stat times (USER_HZ, 100 on Linux).
const TICKS: f64 = 100.0;

struct Thr {
    name: Option<String>,
    ut: f64,
    st: f64,
}

pub struct CpuRecorder {
    tprev: Instant,
    vcsw: u64,
    ivcsw: u64,
    threads: BTreeMap<String, Thr>,
    pub sample: CPUStats,
}

fn status_field(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// (voluntary, involuntary) context switches summed over all threads.
fn ctxt_switches() -> (u64, u64) {
    let mut v = (0, 0);
    for tid in task_ids() {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")) {
            v.0 += status_field(&s, "voluntary_ctxt_switches:").unwrap_or(0);
            v.1 += status_field(&s, "nonvoluntary_ctxt_switches:").unwrap_or(0);
        }
    }
    v
}

fn task_ids() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A thread's (user, system) CPU seconds.
fn thread_times(tid: &str) -> Option<(f64, f64)> {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // Fields after the parenthesised command name (which may contain spaces).
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime and stime are fields 14 and 15.
    let ut: f64 = f.get(11)?.parse().ok()?;
    let st: f64 = f.get(12)?.parse().ok()?;
    Some((ut / TICKS, st / TICKS))
}

fn thread_name(tid: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

fn above(du: f64, ds: f64) -> bool {
    du >= 0.005 || ds >= 0.005
}

impl CpuRecorder {
    pub fn new(hostname: String) -> Self {
        let (vcsw, ivcsw) = ctxt_switches();
        let mut r = CpuRecorder {
            tprev: Instant::now(),
            vcsw,
            ivcsw,
            threads: BTreeMap::new(),
            sample: CPUStats {
                hostname,
                pid: std::process::id(),
                ..Default::default()
            },
        };
        r.scan_new_threads();
        r
    }

    fn scan_new_threads(&mut self) {
        for tid in task_ids() {
            if self.threads.contains_key(&tid) {
                continue;
            }
            if let Some((ut, st)) = thread_times(&tid) {
                self.threads.insert(tid, Thr { name: None, ut, st });
            }
        }
    }

    /// Takes a new measurement into `self.sample`; returns ddsperf's line (without prefix,
    /// starting with a space) when it prints one.
    pub fn record(&mut self) -> Option<String> {
        let now = Instant::now();
        let dt = now.duration_since(self.tprev).as_secs_f64().max(1e-6);
        self.tprev = now;
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let (vcsw, ivcsw) = ctxt_switches();
        let s = &mut self.sample;
        s.maxrss = status_field(&status, "VmHWM:").unwrap_or(0) as f64 * 1024.0;
        s.vcsw = (vcsw.saturating_sub(self.vcsw) as f64 / dt + 0.5) as u32;
        s.ivcsw = (ivcsw.saturating_sub(self.ivcsw) as f64 / dt + 0.5) as u32;
        self.vcsw = vcsw;
        self.ivcsw = ivcsw;
        s.cpu.clear();
        let (mut du_skip, mut ds_skip) = (0.0, 0.0);
        let mut some_above = false;
        let mut tids: Vec<&String> = self.threads.keys().collect();
        tids.sort_by_key(|t| t.parse::<u64>().unwrap_or(0));
        let tids: Vec<String> = tids.into_iter().cloned().collect();
        for tid in tids {
            let Some((ut, st)) = thread_times(&tid) else {
                self.threads.remove(&tid);
                continue;
            };
            let Some(thr) = self.threads.get_mut(&tid) else {
                continue;
            };
            let (du, ds) = ((ut - thr.ut) / dt, (st - thr.st) / dt);
            thr.ut = ut;
            thr.st = st;
            if !above(du, ds) {
                du_skip += du;
                ds_skip += ds;
                continue;
            }
            some_above = true;
            if thr.name.is_none() {
                thr.name = thread_name(&tid);
            }
            match &thr.name {
                Some(name) => s.cpu.push(CPUStatThread {
                    name: name.clone(),
                    u_pct: (100.0 * du + 0.5) as i32,
                    s_pct: (100.0 * ds + 0.5) as i32,
                }),
                None => {
                    du_skip += du;
                    ds_skip += ds;
                }
            }
        }
        if above(du_skip, ds_skip) {
            some_above = true;
            s.cpu.push(CPUStatThread {
                name: "others".into(),
                u_pct: (100.0 * du_skip + 0.5) as i32,
                s_pct: (100.0 * ds_skip + 0.5) as i32,
            });
        }
        s.some_above = some_above;
        self.scan_new_threads();
        format_cpu(&self.sample, false, true)
    }
}

/// ddsperf's `print_cputime` (without the prefix): None when it prints nothing.
pub fn format_cpu(s: &CPUStats, print_host: bool, fresh: bool) -> Option<String> {
    if !s.some_above {
        return None;
    }
    let mut l = String::new();
    if !fresh {
        l.push_str(" (stale)");
    }
    if print_host {
        let host: String = s.hostname.chars().take(100).collect();
        l.push_str(&format!(" @{host}:{}", s.pid));
    }
    if s.maxrss > 1048576.0 {
        l.push_str(&format!(" rss:{:.1}MB", s.maxrss / 1048576.0));
    } else if s.maxrss > 1024.0 {
        l.push_str(&format!(" rss:{:.0}kB", s.maxrss / 1024.0));
    }
    l.push_str(&format!(" vcsw:{} ivcsw:{}", s.vcsw, s.ivcsw));
    if s.cpu.is_empty() {
        return None;
    }
    for t in &s.cpu {
        l.push_str(&format!(" {}:{}%+{}%", t.name, t.u_pct, t.s_pct));
    }
    Some(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_line_format() {
        let s = CPUStats {
            hostname: "vm".into(),
            pid: 4652,
            maxrss: 7.4 * 1048576.0,
            vcsw: 948,
            ivcsw: 22,
            some_above: true,
            cpu: vec![CPUStatThread {
                name: "pub".into(),
                u_pct: 0,
                s_pct: 3,
            }],
        };
        assert_eq!(
            format_cpu(&s, false, true).unwrap(),
            " rss:7.4MB vcsw:948 ivcsw:22 pub:0%+3%"
        );
        assert_eq!(
            format_cpu(&s, true, false).unwrap(),
            " (stale) @vm:4652 rss:7.4MB vcsw:948 ivcsw:22 pub:0%+3%"
        );
    }

    #[test]
    fn records_this_process() {
        let mut r = CpuRecorder::new("h".into());
        let t = Instant::now();
        while t.elapsed().as_millis() < 300 {
            std::hint::black_box(0u64);
        }
        let line = r.record();
        assert!(r.sample.maxrss > 1024.0);
        assert!(r.sample.some_above, "{:?}", r.sample);
        assert!(line.unwrap().contains(" rss:"));
    }
}
