//! Questions a handler asks the client: elicitation, sampling and roots, in both eras.

/// One MRTR round of a modern request (filled in below).
#[derive(Debug, Default)]
pub(crate) struct InputRound;
