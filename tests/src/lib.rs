//! Cross-crate test helpers and the conformance runner.

pub mod conformance;

use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The policy module built by `make policy.wasm`, loaded once per test binary.
pub fn policy_engine() -> &'static sidecarset_host::PolicyEngine {
    static ENGINE: std::sync::OnceLock<sidecarset_host::PolicyEngine> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| {
        let path = repo_root().join("policy.wasm");
        assert!(
            path.exists(),
            "{} is missing: run `make policy.wasm` (or `make test`) first",
            path.display()
        );
        sidecarset_host::PolicyEngine::from_file(&path, sidecarset_host::EngineConfig::default())
            .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
    })
}
