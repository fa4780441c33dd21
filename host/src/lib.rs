//! The bundled wasmtime host for the SidecarSet policy.
//!
//! * [`engine`]: waPC on wasmtime (compile once, fresh instance per evaluation, deadline, memory cap).
//! * [`context`]: in-memory cluster context answering the Kubernetes host callbacks, and kwctl
//!   session files (record / replay).
//! * [`annotate`]: `kwctl annotate` compatible metadata embedding.
//! * [`serve`]: the HTTPS admission webhook (AdmissionReview v1), with watch caches.
//! * [`oci`]: push / pull policies as OCI artifacts with Kubewarden's media types.
//! * [`admission`]: the typed AdmissionRequest sent to the guest, and `ValidationResponse` →
//!   `AdmissionResponse`, exactly as Kubewarden builds them.

pub mod admission;
pub mod annotate;
pub mod context;
pub mod engine;
pub mod oci;
pub mod serve;

pub use admission::{
    AdmissionRequest, AdmissionResponse, AdmissionResponseStatus, evaluate_admission,
    evaluate_request,
};
pub use context::{
    AllowList, ClusterContext, ContextAwareResources, NoCluster, SessionRecorder, SessionReplayer,
};
pub use engine::{
    EngineConfig, EngineError, GuestStdio, HostCallbacks, NoHostCallbacks, PolicyEngine,
    PolicyInstance, PolicyModule, SettingsValidationResponse, ValidationResponse,
};
