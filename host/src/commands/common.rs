//! Helpers shared by several commands: inputs, settings, engine configuration.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use sidecarset_host::engine::{EngineConfig, GuestStdio};

/// Reads a file, or stdin for `-`.
pub fn read_input(path: &Path) -> anyhow::Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Settings from a YAML/JSON file or inline JSON; absent or null settings are `{}`.
pub fn read_settings(path: Option<&Path>, json: Option<&str>) -> anyhow::Result<Value> {
    let settings: Value = match (path, json) {
        (Some(path), _) => {
            let text = read_input(path)?;
            serde_norway::from_str(&text)
                .with_context(|| format!("cannot parse settings file {}", path.display()))?
        }
        (None, Some(json)) => serde_json::from_str(json).context("cannot parse --settings-json")?,
        (None, None) => Value::Null,
    };
    match settings {
        Value::Null => Ok(Value::Object(serde_json::Map::new())),
        Value::Object(_) => Ok(settings),
        _ => bail!("settings must be a map (or null)"),
    }
}

/// The sandbox of every evaluation; guest output goes to stderr so stdout stays machine readable.
pub fn engine_config(deadline_ms: u64, memory_limit_mib: usize) -> EngineConfig {
    EngineConfig {
        deadline: Duration::from_millis(deadline_ms),
        memory_limit: memory_limit_mib.saturating_mul(1024 * 1024),
        guest_stdio: GuestStdio::Stderr,
        instance_pool: None,
    }
}

/// A module path given as a plain path or a `file://` URL.
pub fn module_path(module: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(module.strip_prefix("file://").unwrap_or(module))
}
