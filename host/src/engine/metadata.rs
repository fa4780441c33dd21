//! Reads the `io.kubewarden.metadata` custom section without a wasm parser dependency.

use serde_json::Value;

use super::EngineError;
use super::version::{KUBEWARDEN_VERSION, KubewardenVersion};

/// Name of the custom section `kwctl annotate` writes.
pub const METADATA_SECTION: &str = "io.kubewarden.metadata";

const WASM_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/// Returns the raw contents of the first custom section called `name`, if any.
pub fn custom_section<'a>(wasm: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let mut rest = wasm.strip_prefix(&WASM_HEADER[..])?;
    while let Some((&id, after_id)) = rest.split_first() {
        let (size, after_size) = read_leb_u32(after_id)?;
        let size = usize::try_from(size).ok()?;
        let body = after_size.get(..size)?;
        rest = after_size.get(size..)?;
        if id == 0 {
            let (name_len, after_len) = read_leb_u32(body)?;
            let name_len = usize::try_from(name_len).ok()?;
            let section_name = after_len.get(..name_len)?;
            if section_name == name.as_bytes() {
                return after_len.get(name_len..);
            }
        }
    }
    None
}

/// Parses the embedded Kubewarden metadata as JSON, when the module is annotated.
pub fn read_metadata(wasm: &[u8]) -> Result<Option<Value>, EngineError> {
    match custom_section(wasm, METADATA_SECTION) {
        None => Ok(None),
        Some(bytes) => serde_json::from_slice(bytes)
            .map(Some)
            .map_err(|e| EngineError::Metadata(e.to_string())),
    }
}

/// The runtime a Kubewarden module is annotated for (`kubewarden-wapc` when not annotated).
pub const WAPC_EXECUTION_MODE: &str = "kubewarden-wapc";

/// Refuses a module annotated for another runtime (OPA, Gatekeeper, WASI): its `validate`
/// would not follow the waPC protocol this host speaks.
fn check_execution_mode(metadata: &Value) -> Result<(), EngineError> {
    match metadata.get("executionMode") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(mode)) if mode == WAPC_EXECUTION_MODE => Ok(()),
        Some(Value::String(mode)) => Err(EngineError::UnsupportedExecutionMode(mode.clone())),
        Some(other) => Err(EngineError::UnsupportedExecutionMode(other.to_string())),
    }
}

/// policy-server's load checks of an annotated module; a plain module has no metadata and passes.
pub fn check_metadata(metadata: Option<&Value>) -> Result<(), EngineError> {
    let Some(metadata) = metadata else {
        return Ok(());
    };
    check_execution_mode(metadata)?;
    check_protocol_version(metadata)?;
    check_minimum_kubewarden_version(metadata)
}

/// The only waPC protocol Kubewarden speaks; `kwctl annotate` stores it as `protocolVersion`.
const PROTOCOL_VERSION: &str = "v1";

/// Refuses an annotated waPC module whose metadata lacks `protocolVersion` or names another one.
fn check_protocol_version(metadata: &Value) -> Result<(), EngineError> {
    match metadata.get("protocolVersion") {
        None | Some(Value::Null) => Err(EngineError::MissingProtocolVersion),
        Some(Value::String(version)) if version == PROTOCOL_VERSION => Ok(()),
        Some(Value::String(version)) => {
            Err(EngineError::UnsupportedProtocolVersion(version.clone()))
        }
        Some(other) => Err(EngineError::UnsupportedProtocolVersion(other.to_string())),
    }
}

/// kwctl's `has_minimum_kubewarden_version`: refuses a policy that needs a newer major.minor.
fn check_minimum_kubewarden_version(metadata: &Value) -> Result<(), EngineError> {
    let value = match metadata.get("minimumKubewardenVersion") {
        None | Some(Value::Null) => return Ok(()),
        Some(value) => value,
    };
    let required = value
        .as_str()
        .and_then(KubewardenVersion::parse)
        .ok_or_else(|| {
            EngineError::Metadata(format!(
                "minimumKubewardenVersion {value} is not a semantic version"
            ))
        })?;
    if required > KUBEWARDEN_VERSION {
        return Err(EngineError::NewerKubewardenRequired {
            required,
            running: KUBEWARDEN_VERSION,
        });
    }
    Ok(())
}

fn read_leb_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let mut result: u32 = 0;
    for (i, &byte) in bytes.iter().enumerate().take(5) {
        result |= u32::from(byte & 0x7f).checked_shl(7 * i as u32)?;
        if byte & 0x80 == 0 {
            return Some((result, bytes.get(i + 1..)?));
        }
    }
    None
}
