//! The admission chain kube-apiserver runs on writes: mutating webhooks (configuration-name
//! order, `reinvocationPolicy: IfNeeded` honoured), then, after built-in validation, validating
//! webhooks (called in parallel). Configurations are read from the store on every request, as
//! the real server's informer would have them.

pub mod client;
pub mod configuration;
mod dispatch;
pub mod matching;
pub mod review;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

pub use client::ServiceMap;

use crate::resources::ResourceDef;

/// The operation of an AdmissionRequest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// POST (and a PUT that creates).
    Create,
    /// PUT and PATCH.
    Update,
    /// DELETE.
    Delete,
    /// exec, attach, port-forward, proxy (the stand-in serves none of them).
    Connect,
}

impl Operation {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// What admission sees of one request (`admission.Attributes`).
#[derive(Debug, Clone)]
pub struct Attributes {
    /// The operation.
    pub operation: Operation,
    /// The resource of the request (its version is the request's).
    pub def: &'static ResourceDef,
    /// `status`, or empty.
    pub subresource: String,
    /// The request's namespace; for a namespace itself, its name.
    pub namespace: String,
    /// The object's name (empty on a create with generateName).
    pub name: String,
    /// The object, in the request's view (`None` on DELETE).
    pub object: Option<Value>,
    /// The stored object before the write (UPDATE and the validating half of DELETE).
    pub old_object: Option<Value>,
    /// `CreateOptions`, `UpdateOptions` or `DeleteOptions`.
    pub options: Value,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// What a request gathered from its webhooks besides their verdicts.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// `response.warnings`, in call order (sent back as `Warning:` headers).
    pub warnings: Vec<String>,
    /// Audit annotations: the webhooks' own (`<webhook>/<key>`) and the dispatcher's.
    pub annotations: BTreeMap<String, String>,
}

/// One request's audit annotations, kept for tests (the stand-in writes no audit log).
#[derive(Debug, Clone)]
pub struct AuditEntry {
    /// `CREATE`, `UPDATE`, ...
    pub operation: &'static str,
    /// Plural resource.
    pub resource: &'static str,
    /// Namespace of the request.
    pub namespace: String,
    /// Object name (as stored, after generation).
    pub name: String,
    /// The annotations.
    pub annotations: BTreeMap<String, String>,
}

/// The admission plugin state: where services are, and the audit annotations seen.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    /// Where webhook services listen.
    pub services: ServiceMap,
    audit: Arc<Mutex<Vec<AuditEntry>>>,
}

/// Resources no webhook is called for, so a broken webhook cannot lock its own configuration
/// out (`IsExemptAdmissionConfigurationResource`).
pub fn exempt(def: &ResourceDef) -> bool {
    def.group == "admissionregistration.k8s.io"
}

impl Admission {
    /// Keeps one request's audit annotations (none: nothing kept).
    pub fn finish(&self, attrs: &Attributes, name: &str, record: &Record) {
        if record.annotations.is_empty() {
            return;
        }
        let mut audit = self.audit.lock().unwrap_or_else(|p| p.into_inner());
        audit.push(AuditEntry {
            operation: attrs.operation.as_str(),
            resource: attrs.def.plural,
            namespace: attrs.namespace.clone(),
            name: name.to_string(),
            annotations: record.annotations.clone(),
        });
    }

    /// Every request's audit annotations so far, oldest first.
    pub fn audit(&self) -> Vec<AuditEntry> {
        self.audit.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
