//! §3.7.7 through injection: the sidecar's resources come from the pod's own containers, the
//! matched SidecarSets' containers are never targets, and hot-upgrade twins both get them.

use super::*;

fn pod() -> Value {
    json!({
        "metadata": {"name": "engine", "namespace": "default", "labels": {"app": "engine"}},
        "spec": {"containers": [
            {"name": "engine-a", "image": "engine:1",
             "resources": {"limits": {"cpu": "200m"}, "requests": {"cpu": "50m"}}},
            {"name": "engine-b", "image": "engine:1",
             "resources": {"limits": {"cpu": "400m"}, "requests": {"cpu": "100m"}}},
            // Named like the other SidecarSet's sidecar: not a target.
            {"name": "log-agent", "image": "log:0",
             "resources": {"limits": {"cpu": "4"}}}
        ]}
    })
}

fn sidecarset(name: &str, container: Value) -> Value {
    json!({"metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": "engine"}}, "containers": [container]}})
}

#[test]
fn the_sidecar_gets_resources_from_the_target_containers() {
    let proxy = sidecarset(
        "proxy",
        json!({"name": "envoy", "image": "envoy:1", "podInjectPolicy": "AfterAppContainer",
               "resources": {"limits": {"cpu": "9"}},
               "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
               "resourcesPolicy": {"targetContainersMode": "sum",
                                   "targetContainersNameRegex": "^engine-",
                                   "resourcesExpr": {"limits": {"cpu": "cpu*50%", "memory": "100Mi"},
                                                     "requests": {"cpu": "max(cpu*50%, 50m)"}}}}),
    );
    let logs = sidecarset("logs", json!({"name": "log-agent", "image": "log:1"}));
    let mut pod = pod();
    assert!(run(&mut pod, &[proxy.clone(), logs.clone()]).unwrap());
    let containers = pod["spec"]["containers"].as_array().unwrap();
    let twins: Vec<&Value> = containers
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("envoy-"))
        .collect();
    assert_eq!(twins.len(), 2);
    for twin in twins {
        // Memory has no aggregated limit (no target sets one): left out. The sidecar's own
        // resources are replaced.
        assert_eq!(
            twin["resources"],
            json!({"limits": {"cpu": "300m"}, "requests": {"cpu": "75m"}}),
            "{twin}"
        );
    }

    // Every target without a cpu limit: only the request expression applies.
    let mut matches_all = proxy;
    matches_all["spec"]["containers"][0]["resourcesPolicy"]["targetContainersNameRegex"] =
        json!(".*");
    let mut pod = super::super::tests::resources_pod_without_limits();
    assert!(run(&mut pod, &[matches_all, logs]).unwrap());
    let envoy = pod["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "envoy-1")
        .unwrap();
    assert_eq!(envoy["resources"], json!({"requests": {"cpu": "50m"}}));
}

#[test]
fn a_policy_that_selects_nothing_denies_the_pod() {
    let proxy = sidecarset(
        "proxy",
        json!({"name": "envoy", "image": "envoy:1",
               "resourcesPolicy": {"targetContainersMode": "max",
                                   "targetContainersNameRegex": "^db$",
                                   "resourcesExpr": {"limits": {"cpu": "cpu"}}}}),
    );
    let mut pod = pod();
    let before = pod.clone();
    let error = run(&mut pod, &[proxy]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "SidecarSet proxy: container envoy: resourcesPolicy: no containers match the regex pattern \"^db$\""
    );
    assert_eq!(pod, before);
}
