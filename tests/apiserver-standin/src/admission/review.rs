//! AdmissionReview v1: the request kube-apiserver sends and the checks it makes of the answer
//! (`CreateAdmissionObjects` and `VerifyAdmissionResponse`), with its error texts.

use serde_json::{Map, Value, json};

use super::Attributes;
use super::matching::Invocation;
use crate::store::{from_view, to_view};

/// Who the stand-in says is asking (it has no authentication): a cluster administrator.
pub const USERNAME: &str = "kubernetes-admin";
/// The groups of [`USERNAME`].
pub const GROUPS: &[&str] = &["system:masters", "system:authenticated"];

/// An object of the request's view in the view of the webhook's matched resource.
pub fn in_view(attrs: &Attributes, inv: &Invocation, obj: &Value) -> Value {
    if std::ptr::eq(inv.def, attrs.def) {
        return obj.clone();
    }
    to_view(inv.def, &from_view(attrs.def, obj))
}

/// The object of a webhook's answer back in the request's view.
pub fn from_invocation(attrs: &Attributes, inv: &Invocation, obj: &Value) -> Value {
    if std::ptr::eq(inv.def, attrs.def) {
        return obj.clone();
    }
    to_view(attrs.def, &from_view(inv.def, obj))
}

fn gvk(def: &crate::resources::ResourceDef) -> Value {
    json!({ "group": def.group, "version": def.version, "kind": def.kind })
}

fn gvr(def: &crate::resources::ResourceDef) -> Value {
    json!({ "group": def.group, "version": def.version, "resource": def.plural })
}

/// The AdmissionReview sent for one call (`object` already in the invocation's view).
pub fn request(uid: &str, attrs: &Attributes, inv: &Invocation, object: Option<&Value>) -> Value {
    let mut req = Map::new();
    req.insert("uid".into(), json!(uid));
    req.insert("kind".into(), gvk(inv.def));
    req.insert("resource".into(), gvr(inv.def));
    if !attrs.subresource.is_empty() {
        req.insert("subResource".into(), json!(attrs.subresource));
        req.insert("requestSubResource".into(), json!(attrs.subresource));
    }
    req.insert("requestKind".into(), gvk(attrs.def));
    req.insert("requestResource".into(), gvr(attrs.def));
    req.insert("name".into(), json!(attrs.name));
    if !attrs.namespace.is_empty() {
        req.insert("namespace".into(), json!(attrs.namespace));
    }
    req.insert("operation".into(), json!(attrs.operation.as_str()));
    req.insert(
        "userInfo".into(),
        json!({ "username": USERNAME, "groups": GROUPS }),
    );
    req.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    let old = attrs.old_object.as_ref().map(|o| in_view(attrs, inv, o));
    req.insert("oldObject".into(), old.unwrap_or(Value::Null));
    req.insert("dryRun".into(), json!(attrs.dry_run));
    req.insert("options".into(), attrs.options.clone());
    json!({ "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req })
}

/// A webhook's verified answer.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// `response.allowed`.
    pub allowed: bool,
    /// `response.patch`, decoded from base64.
    pub patch: Vec<u8>,
    /// `response.patchType` (empty when absent).
    pub patch_type: String,
    /// `response.status`.
    pub result: Option<Value>,
    /// `response.warnings`.
    pub warnings: Vec<String>,
    /// `response.auditAnnotations`.
    pub audit_annotations: Vec<(String, String)>,
}

/// `VerifyAdmissionResponse`: the answer must be an AdmissionReview v1 with a response for
/// this uid; only a mutating webhook may patch. `Err` is the reason, to be prefixed with
/// "received invalid webhook response: ".
pub fn verify(uid: &str, mutating: bool, review: &Value) -> Result<Answer, String> {
    let Some(resp) = review.get("response").filter(|r| !r.is_null()) else {
        return Err("webhook response was absent".into());
    };
    let got_uid = resp.get("uid").and_then(Value::as_str).unwrap_or("");
    if got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let api_version = review
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let got = if group.is_empty() {
            format!("{version}, Kind={kind}")
        } else {
            format!("{group}/{version}, Kind={kind}")
        };
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}"
        ));
    }
    let patch_b64 = resp.get("patch").and_then(Value::as_str).unwrap_or("");
    let patch = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, patch_b64)
        .map_err(|e| format!("illegal base64 data in response.patch: {e}"))?;
    let patch_type = resp
        .get("patchType")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if !patch.is_empty() && patch_type.is_empty() {
        return Err("webhook returned response.patch but not response.patchType".into());
    }
    if !mutating && (!patch_type.is_empty() || !patch.is_empty()) {
        return Err(
            "validating webhook may not return response.patch or response.patchType".into(),
        );
    }
    Ok(Answer {
        allowed: resp
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        patch,
        patch_type,
        result: resp.get("status").filter(|s| !s.is_null()).cloned(),
        warnings: resp
            .get("warnings")
            .and_then(Value::as_array)
            .map(|w| {
                w.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        audit_annotations: resp
            .get("auditAnnotations")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// `webhookerrors.ToStatusErr`: the Status a denial answers the client with.
pub fn denial_status(webhook: &str, result: Option<&Value>) -> Value {
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let mut status = result
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let code = status.get("code").and_then(Value::as_i64).unwrap_or(0);
    if code < 400 {
        status.insert("code".into(), json!(400));
    }
    let state = status.get("status").and_then(Value::as_str).unwrap_or("");
    if state.is_empty() || state == "Success" {
        status.insert("status".into(), json!("Failure"));
    }
    let text = |f: &str| {
        status
            .get(f)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (message, reason) = (text("message"), text("reason"));
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    status.insert("message".into(), json!(message));
    status.insert("kind".into(), json!("Status"));
    status.insert("apiVersion".into(), json!("v1"));
    status.entry("metadata").or_insert_with(|| json!({}));
    Value::Object(status)
}
