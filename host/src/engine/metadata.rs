//! Reads the `io.kubewarden.metadata` custom section without a wasm parser dependency.

use serde_json::Value;

use super::EngineError;

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
pub fn check_execution_mode(metadata: Option<&Value>) -> Result<(), EngineError> {
    match metadata.and_then(|m| m.get("executionMode")) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(mode)) if mode == WAPC_EXECUTION_MODE => Ok(()),
        Some(Value::String(mode)) => Err(EngineError::UnsupportedExecutionMode(mode.clone())),
        Some(other) => Err(EngineError::UnsupportedExecutionMode(other.to_string())),
    }
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
