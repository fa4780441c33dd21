//! The pod conditions the kubelet owns, as pkg/kubelet/status/generate.go computes them
//! (readiness gates are not evaluated).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::phase::any_app_started;
use super::spec::{ContainerSpec, Kind};

/// One condition before rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cond {
    /// Its type.
    pub kind: &'static str,
    /// True or False.
    pub ok: bool,
    /// Its reason, if any.
    pub reason: Option<&'static str>,
    /// Its message, if any.
    pub message: Option<String>,
}

fn cond(kind: &'static str, ok: bool) -> Cond {
    Cond {
        kind,
        ok,
        reason: None,
        message: None,
    }
}

fn truthy(statuses: &HashMap<&str, Value>, name: &str, field: &str) -> bool {
    statuses.get(name).and_then(|v| v.get(field)) == Some(&Value::Bool(true))
}

/// `GeneratePodInitializedCondition`.
fn initialized(specs: &[ContainerSpec], statuses: &HashMap<&str, Value>, phase: &str) -> Cond {
    if phase == "Succeeded" {
        return Cond {
            reason: Some("PodCompleted"),
            ..cond("Initialized", true)
        };
    }
    if any_app_started(specs, statuses) {
        return cond("Initialized", true);
    }
    let incomplete: Vec<&str> = specs
        .iter()
        .filter(|s| match s.kind {
            Kind::Sidecar => !truthy(statuses, s.name, "started"),
            Kind::Init => !truthy(statuses, s.name, "ready"),
            Kind::App => false,
        })
        .map(|s| s.name)
        .collect();
    if incomplete.is_empty() {
        return cond("Initialized", true);
    }
    Cond {
        reason: Some("ContainersNotInitialized"),
        message: Some(format!(
            "containers with incomplete status: [{}]",
            incomplete.join(" ")
        )),
        ..cond("Initialized", false)
    }
}

/// `GenerateContainersReadyCondition` (Ready is the same without readiness gates).
fn containers_ready(specs: &[ContainerSpec], statuses: &HashMap<&str, Value>, phase: &str) -> Cond {
    match phase {
        "Succeeded" => {
            return Cond {
                reason: Some("PodCompleted"),
                ..cond("ContainersReady", false)
            };
        }
        "Failed" => {
            return Cond {
                reason: Some("PodFailed"),
                ..cond("ContainersReady", false)
            };
        }
        _ => {}
    }
    let unready: Vec<&str> = specs
        .iter()
        .filter(|s| s.kind != Kind::Init && !truthy(statuses, s.name, "ready"))
        .map(|s| s.name)
        .collect();
    if unready.is_empty() {
        return cond("ContainersReady", true);
    }
    Cond {
        reason: Some("ContainersNotReady"),
        message: Some(format!(
            "containers with unready status: [{}]",
            unready.join(" ")
        )),
        ..cond("ContainersReady", false)
    }
}

/// The kubelet's conditions, in the order the stand-in reports them.
pub fn kubelet_conditions(
    specs: &[ContainerSpec],
    statuses: &HashMap<&str, Value>,
    phase: &str,
    ended: bool,
) -> Vec<Cond> {
    let ready = containers_ready(specs, statuses, phase);
    vec![
        // The sandbox is gone once the pod ended.
        cond("PodReadyToStartContainers", !ended),
        initialized(specs, statuses, phase),
        Cond {
            kind: "Ready",
            ..ready.clone()
        },
        ready,
        cond("PodScheduled", true),
    ]
}

/// Renders conditions, keeping the lastTransitionTime of those whose status did not change,
/// followed by the conditions the kubelet does not own (e.g. a controller's).
pub fn render(old_status: &Value, conds: &[Cond], wall_now: &str) -> Vec<Value> {
    let olds: &[Value] = old_status
        .get("conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut out: Vec<Value> = conds
        .iter()
        .map(|c| {
            let status = if c.ok { "True" } else { "False" };
            let previous = olds
                .iter()
                .find(|o| o.get("type").and_then(Value::as_str) == Some(c.kind));
            let since = match previous {
                Some(p) if p.get("status").and_then(Value::as_str) == Some(status) => p
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or_else(|| json!(wall_now)),
                _ => json!(wall_now),
            };
            let mut v = json!({ "type": c.kind, "status": status, "lastProbeTime": null,
                                "lastTransitionTime": since });
            if let Some(r) = c.reason {
                v["reason"] = json!(r);
            }
            if let Some(m) = &c.message {
                v["message"] = json!(m);
            }
            v
        })
        .collect();
    out.extend(
        olds.iter()
            .filter(|o| {
                !conds
                    .iter()
                    .any(|c| o.get("type").and_then(Value::as_str) == Some(c.kind))
            })
            .cloned(),
    );
    out
}
