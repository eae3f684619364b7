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
mod sqlfilter;
mod sub;
mod typeof_cmd;

fn usage() -> ! {
    eprintln!(
        "usage:\n  halyard perf [OPTIONS] MODE...   ddsperf-compatible ping/pong/pub/sub (see `halyard perf help`)\n  halyard shapes -P|-S -t TOPIC ...   the OMG dds-rtps interoperability suite's shape_main (see `halyard shapes -h`)\n  halyard demo [SECONDS]            a publisher and a subscriber in two processes, with figures\n  halyard security init|add|check|cyclone-config ...   DDS Security set-up (see `halyard security help`)\n  halyard durability --store PATH ...   a durability service: TRANSIENT and PERSISTENT data for late readers (see `halyard durability -h`)\n  halyard durability-bench [--samples N] [--size B]   PERSISTENT write, disk, reload and late-reader catch-up figures\n  halyard idl FILE.idl --lang rust|python --out DIR [-I DIR]... [-D NAME[=VAL]]...   the IDL compiler\n  halyard ls [--id DOMAIN] [--json] [--watch] [--duration S]   participants, topics and endpoints with QoS (see `halyard ls -h`)\n  halyard ps [--id DOMAIN] [--json] [--duration S]   processes and hosts in a domain (see `halyard ps -h`)\n  halyard sub TOPIC [--json|--table] [--filter EXPR] [QoS]   print a topic's samples, type learnt from the network (see `halyard sub -h`)\n  halyard pub TOPIC JSON... [QoS]   publish JSON samples, type learnt from the network (see `halyard pub -h`)\n  halyard typeof TOPIC [--json]     the IDL of a topic's types (see `halyard typeof -h`)\n\nenvironment: HALYARD_INTERFACE=lo selects the network interface (default: first multicast-capable non-loopback one)"
    );
    std::process::exit(3)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("perf") => perf::main(&args[1..]),
        Some("demo") => demo::main(&args[1..]),
        Some("shapes") => shapes::main(&args[1..]),
        Some("security") => security::main(&args[1..]),
        Some("durability") => durability::main(&args[1..]),
        Some("durability-bench") => durability_bench::main(&args[1..]),
        Some("idl") => idl::main(&args[1..]),
        Some("ls") => ls::main(&args[1..]),
        Some("ps") => ps::main(&args[1..]),
        Some("sub") => sub::main(&args[1..]),
        Some("pub") => pub_cmd::main(&args[1..]),
        Some("typeof") => typeof_cmd::main(&args[1..]),
        _ => usage(),
    };
    std::process::exit(code)
}
