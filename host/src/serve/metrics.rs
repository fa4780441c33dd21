//! Prometheus text metrics of `serve`: admissions by kind and verdict, evaluation latency, errors.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the evaluation latency histogram.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The outcome of one admission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Allowed without a patch.
    Accepted,
    /// Allowed with a JSONPatch.
    Mutated,
    /// Denied by the policy.
    Rejected,
    /// The evaluation failed (trap, deadline, memory cap, bad response): denied with code 500.
    Error,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Mutated => "mutated",
            Self::Rejected => "rejected",
            Self::Error => "error",
        }
    }
}

/// All counters; cheap to update from any thread.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, Verdict), u64>>,
    errors: Mutex<BTreeMap<String, u64>>,
    http_errors: Mutex<BTreeMap<u16, u64>>,
    buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_nanos: AtomicU64,
    in_flight: AtomicI64,
    running: AtomicI64,
    running_max: AtomicI64,
}

fn bump<K: Ord>(map: &Mutex<BTreeMap<K, u64>>, key: K) {
    // A poisoned lock only means another thread panicked mid-increment: the map is still usable.
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    *map.entry(key).or_default() += 1;
}

impl Metrics {
    /// Counts one admission request of `kind` with its verdict.
    pub fn record_request(&self, kind: &str, verdict: Verdict) {
        bump(&self.requests, (kind.to_string(), verdict));
    }

    /// Counts one evaluation error by reason (`deadline`, `memory`, `guest`, `internal`).
    pub fn record_error(&self, reason: &str) {
        bump(&self.errors, reason.to_string());
    }

    /// Counts one request refused at the HTTP level (400, 404, 405, 413, 500, 503).
    pub fn record_http_error(&self, status: u16) {
        bump(&self.http_errors, status);
    }

    /// Adds one evaluation latency (instantiation + `validate`).
    pub fn observe_latency(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bucket, bound) in self.buckets.iter().zip(BUCKETS) {
            if seconds <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.latency_sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Marks an evaluation as started; the guard marks it finished when dropped.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// Marks an evaluation as holding a worker; the guard releases it when dropped.
    pub fn running(&self) -> Running<'_> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.running_max.fetch_max(now, Ordering::SeqCst);
        Running(self)
    }

    /// Evaluations holding a worker right now, and the most there ever were at once.
    pub fn running_now_and_max(&self) -> (i64, i64) {
        (
            self.running.load(Ordering::SeqCst),
            self.running_max.load(Ordering::SeqCst),
        )
    }

    /// Evaluations running or waiting for a worker right now.
    pub fn in_flight_now(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// The Prometheus text exposition (format 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) -> std::fmt::Result {
        writeln!(
            out,
            "# HELP sidecarset_host_admission_requests_total Admission requests by resource kind and verdict."
        )?;
        writeln!(
            out,
            "# TYPE sidecarset_host_admission_requests_total counter"
        )?;
        for ((kind, verdict), n) in self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            writeln!(
                out,
                "sidecarset_host_admission_requests_total{{kind=\"{}\",verdict=\"{}\"}} {n}",
                escape(kind),
                verdict.label()
            )?;
        }
        writeln!(
            out,
            "# HELP sidecarset_host_evaluation_errors_total Failed policy evaluations by reason."
        )?;
        writeln!(
            out,
            "# TYPE sidecarset_host_evaluation_errors_total counter"
        )?;
        for (reason, n) in self.errors.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            writeln!(
                out,
                "sidecarset_host_evaluation_errors_total{{reason=\"{}\"}} {n}",
                escape(reason)
            )?;
        }
        writeln!(
            out,
            "# HELP sidecarset_host_http_errors_total Requests refused before evaluation, by HTTP status."
        )?;
        writeln!(out, "# TYPE sidecarset_host_http_errors_total counter")?;
        for (status, n) in self
            .http_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            writeln!(
                out,
                "sidecarset_host_http_errors_total{{code=\"{status}\"}} {n}"
            )?;
        }
        writeln!(
            out,
            "# HELP sidecarset_host_evaluation_duration_seconds Policy evaluation latency (fresh instance + validate)."
        )?;
        writeln!(
            out,
            "# TYPE sidecarset_host_evaluation_duration_seconds histogram"
        )?;
        for (bucket, bound) in self.buckets.iter().zip(BUCKETS) {
            writeln!(
                out,
                "sidecarset_host_evaluation_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            )?;
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        writeln!(
            out,
            "sidecarset_host_evaluation_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        )?;
        let sum = self.latency_sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        writeln!(out, "sidecarset_host_evaluation_duration_seconds_sum {sum}")?;
        writeln!(
            out,
            "sidecarset_host_evaluation_duration_seconds_count {count}"
        )?;
        writeln!(
            out,
            "# HELP sidecarset_host_in_flight_evaluations Evaluations running or queued for a worker."
        )?;
        writeln!(out, "# TYPE sidecarset_host_in_flight_evaluations gauge")?;
        writeln!(
            out,
            "sidecarset_host_in_flight_evaluations {}",
            self.in_flight_now()
        )?;
        let (running, running_max) = self.running_now_and_max();
        writeln!(
            out,
            "# HELP sidecarset_host_running_evaluations Evaluations holding one of the --workers slots."
        )?;
        writeln!(out, "# TYPE sidecarset_host_running_evaluations gauge")?;
        writeln!(out, "sidecarset_host_running_evaluations {running}")?;
        writeln!(
            out,
            "# HELP sidecarset_host_running_evaluations_max Most evaluations ever running at once since start."
        )?;
        writeln!(out, "# TYPE sidecarset_host_running_evaluations_max gauge")?;
        writeln!(out, "sidecarset_host_running_evaluations_max {running_max}")?;
        Ok(())
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Decrements the in-flight gauge on drop.
pub struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Decrements the running gauge on drop.
pub struct Running<'a>(&'a Metrics);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let metrics = Metrics::default();
        metrics.record_request("Pod", Verdict::Mutated);
        metrics.record_request("Pod", Verdict::Mutated);
        metrics.record_error("deadline");
        metrics.observe_latency(Duration::from_micros(300));
        let text = metrics.render();
        assert!(text.contains(
            "sidecarset_host_admission_requests_total{kind=\"Pod\",verdict=\"mutated\"} 2"
        ));
        assert!(text.contains("sidecarset_host_evaluation_errors_total{reason=\"deadline\"} 1"));
        assert!(
            text.contains("sidecarset_host_evaluation_duration_seconds_bucket{le=\"0.00025\"} 0")
        );
        assert!(
            text.contains("sidecarset_host_evaluation_duration_seconds_bucket{le=\"0.0005\"} 1")
        );
        assert!(text.contains("sidecarset_host_evaluation_duration_seconds_bucket{le=\"+Inf\"} 1"));
        assert!(text.contains("sidecarset_host_evaluation_duration_seconds_count 1"));
    }

    #[test]
    fn the_running_gauge_remembers_its_peak() {
        let metrics = Metrics::default();
        let first = metrics.running();
        let second = metrics.running();
        drop(first);
        assert_eq!(metrics.running_now_and_max(), (1, 2));
        drop(second);
        let text = metrics.render();
        assert!(
            text.contains("sidecarset_host_running_evaluations 0\n"),
            "{text}"
        );
        assert!(
            text.contains("sidecarset_host_running_evaluations_max 2\n"),
            "{text}"
        );
    }
}
