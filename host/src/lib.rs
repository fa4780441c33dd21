//! The bundled wasmtime host for the SidecarSet policy.
