//! Command-line flags.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

/// Slim controller for OpenKruise SidecarSets: status and in-place sidecar upgrades.
#[derive(Debug, Clone, Parser)]
#[command(name = "sidecarset-controller", version)]
pub struct Args {
    /// Address of the /healthz, /readyz and /metrics endpoints.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,
    /// Name of the coordination.k8s.io/v1 Lease used for leader election.
    #[arg(long, default_value = "sidecarset-controller")]
    pub lease_name: String,
    /// Namespace of the Lease.
    #[arg(long, env = "POD_NAMESPACE", default_value = "sidecarset-system")]
    pub lease_namespace: String,
    /// Identity in the Lease (default: the host name, i.e. the pod name in a cluster).
    #[arg(long)]
    pub identity: Option<String>,
    /// SidecarSets reconciled concurrently.
    #[arg(long, default_value_t = 3)]
    pub workers: u16,
    /// Seconds a Lease stays valid without renewal.
    #[arg(long, default_value_t = 15.0)]
    pub lease_duration_seconds: f64,
    /// Seconds after the last renewal at which the leader stops acting (less than the lease duration).
    #[arg(long, default_value_t = 10.0)]
    pub renew_deadline_seconds: f64,
    /// Seconds between lease attempts.
    #[arg(long, default_value_t = 2.0)]
    pub retry_period_seconds: f64,
    /// Log format: `json` (structured, default) or `text`.
    #[arg(long, default_value = "json", value_parser = ["json", "text"])]
    pub log_format: String,
}

impl Args {
    /// The Lease timing, clamped so that renew deadline < lease duration.
    pub fn timing(&self) -> crate::leader::Timing {
        let secs =
            |s: f64| Duration::try_from_secs_f64(s.max(0.05)).unwrap_or(Duration::from_secs(1));
        let lease_duration = secs(self.lease_duration_seconds).max(Duration::from_secs(1));
        let renew_deadline = secs(self.renew_deadline_seconds).min(lease_duration.mul_f64(0.9));
        let retry_period = secs(self.retry_period_seconds).min(renew_deadline / 2);
        crate::leader::Timing {
            lease_duration,
            renew_deadline,
            retry_period,
        }
    }

    /// The identity flag, or the host name.
    pub fn identity(&self) -> String {
        self.identity.clone().unwrap_or_else(|| {
            hostname::get()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_else(|| "sidecarset-controller".to_string())
        })
    }
}
