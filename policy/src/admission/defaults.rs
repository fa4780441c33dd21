//! The SidecarSet mutating webhook's defaults (§2.1 steps 1–8), applied in place on the JSON
//! object so that every field this code does not know survives untouched and the resulting
//! JSONPatch only adds or replaces defaulted content.
//!
//! Members that are `null` are treated as Go treats them (absent); members of the wrong JSON
//! type (which Go would fail to decode) are skipped, never replaced, and never cause a panic.

mod container;
mod image;
mod marshalled;
mod volumes;

pub use marshalled::add_marshalled_members;

use crate::annotations::{SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE};
use crate::hash;
use serde_json::{Map, Value, json};

/// Applies §2.1 to a SidecarSet object (any API version; the shapes are identical), then
/// (re)computes both hash annotations over the defaulted spec, overwriting existing values.
pub fn apply_defaults(sidecarset: &mut Value) {
    let Some(object) = sidecarset.as_object_mut() else {
        return;
    };
    if let Some(spec) = child_object(object, "spec", true) {
        spec_defaults(spec);
    }
    let hashes = hash::compute(object.get("spec").unwrap_or(&Value::Null));
    if let Some(metadata) = child_object(object, "metadata", true)
        && let Some(annotations) = child_object(metadata, "annotations", true)
    {
        annotations.insert(SIDECARSET_HASH.into(), Value::String(hashes.hash));
        annotations.insert(
            SIDECARSET_HASH_WITHOUT_IMAGE.into(),
            Value::String(hashes.without_image),
        );
    }
}

fn spec_defaults(spec: &mut Map<String, Value>) {
    if let Some(strategy) = child_object(spec, "updateStrategy", true) {
        default_string(strategy, "type", "RollingUpdate");
        default_ptr(strategy, "maxUnavailable", json!(1));
        default_ptr(strategy, "partition", json!(0));
    }
    each_object(spec, "initContainers", |c| {
        container::apply(c, "AfterAppContainer")
    });
    each_object(spec, "containers", |c| {
        container::apply(c, "BeforeAppContainer")
    });
    each_object(spec, "volumes", volumes::apply);
    default_ptr(spec, "revisionHistoryLimit", json!(10));
    each_object(spec, "patchPodMetadata", |p| {
        default_string(p, "patchPolicy", "Retain")
    });
    if let Some(injection) = child_object(spec, "injectionStrategy", false)
        && let Some(revision) = child_object(injection, "revision", false)
    {
        default_string(revision, "policy", "Always");
    }
}

/// The object member `key`. When it is absent or `null` and `create` is set (a Go struct value,
/// decoded as its zero value), it becomes `{}`. A member of another type gives `None`.
fn child_object<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
    create: bool,
) -> Option<&'a mut Map<String, Value>> {
    if create && matches!(parent.get(key), None | Some(Value::Null)) {
        parent.insert(key.to_string(), Value::Object(Map::new()));
    }
    parent.get_mut(key).and_then(Value::as_object_mut)
}

/// Calls `f` on every object element of the array member `key` (other elements are skipped).
fn each_object(
    parent: &mut Map<String, Value>,
    key: &str,
    mut f: impl FnMut(&mut Map<String, Value>),
) {
    if let Some(items) = parent.get_mut(key).and_then(Value::as_array_mut) {
        items
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(&mut f);
    }
}

/// A Go string field: absent, `null` or `""` becomes `value`.
fn default_string(parent: &mut Map<String, Value>, key: &str, value: &str) {
    let unset = match parent.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if unset {
        parent.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// A Go integer field: absent, `null` or `0` becomes `value`.
fn default_int(parent: &mut Map<String, Value>, key: &str, value: i64) {
    let unset = match parent.get(key) {
        None | Some(Value::Null) => true,
        Some(v) => v.as_i64() == Some(0),
    };
    if unset {
        parent.insert(key.to_string(), json!(value));
    }
}

/// A Go pointer field: absent or `null` (nil) becomes `value`.
fn default_ptr(parent: &mut Map<String, Value>, key: &str, value: Value) {
    if matches!(parent.get(key), None | Some(Value::Null)) {
        parent.insert(key.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(v: Value) -> Value {
        let mut v = v;
        apply_defaults(&mut v);
        v
    }

    fn annotation<'a>(v: &'a Value, key: &str) -> &'a str {
        v["metadata"]["annotations"][key]
            .as_str()
            .unwrap_or_default()
    }

    /// Conformance case 027: the dns-f vector of §4.
    #[test]
    fn dns_f_vector() {
        let got = defaulted(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "sidecarset-test", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"selector": {"matchLabels": {"app": "dns"}}, "containers": [{"name": "dns-f", "image": "dns:1.0"}]}
        }));
        assert_eq!(
            annotation(&got, SIDECARSET_HASH),
            "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
        );
        assert_eq!(
            annotation(&got, SIDECARSET_HASH_WITHOUT_IMAGE),
            "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
        );
        assert_eq!(
            annotation(&got, "kubectl.kubernetes.io/last-applied-configuration"),
            "{}"
        );
        assert_eq!(
            got["spec"],
            json!({
                "selector": {"matchLabels": {"app": "dns"}},
                "containers": [{
                    "name": "dns-f", "image": "dns:1.0", "imagePullPolicy": "IfNotPresent",
                    "podInjectPolicy": "BeforeAppContainer", "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
                    "shareVolumePolicy": {"type": "disabled"}, "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File"
                }],
                "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1, "partition": 0},
                "revisionHistoryLimit": 10
            })
        );
    }

    /// Conformance case 026: minimal SidecarSet with a plain init container.
    #[test]
    fn minimal_sidecarset_case_026() {
        let mount = |ro: bool| {
            let mut m = json!({"name": "app-logs", "mountPath": "/var/log/app"});
            if ro {
                m["readOnly"] = json!(true);
            }
            m
        };
        let got = defaulted(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "log-collector"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "initContainers": [{"name": "prepare-logdir", "image": "busybox:1.36",
                    "command": ["sh", "-c", "mkdir -p /var/log/app/archive"], "volumeMounts": [mount(false)]}],
                "containers": [
                    {"name": "log-shipper", "image": "busybox", "command": ["sh", "-c", "tail -F /var/log/app/access.log"],
                     "volumeMounts": [mount(true)]},
                    {"name": "log-rotator", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do sleep 3600; done"],
                     "volumeMounts": [mount(false)]},
                    {"name": "log-tail", "image": "busybox:latest", "command": ["tail", "-F", "/var/log/app/error.log"],
                     "volumeMounts": [mount(true)]}
                ],
                "volumes": [{"name": "app-logs", "emptyDir": {}}]
            }
        }));
        assert_eq!(
            annotation(&got, SIDECARSET_HASH),
            "44dzz49652c89z6654bw84d429d4x2d9d66dc8487zx6fcf88664f9625zcxbf8z"
        );
        assert_eq!(
            annotation(&got, SIDECARSET_HASH_WITHOUT_IMAGE),
            "49xfzcwbw74bfzfv22d7zb2xvf2bz7cxxxb5924v94z84v24fxxzcz78dvdv8bbv"
        );
        let pull: Vec<&str> = (0..3)
            .map(|i| {
                got["spec"]["containers"][i]["imagePullPolicy"]
                    .as_str()
                    .unwrap_or("")
            })
            .collect();
        assert_eq!(pull, ["Always", "IfNotPresent", "Always"]);
        assert_eq!(
            got["spec"]["initContainers"][0]["podInjectPolicy"],
            "AfterAppContainer"
        );
        assert_eq!(
            got["spec"]["initContainers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert!(
            got["spec"]["containers"][0]
                .get("shareVolumeDevicePolicy")
                .is_none()
        );
        assert!(got["spec"]["updateStrategy"].get("selector").is_none());
        assert_eq!(
            got["spec"]["volumes"],
            json!([{"name": "app-logs", "emptyDir": {}}])
        );
    }

    fn case_037_object(image: &str, annotation_values: (&str, &str)) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "log-collector", "annotations": {
                SIDECARSET_HASH: annotation_values.0, SIDECARSET_HASH_WITHOUT_IMAGE: annotation_values.1}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "updateStrategy": {"type": "RollingUpdate", "partition": 0, "maxUnavailable": 1},
                "containers": [{
                    "name": "log-shipper", "image": image, "command": ["sh", "-c", "tail -F /var/log/app/access.log"],
                    "volumeMounts": [{"name": "app-logs", "readOnly": true, "mountPath": "/var/log/app"}],
                    "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent", "podInjectPolicy": "BeforeAppContainer",
                    "upgradeStrategy": {"upgradeType": "ColdUpgrade"}, "shareVolumePolicy": {"type": "disabled"}
                }],
                "volumes": [{"name": "app-logs", "emptyDir": {}}],
                "revisionHistoryLimit": 10
            },
            "status": {"observedGeneration": 2, "matchedPods": 6}
        })
    }

    /// Conformance case 037: an image-only update rehashes `hash` but not `hash-without-image`.
    #[test]
    fn image_only_update_case_037() {
        let stale = (
            "7v442744w58zwfxw646c7fb6v49v94zfz5b7vv6zw4264w754bf465zfx4654zfb",
            "7d58d928d546x22v79fb5w64vv6d7x848f9d29xvxc8dxcvc49888f45wc8ccv5c",
        );
        let new = defaulted(case_037_object("busybox:1.37", stale));
        assert_eq!(
            annotation(&new, SIDECARSET_HASH),
            "cw6f45z4f9dbd2684945548w8vc2xvc977vfzv64dbzdc7d45w62v7z46wzd99fb"
        );
        assert_eq!(annotation(&new, SIDECARSET_HASH_WITHOUT_IMAGE), stale.1);
        let old = defaulted(case_037_object("busybox:1.36", ("", "")));
        assert_eq!(annotation(&old, SIDECARSET_HASH), stale.0);
        assert_eq!(annotation(&old, SIDECARSET_HASH_WITHOUT_IMAGE), stale.1);
        // Nothing but the two annotations changed: the object was already fully defaulted.
        let mut expected = case_037_object("busybox:1.37", stale);
        expected["metadata"]["annotations"][SIDECARSET_HASH] =
            json!(annotation(&new, SIDECARSET_HASH));
        assert_eq!(new, expected);
    }

    #[test]
    fn idempotent_and_preserves_unknown_fields() {
        let input = json!({
            "metadata": {"name": "x", "futureMeta": {"a": 1}},
            "spec": {
                "futureSpecField": [1, 2],
                "containers": [{"name": "c", "image": "nginx", "futureContainerField": {"k": "v"},
                    "resources": {"limits": {"cpu": "0.0001"}},
                    "readinessProbe": {"httpGet": {"port": 80}}}],
                "initContainers": [{"name": "i", "image": "busybox:1", "restartPolicy": "Always"}],
                "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "s"}}],
                "patchPodMetadata": [{"annotations": {"a": "b"}}],
                "injectionStrategy": {"revision": {"revisionName": "r"}}
            }
        });
        let once = defaulted(input);
        let twice = defaulted(once.clone());
        assert_eq!(once, twice);
        assert_eq!(once["metadata"]["futureMeta"], json!({"a": 1}));
        assert_eq!(once["spec"]["futureSpecField"], json!([1, 2]));
        assert_eq!(
            once["spec"]["containers"][0]["futureContainerField"],
            json!({"k": "v"})
        );
        assert_eq!(
            once["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            "1m"
        );
        assert_eq!(
            once["spec"]["initContainers"][0]["podInjectPolicy"],
            "AfterAppContainer"
        );
        assert_eq!(once["spec"]["volumes"][0]["emptyDir"], json!({}));
        assert_eq!(once["spec"]["volumes"][1]["secret"]["defaultMode"], 420);
        assert_eq!(once["spec"]["patchPodMetadata"][0]["patchPolicy"], "Retain");
        assert_eq!(
            once["spec"]["injectionStrategy"]["revision"]["policy"],
            "Always"
        );
        assert_eq!(annotation(&once, SIDECARSET_HASH).len(), 64);
    }

    #[test]
    fn user_edited_hash_is_overwritten() {
        let got = defaulted(
            json!({"metadata": {"annotations": {SIDECARSET_HASH: "mine"}}, "spec": {"containers": []}}),
        );
        assert_ne!(annotation(&got, SIDECARSET_HASH), "mine");
    }

    #[test]
    fn never_panics_on_odd_shapes() {
        for v in [
            json!(null),
            json!([]),
            json!("x"),
            json!({}),
            json!({"spec": null}),
            json!({"spec": 3}),
            json!({"metadata": 1, "spec": {"containers": [null, 1, []]}}),
            json!({"metadata": {"annotations": []}, "spec": {"updateStrategy": 1, "volumes": {"a": 1}}}),
            json!({"spec": {"injectionStrategy": {"revision": null}, "patchPodMetadata": [null, 1],
                "revisionHistoryLimit": "x", "initContainers": {"a": 1}}}),
        ] {
            let mut v = v;
            apply_defaults(&mut v);
        }
        let got = defaulted(json!({}));
        assert_eq!(got["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(annotation(&got, SIDECARSET_HASH).len(), 64);
    }
}
