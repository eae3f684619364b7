//! `halyard security`: sets up DDS Security (CAs, identities, signed governance and
//! permissions) in a directory, checks such a set-up, and prints the Cyclone DDS configuration
//! for one of its identities. The work is done by `halyard_security::setup`; this is the
//! command line around it.

use std::path::{Path, PathBuf};

use halyard_security::access::Action;
use halyard_security::random::OsRandom;
use halyard_security::setup::{
    self, AllowSpec, CheckOptions, InitOptions, KeyKind, Protection, Query,
};

/// `println!` that ignores a closed standard output (`halyard security check DIR | head`)
/// instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

const USAGE: &str = "usage:
  halyard security init DIR --participant NAME...
                        [--protect none|rtps-sign|rtps-encrypt|sign|encrypt] [--origin-auth]
                        [--key ec|rsa] [--days N] [-d, --domain ID]...
                        [--allow NAME:pub|sub|pubsub:TOPIC_EXPR[@PARTITION_EXPR]]... [--force]
      writes DIR/{identity_ca,permissions_ca}.pem (+ _key.pem, mode 0600), DIR/governance.{xml,p7s}
      and DIR/NAME/{identity.pem,identity_key.pem,permissions.xml,permissions.p7s}, prints each
      DIR/NAME (standard output) and the next step (standard error): a Halyard process joins
      with the identity HALYARD_SECURITY=DIR/NAME names, a Cyclone DDS process with
      `cyclone-config DIR/NAME`. Defaults: ECDSA P-256, certificates and grants valid 10 years
      (--days N: N days from now, at most 36500; 0 warns), all domains (--domain ID: only
      those), everyone may publish and subscribe every topic (--allow: a participant may do
      only what is allowed), everything ENCRYPTed.
      --protect: what the governance protects. Halyard implements every protection kind of DDS
      Security 1.1, interoperably with Cyclone DDS and Fast DDS: NONE, SIGN and ENCRYPT for
      rtps, discovery, liveliness, metadata and data protection, and the
      *_WITH_ORIGIN_AUTHENTICATION kinds for all but data (which has none).
        none          authentication and access control only
        rtps-sign, rtps-encrypt  and every RTPS message signed / encrypted whole
        sign, encrypt  that, and discovery (secure SEDP), liveliness, every submessage
                      (metadata) and every payload (data) signed / encrypted too
        --origin-auth  the *_WITH_ORIGIN_AUTHENTICATION kinds: a MAC per receiver as well
  halyard security add DIR --participant NAME... [--key ec|rsa] [--days N] [-d, --domain ID]...
                        [--allow ...] [--force]
      adds participants to an existing set-up, signed by its CAs
  halyard security resign DIR [--participant NAME]
      signs DIR/NAME/permissions.xml (or DIR/governance.xml) again after editing it
  halyard security check DIR [--participant NAME] [-d, --domain ID]
                        [--topic T (--publish|--subscribe) [--partition P]...]
      checks certificates, keys, signatures, subjects and validity; says what is wrong;
      exit 0 when all is well, 1 otherwise
  halyard security cyclone-config DIR/NAME
      prints the Cyclone DDS <Security> element for that identity, e.g.
      CYCLONEDDS_URI=\"<General>...</General>$(halyard security cyclone-config DIR/alice)\" ddsperf pub
  halyard security cipher-bench [--size BYTES] [--seconds S] [--kind aes256-gcm|aes128-gcm|aes256-gmac|aes128-gmac]
      times the AES-GCM primitive every Halyard transform uses (default AES-256-GCM over 63000
      octets for 1 s) and prints one line: cipher-bench kind=.. size=.. passes=..
      us_per_pass_min=.. us_per_pass_median=.. gbytes_per_s=.. (min: the fastest batch, the
      cipher floor on an idle core; median: what the load of the machine left)
  environment: HALYARD_SECURITY=DIR/NAME gives a Halyard process its identity. A refused
      identity is written to standard error on both sides, once per peer, with no setting
      (\"identity not accepted by peer ...\", \"identity of peer ... not accepted\");
      HALYARD_SECURITY_LOG=1 writes every security decision.";

/// Entry point: `args` follow `security`.
pub fn main(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        Some("init") => init_or_add(&args[1..], true),
        Some("add") => init_or_add(&args[1..], false),
        Some("resign") => resign(&args[1..]),
        Some("check") => check(&args[1..]),
        Some("cyclone-config") => cyclone_config(&args[1..]),
        Some("cipher-bench") => cipher_bench(&args[1..]),
        Some("-h" | "--help" | "help") => {
            out!("{USAGE}");
            return 0;
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("halyard security: {msg}");
            2
        }
    }
}

/// Options parsed from the command line: the directory and `--name value` / `--flag` pairs.
struct Parsed {
    dir: PathBuf,
    opts: Vec<(String, Option<String>)>,
}

impl Parsed {
    fn parse(args: &[String], flags: &[&str], valued: &[&str]) -> Result<Parsed, String> {
        let mut dir = None;
        let mut opts = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            // `-d, --domain` as in every command (old spellings too).
            let a = if crate::discovery::is_domain_option(a) {
                "--domain"
            } else {
                a.as_str()
            };
            if flags.contains(&a) {
                opts.push((a.to_string(), None));
            } else if valued.contains(&a) {
                let v = it.next().ok_or(format!("{a} needs a value"))?;
                opts.push((a.to_string(), Some(v.clone())));
                // `--participant a b c`: following bare words are more participants.
                if a == "--participant" {
                    while let Some(more) = it.as_slice().first().filter(|s| !s.starts_with('-')) {
                        if dir.is_none() {
                            break; // `--participant a DIR`: the next word is the directory
                        }
                        opts.push((a.to_string(), Some(more.clone())));
                        it.next();
                    }
                }
            } else if a.starts_with('-') {
                return Err(format!("unknown option {a}\n{USAGE}"));
            } else if dir.is_none() {
                dir = Some(PathBuf::from(a));
            } else {
                return Err(format!("unexpected argument {a:?}\n{USAGE}"));
            }
        }
        let dir = dir.ok_or(format!("a directory is required\n{USAGE}"))?;
        Ok(Parsed { dir, opts })
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.opts
            .iter()
            .filter(|(n, _)| n == name)
            .filter_map(|(_, v)| v.as_deref())
            .collect()
    }

    fn one(&self, name: &str) -> Option<&str> {
        self.all(name).last().copied()
    }

    fn has(&self, name: &str) -> bool {
        self.opts.iter().any(|(n, _)| n == name)
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `v` as option `opt`'s number; a negative or too large one is told as such.
fn parse_num<T: std::str::FromStr>(opt: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| match v.trim().parse::<i128>() {
        Ok(n) if n < 0 => format!("{opt} {v}: a negative number is not allowed here"),
        Ok(_) => format!("{opt} {v}: too large"),
        Err(_) => format!("{opt} {v:?} is not a number"),
    })
}

/// The longest `--days`: a hundred years (X.509 and the permissions' dates end at 9999).
const MAX_DAYS: u32 = 36_500;

/// `--days`: how long the certificates and grants last, in days from now.
fn parse_days(v: &str) -> Result<u32, String> {
    let what = "give how many days from now the certificates and grants last (at least 1; \
                default 3650)";
    match v.trim().parse::<i128>() {
        Ok(n) if n < 0 => Err(format!("--days {v}: a validity cannot be negative; {what}")),
        Ok(n) if n > i128::from(MAX_DAYS) => Err(format!(
            "--days {v}: at most {MAX_DAYS} (a hundred years); {what}"
        )),
        _ => parse_num("--days", v),
    }
}

fn init_or_add(args: &[String], init: bool) -> Result<i32, String> {
    let p = Parsed::parse(
        args,
        &["--origin-auth", "--force"],
        &[
            "--participant",
            "--protect",
            "--key",
            "--days",
            "--domain",
            "--allow",
        ],
    )?;
    let participants: Vec<String> = p
        .all("--participant")
        .into_iter()
        .map(String::from)
        .collect();
    if participants.is_empty() {
        return Err(format!(
            "at least one --participant NAME is required\n{USAGE}"
        ));
    }
    use halyard_security::access::ProtectionKind;
    let origin_auth = p.has("--origin-auth");
    let (rtps_sign, rtps_encrypt) = if origin_auth {
        (
            ProtectionKind::SignWithOriginAuthentication,
            ProtectionKind::EncryptWithOriginAuthentication,
        )
    } else {
        (ProtectionKind::Sign, ProtectionKind::Encrypt)
    };
    let (encrypt, none, rtps) = match p.one("--protect").unwrap_or("encrypt") {
        "encrypt" => (true, false, None),
        "sign" => (false, false, None),
        "none" => (false, true, None),
        "rtps-sign" => (false, true, Some(rtps_sign)),
        "rtps-encrypt" => (false, true, Some(rtps_encrypt)),
        other => {
            return Err(format!(
                "--protect must be none, rtps-sign, rtps-encrypt, sign or encrypt, not {other:?}"
            ))
        }
    };
    let key = match p.one("--key").unwrap_or("ec") {
        "ec" | "ecdsa" => KeyKind::EcP256,
        "rsa" => KeyKind::Rsa2048,
        other => return Err(format!("--key must be ec or rsa, not {other:?}")),
    };
    let days = p.one("--days").map(parse_days).transpose()?.unwrap_or(3650);
    if days == 0 {
        eprintln!(
            "halyard security: warning: --days 0: the certificates and grants expire at once \
             (valid from now to now), so every participant using them will be refused; give how \
             many days they should last, e.g. --days 365"
        );
    }
    let domains = p
        .all("--domain")
        .into_iter()
        .map(|d| parse_num("--domain", d))
        .collect::<Result<Vec<u32>, _>>()?;
    let allows = p.all("--allow");
    let allows = if allows.is_empty() {
        None
    } else {
        let parsed = allows.iter().map(|a| {
            AllowSpec::parse(a).ok_or(format!(
                "--allow {a:?}: expected NAME:pub|sub|pubsub:TOPIC_EXPR[@PARTITION_EXPR]"
            ))
        });
        Some(parsed.collect::<Result<Vec<_>, _>>()?)
    };
    let opts = InitOptions {
        participants,
        protection: Protection {
            encrypt,
            origin_auth,
            none,
        },
        key,
        days,
        domains,
        allows,
        force: p.has("--force"),
        now: now(),
    };
    let done = if init {
        setup::init(&p.dir, &opts, &mut OsRandom)
    } else {
        setup::add(&p.dir, &opts, &mut OsRandom)
    };
    done.map_err(|e| e.to_string())?;
    if let (true, Some(kind)) = (init, rtps) {
        setup::set_rtps_protection(&p.dir, kind).map_err(|e| e.to_string())?;
    }
    for name in &opts.participants {
        out!("{}", p.dir.join(name).display());
    }
    eprintln!("{}", next_step(&p.dir, &opts.participants));
    Ok(0)
}

/// What to do with a set-up once made: the variable that gives a process its identity.
fn next_step(dir: &Path, participants: &[String]) -> String {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut s = String::from(
        "next: give each process its identity with HALYARD_SECURITY=DIR/NAME, for example",
    );
    for (name, example) in participants
        .iter()
        .zip(["perf pub", "perf sub"].iter().cycle())
    {
        s.push_str(&format!(
            "\n  HALYARD_SECURITY={} halyard {example}",
            dir.join(name).display()
        ));
    }
    if let Some(name) = participants.last() {
        s.push_str(&format!(
            "\na Cyclone DDS process takes one in CYCLONEDDS_URI:\
             \n  CYCLONEDDS_URI=\"$(halyard security cyclone-config {})\" ddsperf sub\
             \ncheck the set-up: halyard security check {}",
            dir.join(name).display(),
            dir.display()
        ));
    }
    s
}

fn resign(args: &[String]) -> Result<i32, String> {
    let p = Parsed::parse(args, &[], &["--participant"])?;
    setup::resign(&p.dir, p.one("--participant")).map_err(|e| e.to_string())?;
    Ok(0)
}

fn check(args: &[String]) -> Result<i32, String> {
    let p = Parsed::parse(
        args,
        &["--publish", "--subscribe"],
        &["--participant", "--topic", "--partition", "--domain"],
    )?;
    let domain = p
        .one("--domain")
        .map(|d| parse_num("--domain", d))
        .transpose()?
        .unwrap_or(0u32);
    let query = match (p.one("--topic"), p.has("--publish"), p.has("--subscribe")) {
        (None, false, false) => None,
        (Some(t), true, false) => Some(query(t, Action::Publish, &p, domain)),
        (Some(t), false, true) => Some(query(t, Action::Subscribe, &p, domain)),
        _ => {
            return Err(format!(
                "--topic T goes with exactly one of --publish or --subscribe\n{USAGE}"
            ))
        }
    };
    let opts = CheckOptions {
        participant: p.one("--participant").map(String::from),
        query,
        now: now(),
    };
    let report = setup::check(&p.dir, &opts);
    if report.is_ok() {
        out!("OK: {} ({} checks)", p.dir.display(), report.checked.len());
        for line in &report.checked {
            out!("  ok  {line}");
        }
        Ok(0)
    } else {
        out!(
            "{} problem(s) in {}:",
            report.problems.len(),
            p.dir.display()
        );
        for line in &report.problems {
            out!("  - {line}");
        }
        Ok(1)
    }
}

fn query(topic: &str, action: Action, p: &Parsed, domain: u32) -> Query {
    Query {
        topic: topic.to_string(),
        action,
        partitions: p.all("--partition").into_iter().map(String::from).collect(),
        domain,
    }
}

fn cyclone_config(args: &[String]) -> Result<i32, String> {
    let [dir] = args else {
        return Err(format!(
            "cyclone-config takes one argument, DIR/NAME\n{USAGE}"
        ));
    };
    let xml = setup::cyclone_config(Path::new(dir)).map_err(|e| e.to_string())?;
    out!("{xml}");
    Ok(0)
}

/// Passes per timed batch of `cipher-bench`: long enough for the clock, short enough that a
/// batch often runs without being preempted on a busy machine.
const BENCH_BATCH: u32 = 16;
/// Largest `cipher-bench --size` (a transform's input is at most a datagram here).
const BENCH_SIZE_MAX: usize = 1 << 20;

fn cipher_bench(args: &[String]) -> Result<i32, String> {
    use halyard_security::crypto::{CipherPass, TransformKind};
    let (mut size, mut seconds, mut kind) = (63_000usize, 1.0f64, TransformKind::Aes256Gcm);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or(format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--size" => size = parse_num("--size", v?)?,
            "--seconds" => seconds = parse_num("--seconds", v?)?,
            "--kind" => {
                kind = match v?.as_str() {
                    "aes256-gcm" => TransformKind::Aes256Gcm,
                    "aes128-gcm" => TransformKind::Aes128Gcm,
                    "aes256-gmac" => TransformKind::Aes256Gmac,
                    "aes128-gmac" => TransformKind::Aes128Gmac,
                    k => return Err(format!("--kind: unknown kind {k:?}\n{USAGE}")),
                }
            }
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
    }
    if size == 0 || size > BENCH_SIZE_MAX {
        return Err(format!("--size must be 1 ..= {BENCH_SIZE_MAX}"));
    }
    if !(0.01..=60.0).contains(&seconds) {
        return Err("--seconds must be 0.01 ..= 60".into());
    }
    let mut pass = CipherPass::new(kind).map_err(|e| e.to_string())?;
    let mut data = vec![0x5au8; size];
    let run = |pass: &mut CipherPass, data: &mut [u8]| -> Result<(), String> {
        for _ in 0..BENCH_BATCH {
            pass.run(data).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    run(&mut pass, &mut data)?; // warm-up: caches, key schedule, page faults
    let start = std::time::Instant::now();
    let mut batches_ns = Vec::new();
    while start.elapsed().as_secs_f64() < seconds && batches_ns.len() < 10_000_000 {
        let t = std::time::Instant::now();
        run(&mut pass, &mut data)?;
        batches_ns.push(t.elapsed().as_nanos() as f64);
    }
    batches_ns.sort_by(f64::total_cmp);
    let per_pass = |ns: f64| ns / f64::from(BENCH_BATCH) / 1000.0;
    let min_us = per_pass(batches_ns.first().copied().unwrap_or(0.0));
    let median_us = per_pass(batches_ns.get(batches_ns.len() / 2).copied().unwrap_or(0.0));
    let gbytes_per_s = if min_us > 0.0 {
        size as f64 / min_us / 1000.0
    } else {
        0.0
    };
    out!(
        "cipher-bench kind={kind} size={size} passes={} us_per_pass_min={min_us:.3} \
         us_per_pass_median={median_us:.3} gbytes_per_s={gbytes_per_s:.2}",
        batches_ns.len() as u64 * u64::from(BENCH_BATCH)
    );
    Ok(0)
}
