//! Hot-upgrade twin naming and the working/idle split (§3.7.6, §5.10).

use crate::annotations;
use std::collections::BTreeMap;

/// The twin containers of hot-upgrade sidecar `name`: `name-1`, `name-2`.
pub fn twin_names(name: &str) -> [String; 2] {
    [format!("{name}-1"), format!("{name}-2")]
}

/// Which twin runs the sidecar now and which one idles on the empty image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotUpgradeState {
    pub working: String,
    pub idle: String,
}

impl HotUpgradeState {
    /// From the pod's working map: `name-1` when it says so, otherwise `name-2` (also when missing).
    pub fn of(name: &str, working_map: &BTreeMap<String, String>) -> Self {
        let [first, second] = twin_names(name);
        if working_map.get(name) == Some(&first) {
            HotUpgradeState {
                working: first,
                idle: second,
            }
        } else {
            HotUpgradeState {
                working: second,
                idle: first,
            }
        }
    }
}

/// The env vars through which a twin reads its own version annotations (downward API).
pub fn version_env(container: &str) -> [serde_json::Value; 2] {
    let field = |key: String| serde_json::json!({"fieldRef": {"fieldPath": format!("metadata.annotations['{key}']")}});
    [
        serde_json::json!({
            "name": annotations::SIDECARSET_VERSION_ENV,
            "valueFrom": field(annotations::version_key(container)),
        }),
        serde_json::json!({
            "name": annotations::SIDECARSET_VERSION_ALT_ENV,
            "valueFrom": field(annotations::version_alt_key(container)),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_twin_defaults_to_the_second() {
        let empty = BTreeMap::new();
        assert_eq!(HotUpgradeState::of("envoy", &empty).working, "envoy-2");
        let map = BTreeMap::from([("envoy".to_string(), "envoy-1".to_string())]);
        let state = HotUpgradeState::of("envoy", &map);
        assert_eq!(
            (state.working.as_str(), state.idle.as_str()),
            ("envoy-1", "envoy-2")
        );
    }
}
