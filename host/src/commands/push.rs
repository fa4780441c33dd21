//! `sidecarset-host push` and `pull`: policies as OCI artifacts, like `kwctl push` / `kwctl pull`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

use sidecarset_host::annotate::embedded_metadata;
use sidecarset_host::oci::{self, Reference};

/// Arguments of `push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// Push even if the module carries no Kubewarden metadata.
    #[arg(long)]
    pub force: bool,
    /// Docker config file, or the folder holding config.json (default: $DOCKER_CONFIG, ~/.docker).
    #[arg(long, value_name = "PATH")]
    pub docker_config_json_path: Option<PathBuf>,
    /// The annotated module.
    #[arg(value_name = "MODULE")]
    pub module: PathBuf,
    /// `registry://HOST/REPOSITORY:TAG`.
    #[arg(value_name = "URI")]
    pub uri: String,
}

/// Arguments of `pull`.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// Where to write the module.
    #[arg(short = 'o', long = "output-path", value_name = "FILE")]
    pub output_path: PathBuf,
    /// Docker config file, or the folder holding config.json (default: $DOCKER_CONFIG, ~/.docker).
    #[arg(long, value_name = "PATH")]
    pub docker_config_json_path: Option<PathBuf>,
    /// `registry://HOST/REPOSITORY[:TAG|@sha256:…]`.
    #[arg(value_name = "URI")]
    pub uri: String,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `push`.
pub fn push(args: &PushArgs) -> anyhow::Result<()> {
    let wasm = std::fs::read(&args.module)
        .with_context(|| format!("cannot read {}", args.module.display()))?;
    if !args.force && embedded_metadata(&wasm)?.is_none() {
        bail!(
            "{} is not annotated: run `sidecarset-host annotate` first, or use --force",
            args.module.display()
        );
    }
    let reference = Reference::parse(&args.uri)?;
    let credentials = oci::credentials(&reference, args.docker_config_json_path.as_deref())?;
    let digest = runtime()?.block_on(oci::push(&wasm, &reference, credentials))?;
    println!(
        "Policy successfully pushed: {}@{digest}",
        reference.without_digest()
    );
    Ok(())
}

/// Runs `pull`.
pub fn pull(args: &PullArgs) -> anyhow::Result<()> {
    let reference = Reference::parse(&args.uri)?;
    let credentials = oci::credentials(&reference, args.docker_config_json_path.as_deref())?;
    let pulled = runtime()?.block_on(oci::pull_with_digest(&reference, credentials))?;
    std::fs::write(&args.output_path, &pulled.wasm)
        .with_context(|| format!("cannot write {}", args.output_path.display()))?;
    // The manifest digest, as push prints it: pinning `@sha256:…` pulls exactly these bytes.
    println!(
        "Policy successfully pulled: {}@{} to {}",
        reference.without_digest(),
        pulled.manifest_digest,
        args.output_path.display()
    );
    Ok(())
}
