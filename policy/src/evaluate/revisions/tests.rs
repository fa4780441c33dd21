//! §3.3 and §2.2 rule 6 through `evaluate`: §6.1 cases 5 (TestInjectionStrategyRevision) and 7
//! (TestCanarySidecarSetInjection) over a cluster that holds ControllerRevisions.

use super::super::tests::{Listing, mutated, pod_create, sidecarset_create as create};
use super::super::*;
use serde_json::json;

const NOW: &str = "2026-01-02T03:04:05Z";

fn sidecarset(injection: Value, update_strategy: Value) -> Value {
    let mut sidecarset = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "sidecarset1"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "initContainers": [{"name": "init-1", "image": "init:1"},
                                    {"name": "init-2", "image": "init:2"}],
                 "containers": [{"name": "dns-f", "image": "dns:2"},
                                {"name": "log-agent", "image": "log:2"}],
                 "injectionStrategy": injection,
                 "updateStrategy": update_strategy}
    });
    admission::apply_defaults(&mut sidecarset);
    sidecarset
}

/// The revision Kruise recorded for `sidecarset1` at custom version `sidecarset1-12345`.
fn controller_revision(namespace: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
           "metadata": {"name": "sidecarset1-12345", "namespace": namespace,
                        "labels": {"kruise.io/sidecarset-name": "sidecarset1",
                                   "apps.kruise.io/sidecarset-custom-version": "sidecarset1-12345"}},
           "revision": 1,
           "data": {"spec": {"$patch": "replace",
                             "initContainers": [{"name": "init-2", "image": "init:1",
                                                 "podInjectPolicy": "AfterAppContainer"}],
                             "containers": [{"name": "dns-f", "image": "dns:1",
                                             "podInjectPolicy": "BeforeAppContainer"}]}}})
}

fn cluster(sidecarsets: &[Value], revisions: Vec<Value>) -> Listing {
    let mut cluster = Listing::of(sidecarsets);
    cluster.revisions = revisions;
    cluster
}

fn decide(request: Value, settings: &Settings, cluster: &mut Listing, draw: f64) -> Verdict {
    evaluate(request, settings, cluster, NOW, &mut || draw)
}

fn images(pod: &Value, list: &str) -> Vec<String> {
    pod["spec"][list]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}={}",
                c["name"].as_str().unwrap(),
                c["image"].as_str().unwrap()
            )
        })
        .collect()
}

fn rejection(verdict: &Verdict) -> &str {
    match &verdict.outcome {
        Outcome::Reject { message, .. } => message,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

/// §6.1 case 5: the pod gets the revision's containers, not the current ones, and the hash entry
/// names the revision.
#[test]
fn a_custom_version_injects_the_recorded_containers() {
    let set = sidecarset(
        json!({"revision": {"customVersion": "sidecarset1-12345", "policy": "Always"}}),
        json!({}),
    );
    let mut cluster = cluster(&[set], vec![controller_revision("kruise-system")]);
    let verdict = decide(pod_create(), &Settings::default(), &mut cluster, 0.5);
    let pod = mutated(&verdict);
    assert_eq!(images(pod, "containers"), ["dns-f=dns:1", "app=web:1"]);
    assert_eq!(images(pod, "initContainers"), ["init-2=init:1"]);
    let hashes: Value = serde_json::from_str(
        pod["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        hashes["sidecarset1"]["controllerRevision"],
        "sidecarset1-12345"
    );
}

#[test]
fn a_revision_is_looked_up_by_name_in_the_configured_namespace() {
    let set = sidecarset(
        json!({"revision": {"revisionName": "sidecarset1-12345"}}),
        json!({}),
    );
    let mut cluster = cluster(&[set], vec![controller_revision("kruise")]);
    let missing = decide(pod_create(), &Settings::default(), &mut cluster, 0.5);
    let message = rejection(&missing);
    assert!(
        message.contains("SidecarSet sidecarset1: cannot inject spec.injectionStrategy.revision")
            && message.contains("\"sidecarset1-12345\" not found"),
        "{message}"
    );
    let settings = Settings {
        revision_namespace: Some("kruise".into()),
        ..Settings::default()
    };
    let found = decide(pod_create(), &settings, &mut cluster, 0.5);
    assert_eq!(
        images(mutated(&found), "containers"),
        ["dns-f=dns:1", "app=web:1"]
    );
}

/// §6.1 case 7: the Partial policy, with `updateStrategy.selector` `canary=true`.
#[test]
fn the_partial_policy_picks_a_version_per_pod() {
    let canary_selector = json!({"matchLabels": {"canary": "true"}});
    let pod = |canary: bool| {
        let mut request = pod_create();
        if canary {
            request["object"]["metadata"]["labels"]["canary"] = json!("true");
        }
        request
    };
    let stable = Some("dns-f=dns:1");
    let latest = Some("dns-f=dns:2");
    let cases = [
        (
            "stable pod",
            false,
            json!({"selector": canary_selector}),
            true,
            stable,
        ),
        (
            "canary without partition",
            true,
            json!({"selector": canary_selector}),
            true,
            latest,
        ),
        (
            "partition 100%",
            true,
            json!({"selector": canary_selector, "partition": "100%"}),
            true,
            stable,
        ),
        (
            "partition 0%",
            true,
            json!({"selector": canary_selector, "partition": "0%"}),
            true,
            latest,
        ),
        (
            "partition abc%",
            true,
            json!({"selector": canary_selector, "partition": "abc%"}),
            true,
            None,
        ),
        (
            "revision absent",
            true,
            json!({"selector": canary_selector}),
            false,
            None,
        ),
        (
            "bad selector operator",
            true,
            json!({"selector": {"matchExpressions": [{"key": "canary", "operator": "badOp", "values": ["true"]}]}}),
            true,
            None,
        ),
        (
            "paused",
            true,
            json!({"selector": canary_selector, "partition": "0%", "paused": true}),
            true,
            stable,
        ),
    ];
    for (name, canary, update_strategy, recorded, expected) in cases {
        let set = sidecarset(
            json!({"revision": {"customVersion": "sidecarset1-12345", "policy": "Partial"}}),
            update_strategy,
        );
        let revisions = if recorded {
            vec![controller_revision("kruise-system")]
        } else {
            vec![]
        };
        let verdict = decide(
            pod(canary),
            &Settings::default(),
            &mut cluster(&[set], revisions),
            0.5,
        );
        match expected {
            Some(first) => assert_eq!(images(mutated(&verdict), "containers")[0], first, "{name}"),
            None => assert!(
                matches!(verdict.outcome, Outcome::Reject { code: 500, .. }),
                "{name}: {verdict:?}"
            ),
        }
    }
}

/// §2.2 rule 6: the revision must resolve as the injection would resolve it.
#[test]
fn admission_rejects_a_revision_that_cannot_be_found() {
    let by_version = sidecarset(
        json!({"revision": {"customVersion": "sidecarset1-12345"}}),
        json!({}),
    );
    let by_name = sidecarset(
        json!({"revision": {"revisionName": "sidecarset1-12345"}}),
        json!({}),
    );
    for set in [&by_version, &by_name] {
        let mut with = cluster(&[], vec![controller_revision("kruise-system")]);
        let verdict = decide(create(set.clone()), &Settings::default(), &mut with, 0.5);
        assert!(matches!(verdict.outcome, Outcome::Mutate(_)), "{verdict:?}");
    }
    let mut without = cluster(&[], vec![]);
    let verdict = decide(create(by_version), &Settings::default(), &mut without, 0.5);
    let message = rejection(&verdict);
    assert!(
        message.contains("spec.injectionStrategy.revision: Invalid value: null: Cannot find specific ControllerRevision, err: ControllerRevision.apps \"sidecarset1\" not found"),
        "{message}"
    );
    let verdict = decide(create(by_name), &Settings::default(), &mut without, 0.5);
    assert!(rejection(&verdict).contains("Cannot find specific ControllerRevision"));
}

/// Inline SidecarSets are checked without a cluster: their revisions are resolved per pod.
#[test]
fn settings_check_the_revision_namespace_but_resolve_no_revision() {
    let inline = Settings {
        sidecar_sets: Some(vec![sidecarset(
            json!({"revision": {"revisionName": "sidecarset1-12345"}}),
            json!({}),
        )]),
        revision_namespace: Some("kruise".into()),
        ..Settings::default()
    };
    assert_eq!(validate_settings(&inline), Ok(()));
    let bad = Settings {
        revision_namespace: Some("Kruise System".into()),
        ..Settings::default()
    };
    let error = validate_settings(&bad).unwrap_err();
    assert!(
        matches!(&error, SettingsError::RevisionNamespace { namespace, .. } if namespace == "Kruise System"),
        "{error}"
    );
}
