//! `kubectl kustomize` renders the base and both overlays offline; every rendered object decodes,
//! each overlay installs the whole base plus its admission path, and release coordinates (image
//! tags, module URL) come from the one release component.

mod deploy_support;

use deploy_support::{deploy_dir, kustomize, object_key, typed, workspace_version};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn kinds(objects: &[Value]) -> BTreeSet<String> {
    objects.iter().map(|o| object_key(o).0).collect()
}

fn assert_all_typed(objects: &[Value], what: &str) {
    for object in objects {
        if let Err(e) = typed::check(object) {
            panic!("{what}: {:?}: {e}", object_key(object));
        }
    }
}

fn render(relative: &str) -> Vec<Value> {
    let objects = kustomize(&deploy_dir().join(relative));
    assert_all_typed(&objects, relative);
    objects
}

/// Every image and module reference in rendered output.
fn references(objects: &[Value]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for object in objects {
        if let Some(module) = object.pointer("/spec/module").and_then(Value::as_str) {
            out.insert(module.to_string());
        }
        let pod = object.pointer("/spec/template/spec");
        for list in ["containers", "initContainers"] {
            for container in pod
                .and_then(|p| p.get(list))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.insert(container["image"].as_str().unwrap_or("").to_string());
                for arg in container["args"].as_array().into_iter().flatten() {
                    if let Some(arg) = arg.as_str().filter(|a| a.starts_with("registry://")) {
                        out.insert(arg.to_string());
                    }
                }
            }
        }
    }
    out
}

#[test]
fn base_and_overlays_render() {
    let base = render(".");
    assert!(kinds(&base).contains("CustomResourceDefinition"));
    assert!(kinds(&base).contains("Deployment"));
    assert!(
        !kinds(&base).contains("ConfigMap"),
        "the release ConfigMap is local-config only"
    );
    const WEBHOOKS: [&str; 2] = [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ];
    const POLICIES: [&str; 1] = ["ClusterAdmissionPolicy"];
    for (overlay, must, must_not) in [
        ("overlays/kubewarden", &POLICIES[..], &WEBHOOKS[..]),
        ("overlays/standalone-webhook", &WEBHOOKS[..], &POLICIES[..]),
    ] {
        let objects = render(overlay);
        let present = kinds(&objects);
        assert!(
            must.iter().all(|k| present.contains(*k))
                && !must_not.iter().any(|k| present.contains(*k)),
            "{overlay}: {present:?}"
        );
        // The overlay installs the base unchanged.
        for object in &base {
            assert!(
                objects.contains(object),
                "{overlay} lacks or changes {:?}",
                object_key(object)
            );
        }
        assert!(
            !objects
                .iter()
                .any(|o| object_key(o).2 == "sidecarset-release"),
            "{overlay}: the release ConfigMap must not be applied"
        );
    }
}

#[test]
fn rendered_references_are_the_workspace_release() {
    let version = workspace_version();
    let expected: BTreeSet<String> = [
        format!("ghcr.io/sidecarset-kubewarden/sidecarset-controller:v{version}"),
        format!("ghcr.io/sidecarset-kubewarden/sidecarset-host:v{version}"),
        format!("registry://ghcr.io/sidecarset-kubewarden/policies/sidecarset:v{version}"),
    ]
    .into();
    let mut seen = BTreeSet::new();
    for overlay in ["overlays/kubewarden", "overlays/standalone-webhook"] {
        seen.extend(references(&render(overlay)));
    }
    assert_eq!(seen, expected);
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A scratch copy of deploy/, removed again even when the test panics.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn release_coordinates_are_set_in_one_place() {
    // Bump only components/release in a copy of deploy/: every rendered reference must follow.
    let scratch =
        Scratch(std::env::temp_dir().join(format!("sidecarset-deploy-{}", std::process::id())));
    let copy = &scratch.0;
    let _ = std::fs::remove_dir_all(copy);
    copy_tree(&deploy_dir(), copy);
    let version = workspace_version();
    for file in ["kustomization.yaml", "release.yaml"] {
        let path = copy.join("components/release").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace(&format!("v{version}"), "v9.8.7")).unwrap();
    }
    let mut seen = BTreeSet::new();
    for overlay in ["overlays/kubewarden", "overlays/standalone-webhook"] {
        seen.extend(references(&kustomize(&copy.join(overlay))));
    }
    let stale: Vec<_> = seen.iter().filter(|r| !r.ends_with(":v9.8.7")).collect();
    assert!(
        stale.is_empty(),
        "not driven by components/release: {stale:?}"
    );
    assert_eq!(seen.len(), 3, "{seen:?}");
}
