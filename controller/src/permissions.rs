//! Every Kubernetes API call the controller makes, in one place, so the RBAC of the deployment
//! can be checked against it. Used by tests only; controller/tests/e2e_rbac.rs fails when the
//! binary makes a call missing here, or never makes one listed here.

/// One (apiGroup, resource, verbs) triple, as in a ClusterRole rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiCall {
    /// API group (`""` for core).
    pub api_group: &'static str,
    /// Resource, with `/subresource` when the call targets one.
    pub resource: &'static str,
    /// Verbs, sorted.
    pub verbs: &'static [&'static str],
}

/// The calls of `sidecarset-controller`.
pub const API_CALLS: &[ApiCall] = &[
    // Reflector of SidecarSets (watches.rs); a re-read after a status write conflict (apply.rs).
    ApiCall {
        api_group: "apps.kruise.io",
        resource: "sidecarsets",
        verbs: &["get", "list", "watch"],
    },
    // Status written only when it changes (reconciler.rs, merge patch on the subresource).
    ApiCall {
        api_group: "apps.kruise.io",
        resource: "sidecarsets/status",
        verbs: &["patch"],
    },
    // Reflector of pods; in-place upgrades and hot-upgrade resets as JSON patches, and a re-read
    // when the API server refuses one without saying why (apply.rs).
    ApiCall {
        api_group: "",
        resource: "pods",
        verbs: &["get", "list", "patch", "watch"],
    },
    // SidecarSetUpgradable condition, strategic merge on the status subresource (apply.rs).
    ApiCall {
        api_group: "",
        resource: "pods/status",
        verbs: &["patch"],
    },
    // Reflector of namespaces for namespaceSelector (watches.rs).
    ApiCall {
        api_group: "",
        resource: "namespaces",
        verbs: &["list", "watch"],
    },
    // Leader election (leader.rs).
    ApiCall {
        api_group: "coordination.k8s.io",
        resource: "leases",
        verbs: &["create", "get", "update"],
    },
    // kube-runtime's Recorder creates events and patches a repeated one into a series (events.rs).
    ApiCall {
        api_group: "events.k8s.io",
        resource: "events",
        verbs: &["create", "patch"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_resource_with_sorted_unique_verbs() {
        for (i, call) in API_CALLS.iter().enumerate() {
            assert!(
                API_CALLS[..i]
                    .iter()
                    .all(|c| (c.api_group, c.resource) != (call.api_group, call.resource)),
                "{call:?} listed twice"
            );
            assert!(call.verbs.windows(2).all(|w| w[0] < w[1]), "{call:?}");
        }
    }
}
