//! Pure computation of the status the simulated kubelet reports for one pod at one instant.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::meta;

/// Timing of the simulated kubelet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletConfig {
    /// From first sight of a pod to its containers running (phase Running).
    pub start_delay: Duration,
    /// From a container running to it being ready.
    pub ready_delay: Duration,
    /// From an image change in the spec to the container running the new image.
    pub restart_delay: Duration,
    /// From a deletionTimestamp to the kubelet confirming the deletion (grace period 0).
    pub delete_delay: Duration,
}

impl Default for KubeletConfig {
    /// Human-scale delays for a person running the binary by hand.
    fn default() -> Self {
        KubeletConfig {
            start_delay: Duration::from_millis(1000),
            ready_delay: Duration::from_millis(1000),
            restart_delay: Duration::from_millis(2000),
            delete_delay: Duration::from_millis(1000),
        }
    }
}

impl KubeletConfig {
    /// A few milliseconds everywhere, for tests.
    pub fn fast() -> Self {
        KubeletConfig {
            start_delay: Duration::from_millis(5),
            ready_delay: Duration::from_millis(5),
            restart_delay: Duration::from_millis(20),
            delete_delay: Duration::from_millis(5),
        }
    }
}

/// The imageID the simulator reports for an image: the digest of a digest reference, else a
/// sha256 of the image string: `docker-pullable://<repo>@sha256:<hex>`.
pub fn image_id(image: &str) -> String {
    if let Some((repo, digest)) = image.split_once('@') {
        return format!("docker-pullable://{}@{digest}", strip_tag(repo));
    }
    let hex: String = Sha256::digest(image.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("docker-pullable://{}@sha256:{hex}", strip_tag(image))
}

fn container_id(name: &str, image: &str, restarts: i64) -> String {
    let hex: String = Sha256::digest(format!("{name}/{image}/{restarts}").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("containerd://{hex}")
}

fn strip_tag(image: &str) -> &str {
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => &image[..slash + i],
        None => image,
    }
}

/// What the simulator remembers about one container.
#[derive(Debug, Clone)]
pub struct ContainerTrack {
    /// The image it is running or starting.
    pub image: String,
    /// The image it ran before the current restart.
    pub previous: Option<String>,
    /// When the current image was first seen.
    pub since: Instant,
    /// Restarts so far.
    pub restarts: i64,
    /// Wall-clock start time of the current run, fixed once running.
    pub started_at: Option<String>,
}

/// What the simulator remembers about one pod.
#[derive(Debug, Clone)]
pub struct PodTrack {
    /// First sight.
    pub seen: Instant,
    /// Wall-clock start time of the pod.
    pub start_time: Option<String>,
    /// Containers by `c/<name>` or `i/<name>`.
    pub containers: HashMap<String, ContainerTrack>,
    /// When a deletionTimestamp was first seen.
    pub deleting_since: Option<Instant>,
}

impl PodTrack {
    /// A pod seen for the first time at `now`.
    pub fn new(now: Instant) -> Self {
        PodTrack {
            seen: now,
            start_time: None,
            containers: HashMap::new(),
            deleting_since: None,
        }
    }
}

/// Result of one evaluation: the status to report (if the pod started) and the next instant worth a look.
pub struct Evaluation {
    /// The full status to write, or `None` while still pending.
    pub status: Option<Value>,
    /// Next transition time, if any.
    pub next: Option<Instant>,
}

fn earliest(a: Option<Instant>, b: Instant) -> Option<Instant> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn is_native_sidecar(c: &Value) -> bool {
    c.get("restartPolicy").and_then(Value::as_str) == Some("Always")
}

/// One container's status, updating its track.
fn container_status(
    c: &Value,
    track: &mut ContainerTrack,
    now: Instant,
    cfg: &KubeletConfig,
    never_ready: &HashSet<String>,
    next: &mut Option<Instant>,
) -> (Value, bool) {
    let name = c.get("name").and_then(Value::as_str).unwrap_or("");
    let spec_image = c.get("image").and_then(Value::as_str).unwrap_or("");
    if track.image != spec_image {
        track.previous = Some(std::mem::replace(&mut track.image, spec_image.to_string()));
        track.since = now;
        track.restarts += 1;
        track.started_at = None;
    }
    let running_at = if track.restarts > 0 {
        track.since + cfg.restart_delay
    } else {
        track.since
    };
    if now < running_at {
        *next = earliest(*next, running_at);
        let shown = track
            .previous
            .clone()
            .unwrap_or_else(|| track.image.clone());
        let status = json!({
            "name": name,
            "image": shown,
            "imageID": image_id(&shown),
            "ready": false,
            "started": false,
            "restartCount": track.restarts - 1,
            "state": { "waiting": { "reason": "ContainerCreating" } },
            "lastState": {},
        });
        return (status, false);
    }
    let started_at = track
        .started_at
        .get_or_insert_with(meta::now_rfc3339)
        .clone();
    let ready_at = running_at + cfg.ready_delay;
    let ready = now >= ready_at && !never_ready.contains(&track.image);
    if now < ready_at {
        *next = earliest(*next, ready_at);
    }
    let mut status = json!({
        "name": name,
        "image": track.image,
        "imageID": image_id(&track.image),
        "containerID": container_id(name, &track.image, track.restarts),
        "ready": ready,
        "started": true,
        "restartCount": track.restarts,
        "state": { "running": { "startedAt": started_at } },
        "lastState": {},
    });
    if track.restarts > 0 {
        status["lastState"] = json!({ "terminated": { "exitCode": 0, "reason": "Completed" } });
    }
    (status, ready)
}

fn condition(old: &Value, kind: &str, ok: bool, reason: Option<(&str, String)>) -> Value {
    let status = if ok { "True" } else { "False" };
    let previous = old
        .get("conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
        });
    let since = match previous {
        Some(p) if p.get("status").and_then(Value::as_str) == Some(status) => p
            .get("lastTransitionTime")
            .cloned()
            .unwrap_or_else(|| json!(meta::now_rfc3339())),
        _ => json!(meta::now_rfc3339()),
    };
    let mut c = json!({ "type": kind, "status": status, "lastProbeTime": null, "lastTransitionTime": since });
    if let (false, Some((r, m))) = (ok, reason) {
        c["reason"] = json!(r);
        c["message"] = json!(m);
    }
    c
}

fn pod_ip(uid: &str) -> String {
    let h = Sha256::digest(uid.as_bytes());
    format!("10.244.{}.{}", h[0], 2 + h[1] % 250)
}

/// Evaluates a pod at `now`: the status the kubelet reports and when to look again.
pub fn evaluate(
    pod: &Value,
    track: &mut PodTrack,
    now: Instant,
    cfg: &KubeletConfig,
    never_ready: &HashSet<String>,
) -> Evaluation {
    let start = track.seen + cfg.start_delay;
    if now < start {
        return Evaluation {
            status: None,
            next: Some(start),
        };
    }
    let mut next = None;
    let spec = pod.get("spec").cloned().unwrap_or(json!({}));
    let old = pod.get("status").cloned().unwrap_or(json!({}));
    let mut statuses = Vec::new();
    let mut unready = Vec::new();
    for c in spec
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let image = c
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let t = track
            .containers
            .entry(format!("c/{name}"))
            .or_insert_with(|| ContainerTrack {
                image,
                previous: None,
                since: start,
                restarts: 0,
                started_at: None,
            });
        let (s, ready) = container_status(c, t, now, cfg, never_ready, &mut next);
        if !ready {
            unready.push(name);
        }
        statuses.push(s);
    }
    let mut init_statuses = Vec::new();
    for c in spec
        .get("initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let image = c
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if is_native_sidecar(c) {
            let t = track
                .containers
                .entry(format!("i/{name}"))
                .or_insert_with(|| ContainerTrack {
                    image,
                    previous: None,
                    since: start,
                    restarts: 0,
                    started_at: None,
                });
            let (s, ready) = container_status(c, t, now, cfg, never_ready, &mut next);
            if !ready {
                unready.push(name);
            }
            init_statuses.push(s);
        } else {
            init_statuses.push(json!({
                "name": name,
                "image": image,
                "imageID": image_id(&image),
                "ready": true,
                "started": false,
                "restartCount": 0,
                "state": { "terminated": { "exitCode": 0, "reason": "Completed" } },
                "lastState": {},
            }));
        }
    }
    let all_ready = unready.is_empty();
    let why = Some((
        "ContainersNotReady",
        format!("containers with unready status: [{}]", unready.join(" ")),
    ));
    let mut conditions = vec![
        condition(&old, "PodReadyToStartContainers", true, None),
        condition(&old, "Initialized", true, None),
        condition(&old, "Ready", all_ready, why.clone()),
        condition(&old, "ContainersReady", all_ready, why),
        condition(&old, "PodScheduled", true, None),
    ];
    // Like the kubelet, keep the conditions it does not own (e.g. a controller's SidecarSetUpgradable).
    let owned: Vec<Value> = conditions.iter().map(|c| c["type"].clone()).collect();
    if let Some(others) = old.get("conditions").and_then(Value::as_array) {
        conditions.extend(
            others
                .iter()
                .filter(|c| !owned.contains(&c["type"]))
                .cloned(),
        );
    }
    let start_time = track
        .start_time
        .get_or_insert_with(|| {
            old.get("startTime")
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(meta::now_rfc3339)
        })
        .clone();
    let ip = pod_ip(meta::meta_str(pod, "uid"));
    let mut status: Map<String, Value> = old.as_object().cloned().unwrap_or_default();
    status.insert("phase".into(), json!("Running"));
    status.insert("conditions".into(), json!(conditions));
    status.insert("hostIP".into(), json!("10.0.0.1"));
    status.insert("hostIPs".into(), json!([{ "ip": "10.0.0.1" }]));
    status.insert("podIP".into(), json!(ip));
    status.insert("podIPs".into(), json!([{ "ip": ip }]));
    status.insert("startTime".into(), json!(start_time));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_ids() {
        assert!(image_id("nginx:1.25").starts_with("docker-pullable://nginx@sha256:"));
        assert!(image_id("reg:5000/a/b:1").starts_with("docker-pullable://reg:5000/a/b@sha256:"));
        assert_eq!(
            image_id("a/b@sha256:abc"),
            "docker-pullable://a/b@sha256:abc"
        );
        assert_ne!(image_id("nginx:1"), image_id("nginx:2"));
    }
}
