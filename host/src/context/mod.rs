//! Answers Kubewarden's Kubernetes host callbacks from in-memory objects, and records / replays
//! host-capability sessions in kwctl's file format.

mod allow;
mod loader;
mod masks;
mod request;
mod selector;
mod session;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};
use thiserror::Error;

use crate::engine::HostCallbacks;

pub(crate) use allow::read_target;
pub use allow::{AllowList, ContextAwareResources};
pub use request::{CallbackRequestType, ParseError};
pub use selector::{FieldSelector, LabelSelector};
pub use session::{
    Exchange, ExchangeResponse, REPLAY_EXHAUSTED_MESSAGE, SessionError, SessionRecorder,
    SessionReplayer,
};

/// Errors while building a [`ClusterContext`].
#[derive(Debug, Error)]
pub enum ContextError {
    /// A file or folder could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The path that failed.
        path: String,
        /// The OS error.
        message: String,
    },
    /// A file is not valid JSON/YAML.
    #[error("cannot parse {path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser error.
        message: String,
    },
    /// A document is not a Kubernetes object.
    #[error("{source_name}: {message}")]
    InvalidObject {
        /// Where the object came from (file name, or `object #N`).
        source_name: String,
        /// What is wrong with it.
        message: String,
    },
}

/// What a Kubernetes callback answers when there is no cluster, as kwctl without a kube client.
pub const NO_CLUSTER_MESSAGE: &str = "kube::Client was not initialized properly";

type ResourceKey = (String, String);

/// Objects grouped by (apiVersion, kind), each group sorted by (namespace, name) like the API server.
#[derive(Debug, Clone, Default)]
pub struct ClusterContext {
    objects: BTreeMap<ResourceKey, Vec<Value>>,
}

fn namespace_of(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
}

fn name_of(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Lower-case plural of a kind, as the API server names resources in its messages.
fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

impl ClusterContext {
    /// Builds a context from objects; `kind: *List` objects contribute their `items`, nulls are skipped.
    pub fn from_objects(objects: Vec<Value>) -> Result<Self, ContextError> {
        let mut context = Self::default();
        for (index, object) in objects.into_iter().enumerate() {
            context.insert(object, &format!("object #{index}"))?;
        }
        Ok(context)
    }

    /// Loads every `*.json`, `*.yaml` and `*.yml` file of `dir` (not recursive; YAML may hold several documents).
    pub fn from_dir(dir: &Path) -> Result<Self, ContextError> {
        let mut context = Self::default();
        for (source, object) in loader::load_dir(dir)? {
            context.insert(object, &source)?;
        }
        Ok(context)
    }

    /// Adds one object (or the items of a List); objects with the same identity are replaced.
    pub fn insert(&mut self, object: Value, source_name: &str) -> Result<(), ContextError> {
        let invalid = |message: &str| ContextError::InvalidObject {
            source_name: source_name.to_string(),
            message: message.to_string(),
        };
        if object.is_null() {
            return Ok(());
        }
        let is_list = object
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"));
        if let (true, Some(items)) = (is_list, object.get("items").and_then(Value::as_array)) {
            for item in items {
                self.insert(item.clone(), source_name)?;
            }
            return Ok(());
        }
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("object has no apiVersion"))?
            .to_string();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("object has no kind"))?
            .to_string();
        if name_of(&object).is_empty() {
            return Err(invalid("object has no metadata.name"));
        }
        let group = self.objects.entry((api_version, kind)).or_default();
        let key = |o: &Value| (namespace_of(o).map(str::to_string), name_of(o).to_string());
        let new_key = key(&object);
        match group.binary_search_by(|o| key(o).cmp(&new_key)) {
            Ok(i) => group[i] = object,
            Err(i) => group.insert(i, object),
        }
        Ok(())
    }

    /// Number of objects held.
    pub fn len(&self) -> usize {
        self.objects.values().map(Vec::len).sum()
    }

    /// True when the context holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Answers `list_resources_all` / `list_resources_by_namespace` with a `<Kind>List`.
    pub fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
        field_masks: Option<&BTreeSet<String>>,
    ) -> Result<Value, String> {
        let labels = LabelSelector::parse(label_selector.unwrap_or_default())?;
        let fields = FieldSelector::parse(field_selector.unwrap_or_default())?;
        let items: Vec<Value> = self
            .objects
            .get(&(api_version.to_string(), kind.to_string()))
            .into_iter()
            .flatten()
            .filter(|o| namespace.is_none() || namespace_of(o) == namespace)
            .filter(|o| labels.matches(o) && fields.matches(o))
            .map(|o| {
                let mut o = o.clone();
                masks::strip_for_list(&mut o);
                masks::apply_field_masks(&mut o, field_masks);
                o
            })
            .collect();
        Ok(json!({
            "apiVersion": api_version,
            "kind": format!("{kind}List"),
            "metadata": {},
            "items": items,
        }))
    }

    /// Answers `get_resource`; a missing object gives the API server's not-found text.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: Option<&BTreeSet<String>>,
    ) -> Result<Value, String> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        self.objects
            .get(&(api_version.to_string(), kind.to_string()))
            .into_iter()
            .flatten()
            .find(|o| name_of(o) == name && namespace_of(o) == namespace)
            .map(|o| {
                let mut o = o.clone();
                masks::apply_field_masks(&mut o, field_masks);
                o
            })
            .ok_or_else(|| format!("{} \"{name}\" not found", plural(kind)))
    }

    /// Evaluates one decoded request.
    pub fn answer(&self, request: &CallbackRequestType) -> Result<Value, String> {
        match request {
            CallbackRequestType::KubernetesListResourceAll {
                api_version,
                kind,
                label_selector,
                field_selector,
                field_masks,
            } => self.list(
                api_version,
                kind,
                None,
                label_selector.as_deref(),
                field_selector.as_deref(),
                field_masks.as_ref(),
            ),
            CallbackRequestType::KubernetesListResourceNamespace {
                api_version,
                kind,
                namespace,
                label_selector,
                field_selector,
                field_masks,
            } => self.list(
                api_version,
                kind,
                Some(namespace),
                label_selector.as_deref(),
                field_selector.as_deref(),
                field_masks.as_ref(),
            ),
            CallbackRequestType::KubernetesGetResource {
                api_version,
                kind,
                name,
                namespace,
                field_masks,
                ..
            } => self.get(
                api_version,
                kind,
                name,
                namespace.as_deref(),
                field_masks.as_ref(),
            ),
            CallbackRequestType::KubernetesCanI { .. } => {
                Err("kubernetes/can_i is not supported by the in-memory cluster context".into())
            }
            other => Err(format!(
                "{other:?} needs network access, which the in-memory cluster context does not have"
            )),
        }
    }
}

fn unsupported(namespace: &str, operation: &str, e: ParseError) -> String {
    match e {
        ParseError::Invalid(message) => message,
        ParseError::Unsupported(_) => {
            format!("host capability {namespace}/{operation} is not available in this host")
        }
    }
}

impl HostCallbacks for ClusterContext {
    fn call(
        &self,
        _: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        let request = CallbackRequestType::from_host_call(namespace, operation, payload)
            .map_err(|e| unsupported(namespace, operation, e))?;
        let answer = self.answer(&request)?;
        serde_json::to_vec(&answer).map_err(|e| e.to_string())
    }
}

/// No cluster at all: Kubernetes callbacks fail like kwctl's without a kube client.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCluster;

impl HostCallbacks for NoCluster {
    fn call(
        &self,
        _: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        CallbackRequestType::from_host_call(namespace, operation, payload)
            .map_err(|e| unsupported(namespace, operation, e))?;
        match namespace {
            "kubernetes" => Err(NO_CLUSTER_MESSAGE.to_string()),
            _ => Err(format!(
                "host capability {namespace}/{operation} is not available in this host"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_api_server_names() {
        assert_eq!(plural("Namespace"), "namespaces");
        assert_eq!(plural("SidecarSet"), "sidecarsets");
        assert_eq!(plural("Ingress"), "ingresses");
        assert_eq!(plural("NetworkPolicy"), "networkpolicies");
        assert_eq!(plural("Gateway"), "gateways");
    }
}
