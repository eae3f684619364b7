//! `halyard typeof TOPIC`: prints the IDL of every type the writers and readers of a topic
//! announce, rebuilt from their TypeObjects (fetched through TypeLookup) by
//! [`halyard::xtypes::to_idl`], like `cyclonedds typeof`. Types announced without
//! TypeInformation are listed by name with that said; with `--idl FILE` the file's type is
//! printed instead of being fetched.

use crate::discovery::BadArgs;
use crate::dyntopic::{self, Common, Failure};
use halyard::xtypes::to_idl;
use serde_json::{json, Value};

const HELP: &str =
    "usage: halyard typeof TOPIC [-d DOMAIN] [--timeout S] [--json] [--idl FILE [--type NAME]]

Looks for the writers and readers of TOPIC (for at most S seconds, default 10, then a moment more
for the others) and prints the IDL of each type they announce (XTypes TypeInformation, the
TypeObjects fetched through TypeLookup), with how many writers and readers use it.
  -d, --domain DOMAIN  the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
  --json  one JSON document: {topic, types: [{type_name, idl (null when it cannot be had),
          error (why not, or null), type_information (hex of its XCDR2 form, or null),
          writers, readers}]}

Exit status: 0, 1 if no endpoint of TOPIC was found or no type could be printed, 2 for bad
arguments.";

fn parse(args: &[String]) -> Result<Common, BadArgs> {
    let mut c = Common::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if !c.take(arg, &mut it, false)? {
            return Err(BadArgs(format!("unknown argument {arg:?}")));
        }
    }
    c.topic()?;
    Ok(c)
}

/// Runs `halyard typeof`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}");
        return 0;
    }
    let c = match parse(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("halyard typeof: {}\n\n{HELP}", e.0);
            return 2;
        }
    };
    match run(&c) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("halyard typeof: {e}");
            e.code()
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn run(c: &Common) -> Result<i32, Failure> {
    let topic = c.topic().map_err(|e| Failure::BadArgs(e.0))?;
    if c.idl.is_some() {
        let (_dp, r, _) = dyntopic::resolve(c, "halyard typeof", true)?;
        let idl = to_idl(&r.ty);
        if c.json {
            let doc = json!({"topic": topic, "types": [{
                "type_name": r.type_name, "idl": idl, "error": Value::Null,
                "type_information": r.description.as_ref().map(|d| hex(&d.type_information)),
                "writers": Value::Null, "readers": Value::Null}]});
            println!("{doc:#}");
        } else {
            print!("{idl}");
        }
        return Ok(0);
    }
    let dp = crate::discovery::join(c.domain, "halyard typeof")
        .map_err(|e| Failure::Dds(format!("cannot join domain {}", c.domain), Box::new(e)))?;
    let seen = dyntopic::discover(&dp, topic, c.timeout, false);
    if seen.is_empty() {
        return Err(Failure::NotFound {
            topic: topic.to_string(),
            timeout: c.timeout,
        });
    }
    let mut printed = 0;
    let mut types = Vec::new();
    let mut text = String::new();
    for s in &seen {
        let got = dyntopic::from_network(&dp, topic, s, c.timeout);
        let info_hex = s
            .info
            .as_ref()
            .and_then(|i| i.to_xcdr2_le().ok())
            .map(|b| hex(&b));
        let (idl, error) = match &got {
            Ok(r) => (Some(to_idl(&r.ty)), None),
            Err(e) => (None, Some(e.to_string())),
        };
        if idl.is_some() {
            printed += 1;
        }
        text.push_str(&format!(
            "// type {}: {} writers, {} readers\n",
            s.type_name,
            s.writers.len(),
            s.readers.len()
        ));
        match (&idl, &error) {
            (Some(idl), _) => text.push_str(idl),
            (None, Some(e)) => text.push_str(&format!("// {e}\n")),
            (None, None) => {}
        }
        text.push('\n');
        types.push(json!({
            "type_name": s.type_name,
            "idl": idl,
            "error": error,
            "type_information": info_hex,
            "writers": s.writers.len(),
            "readers": s.readers.len(),
        }));
    }
    if c.json {
        println!("{:#}", json!({"topic": topic, "types": types}));
    } else {
        print!("{text}");
    }
    Ok(if printed > 0 { 0 } else { 1 })
}
