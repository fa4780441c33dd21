//! Hot-upgrade injection (§3.7.6): §6.2 case 19.

use super::*;
use crate::annotations::{
    INJECTED_LIST, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE, WORKING_HOT_UPGRADE_CONTAINER,
};

fn hot_sidecarset1() -> Value {
    let mut sidecarset = sidecarset1();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] =
        json!("without-c4k2dbb95d");
    sidecarset["spec"]["containers"][0]["upgradeStrategy"] = json!({
        "upgradeType": "HotUpgrade",
        "hotUpgradeEmptyImage": "busy:hotupgrade-empty"
    });
    sidecarset
}

/// §6.2 case 19 (TestInjectHotUpgradeSidecar).
#[test]
fn inject_hot_upgrade_sidecar() {
    let mut pod = pod1();
    assert!(run(&mut pod, &[hot_sidecarset1()]).unwrap());
    assert_eq!(
        names(&pod, "containers"),
        ["dns-f-1", "dns-f-2", "nginx", "log-agent"]
    );
    assert_eq!(container(&pod, "containers", 0)["image"], "dns-f-image:1.0");
    assert_eq!(
        container(&pod, "containers", 1)["image"],
        "busy:hotupgrade-empty"
    );

    let sidecars = ["dns-f", "log-agent"];
    let expected = labels(&[
        (
            SIDECARSET_HASH,
            &hash_json(&[("sidecarset1", entry("sidecarset1", "c4k2dbb95d", &sidecars))]),
        ),
        (
            SIDECARSET_HASH_WITHOUT_IMAGE,
            &hash_json(&[(
                "sidecarset1",
                entry("sidecarset1", "without-c4k2dbb95d", &sidecars),
            )]),
        ),
        (INJECTED_LIST, "sidecarset1"),
        (WORKING_HOT_UPGRADE_CONTAINER, r#"{"dns-f":"dns-f-1"}"#),
        ("version.sidecarset.kruise.io/dns-f-1", "1"),
        ("versionalt.sidecarset.kruise.io/dns-f-1", "0"),
        ("version.sidecarset.kruise.io/dns-f-2", "0"),
        ("versionalt.sidecarset.kruise.io/dns-f-2", "1"),
    ]);
    assert_eq!(pod_annotations(&pod), expected);

    // Each twin reads its own version annotations through the downward API.
    for (index, twin) in [(0, "dns-f-1"), (1, "dns-f-2")] {
        assert_eq!(
            container(&pod, "containers", index)["env"],
            json!([
                {"name": "IS_INJECTED", "value": "true"},
                {"name": "SIDECARSET_VERSION", "valueFrom": {"fieldRef": {
                    "fieldPath": format!("metadata.annotations['version.sidecarset.kruise.io/{twin}']")
                }}},
                {"name": "SIDECARSET_VERSION_ALT", "valueFrom": {"fieldRef": {
                    "fieldPath": format!("metadata.annotations['versionalt.sidecarset.kruise.io/{twin}']")
                }}}
            ])
        );
    }
    // The cold sidecar gets no version env.
    assert_eq!(
        env(container(&pod, "containers", 3)),
        [("IS_INJECTED".to_string(), Some("true".to_string()))]
    );
}

/// §3.7.6: the working map starts from the pod's own and is shared across SidecarSets.
#[test]
fn working_map_keeps_existing_entries() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] =
        json!({WORKING_HOT_UPGRADE_CONTAINER: r#"{"envoy":"envoy-2"}"#});
    assert!(run(&mut pod, &[hot_sidecarset1()]).unwrap());
    assert_eq!(
        pod_annotations(&pod)[WORKING_HOT_UPGRADE_CONTAINER],
        r#"{"dns-f":"dns-f-1","envoy":"envoy-2"}"#
    );
}
