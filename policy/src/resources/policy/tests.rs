//! §6.5 `sidecarset_resources_test.go`, through `resources_for`.

use super::*;
use serde_json::json;

fn container(name: &str, limits: Value, requests: Value) -> Value {
    json!({"name": name, "image": "app:1", "resources": {"limits": limits, "requests": requests}})
}

/// Two targets: 200m/50m and 400m/100m of cpu, 1Gi/256Mi and 2Gi/512Mi of memory.
fn targets() -> Vec<Value> {
    vec![
        container(
            "large-engine-v1",
            json!({"cpu": "200m", "memory": "1Gi"}),
            json!({"cpu": "50m", "memory": "256Mi"}),
        ),
        container(
            "large-engine-v2",
            json!({"cpu": "400m", "memory": "2Gi"}),
            json!({"cpu": "100m", "memory": "512Mi"}),
        ),
    ]
}

fn policy(mode: &str, regex: &str, limits: Value, requests: Value) -> Value {
    json!({"targetContainersMode": mode, "targetContainersNameRegex": regex,
           "resourcesExpr": {"limits": limits, "requests": requests}})
}

fn run(
    policy: &Value,
    init: &[Value],
    containers: &[Value],
) -> Result<Value, ResourcesPolicyError> {
    resources_for(policy, init, containers, &BTreeSet::new())
}

#[test]
fn sum_mode() {
    let policy = policy(
        "sum",
        ".*",
        json!({"cpu": "cpu*50%", "memory": "200Mi"}),
        json!({"cpu": "cpu*50%", "memory": "100Mi"}),
    );
    assert_eq!(
        run(&policy, &[], &targets()),
        Ok(json!({"limits": {"cpu": "300m", "memory": "200Mi"},
                  "requests": {"cpu": "75m", "memory": "100Mi"}}))
    );
}

#[test]
fn max_mode() {
    let policy = policy(
        "max",
        ".*",
        json!({"cpu": "max(cpu*50%, 50m)", "memory": "memory*50%"}),
        json!({"cpu": "max(cpu*50%, 50m)", "memory": "max(memory*20% + 100Mi, 200Mi)"}),
    );
    assert_eq!(
        run(&policy, &[], &targets()),
        // 512Mi × 20 % is not a whole number of bytes: printed in milli units, as apimachinery.
        Ok(json!({"limits": {"cpu": "200m", "memory": "1Gi"},
                  "requests": {"cpu": "50m", "memory": "212231782400m"}}))
    );
}

#[test]
fn the_regex_picks_targets_unanchored_and_sidecars_are_never_targets() {
    let policy = policy(
        "sum",
        "v1",
        json!({"cpu": "max(cpu*50%, 50m)"}),
        json!({"cpu": "max(cpu*50%, 50m)"}),
    );
    assert_eq!(
        run(&policy, &[], &targets()),
        Ok(json!({"limits": {"cpu": "100m"}, "requests": {"cpu": "50m"}}))
    );
    let everything = policy_all_cpu();
    let sidecars = BTreeSet::from(["large-engine-v2".to_string()]);
    assert_eq!(
        resources_for(&everything, &[], &targets(), &sidecars),
        Ok(json!({"limits": {"cpu": "200m"}}))
    );
    let error = run(
        &self::policy("sum", "^web$", json!({"cpu": "1"}), Value::Null),
        &[],
        &targets(),
    );
    assert_eq!(error, Err(ResourcesPolicyError::NoTarget("^web$".into())));
    assert_eq!(
        error.unwrap_err().to_string(),
        "no containers match the regex pattern \"^web$\""
    );
    let bad = run(
        &self::policy("sum", "(", json!({"cpu": "1"}), Value::Null),
        &[],
        &targets(),
    );
    assert!(
        matches!(bad, Err(ResourcesPolicyError::Regex { .. })),
        "{bad:?}"
    );
}

fn policy_all_cpu() -> Value {
    policy("sum", ".*", json!({"cpu": "cpu"}), Value::Null)
}

#[test]
fn a_target_without_a_limit_leaves_the_sidecar_unlimited() {
    let mut pod = targets();
    pod[0]["resources"]["limits"] = json!({"memory": "1Gi"});
    let sum = policy(
        "sum",
        ".*",
        json!({"cpu": "cpu*50%", "memory": "memory"}),
        Value::Null,
    );
    assert_eq!(
        run(&sum, &[], &pod),
        Ok(json!({"limits": {"memory": "3Gi"}}))
    );
    pod[1]["resources"]["limits"] = json!({"cpu": "1"});
    let max = policy("max", ".*", json!({"memory": "memory"}), Value::Null);
    assert_eq!(run(&max, &[], &pod), Ok(json!({})));
}

#[test]
fn missing_requests_count_as_zero() {
    let mut pod = targets();
    pod[0]["resources"] = json!({"limits": {"cpu": "1"}});
    pod[1]["resources"] = json!({"limits": {"cpu": "1"}});
    let policy = policy(
        "sum",
        ".*",
        Value::Null,
        json!({"cpu": "cpu + 10m", "memory": "memory"}),
    );
    assert_eq!(
        run(&policy, &[], &pod),
        Ok(json!({"requests": {"cpu": "10m", "memory": "0"}}))
    );
}

#[test]
fn native_sidecar_init_containers_are_targets_and_plain_ones_are_not() {
    let mut native = container("proxy", json!({"cpu": "300m"}), json!({}));
    native["restartPolicy"] = json!("Always");
    let plain = container("setup", json!({"cpu": "5"}), json!({}));
    let app = container("app", json!({"cpu": "100m"}), json!({}));
    assert_eq!(
        run(&policy_all_cpu(), &[native, plain], &[app]),
        Ok(json!({"limits": {"cpu": "400m"}}))
    );
}

#[test]
fn numbers_become_millicores_or_bytes() {
    let policy = policy(
        "sum",
        ".*",
        json!({"cpu": "1", "memory": "1"}),
        json!({"cpu": "0.25"}),
    );
    assert_eq!(
        run(&policy, &[], &targets()),
        Ok(json!({"limits": {"cpu": "1", "memory": "1"}, "requests": {"cpu": "250m"}}))
    );
}

#[test]
fn an_expression_that_fails_names_the_field() {
    let policy = policy("sum", ".*", json!({"cpu": "cpu - 1"}), Value::Null);
    let error = run(&policy, &[], &targets()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "failed to evaluate CPU limits expression: failed to parse expression \"cpu - 1\": \
         calculation result is negative: -400m"
    );
    let mut pod = targets();
    pod[0]["resources"]["limits"]["cpu"] = json!("lots");
    assert!(matches!(
        run(&policy_all_cpu(), &[], &pod),
        Err(ResourcesPolicyError::TargetQuantity { .. })
    ));
}

#[test]
fn an_unknown_mode_aggregates_nothing() {
    let policy = policy(
        "avg",
        ".*",
        json!({"cpu": "cpu"}),
        json!({"cpu": "cpu + 1m"}),
    );
    assert_eq!(
        run(&policy, &[], &targets()),
        Ok(json!({"requests": {"cpu": "1m"}}))
    );
}

#[test]
fn only_a_word_memory_makes_the_variable_memory() {
    assert!(names_memory("memory*2"));
    assert!(names_memory("max(1, memory)"));
    assert!(!names_memory("memory_x"));
    assert!(!names_memory("xmemory"));
    assert!(!names_memory("MEMORY"));
}
