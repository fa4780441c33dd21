//! `sidecarset-host annotate`: embed metadata.yml into the module, like `kwctl annotate`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use sidecarset_host::annotate::{Metadata, annotate};

/// Arguments of `annotate`, named like kwctl's.
#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// The policy's metadata.yml.
    #[arg(short = 'm', long = "metadata-path", value_name = "FILE")]
    pub metadata_path: PathBuf,
    /// A README embedded as the `io.kubewarden.policy.usage` annotation.
    #[arg(short = 'u', long = "usage-path", value_name = "FILE")]
    pub usage_path: Option<PathBuf>,
    /// Where to write the annotated module.
    #[arg(short = 'o', long = "output-path", value_name = "FILE")]
    pub output_path: PathBuf,
    /// The module to annotate.
    #[arg(value_name = "MODULE")]
    pub module: PathBuf,
}

/// Runs the command.
pub fn execute(args: &AnnotateArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.metadata_path)
        .with_context(|| format!("cannot read {}", args.metadata_path.display()))?;
    let metadata = Metadata::from_yaml(&text)
        .with_context(|| format!("{} is not valid", args.metadata_path.display()))?;
    let usage = args
        .usage_path
        .as_ref()
        .map(|path| {
            std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
        })
        .transpose()?;
    let wasm = std::fs::read(&args.module)
        .with_context(|| format!("cannot read {}", args.module.display()))?;
    let (annotated, _) = annotate(&wasm, metadata, usage)
        .with_context(|| format!("cannot annotate {}", args.module.display()))?;
    std::fs::write(&args.output_path, annotated)
        .with_context(|| format!("cannot write {}", args.output_path.display()))?;
    Ok(())
}
