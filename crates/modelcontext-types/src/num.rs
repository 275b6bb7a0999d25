//! JSON numbers written the way JavaScript writes them.
//!
//! The schema types every measure (`progress`, `priority`, `minimum`, ...) as a JSON `number`,
//! and peers send `50`, not `50.0`. Writing integral values without a fraction keeps a received
//! message and our re-encoding of it equal, which the official examples check.

use serde::Serializer;

/// Largest integer an `f64` holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Serializes an `f64`, as an integer when it has no fractional part.
pub(crate) fn f64<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        // Exact: the value is integral and within the range an i64 holds without rounding.
        s.serialize_i64(*value as i64)
    } else {
        s.serialize_f64(*value)
    }
}

/// [`f64`] for an optional field; `None` fields are skipped before this is called.
pub(crate) fn opt_f64<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => f64(v, s),
        None => s.serialize_none(),
    }
}
