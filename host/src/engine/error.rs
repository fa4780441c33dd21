//! Typed errors of the waPC engine.

use thiserror::Error;

use super::version::KubewardenVersion;

/// Everything that can go wrong while loading a module or evaluating one call.
///
/// Call-time variants display like Kubewarden's waPC errors (`Guest call failure: …`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EngineError {
    /// The module could not be compiled, linked or pre-instantiated.
    #[error("cannot load policy module: {0}")]
    Load(String),
    /// The embedded `io.kubewarden.metadata` section is not valid JSON.
    #[error("invalid policy metadata: {0}")]
    Metadata(String),
    /// The metadata names a runtime other than waPC (kwctl would run it elsewhere).
    #[error(
        "the policy's executionMode is {0:?}; sidecarset-host runs kubewarden-wapc policies only"
    )]
    UnsupportedExecutionMode(String),
    /// An annotated waPC module without `protocolVersion` (not annotated by kwctl-compatible tools).
    #[error(
        "Policy is missing protocol version: its metadata has no protocolVersion (annotate it with `sidecarset-host annotate` or `kwctl annotate`)"
    )]
    MissingProtocolVersion,
    /// An annotated waPC module for another protocol version.
    #[error("Policy uses protocol version {0:?}, only v1 is supported")]
    UnsupportedProtocolVersion(String),
    /// The policy's `minimumKubewardenVersion` is newer than the release this host matches.
    #[error(
        "Policy required Kubewarden version {required} or greater. But it's running on {running}"
    )]
    NewerKubewardenRequired {
        /// major.minor of the policy's `minimumKubewardenVersion`.
        required: KubewardenVersion,
        /// [`super::KUBEWARDEN_VERSION`].
        running: KubewardenVersion,
    },
    /// The module does not export a function the waPC protocol requires.
    #[error("policy module does not export `{0}`")]
    MissingExport(&'static str),
    /// Instantiation, `_start` or `wapc_init` failed.
    #[error("initialization failed: {0}")]
    InitFailed(String),
    /// `_start` or `wapc_init` ran past the deadline.
    #[error("{0} init interrupted, execution deadline exceeded")]
    InitDeadlineExceeded(String),
    /// The waPC call ran past the deadline.
    #[error("Guest call failure: guest code interrupted, execution deadline exceeded")]
    DeadlineExceeded,
    /// The guest tried to grow its memory beyond the configured cap.
    #[error(
        "Guest call failure: guest memory limit exceeded (tried to grow to {requested} bytes, limit is {limit} bytes)"
    )]
    MemoryLimitExceeded {
        /// Size the guest asked for.
        requested: usize,
        /// Configured cap.
        limit: usize,
    },
    /// The guest returned an error or trapped.
    #[error("Guest call failure: {0}")]
    GuestCallFailure(String),
    /// The guest answered with something that is not the expected JSON.
    #[error("invalid response from policy: {0}")]
    InvalidResponse(String),
    /// The input given to the engine cannot be sent to the guest.
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

impl EngineError {
    /// True for both deadline variants (init and call): Kubewarden reports them with one message.
    pub fn is_deadline(&self) -> bool {
        matches!(self, Self::DeadlineExceeded | Self::InitDeadlineExceeded(_))
    }
}
