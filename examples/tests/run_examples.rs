//! Proves that every example program delivers when run as a newcomer runs it: each is started
//! as a process of its own on loopback, in a domain no other test uses, pairs as two
//! processes (the hello pair in both start orders, `dynamic_sub` against `hello_pub`), and
//! must exit 0 having printed that it delivered.

use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The environment variables Halyard reads that would change what an example does.
const HALYARD_ENV: [&str; 7] = [
    "HALYARD_SECURITY",
    "HALYARD_SECURITY_LOG",
    "HALYARD_QOS_PROFILES",
    "HALYARD_DURABILITY",
    "HALYARD_DURABILITY_STORE",
    "HALYARD_DURABILITY_COMMIT",
    "HALYARD_DURABILITY_SYNC",
];

/// The longest an example may run: each gives up by itself well before.
const LIMIT: Duration = Duration::from_secs(60);

/// Starts the example at `exe` in `domain`, its traffic on loopback.
fn start(exe: &str, domain: u32) -> Child {
    let mut command = Command::new(exe);
    command
        .arg(domain.to_string())
        .env("HALYARD_INTERFACE", "lo")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for variable in HALYARD_ENV {
        command.env_remove(variable);
    }
    command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {exe}: {e}"))
}

/// Waits for `child` to end (killed after [`LIMIT`]); whether it exited 0 and printed
/// `delivered`, and if not, what it printed.
fn outcome(mut child: Child, exe: &str, delivered: &str) -> Result<(), String> {
    const POLL: Duration = Duration::from_millis(50);
    for _ in 0..LIMIT.as_millis() / POLL.as_millis() {
        if child.try_wait().expect("the child's status").is_some() {
            break;
        }
        std::thread::sleep(POLL);
    }
    let killed = child.try_wait().expect("the child's status").is_none();
    if killed {
        let _ = child.kill();
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().expect("the child's output");
    let stdout = String::from_utf8_lossy(&stdout);
    if !killed && status.success() && stdout.contains(delivered) {
        return Ok(());
    }
    let ended = if killed {
        format!("killed after {LIMIT:?}")
    } else {
        status.to_string()
    };
    Err(format!(
        "{exe} did not deliver ({ended}; expected {delivered:?} on stdout)\n\
         --- stdout\n{stdout}--- stderr\n{}",
        String::from_utf8_lossy(&stderr)
    ))
}

/// Runs the example at `exe` alone in `domain` and asserts that it printed `delivered`.
fn alone(exe: &str, domain: u32, delivered: &str) {
    if let Err(e) = outcome(start(exe, domain), exe, delivered) {
        panic!("{e}");
    }
}

/// Starts `first`, then `second` a moment later, and asserts that both delivered.
fn pair(domain: u32, first: (&str, &str), second: (&str, &str)) {
    let a = start(first.0, domain);
    std::thread::sleep(Duration::from_millis(300));
    let b = start(second.0, domain);
    let results = [outcome(a, first.0, first.1), outcome(b, second.0, second.1)];
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const HELLO_PUB: (&str, &str) = (
    env!("CARGO_BIN_EXE_hello_pub"),
    "hello_pub: all 10 greetings acknowledged",
);
const HELLO_SUB: (&str, &str) = (
    env!("CARGO_BIN_EXE_hello_sub"),
    "hello_sub: received all 10 greetings",
);

#[test]
fn hello_sub_started_first() {
    pair(180, HELLO_SUB, HELLO_PUB);
}

#[test]
fn hello_pub_started_first() {
    pair(181, HELLO_PUB, HELLO_SUB);
}

#[test]
fn dynamic_sub_prints_hello_pubs_greetings_as_json() {
    let dynamic_sub = (
        env!("CARGO_BIN_EXE_dynamic_sub"),
        r#"{"index":9,"message":"Hello, world! (9)"}"#,
    );
    pair(182, dynamic_sub, HELLO_PUB);
}

#[test]
fn keyed_instances() {
    alone(
        env!("CARGO_BIN_EXE_keyed_instances"),
        183,
        "keyed_instances: sensors 1 and 3 alive, sensor 2 disposed",
    );
}

#[test]
fn waitset() {
    alone(
        env!("CARGO_BIN_EXE_waitset"),
        184,
        "waitset: received all 5 ticks",
    );
}

#[test]
fn xml_qos() {
    alone(
        env!("CARGO_BIN_EXE_xml_qos"),
        185,
        "xml_qos: the late reader received [3, 4, 5, 6, 7]",
    );
}

#[test]
fn secure_pair() {
    alone(
        env!("CARGO_BIN_EXE_secure_pair"),
        186,
        "secure_pair: eve received 0; alice's writer matched 1 reader(s)",
    );
}

#[test]
fn persistent() {
    alone(
        env!("CARGO_BIN_EXE_persistent"),
        187,
        "persistent: the late reader got each sensor's latest reading",
    );
}
