//! Guide chapters.
#![doc = "See the submodules."]

#[doc = include_str!("../docs/deployment.md")]
pub mod deployment {}

#[doc = include_str!("../docs/handling-errors.md")]
pub mod handling_errors {}

#[doc = include_str!("../docs/limits.md")]
pub mod limits {}

#[doc = include_str!("../docs/observability.md")]
pub mod observability {}

#[doc = include_str!("../docs/performance.md")]
pub mod performance {}

#[doc = include_str!("../docs/troubleshooting.md")]
pub mod troubleshooting {}
