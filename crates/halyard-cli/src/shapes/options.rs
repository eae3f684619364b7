//! The command line of `halyard shapes`: the options of the OMG dds-rtps interoperability
//! suite's `shape_main`, with its defaults, its GNU getopt syntax (`-d1` and `-d 1`,
//! `--opt=v` and `--opt v`, unambiguous long-option prefixes) and its messages, so the
//! suite's harness can drive Halyard as it drives any other vendor.

use std::fmt::Write as _;

/// What the command line asks for.
#[derive(Clone, Debug)]
pub struct Options {
    pub debug: bool,
    pub publish: bool,
    pub subscribe: bool,
    pub domain: u32,
    pub reliable: bool,
    /// -1: the DDS default (KEEP_LAST 1); 0: KEEP_ALL; n: KEEP_LAST n.
    pub history_depth: i64,
    pub deadline_ms: u64,
    /// -1: SHARED ownership; otherwise EXCLUSIVE with this strength.
    pub strength: i64,
    pub topic: Option<String>,
    pub color: Option<String>,
    pub partition: Option<String>,
    /// `v`, `l`, `t` or `p`.
    pub durability: char,
    /// 1: XCDR, 2: XCDR2.
    pub representation: u8,
    pub print_writes: bool,
    pub shapesize: i64,
    pub use_read: bool,
    pub write_period_ms: u64,
    pub read_period_ms: u64,
    pub time_filter_ms: u64,
    pub lifespan_ms: u64,
    /// 0: until interrupted.
    pub num_iterations: u64,
    pub num_instances: u64,
    pub num_topics: u64,
    /// `u` (unregister) or `d` (dispose) after the loop.
    pub final_state: Option<char>,
    /// `i`, `t` or `g`.
    pub access_scope: Option<char>,
    pub coherent: bool,
    pub ordered: bool,
    pub coherent_sample_count: u64,
    pub additional_payload_size: u64,
    pub take_read: bool,
    pub periodic_announcement_ms: u64,
    pub datafrag_size: u64,
    pub cft: Option<String>,
    pub size_modulo: u64,
    /// DURABILITY_SERVICE of a TRANSIENT or PERSISTENT writer (Halyard's `--service-*`).
    pub service: crate::service_qos::ServiceQos,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            debug: false,
            publish: false,
            subscribe: false,
            domain: 0,
            reliable: true,
            history_depth: -1,
            deadline_ms: 0,
            strength: -1,
            topic: None,
            color: None,
            partition: None,
            durability: 'v',
            representation: 1,
            print_writes: false,
            shapesize: 20,
            use_read: false,
            write_period_ms: 33,
            read_period_ms: 100,
            time_filter_ms: 0,
            lifespan_ms: 0,
            num_iterations: 0,
            num_instances: 1,
            num_topics: 1,
            final_state: None,
            access_scope: None,
            coherent: false,
            ordered: false,
            coherent_sample_count: 0,
            additional_payload_size: 0,
            take_read: false,
            periodic_announcement_ms: 0,
            datafrag_size: 0,
            cft: None,
            size_modulo: 0,
            service: Default::default(),
        }
    }
}

/// How parsing ended, when it did not give options to run with.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// `-h` / `--help`: the usage was asked for (exit 0).
    Help,
    /// A bad command line; the message to print before the usage (exit 1).
    Bad(String),
}

/// Long options: name and whether it takes an argument.
const LONG: &[(&str, bool)] = &[
    ("help", false),
    ("write-period", true),
    ("read-period", true),
    ("final-instance-state", true),
    ("access-scope", true),
    ("coherent", false),
    ("ordered", false),
    ("coherent-sample-count", true),
    ("additional-payload-size", true),
    ("num-topics", true),
    ("lifespan", true),
    ("num-instances", true),
    ("num-iterations", true),
    ("take-read", false),
    ("time-filter", true),
    ("periodic-announcement", true),
    ("datafrag-size", true),
    ("cft", true),
    ("size-modulo", true),
    // Halyard's, beyond shape_main's: DURABILITY_SERVICE (`crate::service_qos`).
    ("service-history", true),
    ("service-cleanup-delay", true),
    ("service-max-samples", true),
    ("service-max-instances", true),
    ("service-max-samples-per-instance", true),
];

/// Short options that take an argument (the others are flags: h P S b r R w).
const SHORT_WITH_ARG: &str = "cdDfkpsxtvz";
const SHORT_FLAGS: &str = "hPSbrRw";

/// Parses the arguments (without the program and subcommand names). Warnings that do not
/// stop the program are returned for printing.
pub fn parse(args: &[String]) -> Result<(Options, Vec<String>), Stop> {
    let mut o = Options::default();
    let mut i = 0;
    let mut positional = Vec::new();
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let (full, takes) = resolve_long(name)?;
            let value = if takes {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => {
                        return Err(Stop::Bad(format!("option '--{full}' requires an argument")))
                    }
                }
            } else if inline.is_some() {
                return Err(Stop::Bad(format!(
                    "option '--{full}' doesn't allow an argument"
                )));
            } else {
                None
            };
            apply_long(&mut o, full, value.as_deref())?;
            continue;
        }
        let Some(shorts) = a.strip_prefix('-').filter(|s| !s.is_empty()) else {
            positional.push(a.clone());
            continue;
        };
        for (at, c) in shorts.char_indices() {
            if SHORT_FLAGS.contains(c) {
                apply_short(&mut o, c, None)?;
            } else if SHORT_WITH_ARG.contains(c) {
                let rest = &shorts[at + c.len_utf8()..];
                let value = if !rest.is_empty() {
                    rest.to_string()
                } else if i < args.len() {
                    i += 1;
                    args[i - 1].clone()
                } else {
                    return Err(Stop::Bad(format!("option requires an argument -- '{c}'")));
                };
                apply_short(&mut o, c, Some(&value))?;
                break;
            } else {
                return Err(Stop::Bad(format!("invalid option -- '{c}'")));
            }
        }
    }
    if let Some(p) = positional.first() {
        return Err(Stop::Bad(format!("unexpected argument '{p}'")));
    }
    let warnings = validate(&o)?;
    Ok((o, warnings))
}

fn resolve_long(name: &str) -> Result<(&'static str, bool), Stop> {
    if let Some(&(n, t)) = LONG.iter().find(|(n, _)| *n == name) {
        return Ok((n, t));
    }
    let candidates: Vec<_> = LONG.iter().filter(|(n, _)| n.starts_with(name)).collect();
    match candidates.as_slice() {
        [(n, t)] if !name.is_empty() => Ok((n, *t)),
        [] | [_] => Err(Stop::Bad(format!("unrecognized option '--{name}'"))),
        _ => Err(Stop::Bad(format!("option '--{name}' is ambiguous"))),
    }
}

/// `sscanf("%d")`: an optional sign and the leading digits; `None` if there are none.
fn scan_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let v: i64 = digits[..end].parse().ok()?;
    Some(if neg { -v } else { v })
}

fn int(what: &str, v: Option<&str>) -> Result<i64, Stop> {
    let v = v.unwrap_or("");
    scan_int(v).ok_or_else(|| {
        Stop::Bad(format!(
            "unrecognized value for {what} {}",
            v.chars().next().unwrap_or(' ')
        ))
    })
}

fn at_least(what: &str, v: Option<&str>, min: i64, msg: &str) -> Result<u64, Stop> {
    let n = int(what, v)?;
    if n < min {
        return Err(Stop::Bad(format!("{msg} {n}")));
    }
    Ok(n as u64)
}

fn letter(what: &str, v: Option<&str>, allowed: &str) -> Result<char, Stop> {
    let c = v.and_then(|s| s.chars().next()).unwrap_or(' ');
    if allowed.contains(c) {
        Ok(c)
    } else {
        Err(Stop::Bad(format!("unrecognized value for {what} {c}")))
    }
}

fn apply_short(o: &mut Options, c: char, v: Option<&str>) -> Result<(), Stop> {
    match c {
        'h' => return Err(Stop::Help),
        'P' => o.publish = true,
        'S' => o.subscribe = true,
        'b' => o.reliable = false,
        'r' => o.reliable = true,
        'R' => o.use_read = true,
        'w' => o.print_writes = true,
        'v' => o.debug = letter("verbosity", v, "ed")? == 'd',
        'd' => {
            let n = int("domain_id", v)?;
            if !(0..=232).contains(&n) {
                return Err(Stop::Bad(format!("incorrect value for domain_id {n}")));
            }
            o.domain = n as u32;
        }
        'D' => o.durability = letter("durability", v, "vltp")?,
        'f' => {
            o.deadline_ms = at_least(
                "deadline_interval",
                v,
                0,
                "incorrect value for deadline_interval",
            )?
        }
        'k' => {
            o.history_depth =
                at_least("history_depth", v, 0, "incorrect value for history_depth")? as i64
        }
        'p' => o.partition = v.map(str::to_string),
        's' => {
            let n = int("ownership_strength", v)?;
            if n < -1 || n > i32::MAX as i64 {
                return Err(Stop::Bad(format!(
                    "incorrect value for ownership_strength {n}"
                )));
            }
            o.strength = n;
        }
        't' => o.topic = v.map(str::to_string),
        'c' => o.color = v.map(str::to_string),
        'x' => {
            o.representation = if letter("data representation", v, "12")? == '1' {
                1
            } else {
                2
            }
        }
        'z' => o.shapesize = at_least("shapesize", v, 0, "incorrect value for shapesize")? as i64,
        _ => return Err(Stop::Bad(format!("invalid option -- '{c}'"))),
    }
    Ok(())
}

fn apply_long(o: &mut Options, name: &str, v: Option<&str>) -> Result<(), Stop> {
    match name {
        "help" => return Err(Stop::Help),
        "write-period" => {
            o.write_period_ms = at_least("write-period", v, 0, "incorrect value for write-period")?
        }
        "read-period" => {
            o.read_period_ms = at_least("read-period", v, 0, "incorrect value for read-period")?
        }
        "final-instance-state" => {
            let c = letter("final-instance-state", v, "ud")?;
            if o.final_state.is_some_and(|f| f != c) {
                return Err(Stop::Bad(
                    "error, cannot configure unregister and dispose at the same time".into(),
                ));
            }
            o.final_state = Some(c);
        }
        "access-scope" => o.access_scope = Some(letter("access-scope", v, "itg")?),
        "coherent" => o.coherent = true,
        "ordered" => o.ordered = true,
        "coherent-sample-count" => {
            o.coherent_sample_count = at_least(
                "coherent-sample-count",
                v,
                2,
                "incorrect value for coherent-sample-count, it must be >=2",
            )?
        }
        "additional-payload-size" => {
            o.additional_payload_size = at_least(
                "additional-payload-size",
                v,
                1,
                "incorrect value for additional-payload-size, it must be >=1",
            )?
        }
        "num-topics" => {
            o.num_topics = at_least(
                "num-topics",
                v,
                1,
                "incorrect value for num-topics, it must be >=1",
            )?
        }
        "lifespan" => o.lifespan_ms = at_least("lifespan", v, 0, "incorrect value for lifespan")?,
        "num-instances" => {
            o.num_instances = at_least(
                "num-instances",
                v,
                1,
                "incorrect value for num-instances, it must be >=1",
            )?
        }
        "num-iterations" => {
            o.num_iterations = at_least(
                "num-iterations",
                v,
                1,
                "incorrect value for num-iterations, it must be >=1",
            )?
        }
        "take-read" => o.take_read = true,
        "time-filter" => {
            o.time_filter_ms = at_least(
                "timebasedfilter_interval",
                v,
                0,
                "incorrect value for timebasedfilter_interval",
            )?
        }
        "periodic-announcement" => {
            o.periodic_announcement_ms = at_least(
                "periodic-announcement",
                v,
                0,
                "incorrect value for periodic-announcement",
            )?
        }
        "datafrag-size" => {
            let n = at_least("datafrag-size", v, 0, "incorrect value for datafrag-size")?;
            if n > 65535 {
                return Err(Stop::Bad(format!(
                    "incorrect value for datafrag-size, it must be <= 65535 bytes{n}"
                )));
            }
            o.datafrag_size = n;
        }
        "cft" => o.cft = v.map(str::to_string),
        "size-modulo" => {
            o.size_modulo = at_least(
                "size-modulo",
                v,
                1,
                "incorrect value for size-modulo, must be >=1",
            )?
        }
        other => match o.service.set(other, v.unwrap_or("")) {
            Ok(true) => {}
            Ok(false) => return Err(Stop::Bad(format!("unrecognized option '--{name}'"))),
            Err(why) => return Err(Stop::Bad(why)),
        },
    }
    Ok(())
}

/// The checks `shape_main` makes after parsing, in its order: errors stop, warnings are
/// returned.
fn validate(o: &Options) -> Result<Vec<String>, Stop> {
    if o.topic.is_none() {
        return Err(Stop::Bad("please specify topic name [-t]".into()));
    }
    if !o.publish && !o.subscribe {
        return Err(Stop::Bad(
            "please specify publish [-P] or subscribe [-S]".into(),
        ));
    }
    if o.publish && o.subscribe {
        return Err(Stop::Bad(
            "please specify only one of: publish [-P] or subscribe [-S]".into(),
        ));
    }
    let mut w = Vec::new();
    let mut warn = |cond: bool, msg: &str| {
        if cond {
            w.push(format!("warning: {msg}"));
        }
    };
    let p = o.publish;
    warn(
        p && o.color.is_none(),
        "color was not specified, defaulting to \"BLUE\"",
    );
    warn(
        p && o.time_filter_ms > 0,
        "time base filter [--time-filter] ignored on publisher applications",
    );
    warn(
        p && o.use_read,
        "use read [-R] ignored on publisher applications",
    );
    warn(
        p && o.take_read,
        "--take-read ignored on publisher applications",
    );
    warn(
        p && o.cft.is_some(),
        "--cft ignored on publisher applications",
    );
    let s = o.subscribe;
    warn(
        s && o.shapesize != 20,
        "shapesize [-z] ignored on subscriber applications",
    );
    warn(
        s && o.lifespan_ms > 0,
        "--lifespan ignored on subscriber applications",
    );
    warn(
        s && o.num_instances > 1,
        "--num-instances ignored on subscriber applications",
    );
    warn(
        s && o.final_state.is_some(),
        "--final-instance-state ignored on subscriber applications",
    );
    warn(
        s && o.coherent_sample_count > 0,
        "--coherent-sample-count ignored on subscriber applications",
    );
    warn(
        o.coherent_sample_count > 0 && !o.coherent && !o.ordered,
        "--coherent-sample-count ignored because not coherent, or ordered access enabled",
    );
    warn(
        s && o.additional_payload_size > 0,
        "--additional-payload-size ignored on subscriber applications",
    );
    warn(
        o.access_scope.is_some() && !o.coherent && !o.ordered,
        "--access-scope set but not coherent, or ordered access enabled",
    );
    warn(
        o.size_modulo > 0 && o.shapesize != 0,
        "--size-modulo has no effect unless shapesize (-z) is set to 0",
    );
    if s && o.color.is_some() && o.cft.is_some() {
        return Err(Stop::Bad(
            "error: cannot specify both --cft and -c for subscriber applications".into(),
        ));
    }
    Ok(w)
}

/// The usage text, as `shape_main` prints it.
pub fn usage(program: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{program}: ");
    s.push_str(USAGE);
    s.push_str("Halyard's options beyond shape_main's:\n");
    s.push_str(crate::service_qos::HELP);
    s.push('\n');
    s
}

const USAGE: &str = "   --help, -h      : print this menu
   -v [e|d]        : set log message verbosity [e: ERROR, d: DEBUG]
   -P              : publish samples
   -S              : subscribe samples
   -d <int>        : domain id (default: 0)
   -b              : BEST_EFFORT reliability
   -r              : RELIABLE reliability
   -k <depth>      : keep history depth [0: KEEP_ALL]
   -f <interval>   : set a 'deadline' with interval (ms) [0: OFF]
   -s <strength>   : set ownership strength [-1: SHARED]
   -t <topic_name> : set the topic name
   -c <color>      : set color to publish (filter if subscriber)
   -p <partition>  : set a 'partition' string
   -D [v|l|t|p]    : set durability [v: VOLATILE,  l: TRANSIENT_LOCAL]
                                     t: TRANSIENT, p: PERSISTENT]
   -x [1|2]        : set data representation [1: XCDR, 2: XCDR2]
   -w              : print Publisher's samples
   -z <int>        : set shapesize (0: increase the size for every sample)
   -R              : use 'read()' instead of 'take()'
   --write-period <ms>: waiting period between 'write()' operations in ms.
                        Default: 33ms
   --read-period <ms> : waiting period between 'read()' or 'take()' operations
                        in ms. Default: 100ms
   --time-filter <interval> : apply 'time based filter' with interval
                              in ms [0: OFF]
   --lifespan <int>      : indicates the lifespan of a sample in ms
   --num-iterations <int>: indicates the number of iterations of the main loop
                           After that, the application will exit.
                           Default: infinite
   --num-instances <int>: indicates the number of instances a DataWriter writes
                          If the value is > 1, the additional instances are
                          created by appending a number. For example, if the
                          original color is \"BLUE\" the instances used are
                          \"BLUE\", \"BLUE1\", \"BLUE2\"...
   --num-topics <int>: indicates the number of topics created (using the same
                       type). This also creates a DataReader or DataWriter per
                       topic. If the value is > 1, the additional topic names
                       are created by appending a number: For example, if the
                       original topic name is \"Square\", the topics created are
                       \"Square\", \"Square1\", \"Square2\"...
   --final-instance-state [u|d]: indicates the action performed after the
                                 DataWriter finishes its execution (before
                                 deleting it):
                                   - u: unregister
                                   - d: dispose
   --access-scope [i|t|g]: sets Presentation.access_scope to INSTANCE, TOPIC
                           or GROUP
   --coherent            : sets Presentation.coherent_access = true
   --ordered             : sets Presentation.ordered_access = true
   --coherent-sample-count <int>: amount of samples sent for each DataWriter
                                  and instance that are grouped in a coherent
                                  set
   --additional-payload-size <bytes>: indicates the amount of bytes added to
                                      the samples written (for example to use
                                      large data)
   --take-read           : uses take()/read() instead of take_next_instance()
                           read_next_instance()
   --periodic-announcement <ms> : indicates the periodic participant
                                  announcement period in ms. Default 0 (off)
   --datafrag-size <bytes> : set the data fragment size (default: 0, means
                           not set)
   --cft <expression> : ContentFilteredTopic filter expression (quotes
                       required around the expression). Cannot be used with
                        -c on subscriber applications
   --size-modulo <int> : If set, the modulo operation is applied to the
                         shapesize. This will make that shapesize is in the
                         range [1,N]. This only applies if shapesize is
                         increased (-z 0)
";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn defaults_match_shape_main() {
        let (o, w) = parse(&args("-P -t Square")).unwrap();
        assert!(o.publish && o.reliable);
        assert_eq!(o.representation, 1, "shape_main's own default is XCDR");
        assert_eq!(
            (o.shapesize, o.write_period_ms, o.read_period_ms),
            (20, 33, 100)
        );
        assert_eq!((o.history_depth, o.strength, o.durability), (-1, -1, 'v'));
        assert_eq!(
            w,
            vec!["warning: color was not specified, defaulting to \"BLUE\"".to_string()]
        );
    }

    #[test]
    fn getopt_syntax() {
        let (o, _) = parse(&args(
            "-S -tSquare -d1 -k 0 -x 2 -s3 -b --read-period=50 --time-f 1000 --cft shapesize<=20",
        ))
        .unwrap();
        assert_eq!(o.topic.as_deref(), Some("Square"));
        assert_eq!(
            (o.domain, o.history_depth, o.representation, o.strength),
            (1, 0, 2, 3)
        );
        assert!(!o.reliable);
        assert_eq!((o.read_period_ms, o.time_filter_ms), (50, 1000));
        assert_eq!(o.cft.as_deref(), Some("shapesize<=20"));
        // Flags combine: -PwR.
        let (o, _) = parse(&args("-Pw -t T -c RED")).unwrap();
        assert!(o.publish && o.print_writes);
    }

    #[test]
    fn errors_say_what_shape_main_says() {
        let bad = |s: &str| match parse(&args(s)) {
            Err(Stop::Bad(m)) => m,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(bad("-P"), "please specify topic name [-t]");
        assert_eq!(bad("-t T"), "please specify publish [-P] or subscribe [-S]");
        assert_eq!(
            bad("-P -S -t T"),
            "please specify only one of: publish [-P] or subscribe [-S]"
        );
        assert_eq!(bad("-P -t T -d x"), "unrecognized value for domain_id x");
        assert_eq!(bad("-P -t T -D q"), "unrecognized value for durability q");
        assert_eq!(bad("-P -t T -I 3"), "invalid option -- 'I'");
        assert_eq!(
            bad("-P -t T --num-instances 0"),
            "incorrect value for num-instances, it must be >=1 0"
        );
        assert_eq!(bad("-P -t T --num"), "option '--num' is ambiguous");
        assert_eq!(
            bad("-S -t T -c RED --cft x>1"),
            "error: cannot specify both --cft and -c for subscriber applications"
        );
        assert_eq!(parse(&args("-h")).unwrap_err(), Stop::Help);
    }
}
