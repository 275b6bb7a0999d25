//! Attribute macros for modelcontext.
