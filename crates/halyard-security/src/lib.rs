//! DDS Security 1.1 for Halyard: the three builtin plugins and the tools that set them up.
//!
//! * [`auth`]: "DDS:Auth:PKI-DH": X.509 identities, the three-message handshake, the shared
//!   secret.
//! * [`access`]: "DDS:Access:Permissions": signed governance and permissions documents and
//!   the rules they grant.
//! * [`crypto`]: "DDS:Crypto:AES-GCM-GMAC": key material, session keys and the secure
//!   submessage and message transforms.
//! * [`token`]: the DataHolder (token) type these plugins exchange, with its CDR encoding.
//! * [`setup`]: `halyard security init / check / cyclone-config`.
//! * [`random`]: where the plugins' randomness comes from (the OS, or a seed in tests).
//!
//! Every primitive (hashes, signatures, key agreement, X.509, S/MIME) comes from OpenSSL
//! through the `openssl` crate, except AES-GCM/GMAC, which comes from AWS-LC through
//! `aws-lc-rs` (faster than OpenSSL 3.0's on the same machine: `halyard security cipher-bench`
//! measures it);
//! nothing cryptographic is written here by hand. Secret
//! keys are zeroized when dropped. Nothing here does network I/O or reads the clock: the
//! current time is passed in.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod access;
pub mod auth;
pub mod crypto;
pub mod plugin;
pub mod random;
pub mod setup;
pub mod token;
