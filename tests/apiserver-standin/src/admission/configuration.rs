//! Mutating and validating webhook configurations: the defaults and validation kube-apiserver
//! applies when they are written, and the webhooks they hold, read in the order it calls them.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use crate::error::Cause;
use crate::selectors::LabelSelector;

/// Storage keys of the two configuration types.
pub const MUTATING: &str = "mutatingwebhookconfigurations";
/// See [`MUTATING`].
pub const VALIDATING: &str = "validatingwebhookconfigurations";

/// Which chain a webhook belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// Called first, in configuration-name order; may patch the object.
    Mutating,
    /// Called after built-in validation; may only allow or deny.
    Validating,
}

/// `failurePolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    /// A call that fails rejects the request (the default).
    Fail,
    /// A call that fails is skipped.
    Ignore,
}

/// Where a webhook is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `clientConfig.url`.
    Url(String),
    /// `clientConfig.service`.
    Service {
        /// Service namespace.
        namespace: String,
        /// Service name.
        name: String,
        /// Service port (default 443).
        port: u16,
        /// Request path (default `/`).
        path: String,
    },
}

/// One webhook as the dispatcher uses it.
#[derive(Debug, Clone)]
pub struct Webhook {
    /// Mutating or validating.
    pub chain: Chain,
    /// Name of the configuration that holds it.
    pub configuration: String,
    /// `webhooks[].name`.
    pub name: String,
    /// `rules` (defaulted).
    pub rules: Vec<Value>,
    /// `namespaceSelector`.
    pub namespace_selector: LabelSelector,
    /// Whether the namespace selector is empty (matches every namespace).
    pub namespace_selector_empty: bool,
    /// `objectSelector`.
    pub object_selector: LabelSelector,
    /// Whether the object selector is empty.
    pub object_selector_empty: bool,
    /// `matchPolicy: Equivalent` (the default) rather than `Exact`.
    pub equivalent: bool,
    /// `failurePolicy`.
    pub failure_policy: FailurePolicy,
    /// `sideEffects`.
    pub side_effects: String,
    /// `timeoutSeconds` (default 10).
    pub timeout: Duration,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke_if_needed: bool,
    /// `clientConfig`'s endpoint.
    pub endpoint: Endpoint,
    /// `clientConfig.caBundle`, PEM (empty: the system's roots).
    pub ca_bundle: Vec<u8>,
}

/// Applies the defaults kube-apiserver sets on a configuration (`SetDefaults_*Webhook`).
pub fn apply_defaults(storage: &str, obj: &mut Value) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        hook.entry("failurePolicy").or_insert_with(|| json!("Fail"));
        hook.entry("matchPolicy")
            .or_insert_with(|| json!("Equivalent"));
        hook.entry("namespaceSelector").or_insert_with(|| json!({}));
        hook.entry("objectSelector").or_insert_with(|| json!({}));
        hook.entry("timeoutSeconds").or_insert_with(|| json!(10));
        if storage == MUTATING {
            hook.entry("reinvocationPolicy")
                .or_insert_with(|| json!("Never"));
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            service.entry("port").or_insert_with(|| json!(443));
        }
        if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                rule.entry("scope").or_insert_with(|| json!("*"));
            }
        }
    }
}

fn str_list(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Validates a (defaulted) configuration as `ValidateMutatingWebhookConfiguration` does, for
/// the fields the dispatcher relies on. CEL `matchConditions` are refused: this stand-in does
/// not evaluate CEL.
pub fn validate(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let hooks = obj
        .get("webhooks")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut names = Vec::new();
    for (i, hook) in hooks.iter().enumerate() {
        let at = |f: &str| format!("webhooks[{i}].{f}");
        let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            causes.push(Cause::required(at("name"), ""));
        } else if names.contains(&name) {
            causes.push(Cause {
                reason: "FieldValueDuplicate",
                field: at("name"),
                message: format!("Duplicate value: {}", json!(name)),
            });
        } else if name.split('.').count() < 3 || !crate::meta::is_dns_subdomain(name) {
            causes.push(Cause::invalid(
                at("name"),
                &json!(name),
                "should be a domain with at least three segments separated by dots",
            ));
        }
        names.push(name);
        let versions = str_list(hook.get("admissionReviewVersions"));
        if versions.is_empty() {
            causes.push(Cause::required(
                at("admissionReviewVersions"),
                "must specify one of v1, v1beta1",
            ));
        } else if !versions.contains(&"v1") {
            causes.push(Cause::invalid(
                at("admissionReviewVersions"),
                &json!(versions),
                "apiserver-standin speaks AdmissionReview v1 only: must include v1",
            ));
        }
        match hook.get("sideEffects").and_then(Value::as_str) {
            Some("None" | "NoneOnDryRun") => {}
            Some(other) => causes.push(Cause {
                reason: "FieldValueNotSupported",
                field: at("sideEffects"),
                message: format!(
                    "Unsupported value: {}: supported values: \"None\", \"NoneOnDryRun\"",
                    json!(other)
                ),
            }),
            None => causes.push(Cause::required(
                at("sideEffects"),
                "must specify one of None, NoneOnDryRun",
            )),
        }
        if hook
            .get("matchConditions")
            .and_then(Value::as_array)
            .is_some_and(|m| !m.is_empty())
        {
            causes.push(Cause::forbidden(
                at("matchConditions"),
                "CEL match conditions are not supported by apiserver-standin",
            ));
        }
        let timeout = hook.get("timeoutSeconds").and_then(Value::as_i64);
        if let Some(t) = timeout
            && !(1..=30).contains(&t)
        {
            causes.push(Cause::invalid(
                at("timeoutSeconds"),
                &json!(t),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
        let client = hook.get("clientConfig");
        let url = client.and_then(|c| c.get("url"));
        let service = client.and_then(|c| c.get("service"));
        match (url, service) {
            (Some(_), Some(_)) => causes.push(Cause::required(
                at("clientConfig"),
                "exactly one of url or service is required",
            )),
            (None, None) => causes.push(Cause::required(
                at("clientConfig"),
                "exactly one of url or service is required",
            )),
            (Some(u), None) => {
                if !u.as_str().is_some_and(|u| u.starts_with("https://")) {
                    causes.push(Cause::invalid(
                        at("clientConfig.url"),
                        u,
                        "'https' is the only allowed URL scheme",
                    ));
                }
            }
            (None, Some(_)) => {}
        }
        if let Err(e) = ca_bundle(hook) {
            causes.push(Cause::invalid(
                at("clientConfig.caBundle"),
                &json!("<bytes>"),
                e,
            ));
        }
        for (field, sel) in [
            ("namespaceSelector", hook.get("namespaceSelector")),
            ("objectSelector", hook.get("objectSelector")),
        ] {
            if let Some(sel) = sel
                && let Err(e) = LabelSelector::from_api(sel)
            {
                causes.push(Cause::invalid(at(field), sel, e));
            }
        }
    }
    causes
}

fn ca_bundle(hook: &Value) -> Result<Vec<u8>, String> {
    match hook
        .get("clientConfig")
        .and_then(|c| c.get("caBundle"))
        .and_then(Value::as_str)
    {
        None | Some("") => Ok(Vec::new()),
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("illegal base64 data: {e}")),
    }
}

fn endpoint(hook: &Value) -> Option<Endpoint> {
    let client = hook.get("clientConfig")?;
    if let Some(url) = client.get("url").and_then(Value::as_str) {
        return Some(Endpoint::Url(url.to_string()));
    }
    let s = client.get("service")?;
    let text = |f: &str| s.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    Some(Endpoint::Service {
        namespace: text("namespace"),
        name: text("name"),
        port: s
            .get("port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(443),
        path: s
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("/")
            .to_string(),
    })
}

/// The webhooks of stored configurations (in name order, as listed), for one chain. A
/// configuration that validation would have refused is skipped.
pub fn webhooks(chain: Chain, configurations: &[Value]) -> Vec<Webhook> {
    let mut out = Vec::new();
    for conf in configurations {
        let configuration = crate::meta::name(conf).to_string();
        let hooks = conf.get("webhooks").and_then(Value::as_array);
        for hook in hooks.into_iter().flatten() {
            let (Some(endpoint), Ok(ca_bundle)) = (endpoint(hook), ca_bundle(hook)) else {
                continue;
            };
            let selector = |f: &str| {
                let v = hook.get(f).cloned().unwrap_or_else(|| json!({}));
                let empty = v
                    .get("matchLabels")
                    .is_none_or(|m| m.as_object().is_none_or(|m| m.is_empty()))
                    && v.get("matchExpressions")
                        .is_none_or(|m| m.as_array().is_none_or(|m| m.is_empty()));
                LabelSelector::from_api(&v).map(|s| (s, empty))
            };
            let (Ok((namespace_selector, ns_empty)), Ok((object_selector, obj_empty))) =
                (selector("namespaceSelector"), selector("objectSelector"))
            else {
                continue;
            };
            let text = |f: &str, default: &str| {
                hook.get(f)
                    .and_then(Value::as_str)
                    .unwrap_or(default)
                    .to_string()
            };
            out.push(Webhook {
                chain,
                configuration: configuration.clone(),
                name: text("name", ""),
                rules: hook
                    .get("rules")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                namespace_selector,
                namespace_selector_empty: ns_empty,
                object_selector,
                object_selector_empty: obj_empty,
                equivalent: text("matchPolicy", "Equivalent") != "Exact",
                failure_policy: if text("failurePolicy", "Fail") == "Ignore" {
                    FailurePolicy::Ignore
                } else {
                    FailurePolicy::Fail
                },
                side_effects: text("sideEffects", ""),
                timeout: Duration::from_secs(
                    hook.get("timeoutSeconds")
                        .and_then(Value::as_u64)
                        .unwrap_or(10),
                ),
                reinvoke_if_needed: text("reinvocationPolicy", "Never") == "IfNeeded",
                endpoint,
                ca_bundle,
            });
        }
    }
    out
}
