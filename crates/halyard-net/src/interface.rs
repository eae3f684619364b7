//! Network interface selection. Default (as Cyclone DDS): the first interface that is up,
//! multicast-capable and not loopback, with an IPv4 address. Overridden by configuration (an
//! interface name such as `lo`, or an IPv4 address); this crate reads no environment variable.

use std::fs;
use std::net::Ipv4Addr;

/// The chosen interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Kernel name, e.g. `eth0`.
    pub name: String,
    /// Its IPv4 address (advertised in locators).
    pub address: Ipv4Addr,
    /// True if it is the loopback interface.
    pub loopback: bool,
    /// The length of its subnet's prefix (from the connected route; 8 on loopback): peers
    /// in that subnet are reached directly.
    pub prefix_len: u8,
}

/// Why no interface could be chosen.
#[derive(Debug)]
#[non_exhaustive]
pub enum InterfaceError {
    /// The requested name or address matches no interface with an IPv4 address.
    NotFound(String),
    /// No suitable interface exists.
    NoneSuitable,
    /// Reading the interface list failed.
    Io(std::io::Error),
}

impl std::fmt::Display for InterfaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InterfaceError::NotFound(s) => write!(f, "network interface '{s}' not found (no IPv4 address); name one from `ip -br addr` (ParticipantOptions::interface, or HALYARD_INTERFACE for the halyard tools)"),
            InterfaceError::NoneSuitable => write!(f, "no up, multicast-capable IPv4 interface found; name one, e.g. lo (ParticipantOptions::interface, or HALYARD_INTERFACE for the halyard tools)"),
            InterfaceError::Io(e) => write!(f, "cannot list network interfaces: {e}"),
        }
    }
}

impl std::error::Error for InterfaceError {}

const IFF_UP: u32 = 0x1;
const IFF_LOOPBACK: u32 = 0x8;
const IFF_MULTICAST: u32 = 0x1000;

fn flags(name: &str) -> u32 {
    fs::read_to_string(format!("/sys/class/net/{name}/flags"))
        .ok()
        .and_then(|s| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
        .unwrap_or(0)
}

/// IPv4 addresses per interface, from /proc/net/fib_trie-free sources: `/proc/net/route` gives
/// names, and each name's address comes from a UDP connect trick-free parse of
/// `/proc/net/if_inet6`-less `ip`-free data: we read `/sys/class/net` and the local routing table.
fn ipv4_addresses() -> Result<Vec<(String, Ipv4Addr, u8)>, InterfaceError> {
    // /proc/net/fib_trie lists local addresses ("/32 host LOCAL") under their prefixes; the
    // interface is found by matching against /proc/net/route entries.
    let trie = fs::read_to_string("/proc/net/fib_trie").map_err(InterfaceError::Io)?;
    let route = fs::read_to_string("/proc/net/route").map_err(InterfaceError::Io)?;
    let mut locals: Vec<Ipv4Addr> = Vec::new();
    let mut last_ip: Option<Ipv4Addr> = None;
    for line in trie.lines() {
        let t = line.trim_start_matches([' ', '|', '-', '+']);
        if let Some(ip) = t
            .split_whitespace()
            .next()
            .and_then(|w| w.parse::<Ipv4Addr>().ok())
        {
            last_ip = Some(ip);
        } else if t.contains("/32 host LOCAL") {
            if let Some(ip) = last_ip {
                if !locals.contains(&ip) {
                    locals.push(ip);
                }
            }
        }
    }
    let mut out = Vec::new();
    for ip in locals {
        if ip.is_loopback() {
            out.push(("lo".to_string(), ip, 8));
            continue;
        }
        // Find the interface whose route (destination/mask) contains ip.
        for l in route.lines().skip(1) {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 {
                continue;
            }
            let (Ok(dst), Ok(mask)) =
                (u32::from_str_radix(f[1], 16), u32::from_str_radix(f[7], 16))
            else {
                continue;
            };
            let ipn = u32::from_le_bytes(ip.octets());
            if mask != 0 && ipn & mask == dst & mask && !out.iter().any(|(_, a, _)| *a == ip) {
                out.push((f[0].to_string(), ip, mask.count_ones() as u8));
            }
        }
    }
    Ok(out)
}

/// The MTU of interface `name` (from `/sys/class/net`), if the kernel reports one.
pub fn interface_mtu(name: &str) -> Option<u32> {
    fs::read_to_string(format!("/sys/class/net/{name}/mtu"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Chooses the interface: `requested` (name or address), else the Cyclone-style default.
pub fn select_interface(requested: Option<&str>) -> Result<Interface, InterfaceError> {
    let wanted = requested.map(str::to_string);
    let addrs = ipv4_addresses()?;
    let make = |name: &str, address: Ipv4Addr, prefix_len: u8| Interface {
        name: name.to_string(),
        address,
        loopback: address.is_loopback() || flags(name) & IFF_LOOPBACK != 0,
        prefix_len,
    };
    if let Some(w) = wanted {
        let hit = addrs.iter().find(|(n, a, _)| *n == w || a.to_string() == w);
        return hit
            .map(|(n, a, p)| make(n, *a, *p))
            .ok_or(InterfaceError::NotFound(w));
    }
    let mut names: Vec<String> = fs::read_dir("/sys/class/net")
        .map_err(InterfaceError::Io)?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    for n in names {
        let f = flags(&n);
        if f & IFF_UP == 0 || f & IFF_MULTICAST == 0 || f & IFF_LOOPBACK != 0 {
            continue;
        }
        if let Some((_, a, p)) = addrs.iter().find(|(name, _, _)| *name == n) {
            return Ok(make(&n, *a, *p));
        }
    }
    Err(InterfaceError::NoneSuitable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_can_be_requested_by_name_and_address() {
        let by_name = select_interface(Some("lo")).expect("lo exists");
        assert_eq!(by_name.address, Ipv4Addr::LOCALHOST);
        assert!(by_name.loopback);
        assert_eq!(by_name.prefix_len, 8);
        let by_addr = select_interface(Some("127.0.0.1")).expect("127.0.0.1 exists");
        assert_eq!(by_addr.name, "lo");
        assert!(matches!(
            select_interface(Some("no-such-if0")),
            Err(InterfaceError::NotFound(_))
        ));
    }
}
