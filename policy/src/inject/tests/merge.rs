//! Merging into the pod (§3.8): §6.1 cases 2, 6, 8, 14, 16.

use super::*;
use crate::inject::build::Injected;
use crate::inject::merge::merge_containers;

/// §6.1 case 2 (TestMergeSidecarSecrets).
#[test]
fn merge_sidecar_secrets() {
    let secrets = |names: &[&str]| -> Value {
        names
            .iter()
            .map(|name| json!({"name": name}))
            .collect::<Vec<_>>()
            .into()
    };
    type Case<'a> = (&'a [&'a str], Option<&'a [&'a str]>, &'a [&'a str]);
    let cases: [Case; 4] = [
        // 3 + 3 - 2 = 4: the pod's duplicate s3 and the shared s2 collapse.
        (
            &["s0", "s1", "s2"],
            Some(&["s2", "s3", "s3"]),
            &["s2", "s3", "s0", "s1"],
        ),
        // 3 + 3 = 6
        (
            &["s0", "s1", "s2"],
            Some(&["s3", "s4", "s5"]),
            &["s3", "s4", "s5", "s0", "s1", "s2"],
        ),
        // 3 + 0 = 3
        (&["s0", "s1", "s2"], None, &["s0", "s1", "s2"]),
        // 0 + 3 = 3
        (&[], Some(&["s3", "s4", "s5"]), &["s3", "s4", "s5"]),
    ];
    for (sidecarset_secrets, pod_secrets, expected) in cases {
        let mut sidecarset = sidecarset1();
        if !sidecarset_secrets.is_empty() {
            sidecarset["spec"]["imagePullSecrets"] = secrets(sidecarset_secrets);
        }
        let mut pod = pod1();
        if let Some(pod_secrets) = pod_secrets {
            pod["spec"]["imagePullSecrets"] = secrets(pod_secrets);
        }
        assert!(run(&mut pod, &[sidecarset]).unwrap());
        assert_eq!(names(&pod, "imagePullSecrets"), expected);
    }
}

/// §6.1 case 6 (TestSidecarSetPodInjectPolicy).
#[test]
fn sidecarset_pod_inject_policy() {
    let mut pod = pod1();
    assert!(run(&mut pod, &[sidecarset1()]).unwrap());
    assert_eq!(names(&pod, "containers"), ["dns-f", "nginx", "log-agent"]);
    // Injected init containers are sorted by name and, without a policy, go after the pod's own.
    assert_eq!(
        names(&pod, "initContainers"),
        ["init-0", "init-1", "init-2"]
    );
    let is_injected = [(String::from("IS_INJECTED"), Some(String::from("true")))];
    for index in 1..3 {
        assert_eq!(env(container(&pod, "initContainers", index)), is_injected);
    }
    assert_eq!(env(container(&pod, "initContainers", 0)), []);
    assert_eq!(env(container(&pod, "containers", 0)), is_injected);
    assert_eq!(env(container(&pod, "containers", 2)), is_injected);
    // The SidecarSet extension fields never reach the pod.
    assert_eq!(
        container(&pod, "containers", 0),
        &json!({"name": "dns-f", "image": "dns-f-image:1.0", "env": [{"name": "IS_INJECTED", "value": "true"}]})
    );
}

/// §6.1 case 8 (TestSidecarVolumesAppend): only volumes referenced by injected containers' own
/// mounts are added, once.
#[test]
fn sidecar_volumes_append() {
    let mut pod = pod1();
    assert!(run(&mut pod, &[sidecarset2()]).unwrap());
    assert_eq!(names(&pod, "volumes"), ["volume-a", "volume-b", "volume-1"]);
}

fn injected(name: &str, policy: &str) -> Injected {
    Injected {
        container: json!({"name": name}).as_object().unwrap().clone(),
        policy: policy.into(),
    }
}

fn merged_names(existing: &[&str], injected: Vec<Injected>) -> Vec<String> {
    let existing = existing.iter().map(|n| json!({"name": n})).collect();
    let pod = json!({"spec": {"containers": merge_containers(existing, injected)}});
    names(&pod, "containers")
}

/// §6.1 case 14 (TestMergeSidecarContainers), with upstream's injected order.
#[test]
fn merge_sidecar_containers() {
    let all = || {
        vec![
            injected("sidecar-1", "AfterAppContainer"),
            injected("sidecar-2", "AfterAppContainer"),
            injected("new-sidecar-1", "BeforeAppContainer"),
        ]
    };
    let after_only = || {
        vec![
            injected("sidecar-1", "AfterAppContainer"),
            injected("sidecar-2", "AfterAppContainer"),
        ]
    };
    let app = ["app-container"];
    let origins = ["sidecar-1", "app-container", "sidecar-2"];
    assert_eq!(
        merged_names(&app, all()),
        ["new-sidecar-1", "app-container", "sidecar-1", "sidecar-2"]
    );
    assert_eq!(
        merged_names(&app, vec![injected("new-sidecar-1", "BeforeAppContainer")]),
        ["new-sidecar-1", "app-container"]
    );
    assert_eq!(
        merged_names(&app, after_only()),
        ["app-container", "sidecar-1", "sidecar-2"]
    );
    assert_eq!(
        merged_names(&origins, after_only()),
        ["sidecar-1", "app-container", "sidecar-2"]
    );
    assert_eq!(
        merged_names(&origins, all()),
        ["new-sidecar-1", "sidecar-1", "app-container", "sidecar-2"]
    );
    assert_eq!(
        merged_names(&[], all()),
        ["new-sidecar-1", "sidecar-1", "sidecar-2"]
    );
}

/// §6.1 case 14 end to end: a pod container named like a sidecar is replaced in place.
#[test]
fn pod_container_with_a_sidecar_name_is_replaced_in_place() {
    let mut pod = pod1();
    pod["spec"]["containers"] = json!([
        {"name": "log-agent", "image": "old"},
        {"name": "nginx", "image": "nginx:1.15.1"}
    ]);
    assert!(run(&mut pod, &[sidecarset1()]).unwrap());
    assert_eq!(names(&pod, "containers"), ["dns-f", "log-agent", "nginx"]);
    assert_eq!(
        container(&pod, "containers", 1)["image"],
        "log-agent-image:1.0"
    );
}

/// §6.1 case 16 (TestInjectInitContainerSort): injected init containers are sorted by name
/// before the merge.
#[test]
fn inject_init_container_sort() {
    let sidecarset = |policies: [&str; 3]| {
        let init: Vec<Value> = ["a-init", "c-init", "b-init"]
            .iter()
            .zip(policies)
            .map(|(name, policy)| {
                let mut c = json!({"name": name, "image": "busybox"});
                if !policy.is_empty() {
                    c["podInjectPolicy"] = json!(policy);
                }
                c
            })
            .collect();
        json!({
            "metadata": {"name": "init-sort"},
            "spec": {
                "selector": {"matchLabels": {"app": "suxing-test"}},
                "initContainers": init
            }
        })
    };
    let pod = |init: &[&str]| {
        let mut pod = pod1();
        let init: Vec<Value> = init.iter().map(|n| json!({"name": n})).collect();
        if init.is_empty() {
            pod["spec"]
                .as_object_mut()
                .unwrap()
                .remove("initContainers");
        } else {
            pod["spec"]["initContainers"] = json!(init);
        }
        pod
    };

    let mut none = pod(&[]);
    assert!(run(&mut none, &[sidecarset(["", "", ""])]).unwrap());
    assert_eq!(
        names(&none, "initContainers"),
        ["a-init", "b-init", "c-init"]
    );

    let mut two = pod(&["app1-init", "app2-init"]);
    assert!(run(&mut two, &[sidecarset(["", "", ""])]).unwrap());
    assert_eq!(
        names(&two, "initContainers"),
        ["app1-init", "app2-init", "a-init", "b-init", "c-init"]
    );

    // a After, c Before, b Before.
    let mut mixed = pod(&["app1-init", "app2-init"]);
    let policies = [
        "AfterAppContainer",
        "BeforeAppContainer",
        "BeforeAppContainer",
    ];
    assert!(run(&mut mixed, &[sidecarset(policies)]).unwrap());
    assert_eq!(
        names(&mixed, "initContainers"),
        ["b-init", "c-init", "app1-init", "app2-init", "a-init"]
    );
}
