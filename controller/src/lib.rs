//! Slim kube-rs controller for OpenKruise SidecarSets: status and in-place sidecar upgrades.
//!
//! The decisions live in [`plan`] (pure); everything else is the async shell that feeds it
//! from watch caches and applies what it returns.

pub mod apply;
pub mod backoff;
pub mod cached_pod;
pub mod cli;
pub mod error;
pub mod events;
pub mod execute;
pub mod expectations;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod permissions;
pub mod plan;
pub mod reconciler;
pub mod run;
pub mod selection;
pub mod telemetry;
pub mod watches;
