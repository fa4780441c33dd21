//! One container's status as the kubelet reports it, from its track.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::lifecycle::Ctx;
use super::spec::{ContainerSpec, Kind};
use super::track::{ContainerTrack, Exit, PodTrack, State, Wait};

/// The imageID the simulator reports for an image: the digest of a digest reference, else a
/// sha256 of the image string: `docker-pullable://<repo>@sha256:<hex>`.
pub fn image_id(image: &str) -> String {
    if let Some((repo, digest)) = image.split_once('@') {
        return format!("docker-pullable://{}@{digest}", strip_tag(repo));
    }
    format!(
        "docker-pullable://{}@sha256:{}",
        strip_tag(image),
        hex(image)
    )
}

fn hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn container_id(name: &str, image: &str, run: i64) -> String {
    format!("containerd://{}", hex(&format!("{name}/{image}/{run}")))
}

fn strip_tag(image: &str) -> &str {
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => &image[..slash + i],
        None => image,
    }
}

/// A duration as Go prints it, for the common cases (`20ms`, `1.5s`, `10s`).
fn go_duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// What rendering needs besides the container.
pub struct View<'a> {
    /// The lifecycle's context (delays).
    pub ctx: &'a Ctx<'a>,
    /// The pod's track (for wall-clock times).
    pub pod: &'a PodTrack,
    /// Images whose containers never become ready.
    pub never_ready: &'a HashSet<String>,
    /// The pod has init containers: containers not created yet wait with PodInitializing.
    pub has_init: bool,
    /// The pod as `format.Pod` writes it: `name_namespace(uid)`.
    pub pod_ref: String,
    /// The instant evaluated.
    pub now: Instant,
}

fn terminated(exit: &Exit, name: &str, view: &View) -> Value {
    json!({
        "exitCode": exit.code,
        "reason": if exit.code == 0 { "Completed" } else { "Error" },
        "startedAt": view.pod.wall(exit.started),
        "finishedAt": view.pod.wall(exit.finished),
        "containerID": container_id(name, &exit.image, exit.run),
    })
}

fn later(next: &mut Option<Instant>, at: Instant, now: Instant) {
    if at > now {
        *next = Some(next.map_or(at, |n| n.min(at)));
    }
}

/// The status of one container; `next` gets the next instant its readiness changes.
pub fn container_status(
    s: &ContainerSpec,
    ct: &ContainerTrack,
    view: &View,
    next: &mut Option<Instant>,
) -> Value {
    let name = s.name;
    let now = view.now;
    let mut status = json!({
        "name": name,
        "image": s.image,
        "imageID": "",
        "ready": false,
        "started": false,
        "restartCount": ct.restart_count(),
        "lastState": {},
    });
    if let Some(last) = &ct.last {
        status["lastState"] = json!({ "terminated": terminated(last, name, view) });
        // Until it runs again, the container shown is the last one.
        status["image"] = json!(last.image);
        status["imageID"] = json!(image_id(&last.image));
        status["containerID"] = json!(container_id(name, &last.image, last.run));
    }
    let waiting = |reason: &str| json!({ "waiting": { "reason": reason } });
    status["state"] = match &ct.state {
        State::Blocked
        | State::Waiting {
            wait: Wait::Create, ..
        } => waiting(if view.has_init {
            "PodInitializing"
        } else {
            "ContainerCreating"
        }),
        State::Waiting {
            wait: Wait::Restart,
            ..
        } => waiting("ContainerCreating"),
        State::Waiting {
            wait: Wait::BackOff,
            ..
        } => json!({ "waiting": {
            "reason": "CrashLoopBackOff",
            "message": format!("back-off {} restarting failed container={name} pod={}",
                go_duration(view.ctx.cfg.restart_delay), view.pod_ref),
        }}),
        State::Waiting {
            wait: Wait::ConfigError { message, .. },
            ..
        } => json!({ "waiting": { "reason": "CreateContainerConfigError", "message": message } }),
        State::Running { since, image } => {
            let started_at = *since + view.ctx.startup(s);
            let ready_at = *since + view.ctx.cfg.ready_delay;
            let started = now >= started_at;
            later(next, started_at, now);
            // A regular init container is ready only once it completed.
            let ready = s.kind != Kind::Init
                && started
                && now >= ready_at
                && !view.never_ready.contains(image);
            if s.kind != Kind::Init {
                later(next, ready_at, now);
            }
            status["image"] = json!(image);
            status["imageID"] = json!(image_id(image));
            status["containerID"] = json!(container_id(name, image, ct.restart_count()));
            status["started"] = json!(started);
            status["ready"] = json!(ready);
            json!({ "running": { "startedAt": view.pod.wall(*since) } })
        }
        State::Terminated(exit) => {
            status["image"] = json!(exit.image);
            status["imageID"] = json!(image_id(&exit.image));
            status["containerID"] = json!(container_id(name, &exit.image, exit.run));
            status["ready"] = json!(s.kind == Kind::Init && exit.code == 0);
            json!({ "terminated": terminated(exit, name, view) })
        }
    };
    status
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

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(Duration::from_millis(20)), "20ms");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
    }
}
