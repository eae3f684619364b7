//! Configuration of one participant's protocol state, with the limits that bound every cache.

use core::time::Duration;
use halyard_wire::{GuidPrefix, Locator};

/// Standard port mapping constants (RTPS 2.5 §9.6.1.1).
pub mod ports {
    /// PB
    pub const PORT_BASE: u32 = 7400;
    /// DG
    pub const DOMAIN_GAIN: u32 = 250;
    /// PG
    pub const PARTICIPANT_GAIN: u32 = 2;
    /// d0: discovery multicast
    pub const D0: u32 = 0;
    /// d1: discovery unicast
    pub const D1: u32 = 10;
    /// d2: user multicast
    pub const D2: u32 = 1;
    /// d3: user unicast
    pub const D3: u32 = 11;

    /// SPDP multicast port for a domain.
    pub fn spdp_multicast(domain: u32) -> u32 {
        PORT_BASE + DOMAIN_GAIN * domain + D0
    }
    /// Metatraffic unicast port for a domain and participant index.
    pub fn metatraffic_unicast(domain: u32, index: u32) -> u32 {
        PORT_BASE + DOMAIN_GAIN * domain + D1 + PARTICIPANT_GAIN * index
    }
    /// User multicast port for a domain.
    pub fn user_multicast(domain: u32) -> u32 {
        PORT_BASE + DOMAIN_GAIN * domain + D2
    }
    /// User unicast port for a domain and participant index.
    pub fn user_unicast(domain: u32, index: u32) -> u32 {
        PORT_BASE + DOMAIN_GAIN * domain + D3 + PARTICIPANT_GAIN * index
    }
    /// The default SPDP multicast group 239.255.0.1.
    pub const SPDP_MULTICAST_ADDRESS: [u8; 4] = [239, 255, 0, 1];
}

/// How many of its largest samples a reliable writer's flow-control window holds (within
/// `writer_window_floor_bytes ..= writer_high_water_bytes`).
pub const WINDOW_SAMPLES: usize = 8;

/// Smallest fragment size, in bytes, for a sample of more than one fragment: what a writer
/// sends and a reader accepts. Smaller fragments would let a peer make a reader touch memory
/// much faster than it sends bytes (one bitmap bit and one copy per fragment).
pub const MIN_FRAGMENT_SIZE: usize = 512;

/// Largest fragment size: DATA_FRAG's fragmentSize field has 16 bits (RTPS 2.5 §9.4.5.4).
pub const MAX_FRAGMENT_SIZE: usize = 65_535;

/// Smallest datagram a writer batch is allowed to grow to: less would hold no useful batch.
pub const MIN_BATCH_BYTES: usize = 512;

/// A reliable writer piggy-backs a HEARTBEAT on new data at least once per this many bytes
/// written, so readers learn of losses within a bounded amount of data, not only by the timer.
pub const HEARTBEAT_EVERY_BYTES: usize = 256 * 1024;

/// Sequence numbers a reader asked for again that a writer remembers per reader (more wait
/// for the next ACKNACK).
pub const MAX_REQUESTED_PER_READER: usize = 4096;

/// Changes a relay that releases payloads fetches back after one a reader asked for (see
/// `writer/release.rs`, "Read-ahead"): a late reader's next requests find them in memory.
pub const RELAY_READ_AHEAD: i64 = 2048;

/// Payload bytes a relay's read-ahead spans, at the size of the change asked for: fewer than
/// [`RELAY_READ_AHEAD`] changes for samples larger than 2 KiB.
pub const RELAY_READ_AHEAD_BYTES: usize = 4 << 20;

/// SEDP samples refused as damaged that a participant remembers (with how often each was
/// refused); the memory is cleared when it fills.
pub const MAX_SEDP_REJECTS_TRACKED: usize = 1024;

/// How often an unusable SEDP sample is asked for again before it is taken as it is.
pub const MAX_SEDP_REJECTS: u8 = 8;

/// How far apart the ACKNACK/NACK_FRAG counters of successive proxies of one remote writer
/// start, so that a writer still remembering an earlier proxy's counts accepts the new ones.
pub const COUNT_EPOCH_STEP: i32 = 4096;

/// Longest a reliable reader waits before asking again for what it NACKed (its estimate of
/// the repair round trip, bounded; see `WriterProxy::nack_hold`). 100 ms: the default
/// HEARTBEAT period, above any round trip on a LAN and short enough that lost repairs on a
/// 30 %-loss path do not idle a stream.
pub const MAX_NACK_HOLD: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a reliable reader waits before asking again for what it NACKed, until it has
/// measured a repair round trip: 10 ms, the writer's fast HEARTBEAT interval.
pub const INITIAL_NACK_HOLD: std::time::Duration = std::time::Duration::from_millis(10);

/// Bound on queued events, and on delivered samples not yet polled, of one participant. A
/// full sample queue holds reliable samples back unacknowledged (their writers retransmit
/// later) and counts best-effort ones as lost.
pub const MAX_QUEUED_EVENTS: usize = 65_536;

/// Instances whose ownership, source order, time filter or deadline a reader tracks when its
/// RESOURCE_LIMITS.max_instances is unlimited (see `admission`).
pub const MAX_ADMISSION_INSTANCES: usize = 1 << 20;

/// Instances per matched reader for which a writer remembers the last sample it sent, when it
/// applies the reader's TIME_BASED_FILTER (see `writer`'s `time_filter` module).
pub const MAX_TIME_FILTER_INSTANCES: usize = 1 << 16;

/// An IPv4 network: an address and the length of its prefix (`10.1.0.0/16`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ipv4Net {
    /// Any address in the network (the host bits are ignored).
    pub address: [u8; 4],
    /// Leading bits that name the network, 0..=32.
    pub prefix_len: u8,
}

impl Ipv4Net {
    /// True if `ip` is in this network.
    pub fn contains(&self, ip: [u8; 4]) -> bool {
        let mask = match self.prefix_len.min(32) {
            0 => 0,
            n => u32::MAX << (32 - u32::from(n)),
        };
        u32::from_be_bytes(ip) & mask == u32::from_be_bytes(self.address) & mask
    }
}

/// Everything the core needs to know about its participant; the driver fills in locators.
#[derive(Clone, Debug)]
pub struct ParticipantConfig {
    /// DDS domain id.
    pub domain_id: u32,
    /// Our GUID prefix (the driver derives it from a seed or host/process identity).
    pub guid_prefix: GuidPrefix,
    /// Where peers send discovery traffic to us (unicast).
    pub metatraffic_unicast: Vec<Locator>,
    /// The discovery multicast locators we listen on.
    pub metatraffic_multicast: Vec<Locator>,
    /// Where peers send user data to us (unicast).
    pub default_unicast: Vec<Locator>,
    /// Where peers may send user data by multicast (empty: unicast only).
    pub default_multicast: Vec<Locator>,
    /// Send new user data once to a multicast locator that matched readers of two or more
    /// participants listen on (the reader's own multicast locator, else its participant's
    /// default one), instead of one datagram per participant, as Cyclone DDS does. Repairs,
    /// GAPs and directed HEARTBEATs stay unicast. Off: unicast only.
    pub data_multicast: bool,
    /// Where SPDP announcements go: the multicast group plus configured initial peers.
    pub spdp_destinations: Vec<Locator>,
    /// Lease duration we announce.
    pub lease_duration: Duration,
    /// Interval between SPDP announcements.
    pub spdp_interval: Duration,
    /// SPDP announcements made at `initial_announcement_period` when the participant starts,
    /// before the `spdp_interval` rhythm: one lost announcement then costs a period, not an
    /// interval (Fast DDS's initial announcements do the same).
    pub initial_announcements: u32,
    /// The period of the initial announcements.
    pub initial_announcement_period: Duration,
    /// A newly discovered participant is sent our SPDP sample by unicast at once, and again
    /// after this delay, doubling up to `spdp_interval`, until it shows that it knows us (it
    /// sends us a submessage addressed to us): a lost reply costs milliseconds, not an
    /// interval. No traffic is added once peers know each other.
    pub spdp_reply_retry: Duration,
    /// Longest interval between heartbeats of reliable writers with unacknowledged data; the
    /// first after new data, progress or a repair comes after a tenth of it (at least
    /// 1 ms), and the interval doubles from there.
    pub heartbeat_period: Duration,
    /// Largest datagram we build.
    pub max_message_size: usize,
    /// Fragment size for samples larger than one datagram (<= 65535).
    pub fragment_size: usize,
    /// Bytes of fragments sent for one sample before waiting for the reader's NACK_FRAG
    /// (reliable writers only; the reader pulls the rest).
    pub fragment_burst_bytes: usize,
    /// Most unacknowledged bytes before a reliable writer blocks (flow control). The window
    /// a writer actually uses grows with the largest sample it wrote: room for
    /// [`WINDOW_SAMPLES`] of them, at least `writer_window_floor_bytes`, at most this. 8 MiB
    /// keeps several 1 MiB samples in flight, so one being repaired does not stall the stream.
    /// A writer matched with a durability service's reader (which acknowledges once its
    /// service committed) always has this much.
    pub writer_high_water_bytes: usize,
    /// The smallest flow-control window: what a writer of small samples may have
    /// unacknowledged. Small samples need no more to fill a link, and more costs memory in
    /// the writer's history and the reader's buffers.
    pub writer_window_floor_bytes: usize,
    /// Default cap on samples held by a KEEP_ALL writer when ResourceLimits is unlimited.
    pub writer_max_samples_default: usize,
    /// Out-of-order samples buffered per matched writer.
    pub reader_max_pending_samples: usize,
    /// Largest sample accepted for reassembly.
    pub max_sample_size: usize,
    /// Concurrent reassemblies per matched writer.
    pub max_reassemblies_per_writer: usize,
    /// Bytes all samples in reassembly may hold together, over all matched writers.
    pub max_reassembly_bytes: usize,
    /// Remote participants tracked at most.
    pub max_remote_participants: usize,
    /// Remote endpoints tracked at most.
    pub max_remote_endpoints: usize,
    /// Participant USER_DATA.
    pub user_data: Vec<u8>,
    /// Participant entity name (PID_ENTITY_NAME).
    pub entity_name: Option<String>,
    /// Participant properties announced in PID_PROPERTY_LIST (name, value), e.g. where the
    /// participant runs (`__Hostname`, `__Pid`, `__ProcessName`, as Cyclone DDS does).
    pub properties: Vec<(String, String)>,
    /// How long a deleted reliable writer (and every writer of a participant that shuts down)
    /// keeps serving its matched reliable readers until they have acknowledged all it wrote,
    /// before it is withdrawn (Cyclone DDS's WriterLingerDuration, 1 s by default). Zero:
    /// withdrawn at once.
    pub writer_linger: Duration,
    /// Bytes per second all best-effort writers of the participant may send together (a
    /// token bucket they share; see [`crate::pacing`]); `None`: no participant-wide limit.
    /// Reliable writers are paced by their readers' acknowledgments instead.
    pub bandwidth_limit: Option<u64>,
    /// How often a best-effort reader of fragmented samples from a Halyard writer reports
    /// what it received, so the writer can pace itself to what the path absorbs.
    pub reception_report_interval: Duration,
    /// The networks our interface reaches directly (its subnet; 127.0.0.0/8 on loopback). Of
    /// the unicast locators a peer announces, one in these networks is used; the others only
    /// when none is. Empty: every locator a peer announces is used.
    pub reachable_networks: Vec<Ipv4Net>,
    /// Seed of the hashers of the core's maps. Maps keyed by what peers send (GUIDs, key
    /// hashes) are hashed with it, so iteration order is fixed for a given seed (simulations
    /// replay exactly) while a peer that does not know it cannot aim for hash collisions. The
    /// default derives it from the GUID prefix; a driver passes entropy of its own.
    pub hash_seed: u64,
}

impl ParticipantConfig {
    /// Defaults for `domain_id` and `guid_prefix`; locators are left empty for the driver.
    pub fn new(domain_id: u32, guid_prefix: GuidPrefix) -> Self {
        ParticipantConfig {
            domain_id,
            guid_prefix,
            metatraffic_unicast: Vec::new(),
            metatraffic_multicast: Vec::new(),
            default_unicast: Vec::new(),
            default_multicast: Vec::new(),
            data_multicast: false,
            spdp_destinations: Vec::new(),
            lease_duration: Duration::from_secs(10),
            spdp_interval: Duration::from_secs(2),
            initial_announcements: 5,
            initial_announcement_period: Duration::from_millis(100),
            spdp_reply_retry: Duration::from_millis(50),
            heartbeat_period: Duration::from_millis(100),
            max_message_size: 65_000,
            fragment_size: 16_000,
            fragment_burst_bytes: 4 << 20,
            writer_high_water_bytes: 8 << 20,
            writer_window_floor_bytes: 2 << 20,
            writer_max_samples_default: 100_000,
            reader_max_pending_samples: 8192,
            max_sample_size: 256 << 20,
            max_reassemblies_per_writer: 8,
            max_reassembly_bytes: 512 << 20,
            max_remote_participants: 1024,
            max_remote_endpoints: 16_384,
            user_data: Vec::new(),
            entity_name: None,
            properties: Vec::new(),
            writer_linger: Duration::from_secs(1),
            bandwidth_limit: None,
            reception_report_interval: Duration::from_millis(10),
            reachable_networks: Vec::new(),
            hash_seed: prefix_seed(guid_prefix),
        }
    }
}

/// A seed derived from a GUID prefix (FNV-1a over its bytes).
fn prefix_seed(prefix: GuidPrefix) -> u64 {
    prefix.0.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::Ipv4Net;

    #[test]
    fn networks_contain_their_addresses_only() {
        let lan = Ipv4Net {
            address: [192, 168, 1, 17],
            prefix_len: 24,
        };
        assert!(lan.contains([192, 168, 1, 200]));
        assert!(!lan.contains([192, 168, 2, 1]));
        let lo = Ipv4Net {
            address: [127, 0, 0, 1],
            prefix_len: 8,
        };
        assert!(lo.contains([127, 9, 9, 9]) && !lo.contains([10, 0, 0, 1]));
        let host = Ipv4Net {
            address: [10, 0, 0, 5],
            prefix_len: 32,
        };
        assert!(host.contains([10, 0, 0, 5]) && !host.contains([10, 0, 0, 6]));
        let any = Ipv4Net {
            address: [0; 4],
            prefix_len: 0,
        };
        assert!(any.contains([8, 8, 8, 8]));
    }
}
