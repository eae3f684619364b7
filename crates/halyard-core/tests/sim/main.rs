//! The protocol core's simulation tests, linked as one binary: each module proves one
//! behaviour over many seeded runs of the simulated network in [`net`] (virtual time, seeded
//! loss, duplication, reordering, corruption, partitions). `HALYARD_SIM_SEEDS` sets how many
//! seeds each test runs, `HALYARD_SIM_SEED` replays one, `HALYARD_SIM_TRACE=1` prints every
//! delivered submessage:
//!
//! ```sh
//! HALYARD_SIM_SEED=0x1234 cargo test --release -p halyard-core --test sim swarm
//! ```

mod net;

mod assign;
mod batching;
mod best_effort;
mod coherent;
mod content_filter;
mod count_corrupt;
mod data_multicast;
mod determinism;
mod discovery;
mod discovery_time;
mod durability;
mod durability_service;
mod first_sync;
mod group_access;
mod group_coherent;
mod group_members;
mod incompatible;
mod large;
mod lease;
mod lease_rejoin;
mod leaving_reader;
mod linger;
mod liveliness;
mod locators;
mod pacing;
mod qos_change;
mod qos_policies;
mod reliable;
mod repair_traffic;
mod security;
mod sedp_corrupt;
mod spdp_changed;
mod spdp_lease_corrupt;
mod steady_under_loss;
mod swarm;
mod time_filter;
mod typelookup;
mod unmatched_data;
