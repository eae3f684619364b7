//! Sanitisation of STIX 2.1 objects before an organisation shares them: personal and internal
//! data are removed or generalised, and every change is recorded for the human reviewer.
//!
//! # Design
//!
//! A [`Sanitizer`] is compiled once from the node's [`Rules`] (section `[sanitize]` of its
//! configuration); bad rules are refused with the rule and the reason ([`RuleError`]). It then
//! rewrites one object at a time, in place, and returns the [`Change`] list. That list *is* the
//! diff the reviewer sees: no other text is touched, so an object with no changes is
//! byte-identical to its input.
//!
//! **What is walked.** Every string value of the object, recursively through arrays, nested
//! objects and extensions. Dictionary keys are never rewritten (they are structure), nor are
//! numbers, booleans and nulls. Properties that are structural are skipped at every depth:
//! `type`, `id`, `spec_version`, `created`, `modified`, `valid_from`, `valid_until`,
//! `first_seen`, `last_seen`, `first_observed`, `last_observed`, `published`, every name
//! ending in `_ref` or `_refs`, `object_marking_refs`, `granular_markings`, `pattern_type`,
//! `pattern_version`, `hashes` (the whole dictionary), `lang`, `confidence`, `revoked`, and
//! the configured `skip_properties`.
//!
//! **Generalise rather than delete.** A replacement keeps what is intelligence and drops what
//! identifies a person or the organisation's layout:
//!
//! | rule          | finds                                                    | becomes                        |
//! |---------------|----------------------------------------------------------|--------------------------------|
//! | `custom:NAME` | matches of a configured regex                            | its replacement (`$1` allowed) |
//! | `file-path`   | `\\host\share\...\f.xlsx` with an internal host         | `\\<internal-share>\f.xlsx`    |
//! | `email`       | `jane.doe@corp.example` (which ones: [`EmailRule`])      | `redacted@corp.example`        |
//! | `hostname`    | `fs01.corp.example` (strictly under an internal domain)  | `host.corp.example`            |
//! | `username`    | the NAME in `C:\Users\NAME`, `/home/NAME`, `/Users/NAME`, `CORP\NAME`; known users as whole words | `<user>` |
//! | `username`    | the domain part of a domain account's SID `S-1-5-21-a-b-c-1104` | `S-1-5-21-<domain>-1104` |
//! | `internal-ip` | `10.1.2.3`, `10.1.2.0/24`, `fd00::17` in an internal network | `10.0.0.0/8` (the network)  |
//!
//! The rules run in that order on each string, each on the previous one's output, and each
//! rule that changed the string adds one [`Change`] whose `before` is its input and whose
//! `after` is its output; the changes at one path therefore chain from the original value to
//! the final one. The order is chosen so that no rule hides data from a later one: shares go
//! before host names (the share takes its host with it), e-mail addresses before user names
//! (so `jdoe@corp.example` becomes `redacted@corp.example`, not `<user>@corp.example`), and
//! host names before user names (so `jdoe-pc.corp.example` becomes `host.corp.example`).
//!
//! Details a reviewer can rely on:
//! - A UNC host is internal when it is under an internal domain, has no dot (a NetBIOS name,
//!   never public), or is an address in an internal network; `\\185.1.2.3\share\x.dll` (an
//!   attacker's SMB server) is intelligence and stays. Device paths (`\\.\pipe\x`, `\\?\C:\`)
//!   are not shares.
//! - Unix profile paths count only where a path begins (start of text, after white space, a
//!   quote, `(`, `[`, `=`, `,`, `;`, `:`, or `file://`), so `https://site.example/home/about` is
//!   not a user's home directory.
//! - Built-in account names are not personal and stay: `Administrator`, `Guest`, `krbtgt`,
//!   `SYSTEM`, `root`, `Public`, `Default`, `All Users` and the like.
//! - An address with a prefix (`10.1.2.0/24`) is generalised when it is at least as specific as
//!   the configured network; the network itself (`10.0.0.0/8`) stays, so a second pass leaves
//!   it alone. When several configured networks hold an address, the most specific wins.
//!   IPv4-mapped IPv6 addresses are checked against the IPv4 networks.
//! - Sanitising its own output changes nothing on the text the rules are made for; on
//!   adversarial text a second pass may generalise further, which only ever removes more.
//! - A name that merely contains an internal domain is not internal:
//!   `fs01.corp.example.com` and `login-corp.example.net` are someone else's names.
//!
//! **Indicator patterns.** In an `indicator` whose `pattern_type` is `stix` (or absent), only
//! the contents of string literals are rewritten, then re-escaped (`\\`, `\'`), so the pattern
//! stays valid. Hex, binary and timestamp literals (`h'..'`, `b'..'`, `t'..'`), quoted path
//! components (`hashes.'SHA-256'`) and values compared with a `hashes` property are left alone.
//! When a literal compared with `=` or `!=` against the `value` of an `ipv4-addr` or
//! `ipv6-addr` (or a `..._ref.value`) is wholly an internal address, the comparison becomes
//! `ISSUBSET '10.0.0.0/8'` (or `NOT ISSUBSET`), which still matches the original address; in
//! other positions (an `IN` set, `LIKE`) the literal is replaced and the operator kept. A
//! pattern whose literals cannot be delimited (an unterminated quote) is invalid anyway and is
//! sanitised as plain text, so nothing leaks through it. Patterns in other languages (Sigma,
//! YARA, Snort) are sanitised as plain text.
//!
//! **Whole-value rules.** In a `user-account` (top level or nested) with `usernames` on,
//! `account_login` and `display_name` become `<user>` (built-in names stay), `user_id` becomes
//! `<user>`. `credential` is removed whatever the rules say: a secret is never shared. Its
//! change has rule `credential`, path `/credential`, `after` empty and `before` set to
//! [`CREDENTIAL_WITHHELD`], so the secret is not copied into logs or onto the review page.
//! In an `email-addr` whose `value` is a personal address, `display_name` becomes `<user>`
//! (rule `email`).
//!
//! **Limits.** Rules recognise forms, not meaning: a colleague's name in free text is found only
//! when listed in `known_users` (full names may be listed), a bare NetBIOS host name (`WS-0427`)
//! only through a custom rule for the organisation's naming scheme, and defanged names
//! (`fs01[.]corp[.]example`) not at all. In `smb://` or `file://` URLs the host is generalised
//! but the share path stays. The reviewer's second look exists for what rules cannot see.
//!
//! **Order and cost.** Changes come in document order: an object's properties in the order of
//! its `serde_json` map (sorted keys), arrays by index, depth first. The same input always gives
//! the same output and changes. Regexes are compiled once in [`Sanitizer::new`]; the regex crate
//! matches in linear time, the walk uses an explicit stack (no recursion, whatever the depth),
//! and nothing indexes input without a bound check, so no input makes it panic.

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The `before` of the change that records a removed `credential`: the secret itself is never
/// copied into the change list.
pub const CREDENTIAL_WITHHELD: &str = "<credential withheld>";

/// What a user name, person's name or profile-path user segment becomes.
const USER: &str = "<user>";

/// What an internal share (host and share and directories) becomes.
const SHARE: &str = "<internal-share>";

/// The local part that replaces a personal e-mail address's own.
const REDACTED_LOCAL: &str = "redacted";

/// Largest compiled size accepted for one configured regex (custom rules, user lists).
const REGEX_SIZE_MAX: usize = 1 << 20;

/// Account and profile names that belong to the system, not to a person (compared ignoring
/// case). Keeping them keeps intelligence ("ran as Administrator").
const BUILT_IN_ACCOUNTS: &[&str] = &[
    "administrator",
    "admin",
    "all users",
    "default",
    "default user",
    "defaultuser0",
    "guest",
    "krbtgt",
    "local service",
    "localservice",
    "network service",
    "networkservice",
    "public",
    "root",
    "shared",
    "system",
];

/// Properties never rewritten at any depth (besides names ending in `_ref`/`_refs` and the
/// configured `skip_properties`).
const STRUCTURAL: &[&str] = &[
    "type",
    "id",
    "spec_version",
    "created",
    "modified",
    "valid_from",
    "valid_until",
    "first_seen",
    "last_seen",
    "first_observed",
    "last_observed",
    "published",
    "object_marking_refs",
    "granular_markings",
    "pattern_type",
    "pattern_version",
    "hashes",
    "lang",
    "confidence",
    "revoked",
];

/// The sanitisation rules as written in the node's configuration, section `[sanitize]`.
///
/// Every field has a default, so an empty section is valid: it redacts nothing internal (no
/// internal domains or networks are known) but still removes credentials and generalises
/// user-profile paths and `user-account` names. Unknown keys are refused, so a misspelt rule
/// cannot silently do nothing.
///
/// ```toml
/// [sanitize]
/// internal_domains = ["corp.example", "acme.local"]
/// internal_networks = ["10.0.0.0/8", "192.168.0.0/16", "fd00::/8"]
/// emails = "internal"
/// internal_netbios = ["CORP"]
/// known_users = ["jdoe"]
/// custom = [{ name = "employee-id", pattern = '\bEMP-\d{6}\b', replacement = "EMP-XXXXXX" }]
/// ```
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Rules {
    /// The organisation's own DNS domains. Host names and e-mail domains equal to or under
    /// one of them are internal. Default: none.
    pub internal_domains: Vec<String>,
    /// The organisation's networks in CIDR form, IPv4 or IPv6 (`"10.0.0.0/8"`, `"fd00::/8"`).
    /// Addresses in them are generalised to the network. Default: none.
    pub internal_networks: Vec<String>,
    /// Which e-mail addresses are personal data. Default: [`EmailRule::Internal`].
    pub emails: EmailRule,
    /// Generalise host names under `internal_domains` to `host.<domain>`. Default: on.
    pub hostnames: bool,
    /// Replace user names with `<user>`: in user-profile paths, in `DOMAIN\NAME` with a
    /// domain of `internal_netbios`, the names listed in `known_users`, and the personal
    /// properties of `user-account` objects; the domain part of domain account SIDs is
    /// generalised too. Default: on.
    pub usernames: bool,
    /// The organisation's NetBIOS (pre-Windows 2000) domain names, as in `CORP\jdoe`.
    /// Compared ignoring case. Default: none.
    pub internal_netbios: Vec<String>,
    /// User names replaced wherever they occur as a whole word, ignoring case. Default: none.
    pub known_users: Vec<String>,
    /// Generalise paths that reveal the internal layout: internal UNC shares become
    /// `\\<internal-share>\<file name>`; when `usernames` is off, user-profile paths still lose
    /// their user segment under this rule. Default: on.
    pub file_paths: bool,
    /// Organisation-specific rules (employee numbers, ticket ids), applied first, in order.
    /// Default: none.
    pub custom: Vec<CustomRule>,
    /// Further property names never touched, at any depth. Default: none.
    pub skip_properties: Vec<String>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            internal_domains: Vec::new(),
            internal_networks: Vec::new(),
            emails: EmailRule::Internal,
            hostnames: true,
            usernames: true,
            internal_netbios: Vec::new(),
            known_users: Vec::new(),
            file_paths: true,
            custom: Vec::new(),
            skip_properties: Vec::new(),
        }
    }
}

/// One organisation-specific rewriting rule. All three fields are required.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CustomRule {
    /// Names the rule in change records (`custom:<name>`): letters, digits, `-`, `_`, `.`.
    pub name: String,
    /// A regex in the `regex` crate's syntax; it must not match the empty string.
    pub pattern: String,
    /// What each match becomes; `$1`, `${1}`, `${name}` insert capture groups, `$$` a dollar.
    /// Every group referred to must exist in `pattern`.
    pub replacement: String,
}

/// Which e-mail addresses are personal data.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EmailRule {
    /// Addresses whose domain is, or is under, one of `internal_domains` (staff addresses).
    /// Outside addresses, such as a phishing sender's, are intelligence and stay.
    #[default]
    Internal,
    /// Every address: the local part of each becomes `redacted`, the domain stays.
    All,
    /// No address is touched.
    None,
}

/// One change made to an object: the reviewer's diff line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Where, as a JSON pointer (RFC 6901) into the object: `/description`,
    /// `/external_references/0/url`.
    pub path: String,
    /// Which rule: `custom:<name>`, `file-path`, `email`, `hostname`, `username`,
    /// `internal-ip`, or `credential` (a removed credential).
    pub rule: String,
    /// The value before this rule ran (the output of the previous change at the same path, if
    /// any), or [`CREDENTIAL_WITHHELD`] for a removed credential.
    pub before: String,
    /// The value after this rule ran; empty for a removed property.
    pub after: String,
}

/// A rule that [`Sanitizer::new`] refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// Which rule, as written in the configuration: `internal_networks[1]`,
    /// `custom:employee-id`, `known_users[0]`.
    pub rule: String,
    /// Why it was refused.
    pub reason: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sanitize rule {}: {}", self.rule, self.reason)
    }
}

impl std::error::Error for RuleError {}

/// Compiled [`Rules`], ready to sanitise objects. Cheap to share between threads.
#[derive(Clone, Debug)]
pub struct Sanitizer {
    /// Lower case, longest first, without leading or trailing dots.
    domains: Vec<String>,
    networks: Vec<Network>,
    emails: EmailRule,
    usernames: bool,
    netbios: Option<Regex>,
    known_users: Option<Regex>,
    custom: Vec<Custom>,
    skip: Vec<String>,
    /// The rules that can change anything under this configuration, in the order they run.
    phases: Vec<Phase>,
    re: Builtin,
}

/// The fixed recognisers, compiled once per sanitizer.
#[derive(Clone, Debug)]
struct Builtin {
    ipv4: Regex,
    ipv6: Regex,
    email: Regex,
    dns_name: Regex,
    unc: Regex,
    win_profile: Regex,
    win_profile_slash: Regex,
    unix_profile: Regex,
    domain_sid: Regex,
}

impl Builtin {
    fn new() -> Builtin {
        // These patterns are constants tested by every sanitizer construction, so failing to
        // compile them is a programming error, never an input error.
        let re = |p: &str| Regex::new(p).expect("built-in sanitize pattern compiles");
        // ASCII classes spelt out: `(?i)` would also fold in `ſ` and the Kelvin sign.
        let label = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
        Builtin {
            ipv4: re(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}"),
            ipv6: re(
                r"(?:[0-9a-fA-F]{0,4}:){2,8}(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9a-fA-F]{1,4})?",
            ),
            email: re(&format!(r"[a-zA-Z0-9._%+-]+@{label}(?:\.{label})+")),
            dns_name: re(&format!(r"{label}(?:\.{label})+")),
            // Components may hold placeholders such as `<user>`: `<` and `>` are invalid in
            // Windows file names, so there they can only be an earlier rule's output.
            unc: re(r#"\\\\([^\\/\s"'<>|:*?]+)((?:\\[^\\/\s"'|:*?]*)*)"#),
            win_profile: re(
                r#"(?i)(?:\b[a-z]:|%systemdrive%|%homedrive%)?\\{1,2}(?:users|documents and settings)\\{1,2}([^\\/\s"'<>|:*?%]+)"#,
            ),
            win_profile_slash: re(
                r#"(?i)\b[a-z]:/{1,2}(?:users|documents and settings)/{1,2}([^\\/\s"'<>|:*?%]+)"#,
            ),
            unix_profile: re(r#"/(?:home|Users)/([^\\/\s"'<>|:*?$%]+)"#),
            domain_sid: re(r"\bS-1-5-21-[0-9]+-[0-9]+-[0-9]+((?:-[0-9]+)?)\b"),
        }
    }
}

/// One rule as run on a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Custom(usize),
    FilePath,
    Email,
    Hostname,
    Username,
    InternalIp,
}

/// A compiled custom rule.
#[derive(Clone, Debug)]
struct Custom {
    name: String,
    regex: Regex,
    replacement: String,
}

/// A configured internal network.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Network {
    addr: IpAddr,
    prefix: u8,
    /// Canonical CIDR text, the generalised form of every address inside.
    text: String,
}

impl Sanitizer {
    /// Compiles `rules`, refusing the first bad one: an invalid or non-network CIDR, an
    /// invalid domain, an empty or malformed user or NetBIOS name, a custom rule with an empty
    /// or duplicate name, an invalid regex, a regex that matches the empty string, or a
    /// replacement that refers to a group the regex lacks.
    pub fn new(rules: &Rules) -> Result<Sanitizer, RuleError> {
        let domains = compile_domains(&rules.internal_domains)?;
        let networks = compile_networks(&rules.internal_networks)?;
        let netbios = compile_netbios(&rules.internal_netbios)?;
        let known_users = compile_known_users(&rules.known_users)?;
        let custom = compile_custom(&rules.custom)?;
        let skip = compile_skip(&rules.skip_properties)?;
        let mut sanitizer = Sanitizer {
            domains,
            networks,
            emails: rules.emails,
            usernames: rules.usernames,
            netbios,
            known_users,
            custom,
            skip,
            phases: Vec::new(),
            re: Builtin::new(),
        };
        sanitizer.phases = sanitizer.active_phases(rules);
        Ok(sanitizer)
    }

    fn active_phases(&self, rules: &Rules) -> Vec<Phase> {
        let mut phases: Vec<Phase> = (0..self.custom.len()).map(Phase::Custom).collect();
        if rules.file_paths {
            phases.push(Phase::FilePath);
        }
        let email = match rules.emails {
            EmailRule::Internal => !self.domains.is_empty(),
            EmailRule::All => true,
            EmailRule::None => false,
        };
        if email {
            phases.push(Phase::Email);
        }
        if rules.hostnames && !self.domains.is_empty() {
            phases.push(Phase::Hostname);
        }
        if rules.usernames {
            phases.push(Phase::Username);
        }
        if !self.networks.is_empty() {
            phases.push(Phase::InternalIp);
        }
        phases
    }

    /// Sanitises one STIX object in place and returns every change made, in document order.
    /// See the module documentation for what is changed and how.
    pub fn sanitize(&self, obj: &mut Map<String, Value>) -> Vec<Change> {
        let mut changes = Vec::new();
        let mut tasks = Vec::new();
        self.expand(obj, "", true, &mut tasks);
        while let Some(task) = tasks.pop() {
            match task {
                Task::Emit(change) => changes.push(change),
                Task::Visit { path, value, leaf } => match value {
                    Value::String(s) => self.leaf(path, s, leaf, &mut changes),
                    Value::Array(items) => {
                        for (i, item) in items.iter_mut().enumerate().rev() {
                            let path = format!("{path}/{i}");
                            tasks.push(Task::Visit {
                                path,
                                value: item,
                                leaf,
                            });
                        }
                    }
                    Value::Object(map) => self.expand(map, &path, false, &mut tasks),
                    Value::Null | Value::Bool(_) | Value::Number(_) => {}
                },
            }
        }
        changes
    }

    /// Queues the properties of one object (at `path`) for visiting, in reverse so that they
    /// are popped in document order; removes a `user-account`'s credential.
    fn expand<'v>(
        &self,
        map: &'v mut Map<String, Value>,
        path: &str,
        root: bool,
        tasks: &mut Vec<Task<'v>>,
    ) {
        let kind = self.object_kind(map, root);
        let removed = match kind.user_account {
            true => map.remove("credential").map(|_| Change {
                path: format!("{path}/credential"),
                rule: "credential".to_owned(),
                before: CREDENTIAL_WITHHELD.to_owned(),
                after: String::new(),
            }),
            false => None,
        };
        let mut children: Vec<Task<'v>> = Vec::with_capacity(map.len() + 1);
        let mut removed = removed;
        for (key, value) in map.iter_mut() {
            if removed.is_some() && key.as_str() > "credential" {
                children.extend(removed.take().map(Task::Emit));
            }
            if self.is_skipped(key) {
                continue;
            }
            let leaf = self.leaf_kind(&kind, key);
            let path = format!("{path}/{}", pointer_escape(key));
            children.push(Task::Visit { path, value, leaf });
        }
        children.extend(removed.map(Task::Emit));
        tasks.extend(children.into_iter().rev());
    }

    fn object_kind(&self, map: &Map<String, Value>, root: bool) -> ObjectKind {
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        let stix_pattern = root
            && ty == "indicator"
            && matches!(
                map.get("pattern_type").and_then(Value::as_str),
                None | Some("stix")
            );
        let personal_email = ty == "email-addr"
            && map
                .get("value")
                .and_then(Value::as_str)
                .and_then(|v| v.trim().rsplit_once('@'))
                .is_some_and(|(_, domain)| self.email_domain_is_personal(domain));
        ObjectKind {
            stix_pattern,
            user_account: ty == "user-account",
            personal_email,
        }
    }

    fn leaf_kind(&self, kind: &ObjectKind, key: &str) -> Leaf {
        match key {
            "pattern" if kind.stix_pattern => Leaf::Pattern,
            "account_login" | "display_name" if kind.user_account && self.usernames => {
                Leaf::Person {
                    rule: "username",
                    keep_built_in: true,
                }
            }
            "user_id" if kind.user_account && self.usernames => Leaf::Person {
                rule: "username",
                keep_built_in: false,
            },
            "display_name" if kind.personal_email => Leaf::Person {
                rule: "email",
                keep_built_in: false,
            },
            _ => Leaf::Text,
        }
    }

    fn is_skipped(&self, key: &str) -> bool {
        STRUCTURAL.contains(&key)
            || key.ends_with("_ref")
            || key.ends_with("_refs")
            || self.skip.iter().any(|s| s == key)
    }

    /// Rewrites one string value and records the changes.
    fn leaf(&self, path: String, s: &mut String, leaf: Leaf, changes: &mut Vec<Change>) {
        match leaf {
            Leaf::Text => self.rewrite(path, s, false, changes),
            Leaf::Pattern => self.rewrite(path, s, true, changes),
            Leaf::Person {
                rule,
                keep_built_in,
            } => {
                if s.is_empty() || s == USER || (keep_built_in && is_built_in_account(s)) {
                    return;
                }
                let before = std::mem::replace(s, USER.to_owned());
                changes.push(Change {
                    path,
                    rule: rule.to_owned(),
                    before,
                    after: USER.to_owned(),
                });
            }
        }
    }

    /// Runs every active rule over `s` in turn, one change per rule that changed it.
    fn rewrite(&self, path: String, s: &mut String, pattern: bool, changes: &mut Vec<Change>) {
        let mut current: Option<String> = None;
        for &phase in &self.phases {
            let input = current.as_deref().unwrap_or(s);
            let output = match pattern {
                true => self.pattern_phase(phase, input),
                false => self.text_phase(phase, input),
            };
            if let Some(output) = output {
                changes.push(Change {
                    path: path.clone(),
                    rule: self.rule_name(phase),
                    before: input.to_owned(),
                    after: output.clone(),
                });
                current = Some(output);
            }
        }
        if let Some(current) = current {
            *s = current;
        }
    }

    fn rule_name(&self, phase: Phase) -> String {
        match phase {
            Phase::Custom(i) => match self.custom.get(i) {
                Some(c) => format!("custom:{}", c.name),
                None => "custom".to_owned(),
            },
            Phase::FilePath => "file-path".to_owned(),
            Phase::Email => "email".to_owned(),
            Phase::Hostname => "hostname".to_owned(),
            Phase::Username => "username".to_owned(),
            Phase::InternalIp => "internal-ip".to_owned(),
        }
    }

    /// One rule over plain text; `Some` only when the text changed.
    fn text_phase(&self, phase: Phase, text: &str) -> Option<String> {
        match phase {
            Phase::Custom(i) => self.custom.get(i).and_then(|c| c.apply(text)),
            Phase::FilePath => {
                let profiles = !self.usernames;
                chain(
                    text,
                    &[&|t| self.unc_shares(t), &|t| match profiles {
                        true => self.profile_paths(t),
                        false => None,
                    }],
                )
            }
            Phase::Email => self.email_addresses(text),
            Phase::Hostname => self.host_names(text),
            Phase::Username => chain(
                text,
                &[
                    &|t| self.profile_paths(t),
                    &|t| self.netbios_users(t),
                    &|t| self.listed_users(t),
                    &|t| self.domain_sids(t),
                ],
            ),
            Phase::InternalIp => chain(
                text,
                &[&|t| self.addresses(t, true), &|t| self.addresses(t, false)],
            ),
        }
    }

    /// One rule over the string literals of a STIX pattern; `Some` only when it changed.
    fn pattern_phase(&self, phase: Phase, pattern: &str) -> Option<String> {
        let Some(literals) = scan_pattern(pattern) else {
            return self.text_phase(phase, pattern);
        };
        let mut edits = Edits::new(pattern);
        for lit in literals.iter().filter(|l| l.value) {
            let Some(inner) = pattern.get(lit.open + 1..lit.close) else {
                continue;
            };
            let content = unescape_literal(inner);
            if phase == Phase::InternalIp {
                if let Some((op, net)) = lit.ip_op.zip(self.whole_internal_address(&content)) {
                    edits.replace(op.start, op.end, &subset_operator(pattern, op));
                    edits.replace(lit.open + 1, lit.close, &escape_literal(&net.text));
                    continue;
                }
            }
            if let Some(new) = self.text_phase(phase, &content) {
                edits.replace(lit.open + 1, lit.close, &escape_literal(&new));
            }
        }
        edits.finish()
    }
}

/// What an object is, for the properties that depend on it.
struct ObjectKind {
    /// The top-level `pattern` is STIX patterning.
    stix_pattern: bool,
    user_account: bool,
    /// An `email-addr` whose `value` is personal under the e-mail rule.
    personal_email: bool,
}

/// How a string value is treated.
#[derive(Clone, Copy, Debug)]
enum Leaf {
    /// Free text: every rule.
    Text,
    /// A STIX pattern: every rule, inside string literals only.
    Pattern,
    /// A person's name or identifier: replaced whole by `<user>`.
    Person {
        rule: &'static str,
        keep_built_in: bool,
    },
}

/// Work for the walk: a value to visit, or a change to record at this point of the order.
enum Task<'v> {
    Visit {
        path: String,
        value: &'v mut Value,
        leaf: Leaf,
    },
    Emit(Change),
}

// ---------------------------------------------------------------------------------------------
// The rules on text. Each returns `Some(new text)` only when it changed something.
// ---------------------------------------------------------------------------------------------

impl Sanitizer {
    /// `\\host\share\dir\file` with an internal host → `\\<internal-share>\file`.
    fn unc_shares(&self, text: &str) -> Option<String> {
        let mut edits = Edits::new(text);
        for caps in self.re.unc.captures_iter(text) {
            let (Some(whole), Some(host), Some(rest)) = (caps.get(0), caps.get(1), caps.get(2))
            else {
                continue;
            };
            // `CORP\\jdoe`, `<user>\\x`: a doubled separator after a word is not a share.
            let joined = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '%' | '>');
            if text[..whole.start()]
                .chars()
                .next_back()
                .is_some_and(joined)
            {
                continue;
            }
            // A host cut short by a placeholder or a prefix (`\\S-1-5-21-<domain>`,
            // `\\10.0.0.0/8`) is not a host: it is an earlier rule's output.
            if text[host.end()..].starts_with(['<', '>', '/']) {
                continue;
            }
            let rest = trim_trailing_punctuation(rest.as_str());
            let host = match rest.is_empty() {
                true => trim_trailing_punctuation(host.as_str()),
                false => host.as_str(),
            };
            if !self.share_host_is_internal(host) {
                continue;
            }
            let end = whole.start() + 2 + host.len() + rest.len();
            let components: Vec<&str> = rest.split('\\').skip(1).collect();
            let replacement = match components.as_slice() {
                [_share, .., file] => format!(r"\\{SHARE}\{file}"),
                _ => format!(r"\\{SHARE}"),
            };
            edits.replace(whole.start(), end, &replacement);
        }
        edits.finish()
    }

    fn share_host_is_internal(&self, host: &str) -> bool {
        // WebDAV forms: `\\host@SSL\DavWWWRoot`, `\\host@8080\share`.
        let host = host.split('@').next().unwrap_or(host);
        if host.is_empty() || host == "." {
            return false;
        }
        if let Ok(addr) = host.parse::<Ipv4Addr>() {
            return self.network_of(IpAddr::V4(addr)).is_some();
        }
        !host.contains('.') || self.domain_of(host, true).is_some()
    }

    /// `jane@corp.example` → `redacted@corp.example` when personal under the e-mail rule.
    fn email_addresses(&self, text: &str) -> Option<String> {
        let mut edits = Edits::new(text);
        for m in self.re.email.find_iter(text) {
            if !ends_cleanly(text, m.end(), |c| {
                c.is_ascii_alphanumeric() || c == '-' || c == '_'
            }) {
                continue;
            }
            let Some((local, domain)) = m.as_str().split_once('@') else {
                continue;
            };
            if local == REDACTED_LOCAL || !self.email_domain_is_personal(domain) {
                continue;
            }
            edits.replace(m.start(), m.end(), &format!("{REDACTED_LOCAL}@{domain}"));
        }
        edits.finish()
    }

    fn email_domain_is_personal(&self, domain: &str) -> bool {
        match self.emails {
            EmailRule::All => true,
            EmailRule::Internal => self.domain_of(domain, true).is_some(),
            EmailRule::None => false,
        }
    }

    /// `fs01.corp.example` → `host.corp.example`.
    fn host_names(&self, text: &str) -> Option<String> {
        let mut edits = Edits::new(text);
        for m in self.re.dns_name.find_iter(text) {
            let before_ok = !text[..m.start()]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'));
            let after_ok = ends_cleanly(text, m.end(), |c| c.is_alphanumeric() || c == '_');
            if !before_ok || !after_ok {
                continue;
            }
            let name = m.as_str();
            let Some(domain_len) = self.domain_of(name, false) else {
                continue;
            };
            let (host, domain) = name.split_at(name.len() - domain_len);
            if host.eq_ignore_ascii_case("host.") {
                continue;
            }
            edits.replace(m.start(), m.end(), &format!("host.{domain}"));
        }
        edits.finish()
    }

    /// The length of the internal domain that `name` is under (or equal to, when
    /// `or_equal`), the longest configured one; `None` when it is not internal.
    fn domain_of(&self, name: &str, or_equal: bool) -> Option<usize> {
        let name = name.strip_suffix('.').unwrap_or(name);
        let lower = name.to_ascii_lowercase();
        self.domains.iter().find_map(|d| {
            let under = lower.len() > d.len()
                && lower.ends_with(d.as_str())
                && lower.as_bytes().get(lower.len() - d.len() - 1) == Some(&b'.');
            (under || (or_equal && lower == *d)).then_some(d.len())
        })
    }

    /// The user segment of profile paths: `C:\Users\NAME`, `C:/Users/NAME`, `/home/NAME`.
    fn profile_paths(&self, text: &str) -> Option<String> {
        chain(
            text,
            &[
                &|t| replace_names(t, &self.re.win_profile, |_, _| true),
                &|t| replace_names(t, &self.re.win_profile_slash, |_, _| true),
                &|t| replace_names(t, &self.re.unix_profile, unix_path_starts_at),
            ],
        )
    }

    /// `CORP\NAME` with an internal NetBIOS domain.
    fn netbios_users(&self, text: &str) -> Option<String> {
        let re = self.netbios.as_ref()?;
        replace_names(text, re, |t, start| {
            !t[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || matches!(c, '\\' | '/' | '.' | '-' | '_'))
        })
    }

    /// The configured user names, as whole words.
    fn listed_users(&self, text: &str) -> Option<String> {
        let re = self.known_users.as_ref()?;
        let mut edits = Edits::new(text);
        for m in re.find_iter(text) {
            let word = |c: char| c.is_alphanumeric() || c == '_';
            let before_ok = !text[..m.start()].chars().next_back().is_some_and(word);
            if before_ok && ends_cleanly(text, m.end(), word) {
                edits.replace(m.start(), m.end(), USER);
            }
        }
        edits.finish()
    }

    /// `S-1-5-21-<a>-<b>-<c>-RID` → `S-1-5-21-<domain>-RID`: the three sub-authorities name the
    /// organisation's domain; the relative identifier (500 is the built-in Administrator) stays.
    fn domain_sids(&self, text: &str) -> Option<String> {
        let mut edits = Edits::new(text);
        for caps in self.re.domain_sid.captures_iter(text) {
            let (Some(whole), Some(rid)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            edits.replace(
                whole.start(),
                whole.end(),
                &format!("S-1-5-21-<domain>{}", rid.as_str()),
            );
        }
        edits.finish()
    }

    /// Internal IPv6 (`v6`) or IPv4 addresses, with an optional `/prefix`, → their network.
    fn addresses(&self, text: &str, v6: bool) -> Option<String> {
        let re = if v6 { &self.re.ipv6 } else { &self.re.ipv4 };
        let mut edits = Edits::new(text);
        for m in re.find_iter(text) {
            let joined =
                |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || (v6 && c == ':');
            if text[..m.start()].chars().next_back().is_some_and(joined) {
                continue;
            }
            let Some((addr, len)) = parse_address(m.as_str(), v6) else {
                continue;
            };
            let end = m.start() + len;
            let (prefix, end) = parse_prefix(text, end, addr);
            // `1.2.3.4.5` is a version or an OID, not an address.
            let dotted_on = !v6
                && text[end..].starts_with('.')
                && text[end + 1..].starts_with(|c: char| c.is_ascii_digit());
            if dotted_on || !ends_cleanly(text, end, |c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(net) = self.generalise(addr, prefix) {
                edits.replace(m.start(), end, &net.text);
            }
        }
        edits.finish()
    }

    /// The network an address (with its written prefix, if any) is generalised to, or `None`
    /// when it is not internal or already no more specific than its network.
    fn generalise(&self, addr: IpAddr, prefix: Option<u8>) -> Option<&Network> {
        let addr = match (addr, prefix) {
            (IpAddr::V6(v6), None) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            _ => addr,
        };
        let net = self.network_of(addr)?;
        match prefix {
            None => Some(net),
            Some(p) if p < net.prefix || (p == net.prefix && addr == net.addr) => None,
            Some(_) => Some(net),
        }
    }

    /// The most specific configured network holding `addr` (the first configured on a tie).
    fn network_of(&self, addr: IpAddr) -> Option<&Network> {
        self.networks
            .iter()
            .filter(|n| n.contains(addr))
            .fold(None, |best: Option<&Network>, n| match best {
                Some(b) if b.prefix >= n.prefix => Some(b),
                _ => Some(n),
            })
    }

    /// The network a pattern literal is generalised to when the literal is wholly an
    /// internal address or network.
    fn whole_internal_address(&self, literal: &str) -> Option<&Network> {
        let text = literal.trim();
        let (addr_text, prefix_text) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr_text.parse().ok()?;
        let prefix = match prefix_text {
            Some(p) => Some(parse_prefix_digits(p, addr)?),
            None => None,
        };
        self.generalise(addr, prefix)
    }
}

impl Custom {
    fn apply(&self, text: &str) -> Option<String> {
        let mut edits = Edits::new(text);
        let mut replacement = String::new();
        for caps in self.regex.captures_iter(text) {
            let Some(m) = caps.get(0).filter(|m| !m.is_empty()) else {
                continue;
            };
            replacement.clear();
            caps.expand(&self.replacement, &mut replacement);
            edits.replace(m.start(), m.end(), &replacement);
        }
        edits.finish()
    }
}

impl Network {
    fn parse(text: &str) -> Result<Network, String> {
        let t = text.trim();
        let Some((addr_text, prefix_text)) = t.split_once('/') else {
            return Err(format!(
                "`{t}` has no prefix length; write a network, as in 10.0.0.0/8 or fd00::/8"
            ));
        };
        let addr: IpAddr = addr_text
            .parse()
            .map_err(|_| format!("`{addr_text}` is not an IPv4 or IPv6 address"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = parse_prefix_digits(prefix_text, addr).ok_or_else(|| {
            format!("prefix length `{prefix_text}` is not a number from 0 to {max}")
        })?;
        let network = network_address(addr, prefix);
        if network != addr {
            return Err(format!(
                "`{t}` has host bits set; the network is {network}/{prefix}"
            ));
        }
        Ok(Network {
            addr,
            prefix,
            text: format!("{addr}/{prefix}"),
        })
    }

    fn contains(&self, addr: IpAddr) -> bool {
        match (self.addr, addr) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                network_address(addr, self.prefix) == self.addr
            }
            _ => false,
        }
    }
}

/// `addr` with every bit after the first `prefix` cleared.
fn network_address(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(prefix.min(32)))
                .unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
        }
        IpAddr::V6(a) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(prefix.min(128)))
                .unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
        }
    }
}

/// A prefix length written as 1 to 3 decimal digits, within the address family's width.
fn parse_prefix_digits(digits: &str, addr: IpAddr) -> Option<u8> {
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u8>().ok().filter(|&p| p <= max)
}

/// A `/prefix` written right after an address ending at `end`: the prefix and the new end.
fn parse_prefix(text: &str, end: usize, addr: IpAddr) -> (Option<u8>, usize) {
    let Some(rest) = text[end..].strip_prefix('/') else {
        return (None, end);
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match parse_prefix_digits(&rest[..digits], addr) {
        Some(p) => (Some(p), end + 1 + digits),
        None => (None, end),
    }
}

/// The address a candidate match starts with, and how many bytes it takes. An IPv6 candidate
/// may have taken a colon that ends a sentence (`at fd00::1: blocked`).
fn parse_address(candidate: &str, v6: bool) -> Option<(IpAddr, usize)> {
    if !v6 {
        return candidate
            .parse::<Ipv4Addr>()
            .ok()
            .map(|a| (IpAddr::V4(a), candidate.len()));
    }
    [candidate, candidate.strip_suffix(':').unwrap_or("")]
        .into_iter()
        .find_map(|c| c.parse::<Ipv6Addr>().ok().map(|a| (IpAddr::V6(a), c.len())))
}

/// Replaces capture group 1 (a user name) of each match with `<user>`, when `starts_ok`
/// accepts the match's start, the name is not a built-in account, and trailing sentence
/// punctuation is left out of it.
fn replace_names(text: &str, re: &Regex, starts_ok: fn(&str, usize) -> bool) -> Option<String> {
    let mut edits = Edits::new(text);
    for caps in re.captures_iter(text) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let trimmed = trim_trailing_punctuation(name.as_str());
        if trimmed.is_empty() || is_built_in_account(trimmed) || !starts_ok(text, whole.start()) {
            continue;
        }
        edits.replace(name.start(), name.start() + trimmed.len(), USER);
    }
    edits.finish()
}

/// Whether a Unix path may begin at `start` (not inside a URL or a longer path).
fn unix_path_starts_at(text: &str, start: usize) -> bool {
    let before = &text[..start];
    match before.chars().next_back() {
        None => true,
        Some(c) if c.is_whitespace() => true,
        Some(c) if "\"'([=,;:".contains(c) => true,
        Some(_) => before.ends_with("file://"),
    }
}

fn is_built_in_account(name: &str) -> bool {
    let name = name.trim();
    BUILT_IN_ACCOUNTS
        .iter()
        .any(|b| b.eq_ignore_ascii_case(name))
}

/// Whether the text at `end` does not continue the token just matched.
fn ends_cleanly(text: &str, end: usize, continues: impl Fn(char) -> bool) -> bool {
    !text[end..].chars().next().is_some_and(continues)
}

/// `s` without the sentence punctuation that may follow a path or name in prose.
fn trim_trailing_punctuation(s: &str) -> &str {
    let mut s = s;
    loop {
        let trimmed = s.trim_end_matches(['.', ',', ';', '!']);
        let trimmed = match trimmed.strip_suffix(')') {
            Some(t) if !t.contains('(') => t,
            _ => trimmed,
        };
        if trimmed.len() == s.len() {
            return s;
        }
        s = trimmed;
    }
}

/// One text rewriting step: `Some` when it changed the text.
type Step<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Applies text rewriting steps in turn; `Some` when the result differs from `text`.
fn chain(text: &str, steps: &[Step<'_>]) -> Option<String> {
    let mut current: Option<String> = None;
    for step in steps {
        if let Some(next) = step(current.as_deref().unwrap_or(text)) {
            current = Some(next);
        }
    }
    current.filter(|c| c != text)
}

/// A rewritten copy of a text, built from replacements of increasing, disjoint byte ranges.
struct Edits<'t> {
    text: &'t str,
    out: String,
    copied_to: usize,
    changed: bool,
}

impl<'t> Edits<'t> {
    fn new(text: &'t str) -> Self {
        Edits {
            text,
            out: String::new(),
            copied_to: 0,
            changed: false,
        }
    }

    /// Replaces `text[start..end]`; ignored when the range overlaps an earlier one or is not
    /// on character boundaries.
    fn replace(&mut self, start: usize, end: usize, with: &str) {
        let (Some(gap), Some(old)) = (
            self.text.get(self.copied_to..start),
            self.text.get(start..end),
        ) else {
            return;
        };
        if old == with {
            return;
        }
        self.out.push_str(gap);
        self.out.push_str(with);
        self.copied_to = end;
        self.changed = true;
    }

    fn finish(mut self) -> Option<String> {
        if !self.changed {
            return None;
        }
        self.out
            .push_str(self.text.get(self.copied_to..).unwrap_or(""));
        Some(self.out)
    }
}

/// RFC 6901 escaping of one reference token.
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// ---------------------------------------------------------------------------------------------
// STIX patterns: just enough lexing to find the string literals and their comparisons.
// ---------------------------------------------------------------------------------------------

/// A string literal of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Literal {
    /// Byte index of the opening quote.
    open: usize,
    /// Byte index of the closing quote.
    close: usize,
    /// A value to sanitise: not typed (`h'..'`), not a path component, not a hash.
    value: bool,
    /// The `=` or `!=` it is compared with, when the left side is an IP address's value.
    ip_op: Option<Operator>,
}

/// An equality operator of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Operator {
    start: usize,
    end: usize,
    /// `!=` rather than `=`.
    negated: bool,
}

/// The previous token of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Word,
    Punct,
    Op,
    Literal,
}

/// The string literals of a STIX pattern, or `None` when a quote is not closed.
fn scan_pattern(pattern: &str) -> Option<Vec<Literal>> {
    let b = pattern.as_bytes();
    let mut literals = Vec::new();
    let mut path = String::new();
    let mut path_end = usize::MAX;
    let mut prev: Option<(Token, usize, usize)> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let token = match c {
            b'\'' => {
                i = literal_close(b, i)? + 1;
                Token::Literal
            }
            b'(' | b')' | b'[' | b']' | b',' => {
                i += 1;
                Token::Punct
            }
            b'=' | b'!' | b'<' | b'>' => {
                i += b[i..].iter().take_while(|c| b"=!<>".contains(c)).count();
                Token::Op
            }
            _ => {
                i += b[i..]
                    .iter()
                    .take_while(|&&c| !is_pattern_delimiter(c))
                    .count();
                Token::Word
            }
        };
        let text = &pattern[start..i];
        let mut path_component = false;
        if token == Token::Literal {
            let lit = classify_literal(pattern, start, i - 1, prev, &path);
            path_component = !lit.value
                && prev.is_some_and(|(t, _, e)| {
                    t == Token::Word && e == start && pattern[..e].ends_with('.')
                });
            literals.push(lit);
        }
        let extends_path = start == path_end
            && (token == Token::Word
                || (token == Token::Punct && (c == b'[' || c == b']'))
                || path_component);
        if token == Token::Word && text.contains(':') {
            path = text.to_owned();
            path_end = i;
        } else if extends_path {
            path.push_str(text);
            path_end = i;
        }
        prev = Some((token, start, i));
    }
    Some(literals)
}

fn is_pattern_delimiter(c: u8) -> bool {
    c.is_ascii_whitespace() || b"'()[],=!<>".contains(&c)
}

/// The index of the quote closing the literal opened at `open`.
fn literal_close(b: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\'' => return Some(j),
            _ => j += 1,
        }
    }
    None
}

/// Decides what the literal at `open..=close` is from the token before it and the object path
/// of its comparison.
fn classify_literal(
    pattern: &str,
    open: usize,
    close: usize,
    prev: Option<(Token, usize, usize)>,
    path: &str,
) -> Literal {
    let adjacent_word = prev.filter(|&(t, _, end)| t == Token::Word && end == open);
    let typed = adjacent_word
        .is_some_and(|(_, s, e)| e - s == 1 && matches!(pattern.as_bytes()[s], b'h' | b'b' | b't'));
    let path_component = adjacent_word.is_some_and(|(_, _, e)| pattern[..e].ends_with('.'));
    let hashes = path.contains(":hashes") || path.contains(".hashes");
    let value = !typed && !path_component && !hashes;
    let ip_path = ((path.starts_with("ipv4-addr:") || path.starts_with("ipv6-addr:"))
        && path.ends_with(":value"))
        || path.ends_with("_ref.value");
    let ip_op = prev
        .filter(|&(t, _, _)| t == Token::Op && value && ip_path)
        .and_then(|(_, start, end)| {
            match &pattern[start..end] {
                "=" => Some(false),
                "!=" => Some(true),
                _ => None,
            }
            .map(|negated| Operator {
                start,
                end,
                negated,
            })
        });
    Literal {
        open,
        close,
        value,
        ip_op,
    }
}

/// The `ISSUBSET` comparison replacing `op`, spaced from its neighbours (`value='x'` has none,
/// and a keyword needs them).
fn subset_operator(pattern: &str, op: Operator) -> String {
    let space = |c: Option<char>| c.is_some_and(|c| c.is_ascii_whitespace());
    let before = if space(pattern[..op.start].chars().next_back()) {
        ""
    } else {
        " "
    };
    let after = if space(pattern[op.end..].chars().next()) {
        ""
    } else {
        " "
    };
    let keyword = if op.negated {
        "NOT ISSUBSET"
    } else {
        "ISSUBSET"
    };
    format!("{before}{keyword}{after}")
}

/// The text of a literal's contents (`\'` and `\\` are the escapes; any other backslash is
/// kept as written).
fn unescape_literal(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(e @ ('\\' | '\'')) => out.push(e),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Literal contents for `text`.
fn escape_literal(text: &str) -> String {
    text.replace('\\', r"\\").replace('\'', r"\'")
}

// ---------------------------------------------------------------------------------------------
// Compiling the rules.
// ---------------------------------------------------------------------------------------------

fn refuse(rule: impl Into<String>, reason: impl Into<String>) -> RuleError {
    RuleError {
        rule: rule.into(),
        reason: reason.into(),
    }
}

fn compile_domains(domains: &[String]) -> Result<Vec<String>, RuleError> {
    let mut out = Vec::with_capacity(domains.len());
    for (i, d) in domains.iter().enumerate() {
        let rule = format!("internal_domains[{i}]");
        let name = d.trim().trim_matches('.').to_ascii_lowercase();
        if name.starts_with("*.") {
            return Err(refuse(
                rule,
                format!("`{d}`: write the domain without `*.`; every name under it is covered"),
            ));
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
            return Err(refuse(rule, format!("`{d}` is not a DNS domain name")));
        }
        out.push(name);
    }
    out.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    out.dedup();
    Ok(out)
}

fn compile_networks(networks: &[String]) -> Result<Vec<Network>, RuleError> {
    networks
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Network::parse(n).map_err(|reason| refuse(format!("internal_networks[{i}]"), reason))
        })
        .collect()
}

/// An alternation of literal names, longest first, ignoring case; `None` for no names.
fn names_regex(names: &[String], rule: &str) -> Result<Option<Regex>, RuleError> {
    if names.is_empty() {
        return Ok(None);
    }
    let mut sorted: Vec<&str> = names.iter().map(|n| n.trim()).collect();
    sorted.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    sorted.dedup();
    let alternation: Vec<String> = sorted.iter().map(|n| regex::escape(n)).collect();
    let pattern = format!("(?i)(?:{})", alternation.join("|"));
    RegexBuilder::new(&pattern)
        .size_limit(REGEX_SIZE_MAX)
        .build()
        .map(Some)
        .map_err(|e| refuse(rule, format!("the list is too large to compile: {e}")))
}

fn compile_netbios(domains: &[String]) -> Result<Option<Regex>, RuleError> {
    for (i, d) in domains.iter().enumerate() {
        let name = d.trim();
        let valid = !name.is_empty()
            && name.len() <= 15
            && !name
                .chars()
                .any(|c| c.is_whitespace() || "\\/:*?\"<>|".contains(c));
        if !valid {
            return Err(refuse(
                format!("internal_netbios[{i}]"),
                format!("`{d}` is not a NetBIOS domain name (1 to 15 characters, no spaces or \\/:*?\"<>|)"),
            ));
        }
    }
    let Some(names) = names_regex(domains, "internal_netbios")? else {
        return Ok(None);
    };
    let pattern = format!(
        r#"{}\\{{1,2}}([^\\/\s"'<>|:*?,;()\[\]@%]+)"#,
        names.as_str()
    );
    RegexBuilder::new(&pattern)
        .size_limit(REGEX_SIZE_MAX)
        .build()
        .map(Some)
        .map_err(|e| {
            refuse(
                "internal_netbios",
                format!("the list is too large to compile: {e}"),
            )
        })
}

fn compile_known_users(users: &[String]) -> Result<Option<Regex>, RuleError> {
    for (i, u) in users.iter().enumerate() {
        let name = u.trim();
        if name.is_empty() || name == USER {
            return Err(refuse(
                format!("known_users[{i}]"),
                format!("`{u}` is not a user name"),
            ));
        }
        if is_built_in_account(name) {
            return Err(refuse(
                format!("known_users[{i}]"),
                format!("`{u}` is a built-in account name, not a person's; listing it would erase intelligence"),
            ));
        }
    }
    names_regex(users, "known_users")
}

fn compile_custom(rules: &[CustomRule]) -> Result<Vec<Custom>, RuleError> {
    let mut out: Vec<Custom> = Vec::with_capacity(rules.len());
    for (i, r) in rules.iter().enumerate() {
        let name_ok = !r.name.is_empty()
            && r.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok {
            return Err(refuse(
                format!("custom[{i}]"),
                format!(
                    "name `{}` must be non-empty letters, digits, `-`, `_` or `.`",
                    r.name
                ),
            ));
        }
        let rule = format!("custom:{}", r.name);
        if out.iter().any(|c| c.name == r.name) {
            return Err(refuse(rule, "another custom rule has the same name"));
        }
        if r.pattern.is_empty() {
            return Err(refuse(rule, "the pattern is empty"));
        }
        let regex = RegexBuilder::new(&r.pattern)
            .size_limit(REGEX_SIZE_MAX)
            .build()
            .map_err(|e| {
                refuse(
                    rule.clone(),
                    format!("the pattern is not a valid regex: {e}"),
                )
            })?;
        if regex.is_match("") {
            return Err(refuse(rule, "the pattern matches the empty string"));
        }
        check_replacement(&regex, &r.replacement).map_err(|reason| refuse(rule, reason))?;
        out.push(Custom {
            name: r.name.clone(),
            regex,
            replacement: r.replacement.clone(),
        });
    }
    Ok(out)
}

/// Refuses a replacement that refers to a capture group the regex does not have (the regex
/// crate would silently insert nothing; `$1a` names a group `1a`, not group 1 then `a`).
fn check_replacement(regex: &Regex, replacement: &str) -> Result<(), String> {
    let group_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut rest = replacement;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let name = if let Some(after) = rest.strip_prefix('$') {
            rest = after;
            continue;
        } else if let Some((name, after)) = rest.strip_prefix('{').and_then(|r| r.split_once('}')) {
            rest = after;
            name
        } else {
            let len = rest.find(|c: char| !group_char(c)).unwrap_or(rest.len());
            let name = &rest[..len];
            rest = &rest[len..];
            name
        };
        if name.is_empty() {
            continue;
        }
        let exists = match name.parse::<usize>() {
            Ok(n) => n < regex.captures_len(),
            Err(_) => regex.capture_names().any(|n| n == Some(name)),
        };
        if !exists {
            return Err(format!(
                "the replacement refers to group `{name}`, which the pattern does not have (write ${{1}}x, not $1x, to follow a group number with text)"
            ));
        }
    }
    Ok(())
}

fn compile_skip(names: &[String]) -> Result<Vec<String>, RuleError> {
    for (i, n) in names.iter().enumerate() {
        if n.trim().is_empty() {
            return Err(refuse(
                format!("skip_properties[{i}]"),
                "the property name is empty",
            ));
        }
    }
    Ok(names.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_patterns_compile() {
        let _ = Builtin::new();
    }

    #[test]
    fn networks_parse_and_contain() {
        let n = Network::parse("10.0.0.0/8").expect("valid");
        assert!(n.contains("10.255.1.2".parse().expect("ip")));
        assert!(!n.contains("11.0.0.1".parse().expect("ip")));
        assert!(!n.contains("::1".parse().expect("ip")));
        let all = Network::parse("0.0.0.0/0").expect("valid");
        assert!(all.contains("8.8.8.8".parse().expect("ip")));
        let v6 = Network::parse("fd00::/8").expect("valid");
        assert!(v6.contains("fd12:3456::1".parse().expect("ip")));
        assert_eq!(v6.text, "fd00::/8");
        assert!(Network::parse("10.1.0.0/8").is_err());
        assert!(Network::parse("10.0.0.0/33").is_err());
        assert!(Network::parse("10.0.0.0/+8").is_err());
        assert!(Network::parse("10.0.0.0").is_err());
    }

    #[test]
    fn scanner_classifies_literals() {
        let p = r"[file:hashes.'SHA-256' = 'ab' AND file:name = 'a\'b' AND ipv4-addr:value != '10.0.0.1'] START t'2020-01-01T00:00:00Z' STOP t'2020-01-02T00:00:00Z'";
        let lits = scan_pattern(p).expect("terminated");
        let values: Vec<&str> = lits
            .iter()
            .filter(|l| l.value)
            .map(|l| &p[l.open + 1..l.close])
            .collect();
        assert_eq!(values, [r"a\'b", "10.0.0.1"]);
        let ip = lits.iter().find_map(|l| l.ip_op).expect("ip comparison");
        assert_eq!(&p[ip.start..ip.end], "!=");
        assert!(ip.negated);
        assert_eq!(scan_pattern("[file:name = 'x"), None);
    }

    #[test]
    fn literal_escaping_round_trips() {
        for s in [r"C:\Users\x", "it's", r"\\host\share", ""] {
            assert_eq!(unescape_literal(&escape_literal(s)), s);
        }
        assert_eq!(unescape_literal(r"a\qb"), r"a\qb");
    }

    #[test]
    fn trailing_punctuation_is_trimmed() {
        assert_eq!(trim_trailing_punctuation("q3.xlsx."), "q3.xlsx");
        assert_eq!(trim_trailing_punctuation("jdoe),"), "jdoe");
        assert_eq!(trim_trailing_punctuation("report(1)"), "report(1)");
    }

    #[test]
    fn edits_ignore_overlaps() {
        let mut e = Edits::new("abcdef");
        e.replace(1, 3, "X");
        e.replace(2, 4, "Y");
        e.replace(4, 5, "Z");
        assert_eq!(e.finish().as_deref(), Some("aXdZf"));
    }
}
