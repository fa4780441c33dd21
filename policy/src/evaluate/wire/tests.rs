//! The `validate` payload to ValidationResponse bytes, as the module answers the host.

use super::*;
use crate::evaluate::tests::{Listing, pod_create};
use serde_json::json;

const NOW: &str = "2026-01-02T03:04:05Z";

fn answer(payload: &[u8]) -> Value {
    let bytes = validate(payload, &mut Listing::of(&[]), NOW, &mut || 0.5).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn an_injected_pod_comes_back_as_the_mutated_object() {
    let sidecarset = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "logs"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "log-agent", "image": "agent:1"}]}});
    let payload = json!({"request": pod_create(), "settings": {"sidecarSets": [sidecarset]}});
    let response = answer(payload.to_string().as_bytes());
    assert_eq!(response["accepted"], true, "{response}");
    let names: Vec<&str> = response["mutated_object"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["log-agent", "app"], "BeforeAppContainer by default");
    assert_eq!(response["warnings"], Value::Null);
    assert!(response.get("message").is_none());
}

#[test]
fn an_untouched_pod_is_accepted_without_an_object() {
    let payload = json!({"request": pod_create(), "settings": {}});
    let response = answer(payload.to_string().as_bytes());
    assert_eq!(response, json!({"accepted": true, "warnings": null}));
}

#[test]
fn malformed_payloads_are_rejections_with_a_message() {
    let response = answer(b"{not json");
    assert_eq!(response["accepted"], false);
    assert_eq!(response["code"], 400);
    let message = response["message"].as_str().unwrap();
    assert!(
        message.starts_with("invalid ValidationRequest JSON: "),
        "{message}"
    );

    let response = answer(b"[1]");
    assert_eq!(response["code"], 400);
    assert_eq!(
        response["message"],
        "the admission request is not a JSON object"
    );

    let bad_settings =
        json!({"request": pod_create(), "settings": {"allowPatchPodMetadataKey": []}});
    let response = answer(bad_settings.to_string().as_bytes());
    assert_eq!(response["accepted"], false);
    assert_eq!(response["code"], 400);
}

#[test]
fn an_oversized_payload_is_refused_before_decoding() {
    let payload = vec![b' '; MAX_REQUEST_BYTES + 1];
    let response = answer(&payload);
    assert_eq!(response["accepted"], false);
    assert_eq!(response["code"], 413);
}

/// A conformance case's cluster: its SidecarSets listed, its namespaces (or name-only ones).
struct CaseCluster<'a>(&'a Value);

impl Cluster for CaseCluster<'_> {
    fn list_sidecarsets(&mut self) -> Result<Vec<u8>, String> {
        let items = self.0.get("sidecarSets").cloned().unwrap_or(json!([]));
        Ok(serde_json::to_vec(&json!({"kind": "SidecarSetList", "items": items})).unwrap())
    }
    fn namespace_labels(&mut self, name: &str) -> Option<crate::selector::Labels> {
        let listed = self.0.get("namespaces").and_then(Value::as_array);
        let found = listed
            .into_iter()
            .flatten()
            .find(|n| n.pointer("/metadata/name").and_then(Value::as_str) == Some(name));
        let mut labels = crate::selector::Labels::new();
        labels.insert("kubernetes.io/metadata.name".into(), name.into());
        if let Some(map) = found.and_then(|n| n.pointer("/metadata/labels")) {
            labels = serde_json::from_value(map.clone()).unwrap();
        }
        Some(labels)
    }
    /// A conformance case lists no ControllerRevisions.
    fn get_controller_revision(&mut self, _: &str, name: &str) -> Result<Value, String> {
        Err(format!("controllerrevisions.apps {name:?} not found"))
    }
    fn list_controller_revisions(&mut self, _: &str, _: &str) -> Result<Vec<Value>, String> {
        Ok(Vec::new())
    }
}

/// The answer of `validate` is the answer of `evaluate` on the request read in full by
/// serde_json: reading the pod by shape changes nothing.
fn answers_as_a_full_read(case: &Value, text: &[u8]) {
    let raw = validate(text, &mut CaseCluster(case), NOW, &mut || 0.5).unwrap();
    let answer: Value = serde_json::from_slice(&raw)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&raw)));
    let input: Value = serde_json::from_slice(text).unwrap();
    let settings = Settings::from_value(&input["settings"]).unwrap();
    let verdict = evaluate(
        input["request"].clone(),
        &settings,
        &mut CaseCluster(case),
        NOW,
        &mut || 0.5,
    );
    let expected: Value = serde_json::from_slice(&respond(&verdict, false).unwrap()).unwrap();
    assert_eq!(answer, expected, "{}", case["name"]);
}

/// A pod with every kind of member: unknown fields, escapes, pretty whitespace, probes.
fn kitchen_sink_case() -> Value {
    json!({"name": "kitchen-sink", "sidecarSets": [{
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "logs"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "volumes": [{"name": "buf", "emptyDir": {}}, {"name": "config", "emptyDir": {}}],
                 "containers": [{"name": "agent", "image": "agent:1", "podInjectPolicy": "AfterAppContainer",
                     "shareVolumePolicy": {"type": "enabled"},
                     "transferEnv": [{"sourceContainerName": "app", "envNames": ["POD_NAME", "R\"x"]}],
                     "volumeMounts": [{"name": "buf", "mountPath": "/buf"}]},
                    {"name": "app2", "image": "replaced:1"}]}}],
        "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE", "namespace": "default", "userInfo": {"username": "x\u{e9}"},
            "object": {"apiVersion": "v1", "kind": "Pod", "futureField": {"a": [1, 2.5, -0.0, null]},
                "metadata": {"generateName": "web-", "labels": {"app": "web"},
                    "annotations": {"note": "line\nbreak \"quoted\" \u{1F600}"},
                    "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "controller": true}],
                    "managedFields": [{"manager": "kube", "fieldsV1": {"f:spec": {}}}]},
                "spec": {"containers": [
                    {"name": "app", "image": "web:1", "newKnob": {"x": "y"},
                     "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                             {"name": "R\"x", "value": "1"}],
                     "volumeMounts": [{"name": "logs", "mountPath": "/logs", "subPathExpr": "$(POD_NAME)"}],
                     "livenessProbe": {"httpGet": {"path": "/", "port": 80}}},
                    {"name": "app2", "image": "old:1", "ports": [{"containerPort": 1}]}],
                  "initContainers": [{"name": "init", "image": "i:1", "args": ["a", "\\"]}],
                  "volumes": [{"name": "logs", "emptyDir": {"medium": "Memory"}},
                              {"name": "config", "configMap": {"name": "c", "items": []}}],
                  "tolerations": [{"key": "k", "operator": "Exists"}],
                  "securityContext": {"fsGroup": 2000}, "priority": 0,
                  "imagePullSecrets": [{"name": "s"}, {"name": "s"}]},
                "status": {"phase": "Pending", "conditions": []}}}})
}

#[test]
fn pods_read_by_shape_are_answered_as_if_read_in_full() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A pod that already carries a sidecar: its env says so, and it shares nothing.
    let mut carrying = kitchen_sink_case();
    carrying["request"]["object"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "old", "image": "old:1", "volumeMounts": [{"name": "x", "mountPath": "/x"}],
            "env": [{"name": "IS_INJECTED", "value": "true"}, {"name": "POD_NAME", "value": "no"}]}));
    let mut cases = vec![kitchen_sink_case(), carrying];
    for folder in ["tests/conformance", "../shared/conformance"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                cases.push(serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap());
            }
        }
    }
    assert!(cases.len() > 30, "the conformance cases are found");
    let mut shaped = 0;
    for case in &cases {
        let payload = json!({"request": case["request"], "settings": case.get("settings").unwrap_or(&json!({}))});
        for text in [
            serde_json::to_vec(&payload).unwrap(),
            serde_json::to_vec_pretty(&payload).unwrap(),
        ] {
            answers_as_a_full_read(case, &text);
            shaped += usize::from(
                crate::rawjson::shaped::parse(&text, &POD_PAYLOAD)
                    .filter(is_pod_request)
                    .is_some(),
            );
        }
    }
    assert!(shaped > 40, "pod requests are read by shape ({shaped})");
    let sink = validate(
        &serde_json::to_vec(&json!({"request": kitchen_sink_case()["request"], "settings": {}}))
            .unwrap(),
        &mut CaseCluster(&kitchen_sink_case()),
        NOW,
        &mut || 0.5,
    )
    .unwrap();
    let sink: Value = serde_json::from_slice(&sink).unwrap();
    let pod = &sink["mutated_object"];
    assert_eq!(pod["futureField"], json!({"a": [1, 2.5, -0.0, null]}));
    assert_eq!(pod["spec"]["containers"][0]["newKnob"], json!({"x": "y"}));
    assert_eq!(pod["spec"]["containers"][1]["image"], "replaced:1");
    assert_eq!(pod["spec"]["containers"][2]["name"], "agent");
}

/// Every JSON pointer under `value` (the root included).
fn pointers(value: &Value, at: String, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            pointers(
                v,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                into,
            )
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| pointers(v, format!("{at}/{i}"), into)),
        _ => {}
    }
    into.push(at);
}

/// Members injection reads (and some it does not), added where the pod had none.
const ADDED_KEYS: &[&str] = &[
    "name",
    "namespace",
    "generateName",
    "labels",
    "annotations",
    "deletionTimestamp",
    "metadata",
    "spec",
    "status",
    "containers",
    "initContainers",
    "volumes",
    "imagePullSecrets",
    "env",
    "volumeMounts",
    "volumeDevices",
    "value",
    "valueFrom",
    "mountPath",
    "devicePath",
    "subPathExpr",
    "restartPolicy",
    "\u{0}",
    "\u{1}",
];

/// Values of every JSON type, including the shapes injection expects in other places (`None`:
/// the member removed).
fn replacements() -> Vec<Option<Value>> {
    vec![
        None,
        Some(Value::Null),
        Some(json!(true)),
        Some(json!(false)),
        Some(json!(-3)),
        Some(json!("$(POD_NAME)")),
        Some(json!([])),
        Some(json!({})),
        Some(json!([{}])),
        Some(json!([{"name": "app"}])),
        Some(json!({"name": "logs"})),
        Some(json!([null, 1, "x"])),
    ]
}

/// [`replacements`], any integer, or any short string of the characters that matter.
fn replacement() -> impl proptest::strategy::Strategy<Value = Option<Value>> {
    use proptest::prelude::*;
    prop_oneof![
        proptest::sample::select(replacements()),
        any::<i64>().prop_map(|n| Some(json!(n))),
        "[a-z$()/\"\\\\]{0,6}".prop_map(|s| Some(json!(s))),
    ]
}

/// Applies one edit to the request's pod: at `path`, the member `added` (when given and `path`
/// is an object), else the value at `path` itself, replaced by `value` or removed.
fn edit(case: &mut Value, path: &str, added: Option<&str>, value: Option<Value>) {
    let object = &mut case["request"]["object"];
    if let (Some(key), Some(Value::Object(map))) = (added, object.pointer_mut(path)) {
        map.insert(key.to_string(), value.unwrap_or(Value::Null));
        return;
    }
    let Some((parent, key)) = path.rsplit_once('/') else {
        *object = value.unwrap_or(Value::Null);
        return;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    match (object.pointer_mut(parent), value) {
        (Some(Value::Object(map)), Some(value)) => {
            map.insert(key, value);
        }
        (Some(Value::Object(map)), None) => {
            map.remove(&key);
        }
        (Some(Value::Array(items)), Some(value)) => items[key.parse::<usize>().unwrap()] = value,
        (Some(Value::Array(items)), None) => {
            items.remove(key.parse::<usize>().unwrap());
        }
        _ => unreachable!("{path} has a parent"),
    }
}

fn answers_damaged_as_if_read_in_full(case: &Value, pretty: bool) {
    let payload = json!({"request": case["request"], "settings": {}});
    let text = if pretty {
        serde_json::to_vec_pretty(&payload).unwrap()
    } else {
        serde_json::to_vec(&payload).unwrap()
    };
    answers_as_a_full_read(case, &text);
}

/// Every member of the kitchen-sink pod replaced by every type or removed, and every member
/// injection reads added to every object: the shaped read answers exactly as the full read,
/// rejections and their messages included.
#[test]
fn pods_damaged_anywhere_are_answered_as_if_read_in_full() {
    let sink = kitchen_sink_case();
    let mut paths = Vec::new();
    pointers(&sink["request"]["object"], String::new(), &mut paths);
    let mut edits = 0;
    for path in &paths {
        let is_object = sink["request"]["object"]
            .pointer(path)
            .is_some_and(Value::is_object);
        let added: Vec<Option<&str>> = if is_object {
            std::iter::once(None)
                .chain(ADDED_KEYS.iter().copied().map(Some))
                .collect()
        } else {
            vec![None]
        };
        for key in added {
            for value in replacements() {
                let mut case = sink.clone();
                edit(&mut case, path, key, value);
                answers_damaged_as_if_read_in_full(&case, edits % 2 == 1);
                edits += 1;
            }
        }
    }
    assert!(edits > 2_000, "{edits} edits");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Up to three such edits in a row, with any string for the strings.
    #[test]
    fn damaged_pods_are_answered_as_if_read_in_full(
        picks in proptest::collection::vec((
            proptest::prelude::any::<proptest::sample::Index>(),
            proptest::option::of(proptest::sample::select(ADDED_KEYS)),
            replacement(),
        ), 1..4),
        pretty in proptest::prelude::any::<bool>(),
    ) {
        let mut case = kitchen_sink_case();
        for (pick, added, replacement) in picks {
            let mut paths = Vec::new();
            pointers(&case["request"]["object"], String::new(), &mut paths);
            let path = pick.get(&paths).clone();
            edit(&mut case, &path, added, replacement);
        }
        answers_damaged_as_if_read_in_full(&case, pretty);
    }
}
