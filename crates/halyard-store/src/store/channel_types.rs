//! The XTypes type of a channel (schema version 4): the TypeInformation its writers announced
//! and the TypeObjects it names, kept so that a restarted durability service announces and
//! serves the type of what it stored although no writer of it is alive.
//!
//! One row per channel in `channel_types`; the objects are one BLOB, each a little-endian u32
//! length and its bytes, after a u32 count. The store does not interpret them.

use super::Store;
use crate::error::StoreError;
use crate::types::ChannelId;
use rusqlite::{params, OptionalExtension};

/// A channel's type as its writers announced it (XCDR2 little-endian, no encapsulation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChannelType {
    /// The `TypeInformation`.
    pub type_information: Vec<u8>,
    /// Every `TypeObject` it names.
    pub type_objects: Vec<Vec<u8>>,
}

/// The table schema version 4 adds.
pub(crate) const CHANNEL_TYPES_TABLE: &str = "channel_types";

/// Its definition.
pub(crate) const CHANNEL_TYPES_SCHEMA: &str = "
CREATE TABLE channel_types (
    channel INTEGER PRIMARY KEY,
    type_information BLOB NOT NULL,
    type_objects BLOB NOT NULL
);
";

fn encode(objects: &[Vec<u8>]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(4 + objects.iter().map(|o| 4 + o.len()).sum::<usize>());
    out.extend_from_slice(&u32::try_from(objects.len()).ok()?.to_le_bytes());
    for o in objects {
        out.extend_from_slice(&u32::try_from(o.len()).ok()?.to_le_bytes());
        out.extend_from_slice(o);
    }
    Some(out)
}

fn decode(b: &[u8]) -> Option<Vec<Vec<u8>>> {
    let u32_at = |at: usize| -> Option<usize> {
        let s: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(u32::from_le_bytes(s) as usize)
    };
    let count = u32_at(0)?;
    let mut at = 4;
    // Each object takes at least its 4-byte length: a count beyond that is damage.
    let mut out = Vec::with_capacity(count.min(b.len() / 4));
    for _ in 0..count {
        let len = u32_at(at)?;
        let start = at + 4;
        let end = start.checked_add(len)?;
        out.push(b.get(start..end)?.to_vec());
        at = end;
    }
    (at == b.len()).then_some(out)
}

impl Store {
    /// Keeps `t` as the type of channel `ch` (replacing what it held). The change joins the
    /// pending transaction if one is open, else it is committed at once.
    pub fn set_channel_type(&mut self, ch: ChannelId, t: &ChannelType) -> Result<(), StoreError> {
        let Some(objects) = encode(&t.type_objects) else {
            // Beyond the 4-byte lengths, and beyond SQLite's largest BLOB (1 GB) too.
            return Err(StoreError::Full {
                path: self.path.clone(),
                channel: Some(ch),
                limit: crate::error::FullLimit::Disk,
                max: u64::from(u32::MAX),
            });
        };
        let r = self
            .conn
            .prepare_cached(
                "INSERT OR REPLACE INTO channel_types (channel, type_information, type_objects) \
                 VALUES (?1, ?2, ?3)",
            )
            .and_then(|mut s| s.execute(params![ch.0, t.type_information, objects]));
        match r {
            Ok(_) => Ok(()),
            Err(e) => Err(self.write_err(Some(ch), "set channel type", e)),
        }
    }

    /// The type kept for channel `ch`, if any.
    pub fn channel_type(&self, ch: ChannelId) -> Result<Option<ChannelType>, StoreError> {
        let op = "read channel type";
        let row: Option<(Vec<u8>, Vec<u8>)> = self
            .conn
            .prepare_cached(
                "SELECT type_information, type_objects FROM channel_types WHERE channel = ?1",
            )
            .and_then(|mut s| {
                s.query_row([ch.0], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(|e| self.err(op, e))?;
        let Some((type_information, objects)) = row else {
            return Ok(None);
        };
        match decode(&objects) {
            Some(type_objects) => Ok(Some(ChannelType {
                type_information,
                type_objects,
            })),
            None => Err(self.corrupt(format!("the type objects of {ch} do not decode"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip_and_damage_is_refused() {
        let objects = vec![vec![1, 2, 3], Vec::new(), vec![9; 300]];
        let b = encode(&objects).unwrap();
        assert_eq!(decode(&b), Some(objects));
        assert_eq!(decode(&b[..b.len() - 1]), None);
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None);
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xff]), None);
    }
}
