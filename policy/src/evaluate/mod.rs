//! The admission decision for one request: pod injection or SidecarSet defaulting and
//! validation. Pure: the cluster is reached only through the `Cluster` trait.

use crate::admission::{self, FieldError, ValidationContext};
use crate::api::SidecarSet;
use crate::inject;
use crate::revision::HistoryError;
use crate::selector::Labels;
use crate::settings::{Settings, SettingsError};
use serde_json::Value;
use std::borrow::Cow;

mod listed;
mod revisions;
pub mod wire;

/// What the policy may read from the cluster (Kubewarden's context-aware callbacks).
pub trait Cluster {
    /// Every SidecarSet as served: the JSON of a `SidecarSetList`, as the host callback answers.
    fn list_sidecarsets(&mut self) -> Result<Vec<u8>, String>;
    /// The labels of a Namespace; `None` when it cannot be read.
    fn namespace_labels(&mut self, name: &str) -> Option<Labels>;
    /// An `apps/v1` ControllerRevision as served, or why it cannot be read.
    fn get_controller_revision(&mut self, namespace: &str, name: &str) -> Result<Value, String>;
    /// The ControllerRevisions of `namespace` that `label_selector` selects.
    fn list_controller_revisions(
        &mut self,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<Value>, String>;
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Accept,
    /// Admit this object instead of the request's.
    Mutate(Value),
    Reject {
        message: String,
        code: u16,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub warnings: Vec<String>,
}

impl Verdict {
    fn accept() -> Self {
        Verdict {
            outcome: Outcome::Accept,
            warnings: Vec::new(),
        }
    }

    fn reject(message: impl Into<String>, code: u16) -> Self {
        Verdict {
            outcome: Outcome::Reject {
                message: message.into(),
                code,
            },
            warnings: Vec::new(),
        }
    }
}

/// The largest `validate` payload decoded: the API server refuses bodies over 3 MiB, and this
/// keeps a hostile input far below the host's memory cap instead of trapping on it.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// The verdict for a payload over [`MAX_REQUEST_BYTES`].
pub fn too_large(bytes: usize) -> Verdict {
    Verdict::reject(
        format!(
            "the admission request is {bytes} bytes; this policy accepts at most \
             {MAX_REQUEST_BYTES} (the API server itself refuses request bodies over 3 MiB)"
        ),
        413,
    )
}

/// Decide one AdmissionRequest. `now` is the RFC 3339 time written into hash annotations;
/// `draw` gives a number uniform in [0, 1) when a `Partial` revision policy needs one (§3.3).
pub fn evaluate(
    mut request: Value,
    settings: &Settings,
    cluster: &mut dyn Cluster,
    now: &str,
    draw: &mut dyn FnMut() -> f64,
) -> Verdict {
    if !request.is_object() {
        return Verdict::reject("the admission request is not a JSON object", 400);
    }
    // Plain lookups, not `Value::pointer`: these run on every request.
    let text = |path: &[&str]| {
        path.iter()
            .try_fold(&request, |value, key| value.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    if !text(&["subResource"]).is_empty() {
        return Verdict::accept();
    }
    let operation = text(&["operation"]);
    let create = operation == "CREATE";
    let create_or_update = matches!(operation, "CREATE" | "UPDATE");
    // §3.1: a pod request for another resource (e.g. a pod-shaped subresource) is skipped; a
    // request that names none is judged by its kind.
    let resource = text(&["resource", "resource"]);
    let pods = matches!(resource, "" | "pods");
    match (text(&["kind", "group"]), text(&["kind", "kind"])) {
        ("", "Pod") if create && pods => admit_pod(&mut request, settings, cluster, now, draw),
        ("apps.kruise.io", "SidecarSet") if create_or_update => {
            admit_sidecarset(&request, settings, cluster)
        }
        _ => Verdict::accept(),
    }
}

fn admit_pod(
    request: &mut Value,
    settings: &Settings,
    cluster: &mut dyn Cluster,
    now: &str,
    draw: &mut dyn FnMut() -> f64,
) -> Verdict {
    // Taken, not cloned: a large pod is then held once in guest memory.
    let mut pod = request
        .get_mut("object")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if !pod.is_object() {
        return Verdict::reject("pod CREATE request without an object", 400);
    }
    if !is_active(&pod) {
        return Verdict::accept();
    }
    let namespace = [
        pod.get("metadata").and_then(|m| m.get("namespace")),
        request.get("namespace"),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .find(|n| !n.is_empty())
    .unwrap_or("default")
    .to_string();
    let labels = inject::pod::labels(&pod);
    let mut warnings = Vec::new();
    let inline_all: Vec<SidecarSet>;
    let selected: Result<Vec<Cow<'_, SidecarSet>>, _> = match &settings.sidecar_sets {
        Some(inline) => {
            inline_all = listed::decode_inline(inline, &mut warnings);
            let mut lookup = |name: &str| cluster.namespace_labels(name);
            inject::select(&namespace, &labels, &inline_all, &mut lookup)
                .map(|selected| selected.into_iter().map(Cow::Borrowed).collect())
        }
        None => {
            let list = match cluster.list_sidecarsets() {
                Ok(list) => list,
                Err(e) => return Verdict::reject(format!("cannot list SidecarSets: {e}"), 500),
            };
            let mut lookup = |name: &str| cluster.namespace_labels(name);
            match listed::select(&list, &namespace, &labels, &mut lookup, &mut warnings) {
                // Decoded for this request alone: handed over to injection, not borrowed.
                Ok(matched) => Ok(matched.into_iter().map(Cow::Owned).collect()),
                Err(listed::SelectError::Inject(error)) => Err(error),
                Err(listed::SelectError::List(message)) => return Verdict::reject(message, 500),
            }
        }
    };
    let selected = match selected {
        Ok(selected) => selected,
        Err(error) => return Verdict::reject(error.to_string(), 400),
    };
    let revision_namespace = settings.revision_namespace();
    let mut versions = Vec::with_capacity(selected.len());
    for sidecarset in selected {
        match revisions::injected_version(sidecarset, &labels, revision_namespace, cluster, draw) {
            Ok(version) => versions.push(version),
            Err(message) => return Verdict::reject(message, 500),
        }
    }
    let selected = versions;
    let outcome = match inject::inject_selected(&mut pod, &labels, selected, now) {
        Ok(true) => Outcome::Mutate(pod),
        Ok(false) => Outcome::Accept,
        Err(error) => Outcome::Reject {
            message: error.to_string(),
            code: 400,
        },
    };
    Verdict { outcome, warnings }
}

/// Succeeded/Failed pods and pods being deleted are left alone (§3.1).
fn is_active(pod: &Value) -> bool {
    let phase = pod
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str);
    let deleting = pod
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|t| !t.is_null());
    !deleting && !matches!(phase, Some("Succeeded" | "Failed"))
}

fn admit_sidecarset(request: &Value, settings: &Settings, cluster: &mut dyn Cluster) -> Verdict {
    let version = request
        .pointer("/kind/version")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !matches!(version, "v1alpha1" | "v1beta1") {
        return Verdict::reject(format!("unsupported SidecarSet version {version:?}"), 400);
    }
    let Some(object) = request.get("object").filter(|o| o.is_object()) else {
        return Verdict::reject("SidecarSet request without an object", 400);
    };
    let old = match request.get("oldObject").filter(|o| !o.is_null()) {
        Some(old) => match SidecarSet::deserialize_value(old) {
            Ok(old) => Some(old),
            Err(error) => return Verdict::reject(format!("invalid old SidecarSet: {error}"), 400),
        },
        None => None,
    };
    let mut warnings = Vec::new();
    let result = default_and_validate(
        object,
        old.as_ref(),
        settings,
        &mut Live { settings, cluster },
        &mut warnings,
    );
    let outcome = match result {
        Ok(defaulted) => Outcome::Mutate(defaulted),
        Err(Invalid::Problems(name, problems)) => Outcome::Reject {
            message: describe(&name, &problems),
            code: 422,
        },
        Err(Invalid::Other(message, code)) => Outcome::Reject { message, code },
    };
    Verdict { outcome, warnings }
}

enum Invalid {
    Problems(String, Vec<FieldError>),
    Other(String, u16),
}

/// What SidecarSet validation reads besides the object: the SidecarSets rule 15 compares
/// with, and the ControllerRevision rule 6 resolves.
trait AdmissionReads {
    fn others(&mut self, warnings: &mut Vec<String>) -> Result<Vec<SidecarSet>, String>;
    /// `None` when there is no cluster to resolve a revision in.
    fn history(&mut self, sidecarset: &SidecarSet) -> Option<Result<SidecarSet, HistoryError>>;
}

/// A request's reads: the SidecarSets in force and the cluster's revisions.
struct Live<'a> {
    settings: &'a Settings,
    cluster: &'a mut dyn Cluster,
}

impl AdmissionReads for Live<'_> {
    fn others(&mut self, warnings: &mut Vec<String>) -> Result<Vec<SidecarSet>, String> {
        sidecarsets(self.settings, self.cluster, warnings)
    }
    fn history(&mut self, sidecarset: &SidecarSet) -> Option<Result<SidecarSet, HistoryError>> {
        revisions::history(self.cluster, self.settings.revision_namespace(), sidecarset)
    }
}

/// `validate_settings`' reads: the inline SidecarSets, and no cluster.
struct Offline<'a>(&'a [SidecarSet]);

impl AdmissionReads for Offline<'_> {
    fn others(&mut self, _: &mut Vec<String>) -> Result<Vec<SidecarSet>, String> {
        Ok(self.0.to_vec())
    }
    fn history(&mut self, _: &SidecarSet) -> Option<Result<SidecarSet, HistoryError>> {
        None
    }
}

/// §2.1 defaults then §2.2 validation.
fn default_and_validate(
    object: &Value,
    old: Option<&SidecarSet>,
    settings: &Settings,
    reads: &mut dyn AdmissionReads,
    warnings: &mut Vec<String>,
) -> Result<Value, Invalid> {
    let mut defaulted = object.clone();
    admission::apply_defaults(&mut defaulted);
    admission::add_marshalled_members(&mut defaulted);
    let sidecarset = SidecarSet::deserialize_value(&defaulted)
        .map_err(|e| Invalid::Other(format!("invalid SidecarSet: {e}"), 400))?;
    let patterns = settings
        .patch_key_patterns()
        .map_err(|e| Invalid::Other(e.to_string(), 500))?;
    let mut others = reads.others(warnings).map_err(|e| Invalid::Other(e, 500))?;
    others.retain(|other| other.name() != sidecarset.name());
    let unresolved_revision = reads
        .history(&sidecarset)
        .and_then(Result::err)
        .map(|e| e.to_string());
    let context = ValidationContext {
        old,
        others: &others,
        allowed_patch_keys: patterns.as_deref(),
        unresolved_revision: unresolved_revision.as_deref(),
    };
    let problems = admission::validate(&sidecarset, &context);
    if problems.is_empty() {
        Ok(defaulted)
    } else {
        Err(Invalid::Problems(sidecarset.name().to_string(), problems))
    }
}

fn describe(name: &str, problems: &[FieldError]) -> String {
    let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
    format!("SidecarSet {name:?} is invalid: {}", list.join("; "))
}

/// The SidecarSets in force, decoded in full: inline ones from the settings (defaulted) or the
/// cluster's. Objects that do not decode are skipped with a warning, as an informer drops them.
fn sidecarsets(
    settings: &Settings,
    cluster: &mut dyn Cluster,
    warnings: &mut Vec<String>,
) -> Result<Vec<SidecarSet>, String> {
    match &settings.sidecar_sets {
        Some(inline) => Ok(listed::decode_inline(inline, warnings)),
        None => {
            let list = cluster
                .list_sidecarsets()
                .map_err(|e| format!("cannot list SidecarSets: {e}"))?;
            listed::decode_all(&list, warnings)
        }
    }
}

/// `validate_settings`: the whitelist compiles and every inline SidecarSet is valid.
pub fn validate_settings(settings: &Settings) -> Result<(), SettingsError> {
    settings.patch_key_patterns()?;
    if let Some(namespace) = &settings.revision_namespace {
        let problems = admission::validate::k8s_names::is_dns1123_label(namespace);
        if !problems.is_empty() {
            return Err(SettingsError::RevisionNamespace {
                namespace: namespace.clone(),
                reason: problems.join("; "),
            });
        }
    }
    let Some(inline) = &settings.sidecar_sets else {
        return Ok(());
    };
    let mut defaulted = Vec::new();
    for (index, item) in inline.iter().enumerate() {
        let mut item = item.clone();
        admission::apply_defaults(&mut item);
        let sidecarset =
            SidecarSet::deserialize_value(&item).map_err(|e| SettingsError::SidecarSet {
                index,
                reason: e.to_string(),
            })?;
        defaulted.push((item, sidecarset));
    }
    let all: Vec<SidecarSet> = defaulted.iter().map(|(_, s)| s.clone()).collect();
    for (index, (item, _)) in defaulted.iter().enumerate() {
        let result =
            default_and_validate(item, None, settings, &mut Offline(&all), &mut Vec::new());
        match result {
            Ok(_) => {}
            Err(Invalid::Problems(name, problems)) => {
                return Err(SettingsError::SidecarSet {
                    index,
                    reason: describe(&name, &problems),
                });
            }
            Err(Invalid::Other(reason, _)) => {
                return Err(SettingsError::SidecarSet { index, reason });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
