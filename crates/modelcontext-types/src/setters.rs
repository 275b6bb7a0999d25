//! The `with_*` setters of the `#[non_exhaustive]` wire structs (see the crate docs, "Building
//! messages"), generated from one table row per optional member so they all behave alike.

/// Implements chainable setters on a struct: `with_x(value)` stores `Some(value.into())` in
/// the optional member `x` and returns the struct. Rows read `setter => member: Type`;
/// several structs that share members take one table (`setters!(A, B { ... })`).
macro_rules! setters {
    ($first:ident, $($rest:ident),+ { $($rows:tt)* }) => {
        setters!($first { $($rows)* });
        setters!($($rest),+ { $($rows)* });
    };
    ($ty:ident { $($setter:ident => $field:ident: $arg:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!(
                    "Sets [`", stringify!($field), "`](", stringify!($ty), "::", stringify!($field), ")."
                )]
                #[must_use]
                #[inline]
                pub fn $setter(mut self, $field: impl Into<$arg>) -> Self {
                    self.$field = Some($field.into());
                    self
                }
            )*
        }
    };
}
