//! Pure computation of the status the simulated kubelet reports for one pod at one instant:
//! a function of the pod, what the kubelet tracked, the sources it reads and `now`.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::config::KubeletConfig;
use super::lifecycle::{Ctx, advance};
use super::render::{View, container_status};
use super::sources::Sources;
use super::spec::{Kind, RestartPolicy, containers};
use super::track::PodTrack;
use super::{conditions, phase};
use crate::meta;

/// What an evaluation reads besides the pod and its track.
pub struct Inputs<'a> {
    /// The delays.
    pub cfg: &'a KubeletConfig,
    /// Images whose containers never become ready.
    pub never_ready: &'a HashSet<String>,
    /// The ConfigMaps and Secrets the pod refers to, as the store has them.
    pub sources: &'a Sources,
}

/// Result of one evaluation: the status to report (if the pod started) and the next instant worth a look.
pub struct Evaluation {
    /// The full status to write, or `None` while still pending.
    pub status: Option<Value>,
    /// Next transition time, if any.
    pub next: Option<Instant>,
}

fn pod_ip(uid: &str) -> String {
    let h = Sha256::digest(uid.as_bytes());
    format!("10.244.{}.{}", h[0], 2 + h[1] % 250)
}

/// Evaluates a pod at `now`: the status the kubelet reports and when to look again.
pub fn evaluate(pod: &Value, track: &mut PodTrack, now: Instant, inputs: &Inputs) -> Evaluation {
    let start = track.seen + inputs.cfg.start_delay;
    if now < start {
        return Evaluation {
            status: None,
            next: Some(start),
        };
    }
    let specs = containers(pod);
    let ctx = Ctx {
        cfg: inputs.cfg,
        policy: RestartPolicy::of(pod),
        specs: &specs,
        namespace: meta::namespace(pod),
        sources: inputs.sources,
    };
    let mut next = advance(track, &ctx, now);
    let view = View {
        ctx: &ctx,
        pod: track,
        never_ready: inputs.never_ready,
        has_init: specs.iter().any(|s| s.kind != Kind::App),
        pod_ref: format!(
            "{}_{}({})",
            meta::name(pod),
            meta::namespace(pod),
            meta::meta_str(pod, "uid")
        ),
        now,
    };
    let mut by_name: HashMap<&str, Value> = HashMap::new();
    let (mut init_statuses, mut statuses) = (Vec::new(), Vec::new());
    for s in &specs {
        let Some(ct) = track.containers.get(&s.key()) else {
            continue;
        };
        let v = container_status(s, ct, &view, &mut next);
        by_name.insert(s.name, v.clone());
        if s.kind == Kind::App {
            statuses.push(v);
        } else {
            init_statuses.push(v);
        }
    }
    let phase = phase::phase(&specs, ctx.policy, &by_name);
    let conds = conditions::kubelet_conditions(&specs, &by_name, phase, track.ended.is_some());
    let old = pod.get("status").cloned().unwrap_or(json!({}));
    let conditions = conditions::render(&old, &conds, &track.wall(now));
    let start_time = old
        .get("startTime")
        .cloned()
        .unwrap_or_else(|| json!(track.wall(track.seen)));
    let ip = pod_ip(meta::meta_str(pod, "uid"));
    let mut status: Map<String, Value> = old.as_object().cloned().unwrap_or_default();
    status.insert("phase".into(), json!(phase));
    status.insert("conditions".into(), json!(conditions));
    status.insert("hostIP".into(), json!("10.0.0.1"));
    status.insert("hostIPs".into(), json!([{ "ip": "10.0.0.1" }]));
    status.insert("podIP".into(), json!(ip));
    status.insert("podIPs".into(), json!([{ "ip": ip }]));
    status.insert("startTime".into(), start_time);
    status.insert("containerStatuses".into(), json!(statuses));
    if init_statuses.is_empty() {
        status.remove("initContainerStatuses");
    } else {
        status.insert("initContainerStatuses".into(), json!(init_statuses));
    }
    Evaluation {
        status: Some(Value::Object(status)),
        next,
    }
}
