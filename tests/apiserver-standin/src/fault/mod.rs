//! The fault switch: make the next N requests of a verb/resource fail or slow down.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request verb, as in RBAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// GET one object.
    Get,
    /// GET a collection.
    List,
    /// GET a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE one object.
    Delete,
    /// DELETE a collection.
    DeleteCollection,
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        };
        f.write_str(s)
    }
}

/// What a matching request suffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultAction {
    /// Answer with this HTTP status (500, 409, 429, 503...) and a matching Status body.
    Fail(u16),
    /// Wait this long before handling the request normally.
    Delay(Duration),
}

/// One armed fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Verb to match (`None`: any).
    pub verb: Option<Verb>,
    /// Resource to match: plural (`pods`), `plural/subresource` (`pods/status`) or `None` for any.
    pub resource: Option<String>,
    /// How many more requests it applies to.
    pub remaining: u32,
    /// What happens to them.
    pub action: FaultAction,
}

/// The request a fault is matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestInfo {
    /// The verb.
    pub verb: Verb,
    /// Plural resource name.
    pub resource: String,
    /// Subresource (`status`), if any.
    pub subresource: Option<String>,
    /// Namespace, if any.
    pub namespace: Option<String>,
    /// Object name, if any.
    pub name: Option<String>,
}

/// The switch board shared by the server and the tests.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    armed: Arc<Mutex<Vec<Fault>>>,
    log: Arc<Mutex<Vec<RequestInfo>>>,
}

const LOG_LIMIT: usize = 100_000;

impl Faults {
    fn armed(&self) -> std::sync::MutexGuard<'_, Vec<Fault>> {
        self.armed.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn log_guard(&self) -> std::sync::MutexGuard<'_, Vec<RequestInfo>> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes the next `count` requests matching `verb` on `resource` fail with `status`.
    /// `resource` is a plural (`pods`) or `pods/status`; a plain plural matches its subresources too.
    pub fn fail_next(&self, verb: Option<Verb>, resource: Option<&str>, count: u32, status: u16) {
        self.arm(Fault {
            verb,
            resource: resource.map(String::from),
            remaining: count,
            action: FaultAction::Fail(status),
        });
    }

    /// Delays the next `count` matching requests by `delay`.
    pub fn delay_next(
        &self,
        verb: Option<Verb>,
        resource: Option<&str>,
        count: u32,
        delay: Duration,
    ) {
        self.arm(Fault {
            verb,
            resource: resource.map(String::from),
            remaining: count,
            action: FaultAction::Delay(delay),
        });
    }

    /// Arms a fault.
    pub fn arm(&self, fault: Fault) {
        if fault.remaining > 0 {
            self.armed().push(fault);
        }
    }

    /// Disarms everything.
    pub fn clear(&self) {
        self.armed().clear();
    }

    /// How many requests armed faults still apply to.
    pub fn pending(&self) -> u32 {
        self.armed().iter().map(|f| f.remaining).sum()
    }

    /// Records a request and returns the actions it must suffer (consuming one use of each matching fault).
    pub fn take(&self, req: &RequestInfo) -> Vec<FaultAction> {
        {
            let mut log = self.log_guard();
            if log.len() < LOG_LIMIT {
                log.push(req.clone());
            }
        }
        let mut armed = self.armed();
        let mut out = Vec::new();
        let mut failed = false;
        for f in armed.iter_mut() {
            let verb_ok = f.verb.is_none_or(|v| v == req.verb);
            let res_ok = f
                .resource
                .as_deref()
                .is_none_or(|r| match r.split_once('/') {
                    Some((plural, sub)) => {
                        plural == req.resource && req.subresource.as_deref() == Some(sub)
                    }
                    None => r == req.resource,
                });
            if !(verb_ok && res_ok) || f.remaining == 0 {
                continue;
            }
            if matches!(f.action, FaultAction::Fail(_)) {
                if failed {
                    continue;
                }
                failed = true;
            }
            f.remaining -= 1;
            out.push(f.action);
        }
        armed.retain(|f| f.remaining > 0);
        out
    }

    /// Every request served so far (verb, resource, ...), oldest first.
    pub fn requests(&self) -> Vec<RequestInfo> {
        self.log_guard().clone()
    }

    /// How many requests with this verb and resource were served.
    pub fn count(&self, verb: Verb, resource: &str) -> usize {
        self.log_guard()
            .iter()
            .filter(|r| r.verb == verb && r.resource == resource)
            .count()
    }
}
