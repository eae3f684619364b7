//! ddsperf's command line: options first, then mode words each with their own arguments.

use std::time::Duration;

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct PerfArgs {
    pub duration: Option<Duration>,
    pub reliable: bool,
    /// None = KEEP_ALL, Some(n) = KEEP_LAST n.
    pub keep_last: Option<i32>,
    pub domain: u32,
    pub nkeys: u32,
    pub ping: Option<Rate>,
    pub pong: bool,
    pub sub: bool,
    pub publish: Option<Rate>,
    /// Total sample size (12 + baggage).
    pub size: u32,
    pub burst: u32,
}

/// A rate: None = as fast as possible.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rate(pub Option<f64>);

pub const USAGE: &str =
    "usage: halyard perf [-D DUR] [-u] [-k all|N] [-T KS] [-i DOMAIN] [-n N] MODE...\n\
modes: ping [R[Hz|kHz]|inf] [size S]   pong   sub   pub [R[Hz|kHz]|inf] [size S] [burst N]\n\
S accepts B, k, M, kB, KiB, MB, MiB suffixes (k = 1024); size is 12 + baggage bytes.\n\
Wire- and output-compatible with Cyclone DDS ddsperf (topics DDSPerf{R,U}{Data,Ping,Pong}KS).";

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

pub fn parse(args: &[String]) -> Result<PerfArgs, String> {
    let mut a = PerfArgs {
        reliable: true,
        nkeys: 1,
        size: 12,
        burst: 1,
        ..Default::default()
    };
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
                let n: i32 = if v == "all" {
                    0
                } else {
                    v.parse().map_err(|_| "-k: expected all or N")?
                };
                a.keep_last = (n > 0).then_some(n);
            }
            "-T" => {
                let t = val()?;
                if t != "KS" {
                    return Err(format!(
                        "-T {t}: only KS (KeyedSeq) is supported by halyard perf so far"
                    ));
                }
            }
            "-i" => a.domain = val()?.parse().map_err(|_| "-i: invalid domain id")?,
            "-n" => {
                a.nkeys = val()?
                    .parse::<u32>()
                    .map_err(|_| "-n: invalid key count")?
                    .max(1)
            }
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
        while i < args.len() && !matches!(args[i].as_str(), "ping" | "pong" | "sub" | "pub") {
            match args[i].as_str() {
                "size" => {
                    i += 1;
                    a.size = parse_size(args.get(i).ok_or("size needs an argument")?)?;
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
            "pub" => a.publish = Some(rate),
            "help" => return Err(String::new()),
            m => return Err(format!("{m}: unknown mode")),
        }
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
        assert!(parse(&v("-T K32 sub")).is_err());
        assert_eq!(parse_size("0").unwrap(), 12);
        assert_eq!(parse_size("63000").unwrap(), 63000);
    }
}
