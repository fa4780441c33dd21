//! `sidecarset-host run`: evaluate one request as `kwctl run` does and print one AdmissionResponse line.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::Value;

use sidecarset_host::context::{
    AllowList, ClusterContext, NoCluster, SessionRecorder, SessionReplayer,
};
use sidecarset_host::engine::{HostCallbacks, PolicyEngine};
use sidecarset_host::{AdmissionRequest, evaluate_request};

/// Arguments of `run`, named like kwctl's.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// AdmissionRequest or AdmissionReview JSON file (`-` for stdin).
    #[arg(short = 'r', long)]
    pub request_path: PathBuf,
    /// Settings file, YAML or JSON (`-` for stdin).
    #[arg(short = 's', long, conflicts_with = "settings_json")]
    pub settings_path: Option<PathBuf>,
    /// Settings as inline JSON.
    #[arg(long)]
    pub settings_json: Option<String>,
    /// Folder of Kubernetes objects (JSON/YAML) that answers the kubernetes host callbacks.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "replay_host_capabilities_interactions"
    )]
    pub context: Option<PathBuf>,
    /// Write the host-capability exchanges to this kwctl session file.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "replay_host_capabilities_interactions"
    )]
    pub record_host_capabilities_interactions: Option<PathBuf>,
    /// Answer host-capability calls from this kwctl session file, strictly in order.
    #[arg(long, value_name = "FILE")]
    pub replay_host_capabilities_interactions: Option<PathBuf>,
    /// Grant the Kubernetes kinds of the metadata's `contextAwareResources`; without it every
    /// list/get callback is refused, as kwctl does.
    #[arg(long)]
    pub allow_context_aware: bool,
    /// Deadline of each evaluation phase, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub deadline_ms: u64,
    /// Guest memory cap, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub memory_limit_mib: usize,
    /// The policy module (plain or annotated .wasm; a `file://` prefix is accepted).
    #[arg(value_name = "MODULE")]
    pub module: String,
}

fn read_settings(args: &RunArgs) -> anyhow::Result<Value> {
    super::common::read_settings(args.settings_path.as_deref(), args.settings_json.as_deref())
}

fn base_host(args: &RunArgs) -> anyhow::Result<Box<dyn HostCallbacks>> {
    if let Some(dir) = &args.context {
        let context = ClusterContext::from_dir(dir)
            .with_context(|| format!("cannot load the cluster context from {}", dir.display()))?;
        return Ok(Box::new(context));
    }
    Ok(Box::new(NoCluster))
}

/// Runs the command.
pub fn execute(args: &RunArgs) -> anyhow::Result<()> {
    let module_path = super::common::module_path(&args.module);
    // Guest output goes to stderr: keep stdout for the one AdmissionResponse line.
    let config = super::common::engine_config(args.deadline_ms, args.memory_limit_mib);
    let engine = PolicyEngine::from_file(&module_path, config)?;
    let request_text = super::common::read_input(&args.request_path)?;
    let request: Value = serde_json::from_str(&request_text)
        .with_context(|| format!("cannot parse request {}", args.request_path.display()))?;
    // As kwctl: input that does not decode as an AdmissionRequest is an error, not a rejection.
    let request = AdmissionRequest::from_input(&request)
        .with_context(|| format!("invalid request {}", args.request_path.display()))?;
    let settings = read_settings(args)?;
    // Checked before any host answers: refused reads are neither recorded nor replayed.
    let granted = super::common::granted_resources(&engine, args.allow_context_aware);

    if let Some(session) = &args.replay_host_capabilities_interactions {
        let replayer = SessionReplayer::from_file(session)?;
        let host = AllowList::new(&replayer, granted);
        evaluate(&engine, &request, &settings, &host)?;
        if replayer.remaining() > 0 {
            eprintln!(
                "warning: {} of the {} recorded exchanges have not been replayed",
                replayer.remaining(),
                replayer.len()
            );
        }
        return Ok(());
    }
    let base = base_host(args)?;
    match &args.record_host_capabilities_interactions {
        Some(session) => {
            let recorder = SessionRecorder::new(base);
            let result = evaluate(
                &engine,
                &request,
                &settings,
                &AllowList::new(&recorder, granted),
            );
            // Like kwctl, the session is written even when the evaluation failed.
            recorder.save(session)?;
            result
        }
        None => evaluate(
            &engine,
            &request,
            &settings,
            &AllowList::new(base.as_ref(), granted),
        ),
    }
}

fn evaluate(
    engine: &PolicyEngine,
    request: &AdmissionRequest,
    settings: &Value,
    host: &dyn HostCallbacks,
) -> anyhow::Result<()> {
    let validation = engine.validate_settings(settings, host)?;
    if !validation.valid {
        bail!(
            "Provided settings are not valid: {}",
            validation.message.unwrap_or_default()
        );
    }
    let response = evaluate_request(engine, request, settings, host);
    let line = serde_json::to_string(&response)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(())
}
