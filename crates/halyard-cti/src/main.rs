//! `halyard-cti`: the threat-intelligence sharing node and its tools.
// An application reads clocks (the clock ban is for the protocol core).
#![allow(clippy::disallowed_methods)]

use halyard_cti::config::Config;
use halyard_cti::node::Node;
use halyard_cti::store::{Db, Role, User};
use halyard_stix::marking::Tlp;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const USAGE: &str = "usage:
  halyard-cti serve --config FILE
      runs an organisation's sharing node: DDS (its sectors' partitions, protected by
      marking), the durability service, the TAXII 2.1 server, the REST API and the web
      dashboard (/ui/: live feed, search, review queue, audit, community status, plots);
      prints their URLs once ready and runs until SIGINT or SIGTERM
  halyard-cti community init [--dir DIR] --org NAME --sector S [--sector S]...
                             [--org NAME --sector S...]... [--domain ID] [--base-port PORT]
                             [--days N] [--force]
      creates a community in DIR (default ./community): DIR/security/ (CAs, governance,
      one DDS Security identity per organisation, permissions for its sectors only) and
      DIR/NAME/node.toml per organisation (HTTP ports from --base-port, default 8441), each
      with an `admin` account whose password is in DIR/NAME/admin.password (mode 0600)
  halyard-cti user add NAME --config FILE --role admin|reviewer|analyst|read-only
                       [--sectors S,S] [--max-tlp clear|green|amber|amber+strict|red]
      creates an account; the password is read from the environment variable named by
      --password-env VAR, or from standard input (one line; at least 12 characters)
  halyard-cti user token NAME --config FILE [--label TEXT] [--days N]
      prints a new API token for NAME (HTTP `Authorization: Bearer TOKEN`); only its hash
      is stored
  halyard-cti user list --config FILE
  halyard-cti publish FILE... [--config FILE | --url URL] [--sector S] [--tlp LEVEL] [--misp]
      sends STIX 2.1 bundles (or, with --misp, MISP event JSON) to a running node's REST
      API: the node of --url, or of --config's [listen], or HALYARD_CTI_URL, or
      http://127.0.0.1:8443 (the default [listen] address); credentials from
      HALYARD_CTI_TOKEN, or HALYARD_CTI_USER and HALYARD_CTI_PASSWORD;
      prints what became of each object (shared, queued for review, duplicate, local)
  halyard-cti demo [--dir DIR] [--domain ID] [--base-port PORT] [--rate N]
                   [--seconds S] [--seed N]
      starts a demo community: acme-energy (sector energy), borealis-grid (energy and
      finance) and coral-bank (finance), each a node process with its own DDS Security
      identity; a feed per organisation publishes generated STIX (indicators, malware,
      relationships, sightings, notes with personal data for the sanitiser) at N bursts a
      second (default 1); prints each node's dashboard, TAXII and REST URLs and logins, then
      the delivery figures
      every 5 s; runs until Ctrl-C, or for S seconds. DIR (default: a new directory under
      the system's temporary directory) holds the community; ports from --base-port
      (default 8441; 0 picks free ones); DDS domain 42 unless --domain
  halyard-cti validate FILE...
      checks STIX 2.1 bundles offline and says what is wrong, with the property
  environment: HALYARD_INTERFACE selects the network interface for DDS";

/// `println!` that ignores a closed standard output.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout();
        let _ = writeln!(o, $($arg)*);
        let _ = o.flush();
    }};
}

mod run_demo;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `halyard-cti COMMAND --help` as well as `halyard-cti --help`.
    if args.iter().any(|a| a == "-h" || a == "--help") {
        out!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("community") => community(&args[1..]),
        Some("user") => user(&args[1..]),
        Some("publish") => publish(&args[1..]),
        Some("validate") => validate(&args[1..]),
        Some("demo") => run_demo::demo(&args[1..]),
        Some("-h" | "--help" | "help") => {
            out!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(Failure::Usage(format!("unknown command {other:?}"))),
        None => Err(Failure::Usage("no command".into())),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Usage(m)) => {
            eprintln!("halyard-cti: {m}\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Error(m)) => {
            eprintln!("halyard-cti: {m}");
            ExitCode::FAILURE
        }
    }
}

enum Failure {
    Usage(String),
    Error(String),
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Error(e.to_string())
    }
}

type Res = Result<ExitCode, Failure>;

/// `--name value` options and bare words.
struct Opts {
    words: Vec<String>,
    pairs: Vec<(String, String)>,
    flags: Vec<String>,
}

impl Opts {
    fn parse(args: &[String], valued: &[&str], flags: &[&str]) -> Result<Opts, Failure> {
        let mut o = Opts {
            words: Vec::new(),
            pairs: Vec::new(),
            flags: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if valued.contains(&a.as_str()) {
                let v = it
                    .next()
                    .ok_or_else(|| Failure::Usage(format!("{a} needs a value")))?;
                o.pairs.push((a.clone(), v.clone()));
            } else if flags.contains(&a.as_str()) {
                o.flags.push(a.clone());
            } else if a.starts_with('-') {
                return Err(Failure::Usage(format!("unknown option {a}")));
            } else {
                o.words.push(a.clone());
            }
        }
        Ok(o)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    fn config(&self) -> Result<Config, Failure> {
        let path = self
            .get("--config")
            .ok_or_else(|| Failure::Usage("--config FILE is required".into()))?;
        Ok(Config::load(Path::new(path))?)
    }
}

fn serve(args: &[String]) -> Res {
    let o = Opts::parse(args, &["--config"], &[])?;
    if !o.words.is_empty() {
        return Err(Failure::Usage(format!("unexpected {:?}", o.words)));
    }
    let cfg = o.config()?;
    std::fs::create_dir_all(&cfg.node.store)
        .map_err(|e| format!("{}: {e}", cfg.node.store.display()))?;
    if cfg.node.security.is_none() {
        eprintln!(
            "halyard-cti: WARNING: node.insecure = true: {} shares without DDS Security; every \
             marking travels unprotected",
            cfg.node.organisation
        );
    }
    let db = Db::open_with(&cfg.db_path(), cfg.node.sync)?;
    db.limit_process_heap(cfg.limits.sqlite_heap_bytes)?;
    let dds = Arc::new(halyard_cti::dds::Dds::start(&cfg)?);
    let node = Arc::new(Node::new(cfg.clone(), db, dds.clone())?);
    dds.start_receiving(Arc::downgrade(&node));

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .map_err(|e| format!("cannot handle SIGINT/SIGTERM: {e}"))?;
    }
    // The outbox: writes what requests left to it (large batches, review decisions after a
    // failure, what was pending at start) and confirms what the community acknowledged, so
    // that a restart re-shares only the rest.
    let confirmer = {
        let node = node.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                loop {
                    match node.pump_outbox(2048) {
                        Ok(0) => break,
                        Ok(_) if stop.load(Ordering::Relaxed) => break,
                        Ok(_) => {}
                        Err(e) => {
                            eprintln!("halyard-cti: sharing failed, will retry: {e}");
                            break;
                        }
                    }
                }
                if let Err(e) = node.confirm_shares(Duration::from_millis(200)) {
                    eprintln!("halyard-cti: {e}");
                }
                // The full-text index catches up between requests (a search also brings it
                // up to date before it runs).
                if let Err(e) = node.db().index_pending(2000) {
                    eprintln!("halyard-cti: indexing: {e}");
                }
                node.wait_for_outbox(Duration::from_millis(200));
            }
        })
    };
    let ingest_threads = halyard_cti::ingest::start(&node, stop.clone());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let served = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(cfg.listen.http)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen.http))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let base = cfg
            .listen
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}"));
        let base = base.trim_end_matches('/');
        out!(
            "halyard-cti: {} ready: sectors {}; DDS domain {}; {}",
            cfg.node.organisation,
            cfg.sectors.join(", "),
            cfg.node.domain,
            match &cfg.node.security {
                Some(p) => format!(
                    "DDS Security identity {}",
                    std::fs::canonicalize(p)
                        .unwrap_or_else(|_| p.clone())
                        .display()
                ),
                None => "NO DDS Security".into(),
            }
        );
        out!("TAXII 2.1: {base}/taxii2/");
        out!("REST API:  {base}/api/v1/");
        out!("Dashboard: {base}/ui/");
        let stop2 = stop.clone();
        let shutdown = async move {
            while !stop2.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        halyard_cti::http::serve(node.clone(), listener, shutdown)
            .await
            .map_err(|e| e.to_string())
    });
    stop.store(true, Ordering::SeqCst);
    let _ = confirmer.join();
    for t in ingest_threads {
        let _ = t.join();
    }
    let _ = node.confirm_shares(Duration::from_secs(2));
    dds.stop();
    served.map_err(Failure::Error)?;
    eprintln!("halyard-cti: stopped");
    Ok(ExitCode::SUCCESS)
}

fn community(args: &[String]) -> Res {
    if args.first().map(String::as_str) != Some("init") {
        return Err(Failure::Usage("community: only `community init`".into()));
    }
    let mut members: Vec<halyard_cti::community::Member> = Vec::new();
    let mut dir = PathBuf::from("community");
    let (mut domain, mut base_port, mut days, mut force) = (0u32, 8441u16, 3650u32, false);
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| Failure::Usage(format!("{a} needs a value")))
        };
        match a.as_str() {
            "--dir" => dir = PathBuf::from(value()?),
            "--org" => members.push(halyard_cti::community::Member {
                org: value()?,
                sectors: Vec::new(),
            }),
            "--sector" => {
                let s = value()?;
                members
                    .last_mut()
                    .ok_or_else(|| Failure::Usage("--sector before any --org".into()))?
                    .sectors
                    .push(s);
            }
            "-d" | "--domain" => {
                domain = value()?
                    .parse()
                    .map_err(|_| Failure::Usage("--domain takes a number".into()))?
            }
            "--base-port" => {
                base_port = value()?
                    .parse()
                    .map_err(|_| Failure::Usage("--base-port takes a port number".into()))?
            }
            "--days" => {
                days = value()?
                    .parse()
                    .ok()
                    .filter(|d| (1..=36500).contains(d))
                    .ok_or_else(|| Failure::Usage("--days takes 1..=36500".into()))?
            }
            "--force" => force = true,
            o => return Err(Failure::Usage(format!("community init: unknown {o:?}"))),
        }
    }
    let opts = halyard_cti::community::CommunityOptions {
        members,
        domain,
        base_port,
        days,
        force,
    };
    for (m, path, _) in init_with_admins(&dir, &opts)? {
        let pw_file = path.with_file_name("admin.password");
        out!(
            "{}: sectors {}; config {}; admin password in {}",
            m.org,
            m.sectors.join(", "),
            path.display(),
            pw_file.display()
        );
    }
    eprintln!(
        "next: start each node with `halyard-cti serve --config {}/ORG/node.toml`",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Creates a community (`community init`) and each organisation's `admin` account, its
/// password in `admin.password` beside the node's configuration: (member, configuration
/// path, password) per organisation.
fn init_with_admins(
    dir: &Path,
    opts: &halyard_cti::community::CommunityOptions,
) -> Result<Vec<(halyard_cti::community::Member, PathBuf, String)>, Failure> {
    let configs = halyard_cti::community::init(dir, opts).map_err(Failure::Usage)?;
    let mut out = Vec::new();
    for (m, path) in opts.members.iter().zip(configs) {
        let password = add_account(&path, "admin", Role::Admin)?;
        out.push((m.clone(), path, password));
    }
    Ok(out)
}

/// Creates (or resets) account `name` with `role` and a new password, on the node of the
/// configuration at `path`, and writes the password to `NAME.password` beside it (mode 0600).
fn add_account(path: &Path, name: &str, role: Role) -> Result<String, Failure> {
    let cfg = Config::load(path)?;
    let password = halyard_cti::accounts::new_password();
    let mut db = Db::open(&cfg.db_path_creating()?)?;
    let user = User {
        name: name.into(),
        role,
        password_hash: halyard_cti::accounts::hash_password(&password)?,
        sectors: None,
        max_tlp: Tlp::Red,
        disabled: false,
    };
    if db.user(name)?.is_some() {
        db.update_user(&user)?;
    } else {
        db.create_user(&user)?;
    }
    write_secret(
        &path.with_file_name(format!("{name}.password")),
        &format!("{password}\n"),
    )?;
    Ok(password)
}

fn write_secret(path: &Path, text: &str) -> Result<(), Failure> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

fn user(args: &[String]) -> Res {
    let sub = args.first().map(String::as_str);
    let o = Opts::parse(
        args.get(1..).unwrap_or(&[]),
        &[
            "--config",
            "--role",
            "--sectors",
            "--max-tlp",
            "--password-env",
            "--label",
            "--days",
        ],
        &[],
    )?;
    let cfg = o.config()?;
    let mut db = Db::open(&cfg.db_path_creating()?)?;
    match sub {
        Some("add") => {
            let [name] = o.words.as_slice() else {
                return Err(Failure::Usage("user add NAME: one name".into()));
            };
            halyard_cti::accounts::check_user_name(name)?;
            let role = o
                .get("--role")
                .ok_or_else(|| Failure::Usage("--role is required".into()))?;
            let role = Role::parse(role).ok_or_else(|| {
                Failure::Usage(format!(
                    "--role {role:?}: one of admin, reviewer, analyst, read-only"
                ))
            })?;
            let sectors = match o.get("--sectors") {
                None => None,
                Some(list) => {
                    let v: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
                    for s in &v {
                        if !cfg.sectors.contains(s) {
                            return Err(Failure::Usage(format!(
                                "--sectors: {s:?} is not one of the node's sectors {:?}",
                                cfg.sectors
                            )));
                        }
                    }
                    Some(v)
                }
            };
            let max_tlp = match o.get("--max-tlp") {
                None => Tlp::Red,
                Some(t) => Tlp::parse(t).ok_or_else(|| {
                    Failure::Usage(format!(
                        "--max-tlp {t:?}: one of clear, green, amber, amber+strict, red"
                    ))
                })?,
            };
            let password = match o.get("--password-env") {
                Some(var) => std::env::var(var)
                    .map_err(|_| format!("--password-env {var}: the variable is not set"))?,
                None => {
                    let mut line = String::new();
                    std::io::stdin().read_line(&mut line)?;
                    line.trim_end_matches(['\n', '\r']).to_string()
                }
            };
            halyard_cti::accounts::check_password(&password)?;
            db.create_user(&User {
                name: name.clone(),
                role,
                password_hash: halyard_cti::accounts::hash_password(&password)?,
                sectors,
                max_tlp,
                disabled: false,
            })?;
            out!("user {name} ({}) created", role.as_str());
        }
        Some("token") => {
            let [name] = o.words.as_slice() else {
                return Err(Failure::Usage("user token NAME: one name".into()));
            };
            if db.user(name)?.is_none() {
                return Err(Failure::Error(format!("no user {name}")));
            }
            let expires = match o.get("--days") {
                None => None,
                Some(d) => {
                    let d: i64 =
                        d.parse().ok().filter(|d| *d > 0).ok_or_else(|| {
                            Failure::Usage("--days takes a positive number".into())
                        })?;
                    Some(halyard_cti::node::now_us() + d * 86_400_000_000)
                }
            };
            let token = halyard_cti::accounts::new_token();
            db.create_token(
                name,
                &halyard_cti::accounts::token_hash(&token),
                o.get("--label").unwrap_or(""),
                expires,
            )?;
            out!("{token}");
        }
        Some("list") => {
            for u in db.users()? {
                out!(
                    "{}\t{}\tsectors={}\tmax_tlp={}{}",
                    u.name,
                    u.role.as_str(),
                    u.sectors
                        .map(|s| s.join(","))
                        .unwrap_or_else(|| "all".into()),
                    u.max_tlp.as_str(),
                    if u.disabled { "\tdisabled" } else { "" }
                );
            }
        }
        _ => return Err(Failure::Usage("user add | token | list".into())),
    }
    Ok(ExitCode::SUCCESS)
}

fn publish(args: &[String]) -> Res {
    let o = Opts::parse(
        args,
        &["--config", "--url", "--sector", "--tlp"],
        &["--misp"],
    )?;
    if o.words.is_empty() {
        return Err(Failure::Usage("publish FILE...: no file".into()));
    }
    let base = match (o.get("--url"), o.get("--config")) {
        (Some(u), _) => u.trim_end_matches('/').to_string(),
        (None, Some(_)) => {
            let cfg = o.config()?;
            cfg.listen
                .public_url
                .clone()
                .unwrap_or_else(|| format!("http://{}", cfg.listen.http))
                .trim_end_matches('/')
                .to_string()
        }
        // The node's default listen address, unless the environment names another.
        (None, None) => std::env::var("HALYARD_CTI_URL")
            .unwrap_or_else(|_| format!("http://{}", halyard_cti::config::Listen::default().http))
            .trim_end_matches('/')
            .to_string(),
    };
    let auth = if let Ok(t) = std::env::var("HALYARD_CTI_TOKEN") {
        format!("Bearer {t}")
    } else {
        let (Ok(u), Ok(p)) = (
            std::env::var("HALYARD_CTI_USER"),
            std::env::var("HALYARD_CTI_PASSWORD"),
        ) else {
            return Err(Failure::Usage(
                "credentials: set HALYARD_CTI_TOKEN, or HALYARD_CTI_USER and HALYARD_CTI_PASSWORD"
                    .into(),
            ));
        };
        use base64::Engine as _;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
        )
    };
    let mut query = Vec::new();
    if let Some(s) = o.get("--sector") {
        query.push(format!("sector={s}"));
    }
    if let Some(t) = o.get("--tlp") {
        query.push(format!("tlp={t}"));
    }
    let path = if o.flag("--misp") { "misp" } else { "objects" };
    let url = format!("{base}/api/v1/{path}?{}", query.join("&"));
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(600)))
            .build(),
    );
    let mut failed = false;
    for file in &o.words {
        let body = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        let mut resp = agent
            .post(&url)
            .header("Authorization", &auth)
            .header("Content-Type", "application/json")
            .send(&body[..])
            .map_err(|e| format!("{url}: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .unwrap_or_default();
        if status != 200 {
            failed = true;
            eprintln!("{file}: refused ({status}): {}", text.trim());
            continue;
        }
        summarise(file, &text);
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints a REST ingest report: one line per object, then counts.
fn summarise(file: &str, text: &str) {
    let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let results = v["results"].as_array().cloned().unwrap_or_default();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for r in &results {
        let d = r["disposition"].as_str().unwrap_or("?").to_string();
        if results.len() <= 50 {
            let extra = match d.as_str() {
                "shared" => format!(" with {}", join(&r["sectors"])),
                "queued" => format!(" for review {} ({})", r["review"], join(&r["reasons"])),
                _ => String::new(),
            };
            out!("{file}: {} {}{extra}", r["id"].as_str().unwrap_or("?"), d);
        }
        *counts.entry(d).or_default() += 1;
    }
    let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    out!(
        "{file}: {} object(s): {}",
        results.len(),
        summary.join(", ")
    );
}

fn join(v: &serde_json::Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn validate(args: &[String]) -> Res {
    if args.is_empty() {
        return Err(Failure::Usage("validate FILE...: no file".into()));
    }
    let limits = halyard_cti::config::Limits::default().stix();
    let mut bad = false;
    for file in args {
        let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        match halyard_stix::bundle::parse(&bytes, &limits) {
            Ok(objs) => out!("{file}: valid, {} object(s)", objs.len()),
            Err(e) => {
                bad = true;
                out!("{file}: INVALID: {e}");
            }
        }
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
