//! The live feed: every object version the node stores — received over DDS, submitted here,
//! or approved by a reviewer — as an event for whoever watches (the REST API's event stream,
//! which the dashboard's live feed reads).
//!
//! Events go through a bounded broadcast channel: a watcher that falls more than
//! [`FEED_CAPACITY`] events behind loses the oldest and is told how many (it then re-reads
//! what it needs through search or TAXII). Nothing is built when nobody watches, so the
//! pipeline pays for the feed only while someone looks. Closing the feed (at shutdown) ends
//! every watcher's stream.

use crate::store::{CollectionKey, NewObject};
use serde::Serialize;
use std::sync::Mutex;
use tokio::sync::broadcast;

/// Events a watcher may fall behind by before it loses some.
pub const FEED_CAPACITY: usize = 1024;

/// One stored version, as the feed shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FeedEvent {
    /// The STIX id.
    pub id: String,
    /// The STIX type.
    #[serde(rename = "type")]
    pub stix_type: String,
    /// The version (`modified`, or `created`).
    pub version: String,
    /// The object's `name`, else its `pattern`, `content` or `value`, if it has one.
    pub name: Option<String>,
    /// The marking (`clear`, `green`, `amber`, `amber+strict`, `red`).
    pub tlp: &'static str,
    /// The sector it was shared in or received from; `None` for the node's local copy.
    pub sector: Option<String>,
    /// The organisation that shared it.
    pub origin: String,
    /// Received from another organisation (else produced or approved here).
    pub received: bool,
    /// When its origin shared it, ns since the Unix epoch (0 if never shared).
    pub shared_at_ns: i64,
    /// When this node stored it, ns since the Unix epoch.
    pub stored_at_ns: i64,
}

/// What names an object for a person: its `name`, else its `pattern`, `content` or `value`.
pub fn display_name(object: &serde_json::Value) -> Option<&str> {
    ["name", "pattern", "content", "value"]
        .iter()
        .find_map(|k| object.get(*k).and_then(|n| n.as_str()))
}

impl FeedEvent {
    /// The event of a stored row.
    pub fn of(row: &NewObject, received: bool, stored_at_ns: i64) -> FeedEvent {
        let name = serde_json::from_str::<serde_json::Value>(&row.json)
            .ok()
            .and_then(|v| display_name(&v).map(str::to_string));
        FeedEvent {
            id: row.id.clone(),
            stix_type: row.stix_type.clone(),
            version: row.version.clone(),
            name,
            tlp: row.tlp.as_str(),
            sector: row.sector.clone(),
            origin: row.origin.clone(),
            received,
            shared_at_ns: row.shared_at_ns,
            stored_at_ns,
        }
    }

    /// Whether a user who may see `visible` may see this event.
    pub fn visible_in(&self, visible: &[CollectionKey]) -> bool {
        visible
            .iter()
            .any(|c| c.sector == self.sector && c.tlp.as_str() == self.tlp)
    }
}

/// The node's feed.
#[derive(Debug)]
pub struct Feed {
    tx: Mutex<Option<broadcast::Sender<FeedEvent>>>,
}

impl Default for Feed {
    fn default() -> Self {
        Feed {
            tx: Mutex::new(Some(broadcast::channel(FEED_CAPACITY).0)),
        }
    }
}

impl Feed {
    /// A new watcher, or `None` once the feed is closed.
    pub fn subscribe(&self) -> Option<broadcast::Receiver<FeedEvent>> {
        self.lock().as_ref().map(broadcast::Sender::subscribe)
    }

    /// Whether anybody watches (events are built only then).
    pub fn watched(&self) -> bool {
        self.lock()
            .as_ref()
            .is_some_and(|tx| tx.receiver_count() > 0)
    }

    /// Sends `events` to every watcher.
    pub fn publish(&self, events: impl IntoIterator<Item = FeedEvent>) {
        if let Some(tx) = self.lock().as_ref() {
            for e in events {
                // An error means nobody watches any more.
                if tx.send(e).is_err() {
                    break;
                }
            }
        }
    }

    /// Ends every watcher's stream; later subscriptions get `None`.
    pub fn close(&self) {
        self.lock().take();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<broadcast::Sender<FeedEvent>>> {
        self.tx.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_stix::marking::Tlp;

    fn row(sector: Option<&str>, tlp: Tlp, json: &str) -> NewObject {
        NewObject {
            id: "indicator--6b0e1d2c-0000-4000-8000-000000000001".into(),
            stix_type: "indicator".into(),
            spec_version: "2.1".into(),
            version: "2026-01-01T00:00:00.000Z".into(),
            tlp,
            sector: sector.map(str::to_string),
            origin: "beta".into(),
            shared_at_ns: 5,
            json: json.into(),
            revoked: false,
            pending_share: false,
        }
    }

    #[test]
    fn watchers_get_each_event_and_a_closed_feed_ends_them() {
        let feed = Feed::default();
        assert!(!feed.watched());
        let mut rx = feed.subscribe().expect("open");
        assert!(feed.watched());
        let e = FeedEvent::of(
            &row(Some("finance"), Tlp::Green, r#"{"name":"C2"}"#),
            true,
            9,
        );
        assert_eq!(e.name.as_deref(), Some("C2"));
        feed.publish([e.clone()]);
        assert_eq!(rx.try_recv(), Ok(e));
        feed.close();
        assert_eq!(rx.try_recv(), Err(broadcast::error::TryRecvError::Closed));
        assert!(feed.subscribe().is_none());
        assert!(!feed.watched());
    }

    #[test]
    fn a_watcher_that_falls_behind_is_told_how_much_it_lost() {
        let feed = Feed::default();
        let mut rx = feed.subscribe().expect("open");
        let e = FeedEvent::of(&row(None, Tlp::Amber, "{}"), false, 1);
        feed.publish(std::iter::repeat_n(e, FEED_CAPACITY + 3));
        assert_eq!(
            rx.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(3))
        );
    }

    #[test]
    fn an_event_is_visible_only_in_its_own_collection() {
        let e = FeedEvent::of(&row(Some("finance"), Tlp::Amber, "{}"), true, 1);
        let key = |s: Option<&str>, tlp| CollectionKey {
            sector: s.map(str::to_string),
            tlp,
        };
        assert!(e.visible_in(&[key(Some("finance"), Tlp::Amber)]));
        assert!(!e.visible_in(&[key(Some("finance"), Tlp::Green)]));
        assert!(!e.visible_in(&[key(Some("energy"), Tlp::Amber)]));
        assert!(!e.visible_in(&[key(None, Tlp::Amber)]));
    }
}
