//! Which SidecarSets a pod gets: §6.1 cases 1, 3 and §6.3 cases 28, 30 (cases 5 and 7, the
//! revisions, are `evaluate`'s: they need the cluster).

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

/// `inject` takes each SidecarSet as the version to inject: the revision it names was resolved
/// by the caller (§3.3, `evaluate`), so the SidecarSet's own containers go in.
#[test]
fn a_resolved_sidecarset_is_injected_as_given() {
    let mut sidecarset = sidecarset1();
    sidecarset["spec"]["injectionStrategy"] = json!({
        "revision": {"customVersion": "sidecarset1-12345", "policy": "Always"}
    });
    let mut pod = pod1();
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

/// §3.2 step 2: SidecarSets indexed under the pod's namespace come first, then cluster-wide
/// ones; by name inside each group.
#[test]
fn namespace_scoped_sidecarsets_come_before_cluster_wide_ones() {
    let with = |name: &str, scope: Value| {
        let mut sidecarset = sidecarset1();
        sidecarset["metadata"]["name"] = json!(name);
        sidecarset["spec"]["initContainers"] = json!([]);
        sidecarset["spec"]["containers"][0]["name"] = json!(format!("{name}-c"));
        sidecarset["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .truncate(1);
        sidecarset["spec"]["containers"][0]["podInjectPolicy"] = json!("AfterAppContainer");
        for (key, value) in scope.as_object().unwrap() {
            sidecarset["spec"][key] = value.clone();
        }
        decode(&sidecarset)
    };
    let all = [
        with("a-cluster", json!({})),
        with("z-scoped", json!({"namespace": "default"})),
        with("b-other-namespace", json!({"namespace": "elsewhere"})),
        with(
            "m-scoped-by-expression",
            json!({"namespaceSelector": {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["x", "default"]}]}}),
        ),
    ];
    let namespace_labels = labels(&[("kubernetes.io/metadata.name", "default")]);
    let mut lookup = |_: &str| Some(namespace_labels.clone());
    let pod_labels = labels(&[("app", "suxing-test")]);
    let selected = select_sidecarsets("default", &pod_labels, &all, &mut lookup).unwrap();
    let order: Vec<&str> = selected.iter().map(|s| s.name()).collect();
    assert_eq!(order, ["m-scoped-by-expression", "z-scoped", "a-cluster"]);
}

/// Namespaces are read only when the answer depends on them: not for a pod the selector rejects.
#[test]
fn namespace_is_looked_up_only_for_pods_the_selector_matches() {
    let mut sidecarset = sidecarset1();
    sidecarset["spec"]["namespaceSelector"] = json!({"matchLabels": {"team": "a"}});
    let all = [decode(&sidecarset)];
    let mut lookups = Vec::new();
    let mut lookup = |name: &str| {
        lookups.push(name.to_string());
        Some(labels(&[("team", "a")]))
    };
    let other = labels(&[("app", "other")]);
    assert!(
        select_sidecarsets("ns1", &other, &all, &mut lookup)
            .unwrap()
            .is_empty()
    );
    let matching = labels(&[("app", "suxing-test")]);
    assert_eq!(
        select_sidecarsets("ns1", &matching, &all, &mut lookup)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(lookups, ["ns1"]);
}

/// A namespaceSelector that does not convert is "no match", never an error (upstream's
/// `IsSelectorNamespace`): one such SidecarSet must not block every pod in the cluster.
#[test]
fn broken_namespace_selector_matches_no_pod() {
    let mut sidecarset = sidecarset1();
    sidecarset["spec"]["namespaceSelector"] =
        json!({"matchExpressions": [{"key": "team", "operator": "Bad"}]});
    let all = [decode(&sidecarset)];
    let mut lookups = 0;
    let mut readable = |_: &str| {
        lookups += 1;
        Some(Labels::new())
    };
    for pod in [
        labels(&[("app", "other")]),
        labels(&[("app", "suxing-test")]),
    ] {
        let selected = select_sidecarsets("ns1", &pod, &all, &mut readable);
        assert!(selected.as_ref().is_ok_and(Vec::is_empty), "{selected:?}");
    }
    assert_eq!(
        lookups, 0,
        "the Namespace is not read for a selector that does not convert"
    );
}

/// The pod selector is read as Kruise's `ValidatedLabelSelectorAsSelector` reads it: only an
/// unknown operator is an error; `In` without values selects nothing, `NotIn` without values
/// anything.
#[test]
fn pod_selector_reads_as_validated_at_admission() {
    let with_expression = |operator: &str| {
        let mut sidecarset = sidecarset1();
        sidecarset["spec"]["selector"] =
            json!({"matchExpressions": [{"key": "app", "operator": operator}]});
        [decode(&sidecarset)]
    };
    let pod = labels(&[("app", "suxing-test")]);
    let selected = |all: &[SidecarSet]| {
        let mut lookup = |_: &str| None;
        select_sidecarsets("ns1", &pod, all, &mut lookup).map(|s| s.len())
    };
    assert_eq!(selected(&with_expression("In")).ok(), Some(0));
    assert_eq!(selected(&with_expression("NotIn")).ok(), Some(1));
    assert!(matches!(
        selected(&with_expression("Bad")),
        Err(InjectError::Selector {
            field: "spec.selector",
            ..
        })
    ));
}

/// An unsupported field of a base SidecarSet that its canary replaces does not fail the pod.
#[test]
fn unsupported_fields_of_a_replaced_canary_base_are_not_checked() {
    let mut base = sidecarset1();
    base["spec"]["injectionStrategy"] = json!({"revision": {"revisionName": "base-abc"}});
    let mut canary = sidecarset3();
    canary["metadata"]["name"] = json!("canary");
    canary["metadata"]["annotations"] = json!({
        "apps.kruise.io/sidecarset-canary": "true",
        "apps.kruise.io/sidecarset-base": "sidecarset1",
    });
    canary["spec"]["selector"] = base["spec"]["selector"].clone();
    let mut pod = pod1();
    assert!(run(&mut pod, &[base, canary]).unwrap());
    let injected = pod_annotations(&pod)["kruise.io/sidecarset-injected-list"].clone();
    assert_eq!(injected, "canary");
}
