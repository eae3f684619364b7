//! ddsperf's command line: options first, then mode words each with their own arguments.

use halyard::qos::Durability;
use std::time::Duration;

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct PerfArgs {
    pub duration: Option<Duration>,
    pub reliable: bool,
    /// None = KEEP_ALL, Some(n) = KEEP_LAST n.
    pub keep_last: Option<u32>,
    pub domain: u32,
    pub nkeys: u32,
    pub ping: Option<Rate>,
    pub pong: bool,
    pub sub: bool,
    /// `listen` (not in ddsperf): count pings without answering them, like RTI perftest's
    /// non-echoing subscribers; the participant carries no `DDSPerf:` user data, so pingers
    /// neither expect pongs from it nor count it for `-Qminmatch`.
    pub listen: bool,
    pub publish: Option<Rate>,
    /// Total sample size (12 + baggage).
    pub size: u32,
    pub burst: u32,
    /// `-T`: topic type suffix (KS K32 K256 OU UK16 UK1024 S16 S256 S4k S32k).
    pub topic: String,
    /// `-c`: subscribe to and print peers' CPU statistics.
    pub cpu_stats: bool,
    /// `-1`: print sub statistics every second even without data.
    pub sub_every_second: bool,
    /// `-Qminmatch:N`: start ping/pub only once N peers matched all their endpoints.
    pub min_match: Option<u32>,
    /// `-Qinitwait:DUR`: how long to wait for `min_match` peers (then fail).
    pub init_wait: Option<Duration>,
    /// `pub ... X%`: percentage of published samples that are pings subscribers answer.
    pub ping_pct: u32,
    /// `--latency-dump FILE` (not in ddsperf): every latency sample, written at exit.
    pub latency_dump: Option<std::path::PathBuf>,
    /// `--no-batching` (not in ddsperf): send each published sample in its own datagram.
    pub no_batching: bool,
    /// `--durability KIND` (not in ddsperf): DURABILITY of the data, ping and pong endpoints.
    /// TRANSIENT and PERSISTENT writers start the participant's embedded durability service
    /// (`HALYARD_DURABILITY_STORE` names its file). Their instances are unregistered, not
    /// disposed, when the process leaves, so that the service keeps them.
    pub durability: Durability,
}

/// The `-T` values ddsperf accepts.
pub const TOPICS: [&str; 10] = [
    "KS", "K32", "K256", "OU", "UK16", "UK1024", "S16", "S256", "S4k", "S32k",
];

/// A rate: None = as fast as possible.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rate(pub Option<f64>);

pub const USAGE: &str =
    "usage: halyard perf [-D DUR] [-u] [-c] [-1] [-k all|N] [-T TOPIC] [-i DOMAIN] [-n N]\n\
       [-Qminmatch:N] [-Qinitwait:DUR] [--latency-dump FILE] [--no-batching]\n       [--durability volatile|transient-local|transient|persistent] MODE...\n\
TOPIC: KS (default) K32 K256 OU UK16 UK1024 S16 S256 S4k S32k (size only applies to KS)\n\
modes: ping [R[Hz|kHz]|inf] [size S]   pong   sub   pub [R[Hz|kHz]|inf] [size S] [burst N] [X%]\n\
       listen (count pings, never answer; not with other modes)\n\
S accepts B, k, M, kB, KiB, MB, MiB suffixes (k = 1024); size is 12 + baggage bytes.\n\
Wire- and output-compatible with Cyclone DDS ddsperf (topics DDSPerf{R,U}{Data,Ping,Pong}TOPIC).\n\
exit status: 0 ok, 1 matching failure or sample loss, 2 DDS failure, 3 bad arguments";

pub fn parse_size(s: &str) -> Result<u32, String> {
    let s = s.trim();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().map_err(|_| format!("{s}: invalid size"))?;
    let mult = match s[digits.len()..].trim() {
        "" | "B" => 1,
        "k" | "kB" | "KiB" => 1024,
        "M" | "MB" | "MiB" => 1 << 20,
        other => return Err(format!("{s}: unknown size suffix '{other}'")),
    };
    let v = n * mult;
    if v == 0 {
        return Ok(12);
    }
    if v < 12 {
        return Err(format!("{s}: size must be 0 or at least 12"));
    }
    u32::try_from(v).map_err(|_| format!("{s}: size too large"))
}

fn parse_rate(s: &str) -> Option<Rate> {
    if s == "inf" || s == "infHz" {
        return Some(Rate(None));
    }
    let (num, mult) = if let Some(n) = s.strip_suffix("kHz") {
        (n, 1000.0)
    } else if let Some(n) = s.strip_suffix("Hz") {
        (n, 1.0)
    } else {
        (s, 1.0)
    };
    num.parse::<f64>()
        .ok()
        .filter(|v| *v >= 0.0)
        .map(|v| Rate(Some(v * mult)))
}

/// `-Q KEY:VALUE`: the matching criteria halyard perf implements.
fn parse_criterion(a: &mut PerfArgs, q: &str) -> Result<(), String> {
    let (k, v) = q
        .split_once(':')
        .ok_or(format!("-Q{q}: expected KEY:VALUE"))?;
    match k {
        "minmatch" => {
            a.min_match = Some(v.parse().map_err(|_| format!("-Q{q}: invalid count"))?);
        }
        "initwait" => {
            let d: f64 = v.parse().map_err(|_| format!("-Q{q}: invalid duration"))?;
            if !(d >= 0.0 && d.is_finite()) {
                return Err(format!("-Q{q}: invalid duration"));
            }
            a.init_wait = Some(Duration::from_secs_f64(d));
        }
        other => {
            return Err(format!(
                "-Q{other}: criterion not supported by halyard perf"
            ))
        }
    }
    Ok(())
}

pub fn parse(args: &[String]) -> Result<PerfArgs, String> {
    let mut a = PerfArgs {
        reliable: true,
        nkeys: 1,
        size: 12,
        burst: 1,
        topic: "KS".into(),
        ..Default::default()
    };
    let mut size_given = false;
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        let opt = args[i].as_str();
        let mut val = || {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or(format!("{opt} needs an argument"))
        };
        match opt {
            "-D" => {
                let d: f64 = val()?.parse().map_err(|_| "-D: invalid duration")?;
                a.duration = (d > 0.0).then(|| Duration::from_secs_f64(d));
            }
            "-u" => a.reliable = false,
            "-k" => {
                let v = val()?;
                let n: u32 = if v == "all" {
                    0
                } else {
                    v.parse().map_err(|_| "-k: expected all or N")?
                };
                a.keep_last = (n > 0).then_some(n);
            }
            "-T" => {
                let t = val()?;
                if !TOPICS.contains(&t.as_str()) {
                    return Err(format!("-T {t}: unknown topic"));
                }
                a.topic = t;
            }
            "-c" => a.cpu_stats = true,
            "-1" => a.sub_every_second = true,
            "-i" => a.domain = val()?.parse().map_err(|_| "-i: invalid domain id")?,
            "-n" => {
                a.nkeys = val()?
                    .parse::<u32>()
                    .map_err(|_| "-n: invalid key count")?
                    .max(1)
            }
            "-Q" => parse_criterion(&mut a, &val()?)?,
            q if q.starts_with("-Q") => parse_criterion(&mut a, &q[2..])?,
            "--latency-dump" => a.latency_dump = Some(val()?.into()),
            "--no-batching" => a.no_batching = true,
            "--durability" => {
                a.durability = match val()?.as_str() {
                    "volatile" => Durability::Volatile,
                    "transient-local" => Durability::TransientLocal,
                    "transient" => Durability::Transient,
                    "persistent" => Durability::Persistent,
                    v => return Err(format!("--durability {v}: not a durability kind")),
                }
            }
            "-h" => return Err(String::new()),
            other => return Err(format!("{other}: option not supported by halyard perf")),
        }
        i += 1;
    }
    if i >= args.len() {
        return Err("no mode given".into());
    }
    while i < args.len() {
        let mode = args[i].as_str();
        i += 1;
        let mut rate = Rate(None);
        let mode_word = |w: &str| matches!(w, "ping" | "pong" | "sub" | "pub" | "listen");
        // `pub ... ping X%` keeps `ping` as a word of pub, not a new mode.
        let pub_ping = |i: usize| {
            mode == "pub" && args[i] == "ping" && args.get(i + 1).is_some_and(|s| s.ends_with('%'))
        };
        while i < args.len() && (!mode_word(&args[i]) || pub_ping(i)) {
            match args[i].as_str() {
                "ping" => {}
                pct if mode == "pub" && pct.ends_with('%') => {
                    a.ping_pct = pct[..pct.len() - 1]
                        .parse::<u32>()
                        .ok()
                        .filter(|&p| p <= 100)
                        .ok_or(format!("{pct}: expected a percentage 0%..100%"))?;
                }
                "size" => {
                    i += 1;
                    a.size = parse_size(args.get(i).ok_or("size needs an argument")?)?;
                    size_given |= !args[i].trim().starts_with('0');
                }
                "burst" => {
                    i += 1;
                    a.burst = args
                        .get(i)
                        .and_then(|s| s.parse().ok())
                        .filter(|&b| b >= 1)
                        .ok_or("burst needs a positive count")?;
                }
                "waitset" | "listener" | "polling" => {}
                r => rate = parse_rate(r).ok_or(format!("{r}: unexpected argument to {mode}"))?,
            }
            i += 1;
        }
        match mode {
            "ping" => a.ping = Some(rate),
            "pong" => a.pong = true,
            "sub" => a.sub = true,
            "listen" => a.listen = true,
            "pub" => a.publish = Some(rate),
            "help" => return Err(String::new()),
            m => return Err(format!("{m}: unknown mode")),
        }
    }
    if a.listen && (a.ping.is_some() || a.pong || a.sub || a.publish.is_some()) {
        return Err("listen cannot be combined with other modes".into());
    }
    if a.topic == "OU" && a.nkeys != 1 {
        return Err(format!("-n {} invalid: topic OU has no key", a.nkeys));
    }
    if a.topic != "KS" && size_given {
        return Err(format!(
            "size {} invalid: only topic KS has a sequence",
            a.size
        ));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn ddsperf_command_lines_parse() {
        let a = parse(&v("-D 5 -u -i 3 ping 100Hz size 1k")).unwrap();
        assert_eq!(a.duration, Some(Duration::from_secs(5)));
        assert!(!a.reliable);
        assert_eq!(a.domain, 3);
        assert_eq!(a.ping.unwrap().0, Some(100.0));
        assert_eq!(a.size, 1024);
        let a = parse(&v("-k 10 pub 1kHz size 1M sub")).unwrap();
        assert_eq!(a.keep_last, Some(10));
        assert_eq!(a.publish.unwrap().0, Some(1000.0));
        assert!(a.sub);
        assert_eq!(a.size, 1 << 20);
        assert!(parse(&v("pub size 5")).is_err());
        assert_eq!(parse(&v("-T K32 sub")).unwrap().topic, "K32");
        assert!(parse(&v("-T K64 sub")).is_err());
        assert!(parse(&v("-T K256 pub size 1k")).is_err());
        assert!(parse(&v("-T OU -n 2 pub")).is_err());
        assert!(parse(&v("-c -1 -T S32k pub")).unwrap().cpu_stats);
        assert_eq!(parse_size("0").unwrap(), 12);
        assert_eq!(parse_size("63000").unwrap(), 63000);
        let a = parse(&v(
            "-Qminmatch:2 -Q initwait:7.5 --latency-dump /tmp/x pub 100Hz size 1k 50%",
        ))
        .unwrap();
        assert_eq!(a.min_match, Some(2));
        assert_eq!(a.init_wait, Some(Duration::from_secs_f64(7.5)));
        assert_eq!(a.ping_pct, 50);
        assert_eq!(
            a.latency_dump.as_deref(),
            Some(std::path::Path::new("/tmp/x"))
        );
        let a = parse(&v("pub 10Hz ping 100% sub")).unwrap();
        assert_eq!((a.ping_pct, a.sub, a.ping.is_none()), (100, true, true));
        assert!(parse(&v("pub 101%")).is_err());
        assert!(parse(&v("-Qrss:10 pub")).is_err());
        assert!(parse(&v("-Qinitwait:-1 pub")).is_err());
        assert!(parse(&v("-D 3 listen")).unwrap().listen);
        assert!(parse(&v("listen pong")).is_err());
        assert!(parse(&v("sub listen")).is_err());
    }
}
