//! The bus's messages on Redis: `{"origin":"…","seq":7,"event":{"kind":"…",…}}`.
//!
//! Our own format, not JSON-RPC: a message says what changed, and each instance turns it into
//! the notifications its own streams want. `origin` and `seq` let a receiver see a hole.

use modelcontext::ChangeEvent;
use serde::{Deserialize, Serialize};

/// One published event.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Envelope {
    /// The publishing bus (random, per bus object).
    pub origin: String,
    /// Counts from 0 per origin, one per published event.
    pub seq: u64,
    pub event: WireEvent,
}

/// A [`ChangeEvent`] on the wire. A kind this build doesn't know (from a newer instance)
/// fails to parse, and the receiver treats it as a gap.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum WireEvent {
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated {
        uri: String,
    },
    /// A task's status (tasks extension), for the owner's listen streams on every instance:
    /// `task` is the `DetailedTask` as JSON text, as the server published it.
    TaskStatus {
        task_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
        task: String,
    },
    /// Not a change: a bus checking that its subscription works (it publishes one and waits
    /// to hear it back). Every receiver skips it.
    Probe,
}

impl WireEvent {
    /// `None` for a kind added to [`ChangeEvent`] after this crate was written.
    pub(crate) fn from_event(event: &ChangeEvent) -> Option<WireEvent> {
        Some(match event {
            ChangeEvent::ToolsListChanged => WireEvent::ToolsListChanged,
            ChangeEvent::PromptsListChanged => WireEvent::PromptsListChanged,
            ChangeEvent::ResourcesListChanged => WireEvent::ResourcesListChanged,
            ChangeEvent::ResourceUpdated(uri) => WireEvent::ResourceUpdated { uri: uri.clone() },
            ChangeEvent::TaskStatus { task_id, owner, task } => WireEvent::TaskStatus {
                task_id: task_id.clone(),
                owner: owner.clone(),
                task: task.clone(),
            },
            _ => return None,
        })
    }

    /// The change; `None` for a probe.
    pub(crate) fn into_event(self) -> Option<ChangeEvent> {
        Some(match self {
            WireEvent::ToolsListChanged => ChangeEvent::ToolsListChanged,
            WireEvent::PromptsListChanged => ChangeEvent::PromptsListChanged,
            WireEvent::ResourcesListChanged => ChangeEvent::ResourcesListChanged,
            WireEvent::ResourceUpdated { uri } => ChangeEvent::ResourceUpdated(uri),
            WireEvent::TaskStatus { task_id, owner, task } => {
                ChangeEvent::TaskStatus { task_id, owner, task }
            }
            WireEvent::Probe => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Envelope, WireEvent};
    use modelcontext::ChangeEvent;

    #[test]
    fn every_event_goes_and_comes_back_and_strangers_are_refused() {
        for event in [
            ChangeEvent::ToolsListChanged,
            ChangeEvent::PromptsListChanged,
            ChangeEvent::ResourcesListChanged,
            ChangeEvent::ResourceUpdated("books://Dune".into()),
            ChangeEvent::TaskStatus {
                task_id: "t1".into(),
                owner: Some("alice".into()),
                task: r#"{"taskId":"t1","status":"working"}"#.into(),
            },
            ChangeEvent::TaskStatus { task_id: "t2".into(), owner: None, task: "{}".into() },
        ] {
            let wire = WireEvent::from_event(&event).expect("a known kind");
            let envelope = Envelope { origin: "o".into(), seq: 3, event: wire };
            let text = serde_json::to_string(&envelope).expect("json");
            let back: Envelope = serde_json::from_str(&text).expect("parses");
            assert_eq!((back.origin.as_str(), back.seq), ("o", 3));
            assert_eq!(back.event.into_event(), Some(event));
        }
        let text = r#"{"origin":"o","seq":0,"event":{"kind":"resource_updated","uri":"u"}}"#;
        assert!(serde_json::from_str::<Envelope>(text).is_ok());
        let probe = r#"{"origin":"o","seq":0,"event":{"kind":"probe"}}"#;
        let probe: Envelope = serde_json::from_str(probe).expect("a probe parses");
        assert_eq!(probe.event.into_event(), None);
        for stranger in [
            r#"{"origin":"o","seq":0,"event":{"kind":"weather_changed"}}"#,
            r#"{"origin":"o","seq":-1,"event":{"kind":"tools_list_changed"}}"#,
            r#"{"origin":"o","event":{"kind":"tools_list_changed"}}"#,
            "not json",
        ] {
            assert!(serde_json::from_str::<Envelope>(stranger).is_err(), "{stranger}");
        }
    }
}
