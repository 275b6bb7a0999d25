//! Placeholder; filled below.
