//! Pod annotations written at injection (§3.6, §3.9): §6.1 cases 4, 9, 12, 13, 15 and
//! §6.3 case 26.

use super::*;
use crate::annotations::{
    HashAnnotation, INJECTED_LIST, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE,
    WORKING_HOT_UPGRADE_CONTAINER, pod_hash_of,
};
use crate::api::PatchPodMetadata;
use crate::inject::build::{PodView, build_sidecars};
use crate::inject::patch_pod_metadata;

/// §6.1 case 4 (TestInjectMetadata).
#[test]
fn inject_metadata() {
    let mut a = sidecarset1();
    a["spec"]["patchPodMetadata"] = json!([
        {"annotations": {"key1": r#"{"log-agent":1}"#}, "patchPolicy": "MergePatchJson"},
        {"annotations": {"key": "envoy=1,log=2"}, "patchPolicy": "Retain"}
    ]);
    let mut b = sidecarset3();
    b["spec"]["patchPodMetadata"] = json!([
        {"annotations": {"key1": r#"{"envoy":2}"#}, "patchPolicy": "MergePatchJson"}
    ]);
    let mut pod = pod1();
    assert!(run(&mut pod, &[a, b]).unwrap());
    let annotations = pod_annotations(&pod);
    assert_eq!(annotations["key1"], r#"{"envoy":2,"log-agent":1}"#);
    assert_eq!(annotations["key"], "envoy=1,log=2");
    let keys: Vec<&str> = annotations.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "key",
            "key1",
            SIDECARSET_HASH,
            SIDECARSET_HASH_WITHOUT_IMAGE,
            INJECTED_LIST
        ]
    );
}

/// §3.5 step 4: a SidecarSet that injects nothing still patches the pod's metadata, without
/// writing the hash or list annotations.
#[test]
fn patch_pod_metadata_without_containers() {
    let sidecarset = json!({
        "metadata": {"name": "metadata-only"},
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "patchPodMetadata": [{"annotations": {"key": "value"}, "patchPolicy": "Overwrite"}]
        }
    });
    let mut pod = pod1();
    assert!(run(&mut pod, std::slice::from_ref(&sidecarset)).unwrap());
    assert_eq!(pod_annotations(&pod), labels(&[("key", "value")]));
    assert_eq!(names(&pod, "containers"), ["nginx"]);
    // Nothing to patch either: the pod is unchanged.
    assert!(!run(&mut pod, &[sidecarset]).unwrap());
}

/// A selecting SidecarSet with neither containers nor patchPodMetadata leaves the pod alone
/// (the annotations are then not even compared).
#[test]
fn nothing_to_inject_or_patch() {
    let sidecarset = json!({
        "metadata": {"name": "empty"},
        "spec": {"selector": {"matchLabels": {"app": "suxing-test"}}}
    });
    let mut pod = pod1();
    let before = pod.clone();
    assert!(!run(&mut pod, &[sidecarset]).unwrap());
    assert_eq!(pod, before);
}

/// §6.1 case 9 (TestPodSidecarSetHashCompatibility): legacy `{"name":"hash"}` annotations are
/// read and written back in the struct form.
#[test]
fn pod_sidecarset_hash_compatibility() {
    let hash = "bv6d2fbw97wz8xx5x4v4wddwbd5z744wcf7c786dd4dvxvd5w6w424df7vx47989";
    let without_image = "54x5977vf9zz4248w7v44456zf655b8bcffv7x74w88f6dwb994fw48b8f9b8959";
    let pod = pod1();
    let annotations = labels(&[
        (
            SIDECARSET_HASH,
            &format!(r#"{{"sidecarset-test":"{hash}"}}"#),
        ),
        (
            SIDECARSET_HASH_WITHOUT_IMAGE,
            &format!(r#"{{"sidecarset-test":"{without_image}"}}"#),
        ),
    ]);
    let pod_labels = crate::inject::pod::labels(&pod);
    let view = PodView {
        init_containers: &[],
        containers: pod["spec"]["containers"].as_array().unwrap(),
        labels: &pod_labels,
        annotations: &annotations,
    };
    let built = build_sidecars(view, Vec::new(), NOW).unwrap();
    assert!(built.containers.is_empty() && built.init_containers.is_empty());
    for (key, value) in [
        (SIDECARSET_HASH, hash),
        (SIDECARSET_HASH_WITHOUT_IMAGE, without_image),
    ] {
        let written = &built.annotations[key];
        let parsed: HashAnnotation = serde_json::from_str(written).unwrap();
        assert_eq!(parsed["sidecarset-test"].hash, value);
        // A converted entry has Go's zero time and no sidecar list.
        assert_eq!(
            written,
            &format!(
                r#"{{"sidecarset-test":{{"updateTimestamp":null,"hash":"{value}","sidecarSetName":"sidecarset-test","sidecarList":null}}}}"#
            )
        );
    }
}

/// §3.11: an unparsable hash annotation on the pod denies its creation.
#[test]
fn garbage_hash_annotation_is_an_error() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({SIDECARSET_HASH: "garbage"});
    let result = run(&mut pod, &[sidecarset1()]);
    assert!(
        matches!(result, Err(InjectError::HashAnnotation(_))),
        "{result:?}"
    );
}

/// §6.1 case 12 (TestSidecarSetHashInject).
#[test]
fn sidecarset_hash_inject() {
    let mut unmatched = sidecarset1();
    unmatched["spec"]["selector"]["matchLabels"]["app"] = json!("doesnt-match");
    let mut pod = pod1();
    assert!(run(&mut pod, &[unmatched, sidecarset2(), sidecarset3()]).unwrap());
    let annotations = pod_annotations(&pod);
    let hash = annotations.get(SIDECARSET_HASH).map(String::as_str);
    assert_eq!(
        pod_hash_of(SIDECARSET_HASH, hash, "sidecarset2"),
        "c4k2dbb95d"
    );
    assert_eq!(
        pod_hash_of(SIDECARSET_HASH, hash, "sidecarset3"),
        "gm967682cm"
    );
    assert_eq!(
        annotations[SIDECARSET_HASH],
        hash_json(&[
            (
                "sidecarset2",
                entry("sidecarset2", "c4k2dbb95d", &["dns-f"])
            ),
            (
                "sidecarset3",
                entry("sidecarset3", "gm967682cm", &["dns-f", "log-agent"])
            ),
        ])
    );
    // Project choice: without its hash-without-image annotation, the entry gets the hash
    // computed from the SidecarSet as served (upstream writes "").
    let without2 = hashes_of(&sidecarset2()).without_image;
    let without3 = hashes_of(&sidecarset3()).without_image;
    assert_eq!((without2.len(), without3.len()), (64, 64));
    assert_eq!(
        annotations[SIDECARSET_HASH_WITHOUT_IMAGE],
        hash_json(&[
            ("sidecarset2", entry("sidecarset2", &without2, &["dns-f"])),
            (
                "sidecarset3",
                entry("sidecarset3", &without3, &["dns-f", "log-agent"])
            ),
        ])
    );
    assert_eq!(annotations[INJECTED_LIST], "sidecarset2,sidecarset3");
    assert_eq!(annotations.len(), 3);
}

/// §3.9: `controllerRevision` is `status.latestRevision`, only in the with-image entry.
#[test]
fn hash_entry_records_the_latest_revision() {
    let mut sidecarset = sidecarset1();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!("without");
    sidecarset["status"] = json!({"latestRevision": "sidecarset1-6d9f8c7b5"});
    let mut pod = pod1();
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    let annotations = pod_annotations(&pod);
    assert_eq!(
        annotations[SIDECARSET_HASH],
        format!(
            r#"{{"sidecarset1":{{"updateTimestamp":"{NOW}","hash":"c4k2dbb95d","sidecarSetName":"sidecarset1","sidecarList":["dns-f","log-agent"],"controllerRevision":"sidecarset1-6d9f8c7b5"}}}}"#
        )
    );
    assert_eq!(
        annotations[SIDECARSET_HASH_WITHOUT_IMAGE],
        hash_json(&[(
            "sidecarset1",
            entry("sidecarset1", "without", &["dns-f", "log-agent"])
        )])
    );
}

/// §6.1 case 13 (TestSidecarSetNameInject).
#[test]
fn sidecarset_name_inject() {
    let mut pod = pod1();
    assert!(run(&mut pod, &[sidecarset3(), sidecarset1()]).unwrap());
    assert_eq!(
        pod_annotations(&pod)[INJECTED_LIST],
        "sidecarset1,sidecarset3"
    );
    // Project choice: SidecarSets of one group are injected by name (upstream: informer order).
    assert_eq!(
        names(&pod, "containers"),
        ["dns-f", "nginx", "log-agent", "dns-f", "log-agent"]
    );
}

/// §3.9: names and hash entries already on the pod are kept.
#[test]
fn existing_entries_are_preserved() {
    let old = entry("old", "old-hash", &["old-sidecar"]);
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({
        SIDECARSET_HASH: hash_json(&[("old", old.clone())]),
        INJECTED_LIST: "zzz,old",
    });
    let mut sidecarset = sidecarset1();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!("without");
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    let annotations = pod_annotations(&pod);
    assert_eq!(annotations[INJECTED_LIST], "old,sidecarset1,zzz");
    assert_eq!(
        annotations[SIDECARSET_HASH],
        hash_json(&[
            ("old", old),
            (
                "sidecarset1",
                entry("sidecarset1", "c4k2dbb95d", &["dns-f", "log-agent"])
            ),
        ])
    );
}

/// The "with init container" fixture of §6.1 case 15: one native-sidecar init container
/// mounting `volume-1` with transferEnv nginx/hello2.
fn sidecarset_with_init_container(name: &str, init: Value) -> Value {
    let mut init = init;
    init["volumeMounts"] = json!([{"name": "volume-1", "mountPath": "/v1"}]);
    init["transferEnv"] = json!([{"sourceContainerName": "nginx", "envName": "hello2"}]);
    init["restartPolicy"] = json!("Always");
    json!({
        "metadata": {
            "name": name,
            "annotations": {
                SIDECARSET_HASH: format!("{name}-hash"),
                SIDECARSET_HASH_WITHOUT_IMAGE: format!("{name}-without-image-hash"),
            }
        },
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "initContainers": [init],
            "volumes": [{"name": "volume-1"}]
        }
    })
}

/// §6.1 case 15 (TestInjectInitContainer): the pod's annotations, exactly.
#[test]
fn inject_init_container() {
    let first = sidecarset_with_init_container(
        "sidecarset-1",
        json!({"name": "init-1", "image": "init:v1"}),
    );
    let second = sidecarset_with_init_container(
        "sidecarset-2",
        json!({
            "name": "hot-init",
            "image": "hot-init:v1",
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:v1"}
        }),
    );
    let mut pod = pod1();
    assert!(run(&mut pod, &[second, first]).unwrap());

    let expected = labels(&[
        (
            SIDECARSET_HASH,
            &hash_json(&[
                (
                    "sidecarset-1",
                    entry("sidecarset-1", "sidecarset-1-hash", &["init-1"]),
                ),
                (
                    "sidecarset-2",
                    entry("sidecarset-2", "sidecarset-2-hash", &["hot-init"]),
                ),
            ]),
        ),
        (
            SIDECARSET_HASH_WITHOUT_IMAGE,
            &hash_json(&[
                (
                    "sidecarset-1",
                    entry(
                        "sidecarset-1",
                        "sidecarset-1-without-image-hash",
                        &["init-1"],
                    ),
                ),
                (
                    "sidecarset-2",
                    entry(
                        "sidecarset-2",
                        "sidecarset-2-without-image-hash",
                        &["hot-init"],
                    ),
                ),
            ]),
        ),
        (INJECTED_LIST, "sidecarset-1,sidecarset-2"),
        (
            WORKING_HOT_UPGRADE_CONTAINER,
            r#"{"hot-init":"hot-init-1"}"#,
        ),
        ("version.sidecarset.kruise.io/hot-init-1", "1"),
        ("versionalt.sidecarset.kruise.io/hot-init-1", "0"),
        ("version.sidecarset.kruise.io/hot-init-2", "0"),
        ("versionalt.sidecarset.kruise.io/hot-init-2", "1"),
    ]);
    assert_eq!(pod_annotations(&pod), expected);

    assert_eq!(
        names(&pod, "initContainers"),
        ["init-0", "hot-init-1", "hot-init-2", "init-1"]
    );
    assert_eq!(names(&pod, "containers"), ["nginx"]);
    assert_eq!(names(&pod, "volumes"), ["volume-a", "volume-b", "volume-1"]);
    let working = container(&pod, "initContainers", 1);
    let idle = container(&pod, "initContainers", 2);
    assert_eq!(working["image"], "hot-init:v1");
    assert_eq!(idle["image"], "empty:v1");
    assert_eq!(working["restartPolicy"], "Always");
    assert_eq!(idle["restartPolicy"], "Always");
    let env_names = |c: &Value| -> Vec<String> { env(c).into_iter().map(|(n, _)| n).collect() };
    assert_eq!(
        env_names(working),
        [
            "IS_INJECTED",
            "hello2",
            "SIDECARSET_VERSION",
            "SIDECARSET_VERSION_ALT"
        ]
    );
    assert_eq!(env_names(idle), env_names(working));
    assert_eq!(
        env(container(&pod, "initContainers", 3)),
        [
            ("IS_INJECTED".to_string(), Some("true".to_string())),
            ("hello2".to_string(), Some("world2".to_string()))
        ]
    );
}

fn patch(policy: &str, pairs: &[(&str, &str)]) -> PatchPodMetadata {
    PatchPodMetadata {
        annotations: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        patch_policy: policy.into(),
    }
}

/// §6.3 case 26 (TestPatchPodMetadata); upstream's `skip` is "the annotations did not change".
#[test]
fn patch_pod_metadata_cases() {
    let apply = |pod: &[(&str, &str)], patches: &[PatchPodMetadata]| {
        let mut annotations = labels(pod);
        let before = annotations.clone();
        patch_pod_metadata(&mut annotations, patches).unwrap();
        let skip = annotations == before;
        (annotations, skip)
    };
    let retain_overwrite = [
        patch("Retain", &[("key1", "value1")]),
        patch("Overwrite", &[("key2", "value2")]),
    ];

    // a. pod without annotations.
    let (annotations, skip) = apply(&[], &retain_overwrite);
    assert_eq!(
        annotations,
        labels(&[("key1", "value1"), ("key2", "value2")])
    );
    assert!(!skip);

    // b. existing values: Retain keeps, Overwrite replaces.
    let (annotations, skip) = apply(&[("key1", "old"), ("key2", "old")], &retain_overwrite);
    assert_eq!(annotations, labels(&[("key1", "old"), ("key2", "value2")]));
    assert!(!skip);

    // c. MergePatchJson: merged with sorted keys, or set verbatim when absent.
    let (annotations, skip) = apply(
        &[
            ("key1", r#"{"log-agent":1}"#),
            ("key2", r#"{"log-agent":1}"#),
        ],
        &[patch(
            "MergePatchJson",
            &[
                ("key1", r#"{"log-agent":1}"#),
                ("key2", r#"{"envoy":2}"#),
                ("key3", r#"{"probe":5}"#),
            ],
        )],
    );
    assert_eq!(
        annotations,
        labels(&[
            ("key1", r#"{"log-agent":1}"#),
            ("key2", r#"{"envoy":2,"log-agent":1}"#),
            ("key3", r#"{"probe":5}"#),
        ])
    );
    assert!(!skip);

    // d. merging the same value changes nothing.
    let (annotations, skip) = apply(
        &[("key1", r#"{"log-agent":1}"#)],
        &[patch("MergePatchJson", &[("key1", r#"{"log-agent":1}"#)])],
    );
    assert_eq!(annotations, labels(&[("key1", r#"{"log-agent":1}"#)]));
    assert!(skip);
}
