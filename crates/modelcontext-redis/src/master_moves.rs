//! When a Sentinel deployment's master moves, a pub/sub subscription made before may be on a
//! node that no longer hears what is published: this tells the followers.

/// Tells a pub/sub follower that the master moved: its subscription may be on a node that no
/// longer hears what is published.
pub(crate) struct MasterMoves {
    #[cfg(feature = "sentinel")]
    moves: Option<tokio::sync::watch::Receiver<u64>>,
}

impl MasterMoves {
    /// Moves told by the sentinels' switch counter.
    #[cfg(feature = "sentinel")]
    pub(crate) fn on(moves: tokio::sync::watch::Receiver<u64>) -> MasterMoves {
        MasterMoves { moves: Some(moves) }
    }

    pub(crate) fn never() -> MasterMoves {
        MasterMoves {
            #[cfg(feature = "sentinel")]
            moves: None,
        }
    }

    /// Forgets the moves told so far (call it before subscribing).
    pub(crate) fn seen(&mut self) {
        #[cfg(feature = "sentinel")]
        if let Some(moves) = &mut self.moves {
            moves.borrow_and_update();
        }
    }

    /// Returns at the next move; never, for one Redis at a fixed address.
    pub(crate) async fn next(&mut self) {
        #[cfg(feature = "sentinel")]
        if let Some(moves) = &mut self.moves {
            if moves.changed().await.is_ok() {
                return;
            }
        }
        std::future::pending::<()>().await
    }
}
