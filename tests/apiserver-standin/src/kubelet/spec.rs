//! What the simulator reads from a pod's spec, including the stand-in's test-only
//! `STANDIN_EXIT_AFTER_MS` / `STANDIN_EXIT_CODE` convention.

use std::time::Duration;

use serde_json::Value;

/// Env var (test-only convention): how long a container runs once started before it exits.
pub const EXIT_AFTER_MS: &str = "STANDIN_EXIT_AFTER_MS";
/// Env var (test-only convention): the code it then exits with (default 0).
pub const EXIT_CODE: &str = "STANDIN_EXIT_CODE";

/// The three kinds of containers, which start, stop and restart differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular init container: runs to completion, in order, before the next one.
    Init,
    /// A restartable init container (`restartPolicy: Always`, a native sidecar).
    Sidecar,
    /// A regular (app) container.
    App,
}

/// The pod's `restartPolicy` (defaulted to Always by the API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartPolicy {
    /// Restart any exit.
    Always,
    /// Restart non-zero exits.
    OnFailure,
    /// Never restart.
    Never,
}

impl RestartPolicy {
    /// The policy of a pod.
    pub fn of(pod: &Value) -> Self {
        match pod
            .get("spec")
            .and_then(|s| s.get("restartPolicy"))
            .and_then(Value::as_str)
        {
            Some("OnFailure") => RestartPolicy::OnFailure,
            Some("Never") => RestartPolicy::Never,
            _ => RestartPolicy::Always,
        }
    }

    /// `ShouldContainerBeRestarted` for a dead regular container.
    pub fn restarts(self, exit_code: i64) -> bool {
        match self {
            RestartPolicy::Always => true,
            RestartPolicy::OnFailure => exit_code != 0,
            RestartPolicy::Never => false,
        }
    }
}

/// One container of the spec, as the simulator needs it.
#[derive(Debug, Clone)]
pub struct ContainerSpec<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its image.
    pub image: &'a str,
    /// Its kind.
    pub kind: Kind,
    /// How long it runs before exiting by itself (`None`: until stopped).
    pub exit_after: Option<Duration>,
    /// The code of that exit.
    pub exit_code: i64,
    /// Has a `startupProbe`: `started` only after the ready delay.
    pub startup_probe: bool,
    /// The container as written.
    pub raw: &'a Value,
}

impl ContainerSpec<'_> {
    /// Its key in the pod's track (names are unique across both lists, the prefix is for clarity).
    pub fn key(&self) -> String {
        match self.kind {
            Kind::App => format!("c/{}", self.name),
            Kind::Init | Kind::Sidecar => format!("i/{}", self.name),
        }
    }
}

fn env_literal<'a>(c: &'a Value, name: &str) -> Option<&'a str> {
    c.get("env")?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_str()
}

fn container_spec(c: &Value, kind: Kind) -> ContainerSpec<'_> {
    let exit_after = env_literal(c, EXIT_AFTER_MS)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        // Init containers are meant to finish: without the convention they exit at once.
        .or((kind == Kind::Init).then_some(Duration::ZERO));
    ContainerSpec {
        name: c.get("name").and_then(Value::as_str).unwrap_or(""),
        image: c.get("image").and_then(Value::as_str).unwrap_or(""),
        kind,
        exit_after,
        exit_code: env_literal(c, EXIT_CODE)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(0),
        startup_probe: c.get("startupProbe").is_some_and(Value::is_object),
        raw: c,
    }
}

fn list<'a>(pod: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    pod.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The pod's containers in start order: init containers as listed, then app containers.
pub fn containers(pod: &Value) -> Vec<ContainerSpec<'_>> {
    let init = list(pod, "initContainers").map(|c| {
        let sidecar = c.get("restartPolicy").and_then(Value::as_str) == Some("Always");
        container_spec(c, if sidecar { Kind::Sidecar } else { Kind::Init })
    });
    init.chain(list(pod, "containers").map(|c| container_spec(c, Kind::App)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_exit_convention_and_kinds() {
        let pod = json!({"spec": {
            "initContainers": [
                {"name": "i", "image": "busybox"},
                {"name": "s", "image": "envoy", "restartPolicy": "Always",
                 "startupProbe": {"exec": {"command": ["true"]}}},
            ],
            "containers": [{"name": "a", "image": "app", "env": [
                {"name": EXIT_AFTER_MS, "value": "250"}, {"name": EXIT_CODE, "value": "3"}]},
                {"name": "b", "image": "app", "env": [{"name": EXIT_AFTER_MS, "value": "soon"}]}],
        }});
        let cs = containers(&pod);
        let kinds: Vec<Kind> = cs.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [Kind::Init, Kind::Sidecar, Kind::App, Kind::App]);
        assert_eq!(cs[0].exit_after, Some(Duration::ZERO));
        assert_eq!(cs[1].exit_after, None);
        assert!(cs[1].startup_probe);
        assert_eq!(cs[2].exit_after, Some(Duration::from_millis(250)));
        assert_eq!(cs[2].exit_code, 3);
        assert_eq!(cs[3].exit_after, None, "an unparsable value is ignored");
        assert_eq!(cs[1].key(), "i/s");
        assert_eq!(cs[2].key(), "c/a");
        assert_eq!(RestartPolicy::of(&pod), RestartPolicy::Always);
        assert!(RestartPolicy::OnFailure.restarts(1));
        assert!(!RestartPolicy::OnFailure.restarts(0));
    }
}
