//! Proves `halyard security` makes set-ups Cyclone DDS 0.10 accepts: two `ddsperf` processes
//! using identities from one `init` exchange encrypted data while one from another `init`
//! receives nothing; and `check` passes a fresh set-up and names an expired certificate,
//! unsigned permissions and a topic not granted.

// A test driver: it reads the clock for deadlines and certificate dates.
#![allow(clippy::disallowed_methods)]

#[path = "common/fastdds.rs"]
mod fastdds_peer;

use fastdds_peer::fastdds_perf;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use halyard_security::random::OsRandom;
use halyard_security::setup::{self, files, Validity};

const LO: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

fn ddsperf_available() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("ddsperf").is_file()));
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("ddsperf (cyclonedds-tools) is not installed but CI is set; run scripts/install-deps.sh");
        }
        eprintln!("SKIP: ddsperf not found in PATH (install cyclonedds-tools via scripts/install-deps.sh)");
    }
    found
}

fn halyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .arg("security")
        .args(args)
        .output()
        .expect("run halyard")
}

fn text(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-security-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn init(dir: &Path, extra: &[&str]) {
    let mut args = vec!["init", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = halyard(&args);
    assert!(o.status.success(), "init failed: {}", text(&o));
}

/// `ddsperf` in `identity` (DIR/NAME), with the lo config and the `cyclone-config` output.
fn ddsperf(identity: &Path, domain: u32, args: &[&str]) -> Child {
    let cfg = halyard(&["cyclone-config", identity.to_str().unwrap()]);
    assert!(cfg.status.success(), "cyclone-config: {}", text(&cfg));
    let uri = format!("{LO}{}", String::from_utf8_lossy(&cfg.stdout).trim());
    Command::new("ddsperf")
        .args(["-i", &domain.to_string()])
        .args(args)
        .env("CYCLONEDDS_URI", uri)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ddsperf")
}

/// Waits (killing at `deadline`) and returns stdout + stderr.
fn finish(mut child: Child, deadline: Instant) -> String {
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let mut s = String::new();
    let _ = child.stdout.take().map(|mut o| o.read_to_string(&mut s));
    s.push_str("--- stderr\n");
    let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut s));
    s
}

/// The largest `total N` in ddsperf sub's throughput lines.
fn received(out: &str) -> u64 {
    out.lines()
        .filter(|l| l.contains(" total ") && l.contains(" rate "))
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t.windows(2)
                .find(|w| w[0] == "total")
                .and_then(|w| w[1].parse().ok())
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn secure_ddsperf_pair_and_outsider() {
    if !ddsperf_available() {
        return;
    }
    let (a, b) = (temp_dir("a"), temp_dir("b"));
    init(&a, &["--participant", "alice", "bob"]);
    init(&b, &["--participant", "eve"]);
    let domain = 150 + std::process::id() % 60;
    let bob = ddsperf(&a.join("bob"), domain, &["-D", "5", "sub"]);
    let eve = ddsperf(&b.join("eve"), domain, &["-D", "5", "sub"]);
    sleep(Duration::from_millis(500));
    let alice = ddsperf(&a.join("alice"), domain, &["-D", "4", "pub"]);
    let deadline = Instant::now() + Duration::from_secs(15);
    let (alice, bob, eve) = (
        finish(alice, deadline),
        finish(bob, deadline),
        finish(eve, deadline),
    );
    let all = format!("=== alice pub\n{alice}\n=== bob sub\n{bob}\n=== eve sub\n{eve}");
    assert!(
        received(&bob) > 0,
        "bob (same set-up) received nothing:\n{all}"
    );
    assert_eq!(
        received(&eve),
        0,
        "eve (another set-up) received data:\n{all}"
    );
    assert!(
        eve.contains("Certificate not valid"),
        "eve should fail the handshake:\n{all}"
    );
    println!(
        "bob received {} samples, eve {}",
        received(&bob),
        received(&eve)
    );
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}

#[test]
fn check_passes_a_fresh_set_up_and_names_problems() {
    let dir = temp_dir("check");
    init(
        &dir,
        &[
            "--participant",
            "alice",
            "bob",
            "--allow",
            "alice:pub:Square",
            "--allow",
            "bob:sub:Square@p*",
        ],
    );
    let d = dir.to_str().unwrap();
    let ok = halyard(&["check", d]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(
        String::from_utf8_lossy(&ok.stdout).starts_with("OK: "),
        "{}",
        text(&ok)
    );
    let again = halyard(&["init", d, "--participant", "alice"]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--force"),
        "{}",
        text(&again)
    );

    // A topic granted and one not.
    let granted = halyard(&[
        "check",
        d,
        "--participant",
        "alice",
        "--topic",
        "Square",
        "--publish",
    ]);
    assert!(granted.status.success(), "{}", text(&granted));
    let o = halyard(&[
        "check",
        d,
        "--participant",
        "bob",
        "--topic",
        "Square",
        "--subscribe",
        "--partition",
        "q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("topic not granted: bob may not subscribe topic \"Square\""),
        "{}",
        text(&o)
    );

    // alice's certificate expired yesterday (same CA, same key file rewritten).
    let ca = setup::read_ca(&dir, files::IDENTITY_CA, files::IDENTITY_CA_KEY).unwrap();
    let key = setup::new_key(setup::KeyKind::EcP256).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let past = Validity {
        not_before: now - 10 * 86400,
        not_after: now - 86400,
    };
    let cert = setup::issue_identity(&ca, "alice", &key, past, &mut OsRandom).unwrap();
    setup::write_file(
        &dir.join("alice").join(files::IDENTITY),
        &cert.to_pem().unwrap(),
    )
    .unwrap();
    setup::write_secret(
        &dir.join("alice").join(files::IDENTITY_KEY),
        &key.private_key_to_pem_pkcs8().unwrap(),
    )
    .unwrap();
    // bob's permissions replaced by the unsigned XML.
    std::fs::copy(
        dir.join("bob").join(files::PERMISSIONS_XML),
        dir.join("bob").join(files::PERMISSIONS),
    )
    .unwrap();
    let o = halyard(&["check", d]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("alice: the identity certificate has expired"),
        "{}",
        text(&o)
    );
    assert!(
        out.contains("bob: permissions.p7s: the document is not signed"),
        "{}",
        text(&o)
    );
    assert!(out.starts_with("2 problem(s)"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `halyard perf` in `identity` (DIR/NAME, through `HALYARD_SECURITY`; `None`: unsecured).
fn halyard_perf(identity: Option<&Path>, domain: u32, args: &[&str]) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.arg("perf")
        .args(["-i", &domain.to_string()])
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .env_remove("HALYARD_SECURITY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(id) = identity {
        c.env("HALYARD_SECURITY", id);
    }
    c.spawn().expect("spawn halyard perf")
}

/// Halyard's DDS Security against Cyclone's, through the products' own commands, at each
/// level `halyard security init` offers: `--protect none` (authentication and access
/// control), `rtps-sign` and `rtps-encrypt` (every RTPS message signed or encrypted), `sign`
/// and `encrypt` (rtps, discovery, liveliness, metadata and data protected), and those two
/// with `--origin-auth` (receiver-specific MACs). A secured
/// `halyard perf` and a secured `ddsperf` authenticate each other and exchange data in both
/// directions, none lost; an unsecured `halyard perf` receives nothing from the secured
/// publisher.
#[test]
fn secured_halyard_perf_and_ddsperf_exchange_data_both_ways() {
    if !ddsperf_available() {
        return;
    }
    let levels = [
        "none",
        "rtps-sign",
        "rtps-encrypt",
        "sign",
        "encrypt",
        "sign --origin-auth",
        "encrypt --origin-auth",
    ];
    for (i, protect) in levels.iter().enumerate() {
        let dir = temp_dir(&format!("level-{}", protect.replace(' ', "")));
        let mut args = vec!["--participant", "alice", "bob", "--protect"];
        args.extend(protect.split(' '));
        init(&dir, &args);
        let domain = 160 + (std::process::id() % 10) * 7 + i as u32;
        // Cyclone publishes, Halyard subscribes (and an unsecured Halyard listens in).
        let h_sub = halyard_perf(Some(&dir.join("bob")), domain, &["-D", "5", "sub"]);
        let outsider = halyard_perf(None, domain, &["-D", "5", "sub"]);
        sleep(Duration::from_millis(500));
        let c_pub = ddsperf(
            &dir.join("alice"),
            domain,
            &["-D", "3", "pub", "100Hz", "size", "64"],
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let (c_pub, h_sub, outsider) = (
            finish(c_pub, deadline),
            finish(h_sub, deadline),
            finish(outsider, deadline),
        );
        let all = format!(
            "=== {protect}: ddsperf pub\n{c_pub}\n=== halyard sub\n{h_sub}\n=== unsecured halyard sub\n{outsider}"
        );
        assert!(
            received(&h_sub) >= 100,
            "{protect}: the secured Halyard subscriber got too little:\n{all}"
        );
        assert!(
            lost(&h_sub) == 0,
            "{protect}: the secured Halyard subscriber lost samples:\n{all}"
        );
        assert_eq!(
            received(&outsider),
            0,
            "{protect}: an unsecured subscriber received data:\n{all}"
        );
        println!(
            "{protect}: Cyclone -> Halyard {} samples, 0 lost; unsecured Halyard 0",
            received(&h_sub)
        );

        // Halyard publishes, Cyclone subscribes.
        let c_sub = ddsperf(&dir.join("bob"), domain, &["-D", "5", "sub"]);
        sleep(Duration::from_millis(500));
        let h_pub = halyard_perf(
            Some(&dir.join("alice")),
            domain,
            &["-D", "3", "pub", "100Hz", "size", "64"],
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let (h_pub, c_sub) = (finish(h_pub, deadline), finish(c_sub, deadline));
        let all = format!("=== {protect}: halyard pub\n{h_pub}\n=== ddsperf sub\n{c_sub}");
        assert!(
            received(&c_sub) >= 100,
            "{protect}: the secured Cyclone subscriber got too little:\n{all}"
        );
        assert!(
            lost(&c_sub) == 0,
            "{protect}: the secured Cyclone subscriber lost samples:\n{all}"
        );
        println!(
            "{protect}: Halyard -> Cyclone {} samples, 0 lost",
            received(&c_sub)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The largest `lost N` right after `total` in a perf sub's throughput lines.
fn lost(out: &str) -> u64 {
    out.lines()
        .filter(|l| l.contains(" total ") && l.contains(" rate "))
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t.windows(2)
                .find(|w| w[0] == "lost")
                .and_then(|w| w[1].parse().ok())
        })
        .max()
        .unwrap_or(0)
}

/// The Fast DDS perf peer in `identity` (its FASTPERF_SECURITY names a `security init`
/// identity; it sets Fast DDS's `dds.sec.*` participant properties from it).
fn fastdds(bin: &Path, identity: &Path, domain: u32, args: &[&str]) -> Child {
    Command::new(bin)
        .args(["-i", &domain.to_string()])
        .args(args)
        .env("FASTPERF_SECURITY", identity)
        .env("FASTPERF_VERBOSE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fastdds-perf")
}

/// Halyard's DDS Security against Fast DDS 2.9's builtin plugins (Debian's build, OpenSSL):
/// a secured `halyard perf` and the secured Fast DDS perf peer authenticate each other (Fast
/// DDS uses DH+MODP-2048-256 with bare public keys and NUL-less algorithm names, and wants the
/// optional hash_c2) and exchange data in both directions, none lost: with no cryptographic
/// protection, with everything encrypted, with origin authentication, and (SIGN) with the
/// handshake roles the other way round (which side initiates follows the GUIDs).
#[test]
fn secured_halyard_perf_and_fastdds_exchange_data_both_ways() {
    let Some(bin) = fastdds_perf() else {
        return;
    };
    let cases = [
        ("none", "alice", "bob"),
        ("encrypt", "alice", "bob"),
        ("encrypt --origin-auth", "alice", "bob"),
        ("sign", "bob", "alice"),
    ];
    for (i, (protect, fast_id, halyard_id)) in cases.iter().enumerate() {
        let dir = temp_dir(&format!("fast-{}", protect.replace(' ', "")));
        let mut args = vec!["--participant", "alice", "bob", "--protect"];
        args.extend(protect.split(' '));
        init(&dir, &args);
        let domain = 100 + (std::process::id() % 10) * 4 + i as u32;
        let what = format!("{protect} (Fast DDS {fast_id}, Halyard {halyard_id})");

        let h_sub = halyard_perf(Some(&dir.join(halyard_id)), domain, &["-D", "5", "sub"]);
        sleep(Duration::from_millis(300));
        let f_pub = fastdds(
            &bin,
            &dir.join(fast_id),
            domain,
            &["-D", "3", "pub", "100Hz", "size", "64"],
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let (f_pub, h_sub) = (finish(f_pub, deadline), finish(h_sub, deadline));
        let all = format!("=== {what}: fastdds pub\n{f_pub}\n=== halyard sub\n{h_sub}");
        assert!(
            received(&h_sub) >= 100,
            "{what}: Halyard got too little:\n{all}"
        );
        assert_eq!(lost(&h_sub), 0, "{what}: Halyard lost samples:\n{all}");
        println!(
            "{what}: Fast DDS -> Halyard {} samples, 0 lost",
            received(&h_sub)
        );

        let f_sub = fastdds(&bin, &dir.join(fast_id), domain, &["-D", "5", "sub"]);
        sleep(Duration::from_millis(300));
        let h_pub = halyard_perf(
            Some(&dir.join(halyard_id)),
            domain,
            &["-D", "3", "pub", "100Hz", "size", "64"],
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let (h_pub, f_sub) = (finish(h_pub, deadline), finish(f_sub, deadline));
        let all = format!("=== {what}: halyard pub\n{h_pub}\n=== fastdds sub\n{f_sub}");
        assert!(
            received(&f_sub) >= 100,
            "{what}: Fast DDS got too little:\n{all}"
        );
        assert_eq!(lost(&f_sub), 0, "{what}: Fast DDS lost samples:\n{all}");
        println!(
            "{what}: Halyard -> Fast DDS {} samples, 0 lost",
            received(&f_sub)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Data protection with samples that travel as DATA_FRAGs (200001 octets, so the last
/// fragment is not a multiple of four), at `sign` and `encrypt`, between a secured
/// `halyard perf` and a secured `ddsperf`, and the secured Fast DDS perf peer, in both
/// directions, none lost. Both peers encode each DATA_FRAG's fragments on their own (with the
/// DATA_FRAG's sizes those of the plain sample); Halyard once encoded the whole sample and cut
/// the encoded bytes into fragments, and no such sample crossed either way.
#[test]
fn payload_protected_large_samples_cross_with_cyclone_and_fastdds() {
    let cyclone = ddsperf_available();
    let fast = fastdds_perf();
    if !cyclone && fast.is_none() {
        return;
    }
    const SIZE: &str = "200001";
    for (i, protect) in ["sign", "encrypt"].iter().enumerate() {
        let dir = temp_dir(&format!("large-{protect}"));
        init(
            &dir,
            &["--participant", "alice", "bob", "--protect", protect],
        );
        let domain = 20 + (std::process::id() % 10) * 4 + i as u32 * 2;
        let (alice, bob) = (dir.join("alice"), dir.join("bob"));
        let peers = [
            ("Cyclone", cyclone, domain),
            ("Fast DDS", fast.is_some(), domain + 1),
        ];
        for (name, present, d) in peers {
            if !present {
                continue;
            }
            let spawn = |id: &Path, args: &[&str]| match &fast {
                Some(bin) if name == "Fast DDS" => fastdds(bin, id, d, args),
                _ => ddsperf(id, d, args),
            };
            let pubargs = ["-D", "3", "pub", "20Hz", "size", SIZE];
            // The peer publishes, Halyard subscribes.
            let h_sub = halyard_perf(Some(&bob), d, &["-D", "6", "sub"]);
            sleep(Duration::from_millis(500));
            let p_pub = spawn(&alice, &pubargs);
            let deadline = Instant::now() + Duration::from_secs(12);
            let (p_pub, h_sub) = (finish(p_pub, deadline), finish(h_sub, deadline));
            let all = format!("=== {protect}: {name} pub\n{p_pub}\n=== halyard sub\n{h_sub}");
            assert!(
                received(&h_sub) >= 40,
                "{protect}: Halyard got too few {SIZE}-octet samples from {name}:\n{all}"
            );
            assert_eq!(lost(&h_sub), 0, "{protect}: Halyard lost samples:\n{all}");
            println!(
                "{protect}: {name} -> Halyard {} samples of {SIZE} octets, 0 lost",
                received(&h_sub)
            );
            // Halyard publishes, the peer subscribes.
            let p_sub = spawn(&bob, &["-D", "6", "sub"]);
            sleep(Duration::from_millis(500));
            let h_pub = halyard_perf(Some(&alice), d, &pubargs);
            let deadline = Instant::now() + Duration::from_secs(12);
            let (h_pub, p_sub) = (finish(h_pub, deadline), finish(p_sub, deadline));
            let all = format!("=== {protect}: halyard pub\n{h_pub}\n=== {name} sub\n{p_sub}");
            assert!(
                received(&p_sub) >= 40,
                "{protect}: {name} got too few {SIZE}-octet samples from Halyard:\n{all}"
            );
            assert_eq!(lost(&p_sub), 0, "{protect}: {name} lost samples:\n{all}");
            println!(
                "{protect}: Halyard -> {name} {} samples of {SIZE} octets, 0 lost",
                received(&p_sub)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
