//! The `halyard` command.
#![forbid(unsafe_code)]
#![allow(clippy::disallowed_methods)] // a command-line tool reads clocks

mod demo;
mod discovery;
mod durability;
mod durability_bench;
mod dyntopic;
mod idl;
mod json;
mod ls;
mod perf;
mod ps;
mod pub_cmd;
mod pub_durable;
mod security;
mod service_qos;
mod shapes;
mod sub;
mod sub_readers;
mod typeof_cmd;

/// The top-level help: `halyard --help`, `-h` and `help` print it on standard output; with no
/// command or an unknown one it goes to standard error.
const USAGE: &str =
    "usage: halyard COMMAND [OPTIONS]   (each command's own help: halyard COMMAND -h)

commands:
  sub TOPIC [-d DOMAIN] [--json|--table] [--filter EXPR] [QoS]
                    print a topic's samples, its type learnt from the network (halyard sub -h)
  pub TOPIC JSON... [-d DOMAIN] [QoS]
                    publish JSON samples, the type learnt from the network (halyard pub -h)
  typeof TOPIC [-d DOMAIN] [--json]
                    the IDL of a topic's types (halyard typeof -h)
  ls [-d DOMAIN] [-r SECONDS] [--json] [--watch]
                    participants, topics and endpoints with QoS (halyard ls -h)
  ps [-d DOMAIN] [-r SECONDS] [--json]
                    processes and hosts in a domain (halyard ps -h)
  idl FILE.idl --lang rust|python --out DIR [-I DIR]... [-D NAME[=VAL]]...
                    the IDL compiler (halyard idl -h)
  durability --store PATH [-d DOMAIN] ...
                    a durability service: TRANSIENT and PERSISTENT data for late readers
                    (halyard durability -h)
  durability-bench [-d DOMAIN] [--samples N] [--size B] ...
                    PERSISTENT write, disk, reload and late-reader catch-up figures
  security init|add|resign|check|cyclone-config|cipher-bench ...
                    DDS Security set-up (halyard security help)
  demo [SECONDS] [-d DOMAIN]
                    a publisher and a subscriber in two processes, with figures
  perf [OPTIONS] MODE...
                    ddsperf-compatible ping/pong/pub/sub (halyard perf help)
  shapes -P|-S -t TOPIC ...
                    the OMG dds-rtps interoperability suite's shape_main (halyard shapes -h)
  help, -h, --help  this text;  version, -V, --version  the version

The domain is `-d, --domain ID` (0..=232, default 0) in every command of Halyard's own (the old
spellings -i, --id and --domain-id still work). `perf` and `shapes` take the options of the
tools they stand in for, so that scripts written for those run unchanged: `perf` ddsperf's
(-i ID the domain, -D SECONDS the duration), `shapes` shape_main's (-d ID the domain).

environment:
  HALYARD_INTERFACE=NAME  the network interface (e.g. lo; default: the first multicast-capable
                          non-loopback one)
  HALYARD_SECURITY=DIR/NAME  join secured, with that identity (made by `halyard security init`)
  HALYARD_SECURITY_LOG=1  write every DDS Security decision to standard error

Exit status: 2 for an unknown command or no command; otherwise the command's (see its help).";

fn main() {
    use std::io::Write as _;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    let code = match args.first().map(String::as_str) {
        // A closed standard output (`halyard --help | head`) is no error.
        Some("help" | "-h" | "--help") => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            0
        }
        Some("version" | "-V" | "--version") => {
            let _ = writeln!(std::io::stdout(), "halyard {}", env!("CARGO_PKG_VERSION"));
            0
        }
        None => {
            eprintln!("{USAGE}");
            2
        }
        Some("perf") => perf::main(rest),
        Some("demo") => demo::main(rest),
        Some("shapes") => shapes::main(rest),
        Some("security") => security::main(rest),
        Some("durability") => durability::main(rest),
        Some("durability-bench") => durability_bench::main(rest),
        Some("idl") => idl::main(rest),
        Some("ls") => ls::main(rest),
        Some("ps") => ps::main(rest),
        Some("sub") => sub::main(rest),
        Some("pub") => pub_cmd::main(rest),
        Some("typeof") => typeof_cmd::main(rest),
        Some(other) => {
            eprintln!("halyard: unknown command '{other}'\n\n{USAGE}");
            2
        }
    };
    std::process::exit(code)
}
