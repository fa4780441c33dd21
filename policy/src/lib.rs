//! The SidecarSet domain as pure functions: API types, matching, injection, validation,
//! defaulting and hashing. The Kubewarden waPC entry (`wapc_entry`) is a thin shell on wasm32.

pub mod admission;
pub mod annotations;
pub mod quantity;
pub mod api;
pub mod hash;
pub mod selector;
