//! Field selectors: `metadata.name`, `metadata.namespace` and the per-type fields the API server supports.

use serde_json::Value;

use crate::error::ApiError;
use crate::meta::path_string;
use crate::resources::{ResourceDef, View};

#[derive(Debug, Clone, PartialEq)]
struct Term {
    path: String,
    negate: bool,
    value: String,
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// Maps a field label of `def` to the path in the stored object, or `None` if unsupported.
fn stored_path(def: &ResourceDef, label: &str) -> Option<String> {
    if label == "metadata.name" || (label == "metadata.namespace" && def.namespaced) {
        return Some(label.to_string());
    }
    match (def.storage, def.view) {
        ("pods", _) if POD_FIELDS.contains(&label) => Some(label.to_string()),
        ("namespaces", _) if label == "status.phase" => Some(label.to_string()),
        ("events", View::Native) if EVENT_FIELDS.contains(&label) => Some(match label {
            "source" => "source.component".to_string(),
            other => other.to_string(),
        }),
        ("events", View::EventsV1) => {
            let core = if let Some(rest) = label.strip_prefix("regarding.") {
                format!("involvedObject.{rest}")
            } else {
                match label {
                    "reportingController" => "reportingComponent".to_string(),
                    other => other.to_string(),
                }
            };
            EVENT_FIELDS
                .contains(&core.as_str())
                .then_some(match core.as_str() {
                    "source" => "source.component".to_string(),
                    _ => core,
                })
        }
        _ => None,
    }
}

impl FieldSelector {
    /// Parses `metadata.name=x,spec.nodeName!=y`.
    pub fn parse(def: &ResourceDef, sel: &str) -> Result<FieldSelector, ApiError> {
        let mut terms = Vec::new();
        for part in sel.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (label, negate, value) = if let Some((l, v)) = part.split_once("!=") {
                (l, true, v)
            } else if let Some((l, v)) = part.split_once("==") {
                (l, false, v)
            } else if let Some((l, v)) = part.split_once('=') {
                (l, false, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid field selector: invalid selector: '{sel}'; can't understand '{part}'"
                )));
            };
            let label = label.trim();
            let path = stored_path(def, label).ok_or_else(|| {
                ApiError::bad_request(format!("field label not supported: {label}"))
            })?;
            terms.push(Term {
                path,
                negate,
                value: value.trim().to_string(),
            });
        }
        Ok(FieldSelector { terms })
    }

    /// Whether a stored object matches.
    pub fn matches(&self, obj: &Value) -> bool {
        self.terms
            .iter()
            .all(|t| (path_string(obj, &t.path) == t.value) != t.negate)
    }

    /// The exact name asked for by `metadata.name=`, if any.
    pub fn exact_name(&self) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.path == "metadata.name" && !t.negate)
            .map(|t| t.value.as_str())
    }
}
