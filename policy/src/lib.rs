//! The SidecarSet domain as pure functions: API types, matching, injection, validation,
//! defaulting and hashing. The Kubewarden waPC entry (`wapc_entry`) is a thin shell on wasm32.

pub mod admission;
pub mod annotations;
pub mod api;
pub mod arena;
pub mod evaluate;
pub mod hash;
pub mod hotupgrade;
pub mod inject;
#[cfg(any(target_arch = "wasm32", test))]
mod memcmp;
mod order;
pub mod quantity;
mod rawjson;
pub mod resources;
pub mod revision;
pub mod selector;
pub mod settings;

#[cfg(target_arch = "wasm32")]
mod wapc_entry;
