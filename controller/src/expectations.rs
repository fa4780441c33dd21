//! Anti-stale-cache expectations (§5.12).
//!
//! Choice: after each pod write the reconciler records (pod uid → resourceVersion the API
//! server returned) under the SidecarSet, and plans nothing for that SidecarSet until the pod
//! cache shows every such pod at that version or newer (or gone); the pod watch event that
//! brings the cache up to date re-triggers the reconcile, and a short requeue covers the rest.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One write the cache has not shown yet.
#[derive(Debug, Clone)]
struct Pending {
    namespace: String,
    name: String,
    /// resourceVersion returned by our write.
    written: String,
    /// When it was recorded; an entry older than the TTL is dropped so a lost event cannot wedge a SidecarSet.
    at: Instant,
}

/// What the cache currently holds for a pod: (uid, resourceVersion), or `None` when absent.
pub type CachedVersion = Option<(String, String)>;

/// Per-SidecarSet pending writes, keyed by pod uid.
#[derive(Debug, Default)]
pub struct Expectations {
    pending: Mutex<HashMap<String, HashMap<String, Pending>>>,
    ttl: Duration,
}

impl Expectations {
    /// Expectations that expire after `ttl` (a safety net; normally they are met within a watch round-trip).
    pub fn new(ttl: Duration) -> Self {
        Expectations {
            pending: Mutex::default(),
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashMap<String, Pending>>> {
        // A poisoned map only holds plain data; keep using it.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that `sidecarset` wrote pod `namespace/name` (uid) and got back `resource_version`.
    pub fn expect(
        &self,
        sidecarset: &str,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) {
        self.lock()
            .entry(sidecarset.to_string())
            .or_default()
            .insert(
                uid.to_string(),
                Pending {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                    written: resource_version.to_string(),
                    at: Instant::now(),
                },
            );
    }

    /// Drops met, expired and vanished entries; returns how many writes the cache still lacks.
    /// `lookup(namespace, name)` reads the pod cache.
    pub fn unmet(&self, sidecarset: &str, lookup: impl Fn(&str, &str) -> CachedVersion) -> usize {
        let mut all = self.lock();
        let Some(pods) = all.get_mut(sidecarset) else {
            return 0;
        };
        let now = Instant::now();
        pods.retain(|uid, p| {
            if now.duration_since(p.at) > self.ttl {
                tracing::warn!(sidecarset, pod = %format!("{}/{}", p.namespace, p.name), "expectation expired; continuing with the cache as is");
                return false;
            }
            match lookup(&p.namespace, &p.name) {
                Some((cached_uid, cached_rv)) if cached_uid == *uid => !caught_up(&cached_rv, &p.written),
                // Pod deleted or replaced by a namesake: nothing left to wait for.
                _ => false,
            }
        });
        let left = pods.len();
        if left == 0 {
            all.remove(sidecarset);
        }
        left
    }

    /// Forgets a SidecarSet (it was deleted).
    pub fn forget(&self, sidecarset: &str) {
        self.lock().remove(sidecarset);
    }
}

/// Whether a cached resourceVersion is at or past the written one. resourceVersions are
/// opaque in general but numeric in etcd-backed servers; equality is the opaque fallback.
fn caught_up(cached: &str, written: &str) -> bool {
    match (cached.parse::<u64>(), written.parse::<u64>()) {
        (Ok(c), Ok(w)) => c >= w,
        _ => cached == written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(uid: &str, rv: &str) -> CachedVersion {
        Some((uid.to_string(), rv.to_string()))
    }

    #[test]
    fn unmet_until_the_cache_reaches_the_written_version() {
        let e = Expectations::new(Duration::from_secs(60));
        e.expect("ss", "ns", "p", "u1", "10");
        assert_eq!(e.unmet("ss", |_, _| cache("u1", "9")), 1);
        assert_eq!(e.unmet("other", |_, _| cache("u1", "9")), 0);
        assert_eq!(e.unmet("ss", |_, _| cache("u1", "11")), 0);
        assert_eq!(
            e.unmet("ss", |_, _| cache("u1", "9")),
            0,
            "met entries are dropped"
        );
    }

    #[test]
    fn deleted_or_replaced_pods_and_expired_entries_are_dropped() {
        let e = Expectations::new(Duration::from_secs(60));
        e.expect("ss", "ns", "p", "u1", "10");
        assert_eq!(e.unmet("ss", |_, _| cache("u2", "1")), 0);
        e.expect("ss", "ns", "p", "u1", "10");
        assert_eq!(e.unmet("ss", |_, _| None), 0);
        let short = Expectations::new(Duration::ZERO);
        short.expect("ss", "ns", "p", "u1", "10");
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(short.unmet("ss", |_, _| cache("u1", "1")), 0);
    }

    #[test]
    fn opaque_versions_compare_by_equality() {
        assert!(caught_up("abc", "abc"));
        assert!(!caught_up("abd", "abc"));
        assert!(caught_up("12", "9"));
    }
}
