//! The UDP sockets of one participant: a unicast socket on the first free participant index of
//! the standard port mapping (used for both metatraffic and user data, and for sending), and a
//! shared SPDP multicast socket on 239.255.0.1:7400+250·domain.

use crate::interface::Interface;
use halyard_core::config::ports;
use halyard_wire::Locator;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::Duration;

/// Why the transport could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportError {
    /// No free participant index (all unicast ports of the domain in use).
    NoFreeParticipantIndex {
        /// The domain.
        domain: u32,
    },
    /// The domain id maps to ports above 65535.
    DomainOutOfRange(u32),
    /// A socket operation failed.
    Io {
        /// What we were doing.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::NoFreeParticipantIndex { domain } => write!(
                f,
                "no free participant index in domain {domain} (ports 7410+ all in use)"
            ),
            TransportError::DomainOutOfRange(d) => write!(
                f,
                "domain id {d} is out of range (ports would exceed 65535; max 232)"
            ),
            TransportError::Io { what, source } => write!(f, "{what}: {source}"),
        }
    }
}

impl std::error::Error for TransportError {}

fn io_err(what: &'static str) -> impl FnOnce(io::Error) -> TransportError {
    move |source| TransportError::Io { what, source }
}

/// Largest participant index tried.
pub const MAX_PARTICIPANT_INDEX: u32 = 119;
/// Socket buffer size requested (the kernel may cap it at `net.core.[rw]mem_max`).
pub const SOCKET_BUFFER_BYTES: usize = 8 << 20;

/// The sockets of one participant.
pub struct UdpTransport {
    /// Unicast socket: receives metatraffic and user data, sends everything.
    pub unicast: UdpSocket,
    /// SPDP multicast socket (shared with other participants on this host via SO_REUSEPORT).
    pub multicast: UdpSocket,
    /// User-data multicast socket (group 239.255.0.1, port PB + DG·domain + d2, shared
    /// likewise): where writers send data that readers of several participants share.
    pub data_multicast: UdpSocket,
    /// The participant index taken.
    pub participant_index: u32,
    /// Our unicast locator (interface address, unicast port).
    pub unicast_locator: Locator,
    /// The SPDP multicast locator.
    pub spdp_locator: Locator,
    /// The user-data multicast locator (our default multicast locator).
    pub data_multicast_locator: Locator,
    /// The interface in use.
    pub interface: Interface,
}

fn big_buffers(s: &Socket) {
    // Best effort: the kernel caps at its maximum; failure only costs performance.
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER_BYTES);
}

impl UdpTransport {
    /// Opens the sockets for `domain` on `interface`.
    pub fn open(domain: u32, interface: Interface) -> Result<UdpTransport, TransportError> {
        if ports::user_unicast(domain, MAX_PARTICIPANT_INDEX) > 65535 {
            return Err(TransportError::DomainOutOfRange(domain));
        }
        let (unicast, index) = Self::open_unicast(domain, &interface)?;
        let mc_port = ports::spdp_multicast(domain) as u16;
        let multicast =
            Self::open_multicast(mc_port, &interface, "binding the SPDP multicast port")?;
        let data_port = ports::user_multicast(domain) as u16;
        let data_multicast = Self::open_multicast(
            data_port,
            &interface,
            "binding the user-data multicast port",
        )?;
        let port = unicast
            .local_addr()
            .map_err(io_err("reading the unicast port"))?
            .port();
        Ok(UdpTransport {
            unicast,
            multicast,
            data_multicast,
            participant_index: index,
            unicast_locator: Locator::udpv4(interface.address.octets(), port),
            spdp_locator: Locator::udpv4(ports::SPDP_MULTICAST_ADDRESS, mc_port),
            data_multicast_locator: Locator::udpv4(ports::SPDP_MULTICAST_ADDRESS, data_port),
            interface,
        })
    }

    fn open_unicast(domain: u32, iface: &Interface) -> Result<(UdpSocket, u32), TransportError> {
        for index in 0..=MAX_PARTICIPANT_INDEX {
            let port = ports::metatraffic_unicast(domain, index) as u16;
            let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
                .map_err(io_err("creating the unicast socket"))?;
            let addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port);
            if s.bind(&SockAddr::from(addr)).is_err() {
                continue;
            }
            big_buffers(&s);
            s.set_multicast_if_v4(&iface.address)
                .map_err(io_err("setting IP_MULTICAST_IF"))?;
            s.set_multicast_loop_v4(true)
                .map_err(io_err("setting IP_MULTICAST_LOOP"))?;
            return Ok((s.into(), index));
        }
        Err(TransportError::NoFreeParticipantIndex { domain })
    }

    /// A socket on `port` in group 239.255.0.1 (`binding` says what failed if the bind does).
    fn open_multicast(
        port: u16,
        iface: &Interface,
        binding: &'static str,
    ) -> Result<UdpSocket, TransportError> {
        let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
            .map_err(io_err("creating a multicast socket"))?;
        s.set_reuse_address(true)
            .map_err(io_err("setting SO_REUSEADDR"))?;
        s.set_reuse_port(true)
            .map_err(io_err("setting SO_REUSEPORT"))?;
        s.bind(&SockAddr::from(SocketAddrV4::new(
            Ipv4Addr::UNSPECIFIED,
            port,
        )))
        .map_err(io_err(binding))?;
        let group = Ipv4Addr::from(ports::SPDP_MULTICAST_ADDRESS);
        s.join_multicast_v4(&group, &iface.address)
            .map_err(io_err("joining 239.255.0.1"))?;
        s.set_multicast_loop_v4(true)
            .map_err(io_err("setting IP_MULTICAST_LOOP"))?;
        big_buffers(&s);
        Ok(s.into())
    }

    /// Sends `payload` to every UDPv4 destination; failures are counted, not fatal (UDP).
    pub fn send(&self, destinations: &[Locator], payload: &[u8]) -> usize {
        let mut failures = 0;
        for d in destinations {
            let Some((ip, port)) = d.as_udpv4() else {
                continue;
            };
            let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(ip), port));
            if self.unicast.send_to(payload, addr).is_err() {
                failures += 1;
            }
        }
        failures
    }

    /// Clones of the receive sockets (unicast, SPDP multicast, user-data multicast) with a
    /// read timeout, so receive threads can stop.
    pub fn receivers(&self, timeout: Duration) -> Result<[UdpSocket; 3], TransportError> {
        let clone = |s: &UdpSocket| -> Result<UdpSocket, TransportError> {
            let c = s.try_clone().map_err(io_err("cloning a receive socket"))?;
            c.set_read_timeout(Some(timeout))
                .map_err(io_err("setting a read timeout"))?;
            Ok(c)
        };
        Ok([
            clone(&self.unicast)?,
            clone(&self.multicast)?,
            clone(&self.data_multicast)?,
        ])
    }
}
