//! Volumes, mounts, devices and env taken from the app containers (§3.7.1–§3.7.5):
//! §6.1 cases 10, 11, 17, 18 and §6.3 cases 23, 24, 25, 29.

use super::*;
use crate::api::{ObjectFieldSelector, SourceContainerNameSource, TransferEnvVar};
use crate::inject::build::{PodView, build_sidecars};
use crate::inject::share::{shared_devices, transfer_envs, transfer_source};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn env_pairs(items: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), Some(b.to_string())))
        .collect()
}

/// §6.1 case 10 (TestPodVolumeMountsAppend): podWithStaragent + sidecarSetWithStaragent reduced
/// to container `dns-f`; app mounts are shared into both sidecars, own paths win.
#[test]
fn pod_volume_mounts_append() {
    let mut sidecarset = sidecarset_with_staragent();
    sidecarset["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    let expansion = |sub_path_expr: Option<&str>| {
        let mut pod = pod_with_staragent();
        let mut mount = json!({"name": "volume-expansion", "mountPath": "/e/expansion"});
        if let Some(expr) = sub_path_expr {
            mount["subPathExpr"] = json!(expr);
        }
        let nginx = &mut pod["spec"]["containers"][0];
        nginx["volumeMounts"].as_array_mut().unwrap().push(mount);
        pod
    };
    let mut with_envs = expansion(Some("foo/$(POD_NAME)/$(OD_NAME)/conf"));
    let envs = with_envs["spec"]["containers"][0]["env"]
        .as_array_mut()
        .unwrap();
    envs.push(json!({"name": "POD_NAME", "value": "bar"}));
    envs.push(json!({"name": "OD_NAME", "value": "od_name"}));

    let cases = [
        ("normal", pod_with_staragent(), false, false),
        ("subPathExpr with expansion", with_envs, true, true),
        (
            "subPathExpr without expansion",
            expansion(Some("foo")),
            true,
            false,
        ),
        ("empty subPathExpr", expansion(Some("")), true, false),
    ];
    for (name, mut pod, expanded, copied_envs) in cases {
        assert!(run(&mut pod, &[sidecarset.clone()]).unwrap(), "{name}");
        assert_eq!(names(&pod, "initContainers"), ["dns-e"], "{name}");
        assert_eq!(names(&pod, "containers"), ["nginx", "dns-f"], "{name}");

        let mut init_mounts = vec![
            ("volume-3", "/g/h/i"),
            ("volume-4", "/j/k/l"),
            ("volume-staragent", "/staragent"),
            ("volume-a", "/a/b"),
            ("volume-b", "/e/f"),
        ];
        let mut mounts = vec![
            ("volume-1", "/a/b/c"),
            ("volume-2", "/d/e/f"),
            ("volume-staragent", "/staragent"),
            ("volume-a", "/a/b"),
            ("volume-b", "/e/f"),
        ];
        if expanded {
            init_mounts.push(("volume-expansion", "/e/expansion"));
            mounts.push(("volume-expansion", "/e/expansion"));
        }
        let init = container(&pod, "initContainers", 0);
        let sidecar = container(&pod, "containers", 1);
        assert_eq!(paths(init, "volumeMounts"), pairs(&init_mounts), "{name}");
        assert_eq!(paths(sidecar, "volumeMounts"), pairs(&mounts), "{name}");
        if expanded {
            let shared = sidecar["volumeMounts"][5].clone();
            let original = pod["spec"]["containers"][0]["volumeMounts"][3].clone();
            assert_eq!(shared, original, "{name}: shared mounts are copied as-is");
        }

        let mut expected_env = vec![("IS_INJECTED", "true")];
        if copied_envs {
            expected_env.extend([("POD_NAME", "bar"), ("OD_NAME", "od_name")]);
        }
        assert_eq!(env(init), env_pairs(&expected_env), "{name}");
        assert_eq!(env(sidecar), env_pairs(&expected_env), "{name}");
        assert_eq!(
            names(&pod, "volumes"),
            [
                "volume-a",
                "volume-b",
                "volume-staragent",
                "volume-3",
                "volume-4",
                "volume-1",
                "volume-2"
            ],
            "{name}"
        );
    }
}

/// §6.1 case 11 (TestSidecarSetTransferEnv).
#[test]
fn sidecarset_transfer_env() {
    let mut sidecarset = sidecarset2();
    sidecarset["spec"]["initContainers"][0]["podInjectPolicy"] = json!("");
    let mut pod = pod1();
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    assert_eq!(names(&pod, "initContainers"), ["init-0", "dns-e"]);
    assert_eq!(names(&pod, "containers"), ["dns-f", "nginx"]);
    let expected = env_pairs(&[("IS_INJECTED", "true"), ("hello2", "world2")]);
    assert_eq!(env(container(&pod, "initContainers", 1)), expected);
    assert_eq!(env(container(&pod, "containers", 0)), expected);
}

/// Env order of an injected container: own env, IS_INJECTED (even if already there), then the
/// transferred ones whose names are not taken.
#[test]
fn transferred_env_follows_own_env_and_is_injected() {
    let mut sidecarset = sidecarset2();
    sidecarset["spec"]["containers"][0]["env"] = json!([
        {"name": "own", "value": "1"},
        {"name": "IS_INJECTED", "value": "false"}
    ]);
    sidecarset["spec"]["containers"][0]["transferEnv"] = json!([
        {"sourceContainerName": "nginx", "envName": "own"},
        {"sourceContainerName": "nginx", "envNames": ["hello2", "hello1", "hello2"]}
    ]);
    let mut pod = pod1();
    pod["spec"]["containers"][0]["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "own", "value": "from-nginx"}));
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    assert_eq!(
        env(container(&pod, "containers", 0)),
        env_pairs(&[
            ("own", "1"),
            ("IS_INJECTED", "false"),
            ("IS_INJECTED", "true"),
            ("hello1", "world1"),
            ("hello2", "world2"),
        ])
    );
}

/// podWithStaragent whose nginx also has two block devices (§6.1 case 17).
fn pod_with_devices() -> Value {
    let mut pod = pod_with_staragent();
    pod["spec"]["containers"][0]["volumeDevices"] = json!([
        {"name": "origin-pvc-1", "devicePath": "/origin-1"},
        {"name": "origin-pvc-share", "devicePath": "/share"}
    ]);
    let volumes = pod["spec"]["volumes"].as_array_mut().unwrap();
    volumes.push(json!({"name": "origin-pvc-1"}));
    volumes.push(json!({"name": "origin-pvc-share"}));
    pod
}

/// §6.1 case 17 (TestPodVolumeDevicesAppend).
#[test]
fn pod_volume_devices_append() {
    // a. no shareVolumeDevicePolicy: only the sidecars' own devices.
    let mut sidecarset = sidecarset_with_staragent();
    sidecarset["spec"]["initContainers"] = json!([{
        "name": "dns-e",
        "image": "dns-e-image:1.0",
        "volumeDevices": [{"name": "disk0", "devicePath": "/dev/nvme0"}],
        "podInjectPolicy": "BeforeAppContainer"
    }]);
    let dns_f = &mut sidecarset["spec"]["containers"][0];
    dns_f
        .as_object_mut()
        .unwrap()
        .remove("volumeMounts")
        .unwrap();
    dns_f["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme1"}]);
    sidecarset["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    sidecarset["spec"]["volumes"] = json!([{"name": "disk0"}]);
    let mut pod = pod_with_devices();
    assert!(run(&mut pod, &[sidecarset.clone()]).unwrap());
    assert_eq!(names(&pod, "containers"), ["nginx", "dns-f"]);
    assert_eq!(
        paths(container(&pod, "initContainers", 0), "volumeDevices"),
        pairs(&[("disk0", "/dev/nvme0")])
    );
    assert_eq!(
        paths(container(&pod, "containers", 1), "volumeDevices"),
        pairs(&[("disk0", "/dev/nvme1")])
    );
    assert_eq!(
        names(&pod, "volumes"),
        [
            "volume-a",
            "volume-b",
            "volume-staragent",
            "origin-pvc-1",
            "origin-pvc-share",
            "disk0"
        ]
    );

    // b. shareVolumeDevicePolicy enabled on both; the init container keeps its 3 mounts.
    let original = sidecarset_with_staragent();
    let mut init = original["spec"]["initContainers"][0].clone();
    init["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme0"}]);
    init["shareVolumeDevicePolicy"] = json!({"type": "enabled"});
    sidecarset["spec"]["initContainers"] = json!([init]);
    sidecarset["spec"]["containers"][0]["shareVolumeDevicePolicy"] = json!({"type": "enabled"});
    sidecarset["spec"]["volumes"] = json!([
        {"name": "volume-3"},
        {"name": "volume-4"},
        {"name": "volume-staragent"},
        {"name": "disk0"}
    ]);
    let mut pod = pod_with_devices();
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    assert_eq!(
        paths(container(&pod, "initContainers", 0), "volumeDevices"),
        pairs(&[
            ("disk0", "/dev/nvme0"),
            ("origin-pvc-1", "/origin-1"),
            ("origin-pvc-share", "/share")
        ])
    );
    assert_eq!(
        paths(container(&pod, "containers", 1), "volumeDevices"),
        pairs(&[
            ("disk0", "/dev/nvme1"),
            ("origin-pvc-1", "/origin-1"),
            ("origin-pvc-share", "/share")
        ])
    );
    // The SidecarSet's volume-staragent is dropped: the pod already has that volume.
    assert_eq!(
        names(&pod, "volumes"),
        [
            "volume-a",
            "volume-b",
            "volume-staragent",
            "origin-pvc-1",
            "origin-pvc-share",
            "volume-3",
            "volume-4",
            "disk0"
        ]
    );
}

/// §3.7.5: a shared device whose path is already used by a (shared) mount or own device is
/// dropped, first wins.
#[test]
fn shared_devices_skip_used_paths() {
    let mut pod = pod_with_devices();
    pod["spec"]["containers"][0]["volumeDevices"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "collides", "devicePath": "/e/f"}));
    let sidecarset = json!({
        "metadata": {"name": "devices"},
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "containers": [{
                "name": "sidecar",
                "image": "sidecar:1",
                "volumeDevices": [{"name": "own", "devicePath": "/share"}],
                "shareVolumePolicy": {"type": "enabled"},
                "shareVolumeDevicePolicy": {"type": "enabled"}
            }]
        }
    });
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    let sidecar = container(&pod, "containers", 1);
    assert_eq!(
        paths(sidecar, "volumeDevices"),
        pairs(&[("own", "/share"), ("origin-pvc-1", "/origin-1")])
    );
}

/// §6.1 case 18 (TestBuildSidecarVolumes_WithDifferentVolumeScenarios): the volumes
/// buildSidecars returns for pod1 and one SidecarSet.
#[test]
fn build_sidecar_volumes_with_different_volume_scenarios() {
    let build_volumes = |sidecarset: &Value| {
        let pod = pod1();
        let labels = pod_labels(&pod);
        let annotations = pod_annotations(&pod);
        let view = PodView {
            init_containers: &[],
            containers: pod["spec"]["containers"].as_array().unwrap(),
            labels: &labels,
            annotations: &annotations,
        };
        let sidecarset = decode(sidecarset);
        let built =
            build_sidecars(view, vec![std::borrow::Cow::Borrowed(&sidecarset)], NOW).unwrap();
        let volumes = json!({"spec": {"volumes": built.volumes}});
        names(&volumes, "volumes")
    };

    let mut sidecarset = sidecarset_with_staragent();
    sidecarset["spec"]["initContainers"] = json!([{
        "name": "dns-e",
        "image": "dns-e-image:1.0",
        "volumeMounts": [
            {"name": "volume-1", "mountPath": "/v1"},
            {"name": "volume-2", "mountPath": "/v2"}
        ],
        "volumeDevices": [{"name": "disk0", "devicePath": "/dev/nvme0"}]
    }]);
    sidecarset["spec"]["containers"][0]["volumeMounts"] = json!([
        {"name": "volume-3", "mountPath": "/v3"},
        {"name": "volume-4", "mountPath": "/v4"}
    ]);
    sidecarset["spec"]["containers"][0]["volumeDevices"] =
        json!([{"name": "disk1", "devicePath": "/dev/nvme1"}]);

    // a. declared volumes named differently from every mount and device.
    sidecarset["spec"]["volumes"] = json!([{"name": "other-1"}, {"name": "other-2"}]);
    assert!(build_volumes(&sidecarset).is_empty());

    // b. all declared (in another order): init container first, own mounts before own devices.
    sidecarset["spec"]["volumes"] = json!([
        {"name": "disk1"},
        {"name": "volume-4"},
        {"name": "volume-3"},
        {"name": "disk0"},
        {"name": "volume-2"},
        {"name": "volume-1"}
    ]);
    assert_eq!(
        build_volumes(&sidecarset),
        [
            "volume-1", "volume-2", "disk0", "volume-3", "volume-4", "disk1"
        ]
    );
}

fn pod_labels(pod: &Value) -> Labels {
    crate::inject::pod::labels(pod)
}

fn field_ref(api_version: &str, field_path: &str) -> TransferEnvVar {
    TransferEnvVar {
        source_container_name_from: Some(SourceContainerNameSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: api_version.into(),
                field_path: field_path.into(),
            }),
        }),
        env_name: "test-env".into(),
        ..TransferEnvVar::default()
    }
}

/// §6.3 case 23 (TestConvertDownwardAPIFieldLabel), as the injection side uses it: a source
/// container fieldRef other than a subscripted annotation/label is an error, which skips the
/// transferEnv item. The apiVersion plays no part here, as in upstream's injection (SidecarSet
/// admission rejects a non-`v1` one, rule 11).
#[test]
fn convert_downward_api_field_label() {
    let labels = labels(&[("myLabelKey", "myLabelValue")]);
    let annotations = super::labels(&[("myAnnoKey", "myAnnoValue")]);
    let source = |version: &str, path: &str| {
        transfer_source(&field_ref(version, path), &labels, &annotations)
    };
    assert_eq!(
        source("v2", "metadata.labels['myLabelKey']").as_deref(),
        Some("myLabelValue")
    );
    // The key must be a qualified name (an annotation key lower-cased first).
    assert_eq!(source("v1", "metadata.labels['bad key']"), None);
    assert_eq!(source("v1", "metadata.annotations['bad key']"), None);
    assert_eq!(
        source("v1", "metadata.annotations['MyAnnoKey']").as_deref(),
        Some("")
    );
    assert_eq!(source("v1", "invalid-label"), None);
    assert_eq!(source("v1", "metadata.name"), None);
    assert_eq!(source("v1", "metadata.annotations"), None);
    assert_eq!(source("v1", "metadata.labels"), None);
    assert_eq!(source("v1", "metadata.uid['x']"), None);
    assert_eq!(
        source("v1", "metadata.annotations['myAnnoKey']").as_deref(),
        Some("myAnnoValue")
    );
    assert_eq!(
        source("v1", "metadata.labels['myLabelKey']").as_deref(),
        Some("myLabelValue")
    );
    // An unset apiVersion is the API server's default, v1.
    assert_eq!(
        source("", "metadata.labels['myLabelKey']").as_deref(),
        Some("myLabelValue")
    );
}

/// §6.3 case 24 (TestExtractContainerNameFromFieldPath).
#[test]
fn extract_container_name_from_field_path() {
    let pod_labels = labels(&[("test-label", "label-value")]);
    let annotations = labels(&[("test-anno", "anno-value")]);
    let source = |path: &str| transfer_source(&field_ref("v1", path), &pod_labels, &annotations);
    assert_eq!(
        source("metadata.labels['test-label']").as_deref(),
        Some("label-value")
    );
    assert_eq!(source("metadata.labels['absent']").as_deref(), Some(""));
    assert_eq!(
        source("metadata.annotations['test-anno']").as_deref(),
        Some("anno-value")
    );
}

/// §6.3 case 25 (TestGetSidecarTransferEnvs); of a name defined twice, the last (upstream's
/// `container/env` index).
#[test]
fn get_sidecar_transfer_envs() {
    let pod_containers = [json!({
        "name": "main",
        "env": [{"name": "test-env", "value": "first"}, {"name": "other", "value": "o"},
                {"name": "test-env", "value": "test-value"}]
    })];
    let by_name = TransferEnvVar {
        source_container_name: "main".into(),
        env_name: "test-env".into(),
        ..TransferEnvVar::default()
    };
    let cases = [
        ("sourceContainerName", by_name, Labels::new(), Labels::new()),
        (
            "from label",
            field_ref("v1", "metadata.labels['app']"),
            labels(&[("app", "main")]),
            Labels::new(),
        ),
        (
            "from annotation",
            field_ref("v1", "metadata.annotations['app']"),
            Labels::new(),
            labels(&[("app", "main")]),
        ),
    ];
    for (name, transfer, pod_labels, annotations) in cases {
        let sidecar = crate::api::SidecarContainer {
            name: "sidecar".into(),
            transfer_env: vec![transfer],
            ..Default::default()
        };
        let envs = transfer_envs(&sidecar, &pod_containers, &pod_labels, &annotations);
        assert_eq!(
            envs,
            [json!({"name": "test-env", "value": "test-value"})],
            "{name}"
        );
    }
}

/// §6.3 case 29 (TestGetInjectedVolumeDevices).
#[test]
fn get_injected_volume_devices() {
    let pod_containers = [
        json!({"name": "c1", "volumeDevices": [{"name": "vd-1", "devicePath": "/dev/vd-1"}]}),
        json!({"name": "c2", "volumeDevices": [{"name": "vd-2", "devicePath": "/dev/vd-2"}]}),
        json!({
            "name": "injected",
            "env": [{"name": "IS_INJECTED", "value": "true"}],
            "volumeDevices": [{"name": "vd-3", "devicePath": "/dev/vd-3"}]
        }),
    ];
    assert_eq!(
        shared_devices(&pod_containers),
        [
            json!({"name": "vd-1", "devicePath": "/dev/vd-1"}),
            json!({"name": "vd-2", "devicePath": "/dev/vd-2"})
        ]
    );

    // Upstream reads the first IS_INJECTED entry only: a later "true" does not make a sidecar.
    let first_says_false = [json!({
        "name": "app",
        "env": [{"name": "IS_INJECTED", "value": "false"}, {"name": "IS_INJECTED", "value": "true"}],
        "volumeDevices": [{"name": "vd", "devicePath": "/dev/vd"}]
    })];
    assert_eq!(shared_devices(&first_says_false).len(), 1);
    let first_says_true = [json!({
        "name": "sidecar",
        "env": [{"name": "IS_INJECTED", "value": "true"}, {"name": "IS_INJECTED", "value": "false"}],
        "volumeDevices": [{"name": "vd", "devicePath": "/dev/vd"}]
    })];
    assert!(shared_devices(&first_says_true).is_empty());

    // Through injection: no policy (or disabled) → no shared devices; enabled → vd-1, vd-2.
    let pod = json!({
        "metadata": {"namespace": "default", "labels": {"app": "suxing-test"}},
        "spec": {"containers": pod_containers}
    });
    let sidecarset = |policy: Option<&str>| {
        let mut sidecar = json!({"name": "sidecar", "image": "sidecar:1"});
        if let Some(policy) = policy {
            sidecar["shareVolumeDevicePolicy"] = json!({"type": policy});
        }
        json!({
            "metadata": {"name": "devices"},
            "spec": {"selector": {"matchLabels": {"app": "suxing-test"}}, "containers": [sidecar]}
        })
    };
    for (policy, expected) in [
        (None, vec![]),
        (Some("disabled"), vec![]),
        (
            Some("enabled"),
            pairs(&[("vd-1", "/dev/vd-1"), ("vd-2", "/dev/vd-2")]),
        ),
    ] {
        let mut pod = pod.clone();
        assert!(run(&mut pod, &[sidecarset(policy)]).unwrap());
        assert_eq!(
            names(&pod, "containers"),
            ["c1", "c2", "injected", "sidecar"]
        );
        assert_eq!(
            paths(container(&pod, "containers", 3), "volumeDevices"),
            expected,
            "{policy:?}"
        );
    }
}
