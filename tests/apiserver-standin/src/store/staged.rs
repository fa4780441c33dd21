//! Writes in two steps, so the admission chain can run between them as in kube-apiserver:
//! a write is first *staged* (preconditions, the type's preparation and validation, nothing
//! stored), then *committed* under the lock only if the object has not changed meanwhile.

use serde_json::{Value, json};

use super::{Store, from_view, key, rules, storage_key, to_view};
use crate::error::{ApiError, Cause};
use crate::meta;
use crate::resources::ResourceDef;

use super::Subresource;

/// Where an update starts from, after its preconditions.
#[derive(Debug, Clone)]
pub enum UpdateBase {
    /// The stored object it replaces (stored form).
    Existing(Value),
    /// A PUT of a missing object of a type that creates on update (leases, events).
    Create,
}

impl Store {
    /// Prepares an object for create (name generation, uid, defaults, validation) without storing it.
    pub fn stage_create(
        &self,
        def: &ResourceDef,
        ns: &str,
        obj: &Value,
    ) -> Result<Value, ApiError> {
        self.lock().prepare_create(def, ns, obj)
    }

    /// Stores an object prepared by [`Store::stage_create`] unless one of that name appeared since.
    pub fn commit_create(
        &self,
        def: &ResourceDef,
        prepared: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let (ns, name) = (meta::namespace(&prepared), meta::name(&prepared));
        if inner.objects.contains_key(&key(def, ns, name)) {
            return Err(ApiError::already_exists(def, name));
        }
        if def.namespaced
            && !inner
                .objects
                .contains_key(&("namespaces", String::new(), ns.to_string()))
        {
            return Err(ApiError::namespace_not_found(ns));
        }
        if dry_run {
            return Ok(to_view(def, &prepared));
        }
        let stored = inner.commit(&self.events, def, prepared, None);
        Ok(to_view(def, &stored))
    }

    /// The stored form of one object (what updates and patches start from).
    pub fn stored(&self, def: &ResourceDef, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.lock()
            .objects
            .get(&key(def, ns, name))
            .cloned()
            .ok_or_else(|| ApiError::not_found(def, name))
    }

    /// A PUT's preconditions (the uid, then the resourceVersion) against the stored object.
    pub fn update_base(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        sent_view: &Value,
        sub: Subresource,
    ) -> Result<UpdateBase, ApiError> {
        let old = match self.stored(def, ns, name) {
            Ok(old) => old,
            Err(e) if e.code == 404 && def.allow_create_on_update && sub == Subresource::Main => {
                return Ok(UpdateBase::Create);
            }
            Err(e) => return Err(e),
        };
        let sent = from_view(def, sent_view);
        // A PUT carries its uid as a storage precondition, checked before anything else.
        let sent_uid = meta::meta_str(&sent, "uid");
        if !sent_uid.is_empty() && sent_uid != meta::meta_str(&old, "uid") {
            return Err(ApiError::conflict_because(
                def,
                name,
                &format!(
                    "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {sent_uid}, UID in object meta: {}",
                    storage_key(def, ns, name),
                    meta::meta_str(&old, "uid")
                ),
            ));
        }
        let rv = meta::resource_version(&sent);
        if rv.is_empty() {
            if !def.allow_unconditional_update {
                return Err(ApiError::invalid(
                    def,
                    name,
                    vec![Cause::invalid(
                        "metadata.resourceVersion",
                        &json!("0x0"),
                        "must be specified for an update",
                    )],
                ));
            }
        } else if rv != meta::resource_version(&old) {
            return Err(ApiError::conflict(def, name));
        }
        Ok(UpdateBase::Existing(old))
    }

    /// Applies a patch to the stored `old`, returning the patched object in the request's view
    /// (a resourceVersion in the patch is a precondition).
    pub fn patched(
        &self,
        def: &ResourceDef,
        name: &str,
        old: &Value,
        ty: crate::patch::PatchType,
        patch: &[u8],
    ) -> Result<Value, ApiError> {
        let patched = crate::patch::apply(def, ty, &to_view(def, old), patch)?;
        if !patched.is_object() {
            return Err(ApiError::bad_request(
                "the patched object is not a JSON object",
            ));
        }
        let rv = meta::resource_version(&patched);
        if !rv.is_empty() && rv != meta::resource_version(old) {
            return Err(ApiError::conflict(def, name));
        }
        Ok(patched)
    }

    /// Prepares an update of the stored `old` with `sent_view` (the type's rules and validation).
    pub fn stage_update(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        old: &Value,
        sent_view: &Value,
        sub: Subresource,
    ) -> Result<Value, ApiError> {
        let mut sent = from_view(def, sent_view);
        if meta::resource_version(&sent).is_empty() {
            meta::metadata_mut(&mut sent)
                .insert("resourceVersion".into(), json!(meta::resource_version(old)));
        }
        rules::prepare_update(def, ns, name, old, sent, sub)
    }

    /// Stores a staged update unless the object changed since `old` was read (409 then).
    pub fn commit_update(
        &self,
        def: &ResourceDef,
        old: &Value,
        new: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let (ns, name) = (meta::namespace(old), meta::name(old));
        let current = inner
            .objects
            .get(&key(def, ns, name))
            .ok_or_else(|| ApiError::not_found(def, name))?;
        if meta::resource_version(current) != meta::resource_version(old) {
            return Err(ApiError::conflict(def, name));
        }
        let out = inner.write(&self.events, def, ns, name, old, new, dry_run);
        Ok(to_view(def, &out))
    }
}
