//! modelcontext
