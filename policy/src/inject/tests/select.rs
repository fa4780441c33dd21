//! Which SidecarSets a pod gets: §6.1 cases 1, 3, 5, 7 and §6.3 cases 28, 30.

use super::*;
use crate::inject::{canary_base, pod_matches};

/// §6.1 case 1 (TestPodHasNoMatchedSidecarSet).
#[test]
fn pod_has_no_matched_sidecarset() {
    let mut pod = pod1();
    pod["metadata"]["labels"]["app"] = json!("doesnt-match");
    let before = pod.clone();
    assert!(!run(&mut pod, &[sidecarset1()]).unwrap());
    assert_eq!(names(&pod, "containers"), ["nginx"]);
    assert_eq!(pod, before);
}

/// §6.1 case 3 (TestInjectionStrategyPaused).
#[test]
fn injection_strategy_paused() {
    let mut sidecarset = sidecarset1();
    sidecarset["spec"]["injectionStrategy"] = json!({"paused": true});
    let mut pod = pod1();
    let before = pod.clone();
    assert!(!run(&mut pod, &[sidecarset]).unwrap());
    assert_eq!(names(&pod, "containers"), ["nginx"]);
    assert_eq!(pod, before);
}

fn assert_revision_unsupported(result: Result<bool, InjectError>) {
    let error = result.unwrap_err();
    assert_eq!(
        error,
        InjectError::Unsupported {
            sidecarset: "sidecarset1".into(),
            field: "spec.injectionStrategy.revision".into(),
        }
    );
    let message = error.to_string();
    assert!(message.contains("does not support yet"), "{message}");
    assert!(
        message.contains("spec.injectionStrategy.revision"),
        "{message}"
    );
}

/// §6.1 case 5 (TestInjectionStrategyRevision): injecting a ControllerRevision is not supported
/// yet, so the pod is denied with a clear error instead of getting the current version.
#[test]
fn injection_strategy_revision_is_not_supported_yet() {
    let mut sidecarset = sidecarset1();
    sidecarset["spec"]["injectionStrategy"] = json!({
        "revision": {"customVersion": "sidecarset1-12345", "policy": "Always"}
    });
    let mut pod = pod1();
    let before = pod.clone();
    assert_revision_unsupported(run(&mut pod, &[sidecarset.clone()]));
    assert_eq!(pod, before);

    sidecarset["spec"]["injectionStrategy"] = json!({
        "revision": {"revisionName": "sidecarset1-6d9f8c7b5"}
    });
    assert_revision_unsupported(run(&mut pod, &[sidecarset.clone()]));

    // §3.3 step 1: a revision naming neither a revision nor a custom version injects the current one.
    sidecarset["spec"]["injectionStrategy"] = json!({"revision": {"policy": "Always"}});
    assert!(run(&mut pod, &[sidecarset]).unwrap());
    assert_eq!(names(&pod, "containers"), ["dns-f", "nginx", "log-agent"]);
}

/// A non-matching SidecarSet with a revision is never looked at.
#[test]
fn revision_of_an_unmatched_sidecarset_is_ignored() {
    let mut sidecarset = sidecarset1();
    sidecarset["spec"]["injectionStrategy"] = json!({
        "revision": {"customVersion": "sidecarset1-12345", "policy": "Always"}
    });
    let mut pod = pod1();
    pod["metadata"]["labels"]["app"] = json!("doesnt-match");
    assert!(!run(&mut pod, &[sidecarset]).unwrap());
}

/// §6.1 case 7 (TestCanarySidecarSetInjection, the Partial policy): every variant needs the
/// history revision, so every variant is denied with the "does not support yet" error.
#[test]
fn partial_revision_injection_is_not_supported_yet() {
    let canary_sidecarset = |update_strategy: Value| {
        json!({
            "metadata": {"name": "sidecarset1"},
            "spec": {
                "selector": {"matchLabels": {"app": "demo"}},
                "containers": [{"name": "sidecar", "image": "sidecar-image:canary"}],
                "updateStrategy": update_strategy,
                "injectionStrategy": {
                    "revision": {"customVersion": "sidecarset1-12345", "policy": "Partial"}
                }
            }
        })
    };
    let pod = |canary: bool| {
        let mut labels = json!({"app": "demo"});
        if canary {
            labels["canary"] = json!("true");
        }
        json!({
            "metadata": {"name": "pod", "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "main:v1"}]}
        })
    };
    let selector = json!({"matchLabels": {"canary": "true"}});
    let cases = [
        ("stable pod", false, json!({"selector": selector})),
        (
            "canary without partition",
            true,
            json!({"selector": selector}),
        ),
        (
            "partition 100%",
            true,
            json!({"selector": selector, "partition": "100%"}),
        ),
        (
            "partition 0%",
            true,
            json!({"selector": selector, "partition": "0%"}),
        ),
        (
            "partition abc%",
            true,
            json!({"selector": selector, "partition": "abc%"}),
        ),
        ("revision absent", true, json!({"selector": selector})),
        (
            "bad selector operator",
            true,
            json!({"selector": {"matchExpressions": [{"key": "canary", "operator": "badOp", "values": ["true"]}]}}),
        ),
        (
            "paused",
            true,
            json!({"selector": selector, "partition": "0%", "paused": true}),
        ),
    ];
    for (name, canary, update_strategy) in cases {
        let mut pod = pod(canary);
        let result = run(&mut pod, &[canary_sidecarset(update_strategy)]);
        assert!(
            matches!(&result, Err(InjectError::Unsupported { field, .. }) if field == "spec.injectionStrategy.revision"),
            "{name}: {result:?}"
        );
        assert_eq!(names(&pod, "containers"), ["main"], "{name}");
    }
}

/// §6.3 case 28 (TestPodMatchedSidecarSet): selector `app=nginx`, pod in namespace `app1`.
#[test]
fn pod_matched_sidecarset() {
    let namespaces = [
        ("app1", labels(&[("ns", "app1"), ("app", "app1")])),
        ("app2", labels(&[("ns", "app2"), ("app", "app2")])),
    ];
    let mut lookup = |name: &str| {
        namespaces
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| l.clone())
    };
    let pod_labels = labels(&[("app", "nginx")]);
    let sidecarset = |namespace_selector: Option<Value>| {
        let mut value = json!({
            "metadata": {"name": "test-sidecarset"},
            "spec": {
                "selector": {"matchLabels": {"app": "nginx"}},
                "containers": [{"name": "cold-sidecar", "image": "cold-image:v1"}]
            }
        });
        if let Some(selector) = namespace_selector {
            value["spec"]["namespaceSelector"] = selector;
        }
        decode(&value)
    };
    let cases = [
        ("no namespaceSelector", None, true),
        (
            "ns=app1",
            Some(json!({"matchLabels": {"ns": "app1"}})),
            true,
        ),
        (
            "ns=app2",
            Some(json!({"matchLabels": {"ns": "app2"}})),
            false,
        ),
        (
            "app=app1",
            Some(json!({"matchLabels": {"app": "app1"}})),
            true,
        ),
        (
            "app=app2",
            Some(json!({"matchLabels": {"app": "app2"}})),
            false,
        ),
    ];
    for (name, namespace_selector, expected) in cases {
        let matched = pod_matches(
            &sidecarset(namespace_selector),
            "app1",
            &pod_labels,
            &mut lookup,
        )
        .unwrap();
        assert_eq!(matched, expected, "{name}");
    }
    // A namespace that cannot be read never matches (§3.2 step 4), without an error.
    let selective = sidecarset(Some(json!({"matchLabels": {"ns": "app1"}})));
    let mut failing = |_: &str| None;
    assert!(!pod_matches(&selective, "app1", &pod_labels, &mut failing).unwrap());
}

/// §6.3 case 30 (TestIsCanarySidecarSet). The port returns only the base of a canary:
/// upstream's `(false, base)` answers are `None` here.
#[test]
fn is_canary_sidecarset() {
    let canary = "apps.kruise.io/sidecarset-canary";
    let base = "apps.kruise.io/sidecarset-base";
    let cases: [(&str, Option<Value>, Option<&str>); 9] = [
        (
            "canary with base",
            Some(json!({canary: "true", base: "base-sidecarset"})),
            Some("base-sidecarset"),
        ),
        (
            "canary with empty base",
            Some(json!({canary: "true", base: ""})),
            None,
        ),
        (
            "canary false",
            Some(json!({canary: "false", base: "base-sidecarset"})),
            None,
        ),
        ("no annotations", Some(json!({})), None),
        ("only canary", Some(json!({canary: "true"})), None),
        ("only base", Some(json!({base: "base-sidecarset"})), None),
        (
            "canary 1",
            Some(json!({canary: "1", base: "base-sidecarset"})),
            None,
        ),
        ("nil annotations", None, None),
        (
            "canary TRUE",
            Some(json!({canary: "TRUE", base: "base-sidecarset"})),
            None,
        ),
    ];
    for (name, annotations, expected) in cases {
        let mut value = json!({"metadata": {"name": "canary-sidecarset"}});
        if let Some(annotations) = annotations {
            value["metadata"]["annotations"] = annotations;
        }
        assert_eq!(canary_base(&decode(&value)), expected, "{name}");
    }
}

/// §3.2 step 7: a pod matched by a canary and its base gets only the canary.
#[test]
fn canary_replaces_its_base() {
    let mut base = sidecarset1();
    base["metadata"]["name"] = json!("base");
    let mut canary = sidecarset3();
    canary["metadata"]["name"] = json!("canary");
    canary["metadata"]["annotations"]["apps.kruise.io/sidecarset-canary"] = json!("true");
    canary["metadata"]["annotations"]["apps.kruise.io/sidecarset-base"] = json!("base");
    let mut pod = pod1();
    assert!(run(&mut pod, &[base, canary]).unwrap());
    assert_eq!(names(&pod, "containers"), ["nginx", "dns-f", "log-agent"]);
    assert_eq!(
        pod_annotations(&pod)["kruise.io/sidecarset-injected-list"],
        "canary"
    );
}
