//! The module's whole call (`wire::validate`, natively, where a panic shows its message) on the
//! conformance cases damaged at random: values swapped for other types, other cases' subtrees and
//! deep nesting, members added or dropped, bytes flipped, cut or repeated, in the request, the
//! settings and the listed SidecarSets. Every call must answer; a panic is a trap in policy.wasm.
//! `MUTATED_CASES=N` runs N rounds instead of the default (a longer hunt).

use serde_json::{Value, json};
use sidecarset_policy::evaluate::{Cluster, validate_settings, wire};
use sidecarset_policy::selector::Labels;
use sidecarset_policy::settings::Settings;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A small deterministic generator (xorshift).
struct Random(u64);

impl Random {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The case's cluster: its SidecarSetList text (perhaps damaged), Namespaces and revisions.
struct CaseCluster {
    list: Vec<u8>,
    namespaces: Vec<Value>,
    revisions: Vec<Value>,
}

impl Cluster for CaseCluster {
    fn list_sidecarsets(&mut self) -> Result<Vec<u8>, String> {
        Ok(self.list.clone())
    }
    fn namespace_labels(&mut self, name: &str) -> Option<Labels> {
        match self
            .namespaces
            .iter()
            .find(|ns| ns["metadata"]["name"] == name)
        {
            Some(ns) => serde_json::from_value(ns["metadata"]["labels"].clone()).ok(),
            None => Some(Labels::from([(
                "kubernetes.io/metadata.name".to_string(),
                name.to_string(),
            )])),
        }
    }
    fn get_controller_revision(&mut self, _: &str, name: &str) -> Result<Value, String> {
        let found = self
            .revisions
            .iter()
            .find(|r| r["metadata"]["name"] == name);
        found.cloned().ok_or_else(|| format!("{name:?} not found"))
    }
    fn list_controller_revisions(&mut self, _: &str, _: &str) -> Result<Vec<Value>, String> {
        Ok(self.revisions.clone())
    }
}

/// Field names the policy reads, to be added where they do not belong.
const KEYS: &[&str] = &[
    "containers",
    "initContainers",
    "name",
    "image",
    "env",
    "volumeMounts",
    "volumes",
    "podInjectPolicy",
    "upgradeStrategy",
    "upgradeType",
    "hotUpgradeEmptyImage",
    "shareVolumePolicy",
    "transferEnv",
    "sourceContainerName",
    "sourceContainerNameFrom",
    "envNames",
    "patchPodMetadata",
    "annotations",
    "labels",
    "patchPolicy",
    "selector",
    "matchLabels",
    "matchExpressions",
    "namespace",
    "namespaceSelector",
    "injectionStrategy",
    "paused",
    "revision",
    "updateStrategy",
    "partition",
    "maxUnavailable",
    "resourcesPolicy",
    "resourceExpr",
    "targetContainerMode",
    "targetContainersNameRegex",
    "imagePullSecrets",
    "restartPolicy",
    "resources",
    "limits",
    "mountPath",
    "subPathExpr",
    "operator",
    "values",
    "kruise.io/sidecarset-hash",
    "kruise.io/sidecarset-injected-list",
    "metadata",
    "spec",
    "object",
    "oldObject",
    "operation",
    "kind",
    "settings",
];

/// Strings that mean something somewhere in a SidecarSet or a pod.
const STRINGS: &[&str] = &[
    "",
    "x",
    "100%",
    "-5%",
    "150%",
    "99999999999999999999%",
    "1e9",
    "-1",
    "1Gi",
    "0.5Gi",
    "NaN",
    "max(cpu, 1)",
    "cpu*2",
    "cpu/0",
    "(",
    "In",
    "NotIn",
    "Exists",
    "Always",
    "BeforeAppContainer",
    "AfterAppContainer",
    "HotUpgrade",
    "ColdUpgrade",
    "enabled",
    "Overwrite",
    "MergePatchJson",
    "{\"a\":1}",
    "[",
    "a/b",
    ".*",
    "\\",
    "é\u{0}\u{1F600}",
    "app",
    "9223372036854775808",
    "kruise.io/sidecarset-hash",
];

fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                pointers(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// A replacement: another type, a telling string, deep nesting or a subtree of `donor`.
fn replacement(random: &mut Random, donor: &Value) -> Value {
    match random.below(12) {
        0 => Value::Null,
        1 => json!(random.below(2) == 1),
        2 => json!(*random.pick(&[0i64, -1, 2, i64::MAX, i64::MIN, 2_147_483_648])),
        3 => json!(*random.pick(&[u64::MAX as f64, 1.5, -1e308])),
        4..=6 => json!(random.pick(STRINGS)),
        7 => json!([]),
        8 => json!({}),
        9 => (0..random.below(300)).fold(Value::Null, |inner, i| {
            if i % 2 == 0 {
                json!([inner])
            } else {
                json!({"a": inner})
            }
        }),
        _ => {
            let mut paths = Vec::new();
            pointers(donor, String::new(), &mut paths);
            let path = random.pick(&paths);
            donor.pointer(path).cloned().unwrap_or_default()
        }
    }
}

/// One edit somewhere in `value`: replace a node, add a member, drop one, or grow an array.
fn edit(random: &mut Random, value: &mut Value, donor: &Value) {
    let mut paths = Vec::new();
    pointers(value, String::new(), &mut paths);
    let path = random.pick(&paths).clone();
    let new = replacement(random, donor);
    let action = random.below(5);
    let Some(node) = value.pointer_mut(&path) else {
        return;
    };
    match (action, node) {
        (0, Value::Object(map)) => {
            map.insert(random.pick(KEYS).to_string(), new);
        }
        (1, Value::Object(map)) if !map.is_empty() => {
            let key = map.keys().nth(random.below(map.len())).cloned();
            map.remove(&key.unwrap_or_default());
        }
        (2, Value::Array(items)) if !items.is_empty() => {
            let copy = random.pick(items).clone();
            items.push(copy);
        }
        (_, node) => *node = new,
    }
}

/// Text damage: a flipped bit, a cut, an inserted token, a dropped or repeated stretch.
fn damage(random: &mut Random, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    let at = random.below(bytes.len());
    match random.below(5) {
        0 => bytes[at] ^= 1 << random.below(8),
        1 => bytes.truncate(at),
        2 => {
            let tokens: [&[u8]; 10] = [
                b"\\u0000", b"\\ud800", b"\"", b"{", b"]", b",", b"\\", b"\xff", b"\\u0001",
                b"1e999",
            ];
            let token = *random.pick(&tokens);
            bytes.splice(at..at, token.iter().copied());
        }
        3 => {
            let end = (at + random.below(64)).min(bytes.len());
            bytes.drain(at..end);
        }
        _ => {
            let end = (at + random.below(200)).min(bytes.len());
            let stretch = bytes[at..end].to_vec();
            let to = random.below(bytes.len());
            bytes.splice(to..to, stretch);
        }
    }
}

fn cases() -> Vec<Value> {
    let dir = sidecarset_tests::repo_root().join("tests/conformance");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/conformance")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| serde_json::from_slice(&std::fs::read(path).expect("case")).expect("case JSON"))
        .collect()
}

#[test]
fn damaged_cases_are_answered_without_panicking() {
    let rounds = std::env::var("MUTATED_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000);
    let cases = cases();
    assert!(cases.len() > 40, "the repository's conformance cases");
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..rounds {
        let (case, donor) = (random.pick(&cases), random.pick(&cases));
        let mut request = case["request"].clone();
        let mut settings = case.get("settings").cloned().unwrap_or(json!({}));
        let mut listed = case["sidecarSets"].as_array().cloned().unwrap_or_default();
        for _ in 0..1 + random.below(4) {
            match random.below(10) {
                0..=4 => edit(&mut random, &mut request, donor),
                5..=7 if !listed.is_empty() => {
                    let index = random.below(listed.len());
                    edit(&mut random, &mut listed[index], donor);
                }
                8 => edit(&mut random, &mut settings, donor),
                _ => listed.extend(
                    donor["sidecarSets"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .take(1)
                        .cloned(),
                ),
            }
        }
        let mut payload = json!({"request": request, "settings": settings})
            .to_string()
            .into_bytes();
        let mut list = json!({"kind": "SidecarSetList", "items": listed})
            .to_string()
            .into_bytes();
        match random.below(8) {
            0 => damage(&mut random, &mut payload),
            1 => damage(&mut random, &mut list),
            _ => {}
        }
        let mut cluster = CaseCluster {
            list,
            namespaces: case["namespaces"].as_array().cloned().unwrap_or_default(),
            revisions: case["controllerRevisions"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        };
        let answer = catch_unwind(AssertUnwindSafe(|| {
            if let Ok(settings) = Settings::from_value(&settings) {
                let _ = validate_settings(&settings);
            }
            wire::validate(&payload, &mut cluster, "2026-12-04T00:00:00Z", &mut || 0.5)
        }));
        let answer = answer.unwrap_or_else(|_| {
            panic!(
                "round {round} of {}: panicked on\n{}\nwith the list\n{}",
                case["name"],
                String::from_utf8_lossy(&payload),
                String::from_utf8_lossy(&cluster.list)
            )
        });
        let answer = answer.expect("the answer serialises");
        // A host reads the answer with serde_json, as it read the request and the list: text
        // nested past its limit never reaches the module, and what it answers to such text may
        // be as deep.
        let unreadable = |text: &[u8]| serde_json::from_slice::<Value>(text).is_err();
        let answer: Value = match serde_json::from_slice(&answer) {
            Ok(answer) => answer,
            Err(_) if unreadable(&payload) || unreadable(&cluster.list) => continue,
            Err(e) => panic!(
                "round {round}: the answer is not JSON ({e}) to\n{}\nwith the list\n{}",
                String::from_utf8_lossy(&payload),
                String::from_utf8_lossy(&cluster.list)
            ),
        };
        match answer["accepted"].as_bool() {
            Some(true) => accepted += 1,
            Some(false) => rejected += 1,
            None => panic!("round {round}: not a ValidationResponse: {answer}"),
        }
    }
    // The damage is varied enough to reach both verdicts (not only the parse errors).
    assert!(
        accepted > rounds / 10 && rejected > rounds / 10,
        "{accepted} accepted, {rejected} rejected"
    );
}
