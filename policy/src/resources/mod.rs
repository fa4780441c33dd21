//! Sidecar resources from the pod (§3.7.7): Kruise's expression calculator and the
//! `resourcesPolicy` that applies it.

pub mod calculator;
mod policy;

pub use policy::{ResourcesPolicyError, resources_for};
