//! The pod phase from the container statuses, as upstream's `getPhase`
//! (pkg/kubelet/kubelet_pods.go, 1.32, without the alpha ContainerRestartRules gate).

use std::collections::HashMap;

use serde_json::Value;

use super::spec::{ContainerSpec, Kind, RestartPolicy};

fn has(v: &Value, state: &str, which: &str) -> bool {
    v.get(state)
        .and_then(|s| s.get(which))
        .is_some_and(Value::is_object)
}

fn exit_code(v: &Value, state: &str) -> i64 {
    v.get(state)
        .and_then(|s| s.get("terminated"))
        .and_then(|t| t.get("exitCode"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `HasAnyRegularContainerStarted`: an app container runs or ran.
pub fn any_app_started(specs: &[ContainerSpec], statuses: &HashMap<&str, Value>) -> bool {
    specs.iter().filter(|s| s.kind == Kind::App).any(|s| {
        statuses.get(s.name).is_some_and(|v| {
            ["running", "terminated"]
                .iter()
                .any(|w| has(v, "state", w) || has(v, "lastState", w))
        })
    })
}

/// `getPhase` with podIsTerminal false (the stand-in's pods end by their containers' exits).
pub fn phase(
    specs: &[ContainerSpec],
    policy: RestartPolicy,
    statuses: &HashMap<&str, Value>,
) -> &'static str {
    let (mut pending_init, mut pending_sidecars, mut failed_init) = (0, 0, 0);
    let (mut unknown, mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0, 0);
    for s in specs {
        let Some(v) = statuses.get(s.name) else {
            match s.kind {
                Kind::Init => pending_init += 1,
                Kind::Sidecar | Kind::App => unknown += 1,
            }
            continue;
        };
        let last_terminated = has(v, "lastState", "terminated");
        match s.kind {
            Kind::Init => {
                if has(v, "state", "terminated") {
                    if exit_code(v, "state") != 0 {
                        failed_init += 1;
                    }
                } else if has(v, "state", "waiting") && last_terminated {
                    if exit_code(v, "lastState") != 0 {
                        failed_init += 1;
                    }
                } else {
                    pending_init += 1;
                }
            }
            // Terminated sidecars do not count for the phase.
            Kind::Sidecar => {
                if has(v, "state", "running") {
                    if v.get("started") != Some(&Value::Bool(true)) {
                        pending_sidecars += 1;
                    }
                    running += 1;
                } else if has(v, "state", "waiting") && !last_terminated {
                    pending_sidecars += 1;
                    waiting += 1;
                } else if !has(v, "state", "terminated") && !has(v, "state", "waiting") {
                    pending_sidecars += 1;
                    unknown += 1;
                }
            }
            Kind::App => {
                if has(v, "state", "running") {
                    running += 1;
                } else if has(v, "state", "terminated") {
                    stopped += 1;
                    if exit_code(v, "state") == 0 {
                        succeeded += 1;
                    }
                } else if has(v, "state", "waiting") {
                    if last_terminated {
                        stopped += 1;
                    } else {
                        waiting += 1;
                    }
                } else {
                    unknown += 1;
                }
            }
        }
    }
    if failed_init > 0 && policy == RestartPolicy::Never {
        return "Failed";
    }
    if pending_init > 0
        || (pending_sidecars > 0 && !any_app_started(specs, statuses))
        || waiting > 0
    {
        return "Pending";
    }
    if running > 0 && unknown == 0 {
        return "Running";
    }
    if running == 0 && stopped > 0 && unknown == 0 {
        return match policy {
            RestartPolicy::Always => "Running",
            _ if stopped == succeeded => "Succeeded",
            RestartPolicy::Never => "Failed",
            RestartPolicy::OnFailure => "Running",
        };
    }
    "Pending"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({"spec": {
            "initContainers": [{"name": "s", "image": "x", "restartPolicy": "Always"}],
            "containers": [{"name": "a", "image": "x"}],
        }})
    }

    #[test]
    fn a_terminated_sidecar_does_not_keep_the_pod_from_succeeding() {
        let pod = pod();
        let specs = super::super::spec::containers(&pod);
        let done = json!({"state": {"terminated": {"exitCode": 0}}, "lastState": {}});
        let running = json!({"state": {"running": {}}, "started": true, "lastState": {}});
        let mut st = HashMap::from([("a", done.clone()), ("s", running)]);
        assert_eq!(phase(&specs, RestartPolicy::Never, &st), "Running");
        st.insert(
            "s",
            json!({"state": {"terminated": {"exitCode": 137}}, "lastState": {}}),
        );
        assert_eq!(phase(&specs, RestartPolicy::Never, &st), "Succeeded");
        assert_eq!(phase(&specs, RestartPolicy::Always, &st), "Running");
        st.insert(
            "a",
            json!({"state": {"terminated": {"exitCode": 2}}, "lastState": {}}),
        );
        assert_eq!(phase(&specs, RestartPolicy::Never, &st), "Failed");
        assert_eq!(phase(&specs, RestartPolicy::OnFailure, &st), "Running");
    }
}
