//! Leader election on a coordination.k8s.io/v1 Lease (kube 4.2 has no helper).
//!
//! Like client-go: a holder renews every retry period; a candidate takes the lease only when
//! it has seen the same record unchanged for a whole lease duration on its own clock (no clock
//! skew between replicas matters). Every write is a PUT guarded by resourceVersion, so two
//! candidates can never both win. A leader stops acting `renew_deadline` after the start of
//! its last successful renewal, which is before anyone else may take over.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::PostParams;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::metrics::Metrics;

/// Lease timing.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// How long a lease is valid without renewal.
    pub lease_duration: Duration,
    /// A leader that could not renew for this long stops acting (< lease_duration).
    pub renew_deadline: Duration,
    /// Pause between attempts.
    pub retry_period: Duration,
}

/// The lease record last seen, and when this replica first saw it.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    resource_version: Option<String>,
}

/// Shared view of leadership, cheap to query from reconciles.
#[derive(Debug, Clone)]
pub struct Leadership {
    /// Acting as leader is allowed until this instant.
    until: Arc<Mutex<Option<Instant>>>,
    changes: watch::Receiver<bool>,
}

impl Leadership {
    /// Whether this replica may act now.
    pub fn is_leader(&self) -> bool {
        let until = *self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.is_some_and(|u| Instant::now() < u)
    }

    /// A receiver that flips to `true` when leadership is acquired and `false` when lost.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.changes.clone()
    }

    /// Leadership that is always held (for tests of the reconciler without a Lease).
    pub fn always() -> Self {
        let (_tx, rx) = watch::channel(true);
        Leadership {
            until: Arc::new(Mutex::new(Some(
                Instant::now() + Duration::from_secs(100 * 365 * 86_400),
            ))),
            changes: rx,
        }
    }
}

/// Runs the election loop for one identity.
pub struct LeaderElector {
    api: Api<Lease>,
    name: String,
    identity: String,
    timing: Timing,
    until: Arc<Mutex<Option<Instant>>>,
    changes: watch::Sender<bool>,
    metrics: Arc<Metrics>,
    seen: Option<(Seen, Instant)>,
}

impl LeaderElector {
    /// An elector for lease `name` in the namespace of `api`.
    pub fn new(
        api: Api<Lease>,
        name: String,
        identity: String,
        timing: Timing,
        metrics: Arc<Metrics>,
    ) -> (Self, Leadership) {
        let until = Arc::new(Mutex::new(None));
        let (tx, rx) = watch::channel(false);
        let leadership = Leadership {
            until: until.clone(),
            changes: rx,
        };
        let elector = LeaderElector {
            api,
            name,
            identity,
            timing,
            until,
            changes: tx,
            metrics,
            seen: None,
        };
        (elector, leadership)
    }

    fn set_until(&self, until: Option<Instant>) {
        *self.until.lock().unwrap_or_else(|p| p.into_inner()) = until;
    }

    fn leading(&self) -> bool {
        let until = *self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.is_some_and(|u| Instant::now() < u)
    }

    /// Campaigns and renews until `shutdown`, then releases the lease if held.
    pub async fn run(mut self, shutdown: CancellationToken) {
        loop {
            let started = Instant::now();
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    self.set_until(Some(started + self.timing.renew_deadline));
                    if !*self.changes.borrow() {
                        tracing::info!(identity = %self.identity, lease = %self.name, "acquired leadership");
                    }
                }
                Ok(false) => self.set_until(None),
                Err(e) => tracing::warn!(error = %e, "lease renewal failed"),
            }
            let leading = self.leading();
            self.metrics.set_leader(leading);
            if *self.changes.borrow() != leading {
                if !leading {
                    tracing::warn!(identity = %self.identity, "lost leadership");
                }
                let _ = self.changes.send(leading);
            }
            tokio::select! {
                _ = tokio::time::sleep(self.timing.retry_period) => {}
                _ = shutdown.cancelled() => break,
            }
        }
        if self.leading() {
            self.set_until(None);
            let _ = self.changes.send(false);
            self.metrics.set_leader(false);
            match self.release().await {
                Ok(()) => tracing::info!(identity = %self.identity, "released leadership"),
                Err(e) => tracing::warn!(error = %e, "could not release the lease"),
            }
        }
    }

    fn spec(&self, now: Timestamp, previous: Option<&LeaseSpec>) -> LeaseSpec {
        let mine =
            previous.is_some_and(|p| p.holder_identity.as_deref() == Some(self.identity.as_str()));
        let transitions = previous.and_then(|p| p.lease_transitions).unwrap_or(0);
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(
                i32::try_from(self.timing.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX),
            ),
            acquire_time: if mine {
                previous.and_then(|p| p.acquire_time.clone())
            } else {
                Some(MicroTime(now))
            },
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(if mine || previous.is_none() {
                transitions
            } else {
                transitions + 1
            }),
            ..LeaseSpec::default()
        }
    }

    /// One attempt: Ok(true) when this replica holds the lease afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool> {
        let now = Timestamp::now();
        let existing = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| Error::kube(format!("get lease {}", self.name), e))?;
        let Some(mut lease) = existing else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now, None)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(e) => Err(Error::kube(format!("create lease {}", self.name), e)),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let seen = Seen {
            holder: holder.clone(),
            renew_time: spec.renew_time.clone(),
            resource_version: lease.metadata.resource_version.clone(),
        };
        let first_seen = match &self.seen {
            Some((s, at)) if *s == seen => *at,
            _ => {
                let at = Instant::now();
                self.seen = Some((seen, at));
                at
            }
        };
        let duration = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.timing.lease_duration, Duration::from_secs);
        let mine = holder.as_deref() == Some(self.identity.as_str());
        let expired = holder.is_none() || first_seen.elapsed() >= duration;
        if !mine && !expired {
            return Ok(false);
        }
        lease.spec = Some(self.spec(now, Some(&spec)));
        // PUT with the read resourceVersion: a concurrent writer makes this a 409.
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(Error::kube(format!("update lease {}", self.name), e)),
        }
    }

    /// Hands the lease over at once by clearing the holder (as client-go's ReleaseOnCancel).
    async fn release(&self) -> Result<()> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| Error::kube(format!("get lease {}", self.name), e))?
        else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        self.api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
            .map(|_| ())
            .map_err(|e| Error::kube(format!("release lease {}", self.name), e))
    }
}
