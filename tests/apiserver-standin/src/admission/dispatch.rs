//! The two dispatchers: mutating (sequential, patches applied, one reinvocation round) and
//! validating (parallel, first failure in webhook order), with kube-apiserver's error rules:
//! a call that fails honours `failurePolicy`, a denial and an unappliable patch never do.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::configuration::{self, Chain, FailurePolicy, Webhook};
use super::matching::{self, Invocation};
use super::review::{self, Answer};
use super::{Admission, Attributes, Record, client, exempt};
use crate::error::ApiError;
use crate::resources;
use crate::selectors::Filter;
use crate::store::Store;

/// Why a call did not allow the request.
enum Failure {
    /// `ErrCallingWebhook`: subject to `failurePolicy`.
    Calling(String),
    /// Anything else: answered as it is.
    Api(ApiError),
}

fn webhooks(store: &Store, chain: Chain) -> Vec<Webhook> {
    let storage = match chain {
        Chain::Mutating => configuration::MUTATING,
        Chain::Validating => configuration::VALIDATING,
    };
    let Some(def) = resources::by_storage(storage) else {
        return Vec::new();
    };
    let filter = Filter::default();
    match store.list(def, &filter, None, None) {
        Ok(page) => configuration::webhooks(chain, &page.items),
        Err(_) => Vec::new(),
    }
}

fn namespace_labels(store: &Store, attrs: &Attributes) -> Result<Option<Value>, ApiError> {
    matching::namespace_labels(attrs, |ns| store.get(resources::namespaces(), "", ns))
}

fn failed_calling(hook: &Webhook, reason: String) -> Failure {
    Failure::Calling(format!("failed calling webhook {:?}: {reason}", hook.name))
}

impl Admission {
    async fn ask(
        &self,
        hook: &Webhook,
        attrs: &Attributes,
        inv: &Invocation,
        object: Option<&Value>,
        record: &mut Record,
    ) -> Result<Answer, Failure> {
        let uid = crate::meta::new_uid();
        let review = review::request(&uid, attrs, inv, object);
        let body = serde_json::to_vec(&review)
            .map_err(|e| Failure::Api(ApiError::internal(e.to_string())))?;
        let reply = client::call(hook, &self.services, body)
            .await
            .map_err(|r| failed_calling(hook, format!("failed to call webhook: {r}")))?;
        let mutating = hook.chain == Chain::Mutating;
        let answer = review::verify(&uid, mutating, &reply)
            .map_err(|r| failed_calling(hook, format!("received invalid webhook response: {r}")))?;
        for (k, v) in &answer.audit_annotations {
            record
                .annotations
                .insert(format!("{}/{k}", hook.name), v.clone());
        }
        record.warnings.extend(answer.warnings.iter().cloned());
        if !answer.allowed {
            let status = review::denial_status(&hook.name, answer.result.as_ref());
            return Err(Failure::Api(ApiError::from_status(status)));
        }
        Ok(answer)
    }

    /// One mutating call; `Ok(true)` when the object changed.
    async fn mutate_once(
        &self,
        hook: &Webhook,
        attrs: &mut Attributes,
        inv: &Invocation,
        record: &mut Record,
        at: &str,
    ) -> Result<bool, Failure> {
        let object = attrs
            .object
            .as_ref()
            .map(|o| review::in_view(attrs, inv, o));
        let answer = self.ask(hook, attrs, inv, object.as_ref(), record).await?;
        let annotate = |record: &mut Record, mutated: bool| {
            let v = json!({ "configuration": hook.configuration, "webhook": hook.name, "mutated": mutated });
            record.annotations.insert(
                format!("mutation.webhook.admission.k8s.io/{at}"),
                v.to_string(),
            );
        };
        if answer.patch.is_empty() {
            annotate(record, false);
            return Ok(false);
        }
        let internal = |m: String| Failure::Api(ApiError::internal(m));
        let patch: json_patch::Patch =
            serde_json::from_slice(&answer.patch).map_err(|e| internal(e.to_string()))?;
        if patch.0.is_empty() {
            annotate(record, false);
            return Ok(false);
        }
        let Some(mut doc) = object else {
            return Err(internal(format!(
                "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                hook.name
            )));
        };
        if answer.patch_type != "JSONPatch" {
            return Err(failed_calling(
                hook,
                format!("unsupported patch type {:?}", answer.patch_type),
            ));
        }
        json_patch::patch(&mut doc, &patch).map_err(|e| internal(e.to_string()))?;
        if !doc.is_object() {
            return Err(internal(
                "the patched object is not a JSON object".to_string(),
            ));
        }
        let mut patched = review::from_invocation(attrs, inv, &doc);
        if attrs.def.storage == "pods" && attrs.subresource.is_empty() {
            crate::store::pod::apply_defaults(&mut patched);
        }
        let changed = attrs.object.as_ref() != Some(&patched);
        attrs.object = Some(patched);
        annotate(record, changed);
        if changed {
            let ops: Value = serde_json::from_slice(&answer.patch).unwrap_or(Value::Null);
            let v = json!({ "configuration": hook.configuration, "webhook": hook.name, "patch": ops, "patchType": "JSONPatch" });
            record.annotations.insert(
                format!("patch.webhook.admission.k8s.io/{at}"),
                v.to_string(),
            );
        }
        Ok(changed)
    }

    /// The mutating chain: `attrs.object` is replaced by what the webhooks made of it.
    pub async fn mutate(
        &self,
        store: &Store,
        attrs: &mut Attributes,
        record: &mut Record,
    ) -> Result<(), ApiError> {
        if exempt(attrs.def) {
            return Ok(());
        }
        let hooks = webhooks(store, Chain::Mutating);
        let mut previously_invoked = BTreeSet::new();
        let mut reinvoke = BTreeSet::new();
        for round in 0..2 {
            if round == 1 && reinvoke.is_empty() {
                break;
            }
            for (i, hook) in hooks.iter().enumerate() {
                if round == 1 && !reinvoke.contains(&i) {
                    continue;
                }
                let ns_labels = namespace_labels(store, attrs);
                let Some(inv) = matching::should_call(hook, attrs, &ns_labels)? else {
                    continue;
                };
                let at = format!("round_{round}_index_{i}");
                match self.mutate_once(hook, attrs, &inv, record, &at).await {
                    Ok(true) => reinvoke.append(&mut previously_invoked),
                    Ok(false) => {}
                    Err(Failure::Calling(msg)) if hook.failure_policy == FailurePolicy::Ignore => {
                        tracing::warn!("Failed calling webhook, failing open {}: {msg}", hook.name);
                        record.annotations.insert(
                            format!("failed-open.mutation.webhook.admission.k8s.io/{at}"),
                            hook.name.clone(),
                        );
                    }
                    Err(Failure::Calling(msg)) => return Err(ApiError::internal(msg)),
                    Err(Failure::Api(e)) => return Err(e),
                }
                if round == 0 && hook.reinvoke_if_needed {
                    previously_invoked.insert(i);
                }
            }
        }
        Ok(())
    }

    /// The validating chain, on the object as it will be stored.
    pub async fn validate(
        &self,
        store: &Store,
        attrs: &Attributes,
        record: &mut Record,
    ) -> Result<(), ApiError> {
        if exempt(attrs.def) {
            return Ok(());
        }
        let hooks = webhooks(store, Chain::Validating);
        let ns_labels = namespace_labels(store, attrs);
        let mut calls = Vec::new();
        for (i, hook) in hooks.iter().enumerate() {
            if let Some(inv) = matching::should_call(hook, attrs, &ns_labels)? {
                calls.push((i, hook, inv));
            }
        }
        let results = futures::future::join_all(calls.iter().map(|(_, hook, inv)| async move {
            let mut own = Record::default();
            let object = attrs
                .object
                .as_ref()
                .map(|o| review::in_view(attrs, inv, o));
            let result = self.ask(hook, attrs, inv, object.as_ref(), &mut own).await;
            (result, own)
        }))
        .await;
        let mut first_error = None;
        for ((i, hook, _), (result, own)) in calls.iter().zip(results) {
            record.warnings.extend(own.warnings);
            record.annotations.extend(own.annotations);
            let error = match result {
                Ok(_) => continue,
                Err(Failure::Calling(msg)) if hook.failure_policy == FailurePolicy::Ignore => {
                    tracing::warn!("Failed calling webhook, failing open {}: {msg}", hook.name);
                    record.annotations.insert(
                        format!(
                            "failed-open.validating.webhook.admission.k8s.io/round_0_index_{i}"
                        ),
                        hook.name.clone(),
                    );
                    continue;
                }
                Err(Failure::Calling(msg)) => ApiError::internal(msg),
                Err(Failure::Api(e)) => e,
            };
            first_error.get_or_insert(error);
        }
        first_error.map_or(Ok(()), Err)
    }
}
