//! `sidecarset-host bench`: like `kwctl bench`, but every evaluation gets a fresh instance, as
//! policy-server pays it; `--reuse-instance` keeps one instance for all, as `kwctl bench` does.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::Value;

use sidecarset_host::context::{AllowList, ClusterContext, NoCluster};
use sidecarset_host::engine::{
    HostCallbacks, PolicyEngine, ValidationResponse, settings_json, validate_payload,
};
use sidecarset_host::{AdmissionRequest, evaluate_request};

use super::common;

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// AdmissionRequest or AdmissionReview JSON file.
    #[arg(short = 'r', long)]
    pub request_path: PathBuf,
    /// Settings file, YAML or JSON.
    #[arg(short = 's', long, conflicts_with = "settings_json")]
    pub settings_path: Option<PathBuf>,
    /// Settings as inline JSON.
    #[arg(long)]
    pub settings_json: Option<String>,
    /// Folder of Kubernetes objects answering the kubernetes host callbacks.
    #[arg(long, value_name = "DIR")]
    pub context: Option<PathBuf>,
    /// Grant the Kubernetes kinds of the metadata's `contextAwareResources` (as `run`).
    #[arg(long)]
    pub allow_context_aware: bool,
    /// Evaluations run (and discarded) before measuring.
    #[arg(long, default_value_t = 100)]
    pub warm_up: u32,
    /// Measured evaluations.
    #[arg(long, default_value_t = 1000)]
    pub iterations: u32,
    /// Deadline of each evaluation phase, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub deadline_ms: u64,
    /// Guest memory cap, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub memory_limit_mib: usize,
    /// Take instances from a pool of pre-reserved slots (wasmtime's pooling allocator).
    #[arg(long)]
    pub pooling: bool,
    /// Call `validate` on one instance for every evaluation, as `kwctl bench` does (the guest's
    /// memory carries over; the host's JSON around the call is not measured).
    #[arg(long, conflicts_with = "pooling")]
    pub reuse_instance: bool,
    /// The policy module.
    #[arg(value_name = "MODULE")]
    pub module: String,
}

/// Summary statistics of a sample of durations.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// Mean.
    pub mean: Duration,
    /// Minimum.
    pub min: Duration,
    /// Maximum.
    pub max: Duration,
    /// Median.
    pub p50: Duration,
    /// 99th percentile (nearest rank).
    pub p99: Duration,
    /// Evaluations per second over the whole run.
    pub per_second: f64,
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Statistics of `samples` measured over `total` wall time.
pub fn stats(mut samples: Vec<Duration>, total: Duration) -> Stats {
    samples.sort();
    let n = samples.len().max(1) as u32;
    let sum: Duration = samples.iter().sum();
    Stats {
        mean: sum / n,
        min: samples.first().copied().unwrap_or_default(),
        max: samples.last().copied().unwrap_or_default(),
        p50: percentile(&samples, 50.0),
        p99: percentile(&samples, 99.0),
        per_second: samples.len() as f64 / total.as_secs_f64().max(f64::EPSILON),
    }
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// Runs the command.
pub fn execute(args: &BenchArgs) -> anyhow::Result<()> {
    if args.iterations == 0 {
        bail!("--iterations must be at least 1");
    }
    let mut config = common::engine_config(args.deadline_ms, args.memory_limit_mib);
    config.instance_pool = args.pooling.then_some(2);
    let engine = PolicyEngine::from_file(&common::module_path(&args.module), config)?;
    let request: Value = serde_json::from_str(&common::read_input(&args.request_path)?)
        .with_context(|| format!("cannot parse request {}", args.request_path.display()))?;
    let request = AdmissionRequest::from_input(&request)
        .with_context(|| format!("invalid request {}", args.request_path.display()))?;
    let settings =
        common::read_settings(args.settings_path.as_deref(), args.settings_json.as_deref())?;
    let base: Box<dyn HostCallbacks> =
        match &args.context {
            Some(dir) => Box::new(ClusterContext::from_dir(dir).with_context(|| {
                format!("cannot load the cluster context from {}", dir.display())
            })?),
            None => Box::new(NoCluster),
        };
    let host: Box<dyn HostCallbacks> = Box::new(AllowList::new(
        base,
        common::granted_resources(&engine, args.allow_context_aware),
    ));
    let validation = engine.validate_settings(&settings, host.as_ref())?;
    if !validation.valid {
        bail!(
            "Provided settings are not valid: {}",
            validation.message.unwrap_or_default()
        );
    }
    let first = evaluate_request(&engine, &request, &settings, host.as_ref());
    if first.status.as_ref().and_then(|s| s.code) == Some(500) {
        eprintln!("warning: the evaluation fails: {:?}", first.status);
    }
    let (samples, total) = if args.reuse_instance {
        let payload = validate_payload(&request.to_json()?, &settings_json(&settings)?);
        let mut instance = engine.instantiate(host.as_ref())?;
        measure(args, || {
            let response = instance.call("validate", &payload)?;
            serde_json::from_slice::<ValidationResponse>(&response)
                .context("the policy's answer is not a ValidationResponse")?;
            Ok(())
        })?
    } else {
        measure(args, || {
            evaluate_request(&engine, &request, &settings, host.as_ref());
            Ok(())
        })?
    };
    let s = stats(samples, total);
    let mode = if args.reuse_instance {
        "one instance for all evaluations, guest call only"
    } else {
        "fresh instance per evaluation"
    };
    println!(
        "validate ({mode}) [{} iterations after {} warm-up]:",
        args.iterations, args.warm_up
    );
    println!(
        "\tmean {}  min {}  max {}  p50 {}  p99 {}",
        micros(s.mean),
        micros(s.min),
        micros(s.max),
        micros(s.p50),
        micros(s.p99)
    );
    println!("\t{:.0} evaluations/s (one thread)", s.per_second);
    Ok(())
}

/// Runs `evaluation` `warm_up` times, then measures `iterations` runs; the first failure stops.
fn measure(
    args: &BenchArgs,
    mut evaluation: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<(Vec<Duration>, Duration)> {
    for _ in 0..args.warm_up {
        evaluation()?;
    }
    let mut samples = Vec::with_capacity(args.iterations as usize);
    let started = Instant::now();
    for _ in 0..args.iterations {
        let t = Instant::now();
        evaluation()?;
        samples.push(t.elapsed());
    }
    Ok((samples, started.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).rev().map(Duration::from_micros).collect();
        let s = stats(samples, Duration::from_millis(10));
        assert_eq!(s.min, Duration::from_micros(1));
        assert_eq!(s.max, Duration::from_micros(100));
        assert_eq!(s.p50, Duration::from_micros(50));
        assert_eq!(s.p99, Duration::from_micros(99));
        assert_eq!(s.mean, Duration::from_nanos(50_500));
        assert!((s.per_second - 10_000.0).abs() < 1e-6);
    }
}
