//! The bundled wasmtime host for the SidecarSet policy.
//!
//! * [`engine`]: waPC on wasmtime (compile once, fresh instance per evaluation, deadline, memory cap).
//! * [`context`]: in-memory cluster context answering the Kubernetes host callbacks, and kwctl
//!   session files (record / replay).
//! * [`admission`]: `ValidationResponse` → `AdmissionResponse`, exactly as Kubewarden builds it.

pub mod admission;
pub mod context;
pub mod engine;

pub use admission::{AdmissionResponse, AdmissionResponseStatus, evaluate_admission};
pub use context::{ClusterContext, NoCluster, SessionRecorder, SessionReplayer};
pub use engine::{
    EngineConfig, EngineError, GuestStdio, HostCallbacks, NoHostCallbacks, PolicyEngine,
    PolicyModule, SettingsValidationResponse, ValidationResponse,
};
