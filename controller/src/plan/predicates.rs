//! §5.6 predicates and §5.7 upgradability.

use super::context::{PodView, RecordedStatuses, SidecarSetContext};
use super::{hash, pod};
use k8s_openapi::api::core::v1::Pod;
use sidecarset_policy::annotations::{SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE};

/// §5.6 "pod updated": the pod's hash entry equals the SidecarSet hash.
pub(crate) fn is_updated(context: &SidecarSetContext, pod: &Pod) -> bool {
    hash::pod_hash_is(
        pod::annotation(pod, SIDECARSET_HASH),
        context.name,
        &context.hashes.hash,
    )
}

/// §5.6 state-consistent on `names`: digest images are compared with status imageIDs, anything
/// else falls back to "the kubelet has restarted the container on a new image".
pub(crate) fn is_state_consistent<N: AsRef<str>>(view: &PodView, names: &[N]) -> bool {
    let pod = view.pod;
    if pod::containers(pod).len() != pod::container_statuses(pod).len() {
        return false;
    }
    for container in pod::containers(pod) {
        if !names.iter().any(|n| n.as_ref() == container.name) {
            continue;
        }
        let image = pod::image(container);
        if !is_digest_image(image) {
            return is_update_completed(view, names);
        }
        let Some(status) = pod::container_status(pod, &container.name) else {
            return false;
        };
        if !images_equal(image, strip_image_id_scheme(&status.image_id)) {
            return false;
        }
    }
    true
}

/// IsSidecarContainerUpdateCompleted for this SidecarSet: no container among `names` still shows
/// the imageID recorded before its update while its spec image differs from the running one.
pub(crate) fn is_update_completed<N: AsRef<str>>(view: &PodView, names: &[N]) -> bool {
    let recorded = match &view.recorded {
        RecordedStatuses::NoAnnotation => return true,
        RecordedStatuses::Unparsable => return false,
        RecordedStatuses::Recorded(recorded) => recorded,
    };
    pod::container_statuses(view.pod).iter().all(|status| {
        if !names.iter().any(|n| n.as_ref() == status.name) {
            return true;
        }
        match recorded.get(&status.name) {
            Some(old) => {
                old.image_id != status.image_id
                    || pod::image_of(view.pod, &status.name) == status.image
            }
            None => true,
        }
    })
}

/// §5.6 sidecar-ready: every idle hot twin sits on the empty image, and the pod is Running+Ready.
pub(crate) fn is_sidecar_ready(context: &SidecarSetContext, view: &PodView) -> bool {
    let idle_on_empty = context
        .hot
        .iter()
        .zip(&view.hot_states)
        .all(|(hot, state)| {
            hot.empty_image.is_empty()
                || pod::container(view.pod, state.idle)
                    .is_none_or(|c| pod::image(c) == hot.empty_image)
        });
    idle_on_empty && pod::is_running_and_ready(view.pod)
}

/// §5.7 `IsSidecarSetUpgradable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upgradability {
    /// (true, true): goes to the wait list.
    Upgradable,
    /// (true, false): a previous upgrade is still in flight; skipped this round.
    InFlight,
    /// (false, _): something besides images changed; the pod must be recreated.
    NotUpgradable,
}

pub(crate) fn upgradability(context: &SidecarSetContext, view: &PodView) -> Upgradability {
    let pod = view.pod;
    // Most pods match, so no fast path: decode at once.
    let pod_without_image = hash::pod_hash_of(
        pod::annotation(pod, SIDECARSET_HASH_WITHOUT_IMAGE),
        context.name,
    );
    if pod_without_image != context.hashes.without_image.as_str() {
        return Upgradability::NotUpgradable;
    }
    let in_flight = context.sidecar_names.iter().any(|name| {
        pod::container_status(pod, name).is_some_and(|s| s.ready)
            && !is_state_consistent(view, std::slice::from_ref(name))
    });
    if in_flight {
        Upgradability::InFlight
    } else {
        Upgradability::Upgradable
    }
}

/// An image reference split as docker's (non-normalising) `reference.Parse` does.
#[derive(Debug, PartialEq, Eq)]
struct ImageReference<'a> {
    repository: &'a str,
    tag: &'a str,
    digest: &'a str,
}

fn parse_image(image: &str) -> Option<ImageReference<'_>> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) if is_valid_digest(digest) => (name, digest),
        Some(_) => return None,
        None => (image, ""),
    };
    let (repository, tag) = match name.rfind(':') {
        Some(colon) if !name[colon..].contains('/') => (&name[..colon], &name[colon + 1..]),
        _ => (name, ""),
    };
    let tag_ok = tag.is_empty()
        || (tag.len() <= 128
            && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')));
    (!repository.is_empty() && tag_ok).then_some(ImageReference {
        repository,
        tag,
        digest,
    })
}

/// `algorithm:hex` with at least 32 hex digits (the reference grammar's digest).
fn is_valid_digest(digest: &str) -> bool {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return false;
    };
    algorithm.starts_with(|c: char| c.is_ascii_alphabetic())
        && algorithm
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.'))
        && encoded.len() >= 32
        && encoded.chars().all(|c| c.is_ascii_hexdigit())
}

/// util.IsImageDigest.
pub(crate) fn is_digest_image(image: &str) -> bool {
    parse_image(image).is_some_and(|r| !r.digest.is_empty())
}

/// util.IsContainerImageEqual: by digest when both have one, else by repository and tag.
pub(crate) fn images_equal(a: &str, b: &str) -> bool {
    let (Some(a), Some(b)) = (parse_image(a), parse_image(b)) else {
        return false;
    };
    if !a.digest.is_empty() && !b.digest.is_empty() {
        a.repository == b.repository && a.digest == b.digest
    } else {
        a.repository == b.repository && a.tag == b.tag
    }
}

/// Status imageIDs may carry a runtime scheme such as `docker-pullable://`.
pub(crate) fn strip_image_id_scheme(image_id: &str) -> &str {
    image_id
        .split_once("://")
        .map_or(image_id, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d";

    #[test]
    fn image_references() {
        assert_eq!(
            parse_image("registry:5000/team/app:v2"),
            Some(ImageReference {
                repository: "registry:5000/team/app",
                tag: "v2",
                digest: ""
            })
        );
        assert_eq!(
            parse_image("registry:5000/team/app").map(|r| r.tag),
            Some("")
        );
        assert!(is_digest_image(&format!("docker.io/busybox@{DIGEST}")));
        assert!(!is_digest_image("busybox:1.36"));
        assert!(!is_digest_image("busybox@sha256:abc"));
        assert!(parse_image("").is_none());
    }

    #[test]
    fn image_equality() {
        let with_digest = format!("docker.io/busybox@{DIGEST}");
        let tagged_digest = format!("docker.io/busybox:1.0@{DIGEST}");
        assert!(images_equal(&with_digest, &tagged_digest));
        assert!(images_equal("nginx:1.0", "nginx:1.0"));
        assert!(!images_equal("nginx:1.0", "nginx:2.0"));
        assert!(!images_equal(&with_digest, "busybox:latest"));
        assert_eq!(
            strip_image_id_scheme(&format!("docker-pullable://docker.io/busybox@{DIGEST}")),
            with_digest
        );
    }
}
