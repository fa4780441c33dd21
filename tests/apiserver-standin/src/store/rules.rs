//! The per-type write rules ("strategies"): what create and update may set, system fields,
//! status versus spec, generation, graceful deletion and finalizers.

use serde_json::{Map, Value, json};

use super::{Inner, Subresource, key, kinds, objectmeta, pod};
use crate::admission::configuration;
use crate::error::{ApiError, Cause};
use crate::meta;
use crate::resources::ResourceDef;

/// Fields the server sets on create, whatever the client sent.
const SYSTEM_FIELDS: &[&str] = &[
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
];

const NAMESPACE_LABEL: &str = "kubernetes.io/metadata.name";

fn ensure_object(obj: &Value) -> Result<(), ApiError> {
    if obj.is_object() {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "the body of the request is not a JSON object",
        ))
    }
}

fn check_kind(def: &ResourceDef, sent: &Value) -> Result<(), ApiError> {
    if let Some(kind) = sent.get("kind").and_then(Value::as_str)
        && !kind.is_empty()
        && kind != def.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            def.kind
        )));
    }
    if let Some(av) = sent.get("apiVersion").and_then(Value::as_str)
        && !av.is_empty()
        && av != def.api_version()
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            def.api_version()
        )));
    }
    Ok(())
}

fn check_namespace(def: &ResourceDef, ns: &str, obj: &mut Value) -> Result<(), ApiError> {
    let m = meta::metadata_mut(obj);
    if def.namespaced {
        let body_ns = m.get("namespace").and_then(Value::as_str).unwrap_or("");
        if !body_ns.is_empty() && body_ns != ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        m.insert("namespace".into(), json!(ns));
    } else {
        m.remove("namespace");
    }
    Ok(())
}

fn validate_name(def: &ResourceDef, name: &str) -> Vec<Cause> {
    let (ok, what) = if def.storage == "namespaces" {
        (
            meta::is_dns_label(name),
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        )
    } else {
        (
            meta::is_dns_subdomain(name),
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )
    };
    if ok {
        Vec::new()
    } else {
        vec![Cause::invalid("metadata.name", &json!(name), what)]
    }
}

fn set_namespace_fields(obj: &mut Value, name: &str) {
    let m = meta::metadata_mut(obj);
    let labels = m
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    if !labels.is_object() {
        *labels = Value::Object(Map::new());
    }
    if let Some(l) = labels.as_object_mut() {
        l.insert(NAMESPACE_LABEL.into(), json!(name));
    }
}

fn strip_meta_and_status(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn has_deletion_timestamp(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|v| !v.is_null())
}

impl Inner {
    /// Turns a sent object into the object to store on create (not yet stored).
    pub(super) fn prepare_create(
        &mut self,
        def: &ResourceDef,
        ns: &str,
        sent: &Value,
    ) -> Result<Value, ApiError> {
        ensure_object(sent)?;
        check_kind(def, sent)?;
        let mut obj = super::from_view(def, sent);
        check_namespace(def, ns, &mut obj)?;
        if !meta::resource_version(&obj).is_empty() {
            return Err(ApiError::internal(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let ns = if def.namespaced { ns } else { "" };
        let mut name = meta::name(&obj).to_string();
        if name.is_empty() {
            let prefix = meta::meta_str(&obj, "generateName").to_string();
            if prefix.is_empty() {
                return Err(ApiError::invalid(
                    def,
                    "",
                    vec![Cause::required(
                        "metadata.name",
                        "name or generateName is required",
                    )],
                ));
            }
            loop {
                name = format!("{prefix}{}", meta::name_suffix());
                if !self.objects.contains_key(&key(def, ns, &name)) {
                    break;
                }
            }
        }
        // Namespace lifecycle admission answers before validation runs.
        if def.namespaced
            && !self
                .objects
                .contains_key(&("namespaces", String::new(), ns.to_string()))
        {
            return Err(ApiError::namespace_not_found(ns));
        }
        let mut causes = validate_name(def, &name);
        causes.extend(objectmeta::validate_object_meta(&obj));
        {
            let m = meta::metadata_mut(&mut obj);
            for f in SYSTEM_FIELDS.iter().chain(&["managedFields", "selfLink"]) {
                m.remove(*f);
            }
            m.insert("name".into(), json!(name));
            m.insert("uid".into(), json!(meta::new_uid()));
            m.insert("creationTimestamp".into(), json!(meta::now_rfc3339()));
            if def.tracks_generation {
                m.insert("generation".into(), json!(1));
            }
        }
        if def.storage != "pods" && !causes.is_empty() {
            return Err(ApiError::invalid(def, &name, causes));
        }
        match def.storage {
            "pods" => {
                pod::apply_defaults(&mut obj);
                causes.extend(pod::validate_create(&obj));
                if !causes.is_empty() {
                    return Err(ApiError::invalid(def, &name, causes));
                }
                let status = pod::initial_status(&obj);
                if let Some(m) = obj.as_object_mut() {
                    m.insert("status".into(), status);
                }
            }
            "namespaces" => {
                set_namespace_fields(&mut obj, &name);
                if let Some(m) = obj.as_object_mut() {
                    let spec = m.entry("spec").or_insert_with(|| json!({}));
                    if let Some(s) = spec.as_object_mut() {
                        s.entry("finalizers")
                            .or_insert_with(|| json!(["kubernetes"]));
                    }
                    m.insert("status".into(), json!({"phase": "Active"}));
                }
            }
            storage @ (configuration::MUTATING | configuration::VALIDATING) => {
                configuration::apply_defaults(storage, &mut obj);
                let causes = configuration::validate(&obj);
                if !causes.is_empty() {
                    return Err(ApiError::invalid(def, &name, causes));
                }
            }
            storage => {
                if def.status_subresource
                    && let Some(m) = obj.as_object_mut()
                {
                    m.remove("status");
                    if let Some(s) = kinds::initial_status(storage) {
                        m.insert("status".into(), s);
                    }
                }
                if let Some(causes) = kinds::on_create(storage, &mut obj)
                    && !causes.is_empty()
                {
                    return Err(ApiError::invalid(def, &name, causes));
                }
            }
        }
        if self.objects.contains_key(&key(def, ns, &name)) {
            return Err(ApiError::already_exists(def, &name));
        }
        Ok(obj)
    }

    /// Marks an object as being deleted instead of removing it, when graceful pod deletion or
    /// finalizers require it. `None`: remove now.
    pub(super) fn graceful_mark(
        &self,
        def: &ResourceDef,
        old: &Value,
        opts: &super::DeleteOptions,
    ) -> Option<Value> {
        let mut obj = old.clone();
        let mut grace_pending = false;
        if def.storage == "pods" && self.graceful_pod_deletion {
            let spec = old.get("spec");
            let grace = opts
                .grace_period_seconds
                .or_else(|| {
                    spec.and_then(|s| s.get("terminationGracePeriodSeconds"))
                        .and_then(Value::as_i64)
                })
                .unwrap_or(30)
                .max(0);
            let scheduled = spec
                .and_then(|s| s.get("nodeName"))
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            let phase = meta::path_string(old, "status.phase");
            let terminal = phase == "Succeeded" || phase == "Failed";
            if scheduled && !terminal && grace > 0 {
                let current = old
                    .get("metadata")
                    .and_then(|m| m.get("deletionGracePeriodSeconds"))
                    .and_then(Value::as_i64);
                if current.is_none_or(|c| grace < c) {
                    let at = jiff::Timestamp::now()
                        .checked_add(jiff::SignedDuration::from_secs(grace))
                        .unwrap_or_else(|_| jiff::Timestamp::now());
                    let m = meta::metadata_mut(&mut obj);
                    m.insert(
                        "deletionTimestamp".into(),
                        json!(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
                    );
                    m.insert("deletionGracePeriodSeconds".into(), json!(grace));
                }
                grace_pending = true;
            }
        }
        if grace_pending {
            return Some(obj);
        }
        if !finalizers(old).is_empty() {
            let m = meta::metadata_mut(&mut obj);
            if !has_deletion_timestamp(old) {
                m.insert("deletionTimestamp".into(), json!(meta::now_rfc3339()));
            }
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            return Some(obj);
        }
        None
    }
}

/// Builds the object to store for an update of `old` with `sent` (stored form).
pub(super) fn prepare_update(
    def: &ResourceDef,
    ns: &str,
    name: &str,
    old: &Value,
    sent: Value,
    sub: Subresource,
) -> Result<Value, ApiError> {
    ensure_object(&sent)?;
    let mut new = sent;
    let body_name = meta::name(&new);
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    check_namespace(def, ns, &mut new)?;
    if sub == Subresource::Status {
        // Only status is taken from a status write; metadata and spec stay as they are.
        let status = new.get("status").cloned();
        new = old.clone();
        if let Some(m) = new.as_object_mut() {
            match status {
                Some(s) => m.insert("status".into(), s),
                None => m.remove("status"),
            };
        }
    } else {
        {
            let m = meta::metadata_mut(&mut new);
            m.remove("managedFields");
            m.remove("selfLink");
        }
        objectmeta::carry_system_fields(&mut new, old);
        if def.status_subresource
            && let Some(m) = new.as_object_mut()
        {
            match old.get("status") {
                Some(s) => m.insert("status".into(), s.clone()),
                None => m.remove("status"),
            };
        }
        // rest.BeforeUpdate: ValidateObjectMetaAccessor, ValidateObjectMetaAccessorUpdate, then
        // the type's ValidateUpdate (most start with ValidateObjectMetaUpdate again).
        let mut causes = objectmeta::validate_object_meta(&new);
        causes.extend(objectmeta::validate_object_meta_update(&new, old));
        match def.storage {
            "pods" => {
                pod::apply_defaults(&mut new);
                causes.extend(pod::validate_update(old, &new));
            }
            "namespaces" => {
                set_namespace_fields(&mut new, name);
                causes.extend(objectmeta::validate_object_meta_update(&new, old));
            }
            "controllerrevisions" => {
                causes.extend(objectmeta::validate_object_meta_update(&new, old));
                causes.extend(objectmeta::validate_object_meta(&new));
                if new.get("data") != old.get("data") {
                    causes.push(Cause::invalid(
                        "data",
                        new.get("data").unwrap_or(&Value::Null),
                        "field is immutable",
                    ));
                }
            }
            storage @ (configuration::MUTATING | configuration::VALIDATING) => {
                causes.extend(objectmeta::validate_object_meta_update(&new, old));
                configuration::apply_defaults(storage, &mut new);
                causes.extend(configuration::validate(&new));
            }
            storage => {
                causes.extend(objectmeta::validate_object_meta_update(&new, old));
                causes.extend(kinds::on_update(storage, old, &mut new).unwrap_or_default());
            }
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid(def, name, causes));
        }
        if def.tracks_generation {
            let generation = old
                .get("metadata")
                .and_then(|m| m.get("generation"))
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let bumped = if strip_meta_and_status(old) != strip_meta_and_status(&new) {
                generation + 1
            } else {
                generation
            };
            meta::metadata_mut(&mut new).insert("generation".into(), json!(bumped));
        }
    }
    meta::metadata_mut(&mut new)
        .insert("resourceVersion".into(), json!(meta::resource_version(old)));
    Ok(new)
}
