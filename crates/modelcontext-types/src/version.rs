//! Protocol revisions and the two eras they belong to.

/// The newest revision of the modern, stateless era.
pub const LATEST_MODERN_VERSION: &str = "2026-07-28";
/// The newest revision of the handshake era: our `initialize` offer and counter-offer.
pub const LATEST_HANDSHAKE_VERSION: &str = "2025-11-25";
/// Revisions negotiated with `initialize`, oldest first.
pub const HANDSHAKE_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// Revisions served statelessly with the per-request `_meta` envelope.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// The one revision with JSON-RPC batches (2024-11-05 had none in its schema, 2025-06-18
/// removed them).
pub const BATCH_VERSION: &str = "2025-03-26";

/// Whether a connection that negotiated `version` takes JSON-RPC batches.
pub fn has_batches(version: &str) -> bool {
    version == BATCH_VERSION
}

/// Which wire a connection or request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2024-11-05 .. 2025-11-25: `initialize` handshake, capabilities negotiated once.
    Handshake,
    /// 2026-07-28 and later: no handshake, `_meta` on every request.
    Modern,
}

/// The era of a known revision, or `None` for a revision this SDK does not know.
pub fn era_of(version: &str) -> Option<Era> {
    if MODERN_VERSIONS.contains(&version) {
        Some(Era::Modern)
    } else if HANDSHAKE_VERSIONS.contains(&version) {
        Some(Era::Handshake)
    } else {
        None
    }
}

/// The handshake revision a server answers `initialize` with: the client's own when we know
/// it, else our newest (the counter-offer the spec's lifecycle section prescribes).
pub fn negotiate_handshake(requested: &str) -> &'static str {
    HANDSHAKE_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST_HANDSHAKE_VERSION)
}
