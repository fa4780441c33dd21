//! The context-aware allow-list: which Kubernetes kinds a policy may list or get, checked before
//! any host answers (policy-evaluator's `can_access_kubernetes_resource`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::CallbackRequestType;
use crate::engine::HostCallbacks;

/// What policy-evaluator puts before a capability handler's error.
pub const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

/// `(apiVersion, kind)` pairs a policy has been granted, compared exactly (case-sensitive).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextAwareResources {
    granted: BTreeSet<(String, String)>,
}

impl ContextAwareResources {
    /// Grants nothing: every list/get is refused (kwctl without `--allow-context-aware`).
    pub fn none() -> Self {
        Self::default()
    }

    /// The `contextAwareResources` of a module's `io.kubewarden.metadata` (nothing when unannotated).
    pub fn declared_by(metadata: Option<&Value>) -> Self {
        let granted = metadata
            .and_then(|m| m.get("contextAwareResources"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let api_version = entry.get("apiVersion")?.as_str()?;
                let kind = entry.get("kind")?.as_str()?;
                Some((api_version.to_string(), kind.to_string()))
            })
            .collect();
        Self { granted }
    }

    /// True when no kind is granted.
    pub fn is_empty(&self) -> bool {
        self.granted.is_empty()
    }

    /// Whether `api_version`/`kind` may be read.
    pub fn grants(&self, api_version: &str, kind: &str) -> bool {
        self.granted
            .iter()
            .any(|(v, k)| v == api_version && k == kind)
    }

    /// The granted pairs as `apiVersion/kind`, for messages.
    pub fn describe(&self) -> String {
        let names: Vec<String> = self
            .granted
            .iter()
            .map(|(v, k)| format!("{v}/{k}"))
            .collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

/// The resource a Kubernetes read names, `None` for every other call (`can_i` included, as upstream).
pub(crate) fn read_target(
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Option<(String, String)> {
    if namespace != "kubernetes" {
        return None;
    }
    target_of(&CallbackRequestType::from_host_call(namespace, operation, payload).ok()?)
}

/// The `(apiVersion, kind)` a decoded request reads, for the Kubernetes reads only.
fn target_of(request: &CallbackRequestType) -> Option<(String, String)> {
    match request {
        CallbackRequestType::KubernetesListResourceAll {
            api_version, kind, ..
        }
        | CallbackRequestType::KubernetesListResourceNamespace {
            api_version, kind, ..
        }
        | CallbackRequestType::KubernetesGetResource {
            api_version, kind, ..
        } => Some((api_version.clone(), kind.clone())),
        _ => None,
    }
}

/// Refuses Kubernetes reads of kinds outside `granted`, then lets `host` answer everything else.
#[derive(Debug, Clone)]
pub struct AllowList<H> {
    host: H,
    granted: ContextAwareResources,
}

impl<H: HostCallbacks> AllowList<H> {
    /// Puts the allow-list in front of `host`.
    pub fn new(host: H, granted: ContextAwareResources) -> Self {
        Self { host, granted }
    }

    /// The host behind the allow-list.
    pub fn inner(&self) -> &H {
        &self.host
    }

    /// What the policy may read.
    pub fn granted(&self) -> &ContextAwareResources {
        &self.granted
    }
}

impl<H: HostCallbacks> HostCallbacks for AllowList<H> {
    fn call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        // Decoded once: for the allow-list, and to tell a handler's error from a decode error.
        let request = CallbackRequestType::from_host_call(namespace, operation, payload).ok();
        if let Some((api_version, kind)) = request.as_ref().and_then(target_of)
            && !self.granted.grants(&api_version, &kind)
        {
            tracing::error!(
                resource_requested = %format!("{api_version}/{kind}"),
                resources_allowed = %self.granted.describe(),
                "Policy tried to access a Kubernetes resource it doesn't have access to"
            );
            return Err(format!(
                "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. The violation has been reported."
            ));
        }
        // policy-evaluator decodes the request before its handler runs (a decode error stays
        // bare) and prefixes whatever error the handler answers.
        let answer = self.host.call(binding, namespace, operation, payload);
        match answer {
            Err(message) if request.is_some() => Err(format!("{CALLBACK_FAILURE}{message}")),
            answer => answer,
        }
    }

    fn log(&self, payload: &[u8]) {
        self.host.log(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Echo;

    impl HostCallbacks for Echo {
        fn call(&self, _: &str, _: &str, operation: &str, _: &[u8]) -> Result<Vec<u8>, String> {
            Ok(operation.as_bytes().to_vec())
        }
    }

    struct Failing;

    impl HostCallbacks for Failing {
        fn call(&self, _: &str, _: &str, _: &str, _: &[u8]) -> Result<Vec<u8>, String> {
            Err("the server is away".into())
        }
    }

    /// As policy-evaluator: a handler's error is a "Callback evaluation failure"; a request that
    /// does not decode, or one the allow-list refuses, is answered bare.
    #[test]
    fn handler_errors_are_callback_evaluation_failures() {
        let metadata =
            json!({"contextAwareResources": [{"apiVersion": "v1", "kind": "Namespace"}]});
        let host = AllowList::new(Failing, ContextAwareResources::declared_by(Some(&metadata)));
        let namespaces = br#"{"api_version":"v1","kind":"Namespace","label_selector":null,"field_selector":null}"#;
        assert_eq!(
            host.call("kubewarden", "kubernetes", "list_resources_all", namespaces)
                .unwrap_err(),
            "Callback evaluation failure: the server is away"
        );
        let garbage = host.call("kubewarden", "kubernetes", "list_resources_all", b"{");
        assert_eq!(garbage.unwrap_err(), "the server is away");
        let secret = br#"{"api_version":"v1","kind":"Secret","name":"s","namespace":"default","disable_cache":false}"#;
        let refused = host.call("kubewarden", "kubernetes", "get_resource", secret);
        assert!(
            refused
                .unwrap_err()
                .starts_with("Policy has not been granted access")
        );
    }

    #[test]
    fn only_declared_kinds_are_read_and_other_calls_pass() {
        let metadata =
            json!({"contextAwareResources": [{"apiVersion": "v1", "kind": "Namespace"}]});
        let granted = ContextAwareResources::declared_by(Some(&metadata));
        assert!(granted.grants("v1", "Namespace"));
        assert!(!granted.grants("v1", "namespace"), "case-sensitive");
        let host = AllowList::new(Echo, granted);
        let namespaces = br#"{"api_version":"v1","kind":"Namespace","label_selector":null,"field_selector":null}"#;
        assert!(
            host.call("kubewarden", "kubernetes", "list_resources_all", namespaces)
                .is_ok()
        );
        let secret = br#"{"api_version":"v1","kind":"Secret","name":"s","namespace":"default","disable_cache":false}"#;
        assert_eq!(
            host.call("kubewarden", "kubernetes", "get_resource", secret)
                .unwrap_err(),
            "Policy has not been granted access to Kubernetes v1/Secret resources. The violation has been reported."
        );
        let can_i = br#"{"subject_access_review":{"groups":null,"resource_attributes":{"namespace":"default","verb":"get","group":"","resource":"secrets"},"user":"alice"},"disable_cache":false}"#;
        assert!(
            host.call("kubewarden", "kubernetes", "can_i", can_i)
                .is_ok()
        );
    }

    #[test]
    fn unannotated_modules_are_granted_nothing() {
        assert!(ContextAwareResources::declared_by(None).is_empty());
        assert_eq!(ContextAwareResources::none().describe(), "none");
    }
}
