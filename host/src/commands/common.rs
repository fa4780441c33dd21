//! Helpers shared by several commands: inputs, settings, engine configuration.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use sidecarset_host::ContextAwareResources;
use sidecarset_host::engine::{EngineConfig, GuestStdio, PolicyEngine};

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

/// What `kwctl run`/`bench` grant: the metadata's `contextAwareResources` with
/// `--allow-context-aware`, nothing otherwise (with kwctl's warnings on stderr).
pub fn granted_resources(
    engine: &PolicyEngine,
    allow_context_aware: bool,
) -> ContextAwareResources {
    let Some(metadata) = engine.metadata() else {
        eprintln!("info: Policy is not annotated, access to Kubernetes resources is not allowed");
        return ContextAwareResources::none();
    };
    let declared = ContextAwareResources::declared_by(Some(metadata));
    if declared.is_empty() {
        return declared;
    }
    if allow_context_aware {
        eprintln!(
            "warning: Policy has been granted access to the Kubernetes resources mentioned by its metadata: {}",
            declared.describe()
        );
        declared
    } else {
        eprintln!(
            "warning: Policy requires access to Kubernetes resources at evaluation time. During this execution the access to Kubernetes resources is denied. This can cause the policy to not behave properly"
        );
        eprintln!(
            "warning: Carefully review which types of Kubernetes resources the policy needs via the `inspect` command, then run the policy using the `--allow-context-aware` flag."
        );
        ContextAwareResources::none()
    }
}
