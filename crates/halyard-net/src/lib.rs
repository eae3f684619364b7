//! UDP transport for Halyard: choosing the network interface like Cyclone DDS does, opening the
//! sockets of the RTPS standard port mapping (RTPS 2.5 §9.6.1.1), and sending datagrams to
//! locators. No protocol logic lives here.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod faults;
pub mod interface;
pub mod udp;

pub use faults::{FaultConfig, FaultInjector, FaultStats};
pub use interface::{interface_mtu, select_interface, Interface, InterfaceError};
pub use udp::{TransportError, UdpTransport};
