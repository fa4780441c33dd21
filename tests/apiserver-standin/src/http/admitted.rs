//! Writes through the admission chain, in kube-apiserver's order: decode and default, mutating
//! webhooks, the type's preparation and validation, validating webhooks, then the write. An
//! update that loses a race with another writer is re-run from the read, as `GuaranteedUpdate`
//! does, unless the client named the resourceVersion it expects.

use serde_json::{Value, json};

use super::resource::Request;
use crate::admission::{Attributes, Operation, Record};
use crate::error::ApiError;
use crate::meta;
use crate::patch::PatchType;
use crate::store::{DeleteOptions, Deleted, UpdateBase, to_view};

/// How often a write that lost a race is re-run before its 409 reaches the client.
const RETRIES: usize = 5;

fn options(kind: &str, req: &Request<'_>) -> Value {
    let mut o = json!({ "kind": kind, "apiVersion": "meta.k8s.io/v1" });
    if req.dry_run() {
        o["dryRun"] = json!(["All"]);
    }
    if let Some(fm) = req.query.get("fieldManager") {
        o["fieldManager"] = json!(fm);
    }
    o
}

fn attributes(req: &Request<'_>, operation: Operation, name: &str, options: Value) -> Attributes {
    let def = req.target.def;
    let is_namespace = def.group.is_empty() && def.plural == "namespaces";
    // A namespace's own requests carry its name as their namespace (RequestInfo), except a create.
    let namespace = match (is_namespace, &req.target.name) {
        (true, Some(n)) => n.clone(),
        (true, None) => String::new(),
        (false, _) => req.ns().to_string(),
    };
    Attributes {
        operation,
        def,
        subresource: req.target.subresource.clone().unwrap_or_default(),
        namespace,
        name: name.to_string(),
        object: None,
        old_object: None,
        options,
        dry_run: req.dry_run(),
    }
}

/// Decoding defaults the object before any admission plugin sees it.
fn decoded(req: &Request<'_>, mut obj: Value) -> Value {
    let def = req.target.def;
    if def.namespaced && obj.is_object() && meta::namespace(&obj).is_empty() {
        meta::metadata_mut(&mut obj).insert("namespace".into(), json!(req.ns()));
    }
    if def.storage == "pods" && req.target.subresource.is_none() && obj.is_object() {
        crate::store::pod::apply_defaults(&mut obj);
    }
    obj
}

async fn admit_create(
    req: &Request<'_>,
    obj: Value,
    options: Value,
    record: &mut Record,
) -> Result<Value, ApiError> {
    let (state, def) = (req.state, req.target.def);
    if def.namespaced
        && state
            .store
            .get(crate::resources::namespaces(), "", req.ns())
            .is_err()
    {
        return Err(ApiError::namespace_not_found(req.ns()));
    }
    let obj = decoded(req, obj);
    let mut attrs = attributes(req, Operation::Create, meta::name(&obj), options);
    attrs.object = Some(obj);
    state
        .admission
        .mutate(&state.store, &mut attrs, record)
        .await?;
    let mutated = attrs.object.take().unwrap_or(Value::Null);
    let prepared = state.store.stage_create(def, req.ns(), &mutated)?;
    attrs.name = meta::name(&prepared).to_string();
    attrs.object = Some(to_view(def, &prepared));
    state
        .admission
        .validate(&state.store, &attrs, record)
        .await?;
    let out = state.store.commit_create(def, prepared, req.dry_run())?;
    state.admission.finish(&attrs, meta::name(&out), record);
    Ok(out)
}

/// POST.
pub async fn create(req: &Request<'_>, record: &mut Record) -> Result<Value, ApiError> {
    let body = req.json_body()?;
    admit_create(req, body, options("CreateOptions", req), record).await
}

/// Mutating webhooks, the type's rules, validating webhooks and the write, on one read of `old`.
async fn admit_update(
    req: &Request<'_>,
    old: &Value,
    sent_view: Value,
    record: &mut Record,
) -> Result<Value, ApiError> {
    let (state, def) = (req.state, req.target.def);
    let name = req.name()?;
    let sub = req.sub();
    let mut attrs = attributes(req, Operation::Update, name, options("UpdateOptions", req));
    attrs.old_object = Some(to_view(def, old));
    attrs.object = Some(decoded(req, sent_view));
    state
        .admission
        .mutate(&state.store, &mut attrs, record)
        .await?;
    let mutated = attrs.object.take().unwrap_or(Value::Null);
    let new = state
        .store
        .stage_update(def, req.ns(), name, old, &mutated, sub)?;
    attrs.object = Some(to_view(def, &new));
    state
        .admission
        .validate(&state.store, &attrs, record)
        .await?;
    let out = state.store.commit_update(def, old, new, req.dry_run())?;
    state.admission.finish(&attrs, name, record);
    Ok(out)
}

/// PUT; `true` when it created the object.
pub async fn update(req: &Request<'_>, record: &mut Record) -> Result<(Value, bool), ApiError> {
    let sent = req.json_body()?;
    let (def, name) = (req.target.def, req.name()?);
    let unconditional = meta::resource_version(&sent).is_empty();
    let mut tries = 0;
    loop {
        tries += 1;
        match req
            .state
            .store
            .update_base(def, req.ns(), name, &sent, req.sub())?
        {
            UpdateBase::Create => {
                let mut fresh = sent.clone();
                meta::metadata_mut(&mut fresh).remove("resourceVersion");
                let created =
                    admit_create(req, fresh, options("CreateOptions", req), record).await?;
                return Ok((created, true));
            }
            UpdateBase::Existing(old) => {
                match admit_update(req, &old, sent.clone(), record).await {
                    Err(e) if e.code == 409 && unconditional && tries < RETRIES => continue,
                    r => return r.map(|o| (o, false)),
                }
            }
        }
    }
}

/// PATCH: the patch is re-applied to a fresh read when the write loses a race.
pub async fn patch(
    req: &Request<'_>,
    ty: PatchType,
    record: &mut Record,
) -> Result<Value, ApiError> {
    let (store, def, name) = (&req.state.store, req.target.def, req.name()?);
    let mut tries = 0;
    loop {
        tries += 1;
        let old = store.stored(def, req.ns(), name)?;
        let patched = store.patched(def, name, &old, ty, &req.body)?;
        match admit_update(req, &old, patched, record).await {
            Err(e)
                if e.code == 409
                    && tries < RETRIES
                    && store
                        .stored(def, req.ns(), name)
                        .is_ok_and(|now| now != old) =>
            {
                continue;
            }
            r => return r,
        }
    }
}

/// DELETE: both chains see the stored object as `oldObject` and no `object`.
pub async fn delete(
    req: &Request<'_>,
    opts: &DeleteOptions,
    body: Value,
    record: &mut Record,
) -> Result<Deleted, ApiError> {
    let (state, def, name) = (req.state, req.target.def, req.name()?);
    let old = state.store.stored(def, req.ns(), name)?;
    let mut options = options("DeleteOptions", req);
    if let (Some(o), Some(b)) = (options.as_object_mut(), body.as_object()) {
        for (k, v) in b.iter().filter(|(k, _)| *k != "kind" && *k != "apiVersion") {
            o.insert(k.clone(), v.clone());
        }
    }
    let mut attrs = attributes(req, Operation::Delete, name, options);
    attrs.old_object = Some(to_view(def, &old));
    state
        .admission
        .mutate(&state.store, &mut attrs, record)
        .await?;
    state
        .admission
        .validate(&state.store, &attrs, record)
        .await?;
    let deleted = state.store.delete(def, req.ns(), name, opts)?;
    state.admission.finish(&attrs, name, record);
    Ok(deleted)
}

/// `Warning` headers, as `warning.AddWarning` renders them (`299 - "text"`).
pub fn warning_headers(record: &Record) -> Vec<String> {
    let mut seen = Vec::new();
    for w in &record.warnings {
        if w.is_empty() || seen.contains(w) {
            continue;
        }
        seen.push(w.clone());
    }
    seen.iter()
        .map(|w| {
            let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
            format!("299 - \"{escaped}\"")
        })
        .collect()
}
