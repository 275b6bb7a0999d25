//! The app views a session fetched for the page, kept by number so that `/view/N` can serve
//! each one (`apps.rs`).

use std::collections::HashMap;
use std::sync::Mutex;

use modelcontext::client::AppView;

/// The views the page asked for, by number, so `/view/N` can serve them.
#[derive(Default)]
pub struct Views {
    kept: Mutex<HashMap<u64, AppView>>,
}

impl Views {
    /// Keeps `view` and gives its number.
    pub(super) fn keep(&self, view: AppView) -> u64 {
        let mut kept = self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let id = kept.len() as u64 + 1;
        kept.insert(id, view);
        id
    }

    pub(super) fn get(&self, id: u64) -> Option<AppView> {
        let kept = self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.get(&id).cloned()
    }
}
