//! Criterion benchmarks of pod injection: (a) native `evaluate`, and the module's whole call
//! natively (`wire::validate`, bytes to bytes); (b) the same request through policy.wasm in the
//! bundled host, instantiation included (as policy-server pays it per request).
//! A realistic ~5 KB pod with 1, 10 and 100 SidecarSets, 10% of them matching (at least one).
//! Run: `make policy.wasm && cargo bench --profile dev --workspace --bench policy`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use sidecarset_host::serve::SharedContext;
use sidecarset_host::{ClusterContext, evaluate_admission};
use sidecarset_policy::evaluate::{Cluster, evaluate, wire};
use sidecarset_policy::selector::Labels;
use sidecarset_policy::settings::Settings;
use std::hint::black_box;

/// The time written into the hash annotations.
const NOW: &str = "2026-11-29T00:00:00Z";

fn sidecarset(index: usize, matching: bool) -> Value {
    let app = if matching {
        "web".to_string()
    } else {
        format!("other-{index}")
    };
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": format!("sidecar-{index:03}"), "annotations": {
            "kruise.io/sidecarset-hash": "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78",
            "kruise.io/sidecarset-hash-without-image": "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759"}},
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1, "partition": 0},
            "containers": [{
                "name": format!("agent-{index}"), "image": format!("registry.example.com/agent:{index}.0"),
                "podInjectPolicy": "AfterAppContainer", "shareVolumePolicy": {"type": "enabled"},
                "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
                "env": [{"name": "LOG_LEVEL", "value": "info"}],
                "transferEnv": [{"sourceContainerName": "app", "envNames": ["POD_NAME", "REGION"]}],
                "volumeMounts": [{"name": format!("buffer-{index}"), "mountPath": "/buffer"}],
                "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}}],
            "volumes": [{"name": format!("buffer-{index}"), "emptyDir": {}}],
        },
    })
}

/// A ~5 KB pod as a ReplicaSet creates it (service-account volume, probes, env, tolerations).
fn pod_request() -> Value {
    let env: Vec<Value> = (0..40)
        .map(|i| json!({"name": format!("SETTING_{i}"), "value": format!("value-{i}")}))
        .chain([json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}),
                json!({"name": "REGION", "value": "eu-west-1"})])
        .collect();
    json!({
        "uid": "b1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "default", "operation": "CREATE", "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
        "object": {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": "web-7d4f9c-", "namespace": "default",
                         "labels": {"app": "web", "pod-template-hash": "7d4f9c", "tier": "frontend"},
                         "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4f9c", "uid": "0b7a", "controller": true, "blockOwnerDeletion": true}]},
            "spec": {
                "containers": [{
                    "name": "app", "image": "registry.example.com/web:2.14.1", "env": env,
                    "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}, {"containerPort": 9090, "protocol": "TCP", "name": "metrics"}],
                    "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
                    "volumeMounts": [{"name": "kube-api-access-x7k2p", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
                                     {"name": "config", "mountPath": "/etc/web"}, {"name": "logs", "mountPath": "/var/log/web", "subPathExpr": "$(POD_NAME)"}],
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                    "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
                    "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
                "volumes": [
                    {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}},
                    {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                    {"name": "logs", "emptyDir": {}}],
                "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                "serviceAccountName": "web", "serviceAccount": "web", "securityContext": {"fsGroup": 2000},
                "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                "imagePullSecrets": [{"name": "registry-credentials"}]},
            "status": {"phase": "Pending", "qosClass": "Burstable"}},
    })
}

fn sidecarsets(count: usize) -> Vec<Value> {
    let matching = count.div_ceil(10);
    (0..count)
        .map(|i| sidecarset(i, i % 10 == 0 && i / 10 < matching))
        .collect()
}

/// The SidecarSetList JSON, as the host's `list_resources_all` callback hands it to the policy.
struct InMemory(Vec<u8>);

impl Cluster for InMemory {
    fn list_sidecarsets(&mut self) -> Result<Vec<u8>, String> {
        Ok(std::mem::take(&mut self.0))
    }
    fn namespace_labels(&mut self, name: &str) -> Option<Labels> {
        Some(Labels::from([(
            "kubernetes.io/metadata.name".to_string(),
            name.to_string(),
        )]))
    }
}

fn benches(c: &mut Criterion) {
    let request = pod_request();
    assert!(
        request["object"].to_string().len() > 4_000,
        "the pod is realistic, ~5 KB"
    );
    let settings = Settings::default();
    let engine = sidecarset_tests::policy_engine();
    // `serve`'s allocator: instances from a pool of pre-reserved slots (still one per evaluation).
    let pooled = sidecarset_host::PolicyEngine::from_file(
        &sidecarset_tests::repo_root().join("policy.wasm"),
        sidecarset_host::EngineConfig {
            instance_pool: Some(2),
            ..Default::default()
        },
    )
    .expect("policy.wasm with the pooling allocator");
    for count in [1, 10, 100] {
        let list = sidecarsets(count);
        let mut group = c.benchmark_group(format!("inject/{count}-sidecarsets"));
        let list_json = serde_json::to_vec(&json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSetList",
            "metadata": {}, "items": &list,
        }))
        .expect("list JSON");
        // The inputs are copied outside the measurement: `evaluate` owns them, as the entry does.
        group.bench_function("native", |b| {
            b.iter_batched(
                || (request.clone(), InMemory(list_json.clone())),
                |(request, mut cluster)| black_box(evaluate(request, &settings, &mut cluster, NOW)),
                BatchSize::SmallInput,
            )
        });
        let context = ClusterContext::from_objects(list.clone()).expect("context");
        let verdict = evaluate_admission(engine, &request, &json!({}), &context);
        assert!(
            verdict.allowed && verdict.patch.is_some(),
            "the benchmark pod is injected"
        );
        group.bench_function("wasm", |b| {
            b.iter(|| black_box(evaluate_admission(engine, &request, &json!({}), &context)))
        });
        // `serve` as deployed: pooled instances, and callback answers kept per context snapshot
        // (the SidecarSetList is serialised once per cache change, not once per request).
        let served =
            SharedContext::fixed(ClusterContext::from_objects(list.clone()).expect("context"));
        group.bench_function("wasm-serve", |b| {
            b.iter(|| black_box(evaluate_admission(&pooled, &request, &json!({}), &served)))
        });
        // The guest's own work, bytes to bytes: natively, then in a fresh pooled instance. The
        // difference is what the sandbox costs; the rows above add the host's JSON on both sides.
        let payload =
            serde_json::to_vec(&json!({"request": &request, "settings": {}})).expect("payload");
        group.bench_function("native-wire", |b| {
            b.iter_batched(
                || InMemory(list_json.clone()),
                |mut cluster| black_box(wire::validate(&payload, &mut cluster, NOW)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("wasm-call", |b| {
            b.iter(|| black_box(pooled.call("validate", &payload, &served)))
        });
        group.finish();
    }
}

criterion_group!(policy, benches);
criterion_main!(policy);
