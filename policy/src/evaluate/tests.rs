//! `evaluate` end to end over an in-memory cluster: the listed and the inline SidecarSets, the
//! whitelist setting, and `validate_settings`.

use super::*;
use serde_json::json;

const NOW: &str = "2026-01-02T03:04:05Z";

/// The cluster: a SidecarSetList's JSON and namespaces that carry only their name label.
pub(super) struct Listing {
    list: Vec<u8>,
    listed: usize,
    /// ControllerRevisions, any namespace.
    pub(super) revisions: Vec<Value>,
}

impl Listing {
    pub(super) fn of(items: &[Value]) -> Self {
        let list = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSetList",
                          "metadata": {}, "items": items});
        Listing {
            list: serde_json::to_vec(&list).unwrap(),
            listed: 0,
            revisions: Vec::new(),
        }
    }
}

impl Cluster for Listing {
    fn list_sidecarsets(&mut self) -> Result<Vec<u8>, String> {
        self.listed += 1;
        Ok(self.list.clone())
    }
    fn namespace_labels(&mut self, name: &str) -> Option<Labels> {
        Some(Labels::from([(
            "kubernetes.io/metadata.name".into(),
            name.into(),
        )]))
    }
    fn get_controller_revision(&mut self, namespace: &str, name: &str) -> Result<Value, String> {
        self.revisions
            .iter()
            .find(|r| r["metadata"]["namespace"] == namespace && r["metadata"]["name"] == name)
            .cloned()
            .ok_or_else(|| format!("controllerrevisions.apps {name:?} not found"))
    }
    /// Selects by `k=v,...` as the API server does.
    fn list_controller_revisions(
        &mut self,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<Value>, String> {
        let selects = |r: &&Value| {
            label_selector.split(',').all(|term| {
                let (key, value) = term.split_once('=').unwrap();
                r["metadata"]["labels"][key] == value
            })
        };
        Ok(self
            .revisions
            .iter()
            .filter(|r| r["metadata"]["namespace"] == namespace)
            .filter(selects)
            .cloned()
            .collect())
    }
}

fn sidecarset(name: &str, app: &str) -> Value {
    let mut sidecarset = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": app}},
                 "containers": [{"name": format!("{name}-agent"), "image": "agent:1"}]}
    });
    admission::apply_defaults(&mut sidecarset);
    sidecarset
}

pub(super) fn pod_create() -> Value {
    json!({"uid": "1", "operation": "CREATE", "namespace": "default",
           "kind": {"group": "", "version": "v1", "kind": "Pod"},
           "object": {"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
                      "spec": {"containers": [{"name": "app", "image": "web:1"}]}}})
}

pub(super) fn mutated(verdict: &Verdict) -> &Value {
    match &verdict.outcome {
        Outcome::Mutate(pod) => pod,
        other => panic!("expected a mutation, got {other:?}"),
    }
}

fn container_names(pod: &Value) -> Vec<&str> {
    container_strings(pod, "name")
}

/// The string member `key` of every container of `pod`, in order.
fn container_strings<'a>(pod: &'a Value, key: &str) -> Vec<&'a str> {
    pod["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[key].as_str().unwrap())
        .collect()
}

/// `pod_create()` with the default settings against `cluster`.
fn evaluate_pod(cluster: &mut Listing) -> Verdict {
    evaluate(
        pod_create(),
        &Settings::default(),
        cluster,
        NOW,
        &mut || 0.5,
    )
}

#[test]
fn listed_and_inline_sidecarsets_inject_the_same_pod() {
    let items = [sidecarset("logs", "web"), sidecarset("other", "db")];
    let mut cluster = Listing::of(&items);
    let listed = evaluate_pod(&mut cluster);
    let inline = Settings {
        sidecar_sets: Some(items.to_vec()),
        ..Settings::default()
    };
    let mut unused = Listing::of(&[]);
    let from_settings = evaluate(pod_create(), &inline, &mut unused, NOW, &mut || 0.5);
    assert_eq!(container_names(mutated(&listed)), ["logs-agent", "app"]);
    assert_eq!(mutated(&listed), mutated(&from_settings));
    assert_eq!(unused.listed, 0, "inline SidecarSets are the whole set");
}

/// §3.1: only requests for the `pods` resource are injected (one that names no resource is
/// judged by its kind).
#[test]
fn a_pod_request_for_another_resource_is_allowed_unchanged() {
    let items = [sidecarset("logs", "web")];
    let with_resource = |resource: &str| {
        let mut request = pod_create();
        request["resource"] = json!({"group": "", "version": "v1", "resource": resource});
        evaluate(
            request,
            &Settings::default(),
            &mut Listing::of(&items),
            NOW,
            &mut || 0.5,
        )
    };
    assert!(matches!(with_resource("pods").outcome, Outcome::Mutate(_)));
    let other = with_resource("podtemplates");
    assert!(matches!(other.outcome, Outcome::Accept), "{other:?}");
}

/// Only a SidecarSet that selects the pod is decoded in full: a broken one elsewhere is not the
/// pod's business, a broken one that selects it is skipped with a warning.
#[test]
fn listed_sidecarsets_that_do_not_decode_are_skipped_with_a_warning_when_they_select() {
    let mut broken_elsewhere = sidecarset("broken-elsewhere", "db");
    broken_elsewhere["spec"]["containers"] = json!("not a list");
    let mut broken_here = sidecarset("broken-here", "web");
    broken_here["spec"]["containers"] = json!({"name": 3});
    let items = [broken_elsewhere, broken_here, sidecarset("logs", "web")];
    let verdict = evaluate_pod(&mut Listing::of(&items));
    assert_eq!(container_names(mutated(&verdict)), ["logs-agent", "app"]);
    assert_eq!(verdict.warnings.len(), 1, "{:?}", verdict.warnings);
    assert!(verdict.warnings[0].contains("\"broken-here\" that does not decode"));
}

/// Go's `json.Unmarshal` reads invalid UTF-8 in a string as U+FFFD, and so does the full decode
/// of a listed SidecarSet: straight from the text, and through `Value` (a duplicated member).
#[test]
fn invalid_utf8_in_a_listed_sidecarset_reads_as_the_replacement_character() {
    let mut plain = sidecarset("plain", "web");
    plain["spec"]["containers"][0]["image"] = json!("agent:@1");
    plain["spec"]["unknownField"] = json!("@");
    let mut duplicated = sidecarset("duplicated", "web");
    duplicated["spec"]["containers"][0]["image"] = json!("agent:@2");
    duplicated["status"] = json!({"matchedPods": 1});
    // Skipped (its containers are not a list), and its warning still names it.
    let mut broken = sidecarset("broken", "web");
    broken["spec"]["containers"] = json!({"name": 3});
    broken["spec"]["unknownField"] = json!("@");
    let text = json!({"items": [plain, duplicated, broken]})
        .to_string()
        .replace("\"status\":", "\"status\":{},\"status\":");
    let mut cluster = Listing::of(&[]);
    cluster.list = text.into_bytes();
    for byte in cluster.list.iter_mut().filter(|b| **b == b'@') {
        *byte = 0xff;
    }
    let verdict = evaluate_pod(&mut cluster);
    let pod = mutated(&verdict);
    assert_eq!(verdict.warnings.len(), 1, "{:?}", verdict.warnings);
    assert!(verdict.warnings[0].contains("\"broken\" that does not decode"));
    assert_eq!(
        container_strings(pod, "image"),
        ["agent:\u{fffd}2", "agent:\u{fffd}1", "web:1"]
    );
}

#[test]
fn a_list_that_is_not_a_sidecarset_list_is_an_error() {
    for list in [&b"{\"items\": 3}"[..], b"not json", b"{\"items\": [1, 2"] {
        let mut cluster = Listing {
            list: list.to_vec(),
            listed: 0,
            revisions: Vec::new(),
        };
        let verdict = evaluate(
            pod_create(),
            &Settings::default(),
            &mut cluster,
            NOW,
            &mut || 0.5,
        );
        assert!(
            matches!(&verdict.outcome, Outcome::Reject { code: 500, message } if message.contains("SidecarSetList")),
            "{verdict:?}"
        );
    }
}

pub(super) fn sidecarset_create(object: Value) -> Value {
    json!({"uid": "2", "operation": "CREATE",
           "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "SidecarSet"},
           "object": object})
}

#[test]
fn the_whitelist_setting_decides_which_patched_annotations_are_allowed() {
    let mut patching = sidecarset("patching", "web");
    patching["spec"]["patchPodMetadata"] =
        json!([{"annotations": {"sidecar.example.com/mode": "on"}, "patchPolicy": "Overwrite"}]);
    let decide = |keys: Option<Vec<String>>| {
        let settings = Settings {
            allow_patch_pod_metadata_keys: keys,
            ..Settings::default()
        };
        evaluate(
            sidecarset_create(patching.clone()),
            &settings,
            &mut Listing::of(&[]),
            NOW,
            &mut || 0.5,
        )
        .outcome
    };
    assert!(matches!(decide(None), Outcome::Reject { code: 422, .. }));
    assert!(matches!(
        decide(Some(vec!["^other/".into()])),
        Outcome::Reject { code: 422, .. }
    ));
    assert!(matches!(
        decide(Some(vec!["example\\.com/".into()])),
        Outcome::Mutate(_)
    ));
}

#[test]
fn validate_settings_rejects_an_invalid_inline_sidecarset_by_index() {
    let mut invalid = sidecarset("no-selector", "web");
    invalid["spec"]["selector"] = Value::Null;
    let settings = Settings {
        sidecar_sets: Some(vec![sidecarset("fine", "web"), invalid]),
        ..Settings::default()
    };
    let error = validate_settings(&settings).unwrap_err();
    assert!(
        matches!(&error, SettingsError::SidecarSet { index: 1, reason } if reason.contains("spec.selector")),
        "{error:?}"
    );
    let valid = Settings {
        sidecar_sets: Some(vec![sidecarset("fine", "web")]),
        ..Settings::default()
    };
    assert_eq!(validate_settings(&valid), Ok(()));
}
