//! Where a participant runs, announced as SPDP properties the way Cyclone DDS does
//! (`ddsi_init.c`: `__ProcessName`, `__Pid` and `__Hostname`, each propagated in
//! PID_PROPERTY_LIST), so that `cyclonedds ps` and `halyard ps` can group participants by
//! host and process. Network addresses are not announced: a listener derives them from the
//! participant's locators (Cyclone's `__NetworkAddresses` is computed that way too).

/// Property naming the participant's process (its executable's file name).
pub const PROPERTY_PROCESS_NAME: &str = "__ProcessName";
/// Property holding the participant's process id, in decimal.
pub const PROPERTY_PID: &str = "__Pid";
/// Property holding the participant's host name.
pub const PROPERTY_HOSTNAME: &str = "__Hostname";

/// Longest host name read (Linux allows 64 bytes; POSIX 255).
const HOSTNAME_MAX: usize = 255;

/// The location properties of this process: process name (when known), pid and host name
/// (when known).
pub(crate) fn process_properties() -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(3);
    if let Some(name) = process_name() {
        out.push((PROPERTY_PROCESS_NAME.to_string(), name));
    }
    out.push((PROPERTY_PID.to_string(), std::process::id().to_string()));
    if let Some(host) = hostname() {
        out.push((PROPERTY_HOSTNAME.to_string(), host));
    }
    out
}

/// The executable's file name.
fn process_name() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.file_name()?.to_string_lossy().into_owned())
}

/// The host name: the kernel's (Linux), else `HOSTNAME` from the environment.
fn hostname() -> Option<String> {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())?;
    let name = raw.trim();
    (!name.is_empty() && name.len() <= HOSTNAME_MAX).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announces_pid_and_names() {
        let p = process_properties();
        let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get(PROPERTY_PID), Some(std::process::id().to_string()));
        let exe = std::env::current_exe().unwrap();
        assert_eq!(
            get(PROPERTY_PROCESS_NAME).as_deref(),
            exe.file_name().and_then(|n| n.to_str())
        );
        assert!(get(PROPERTY_HOSTNAME).is_some_and(|h| !h.is_empty()));
    }
}
