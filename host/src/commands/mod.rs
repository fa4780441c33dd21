//! One module per `sidecarset-host` subcommand.

pub mod annotate;
pub mod bench;
mod common;
pub mod inspect;
pub mod push;
pub mod run;
pub mod serve;

use clap::{Parser, Subcommand};

/// The bundled wasmtime host for the SidecarSet Kubewarden policy.
#[derive(Debug, Parser)]
#[command(name = "sidecarset-host", version, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Available subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate one admission request with a policy module, like `kwctl run`.
    Run(run::RunArgs),
    /// Embed metadata.yml into a policy module, like `kwctl annotate`.
    Annotate(annotate::AnnotateArgs),
    /// Print the metadata embedded in a policy module, like `kwctl inspect`.
    Inspect(inspect::InspectArgs),
    /// Serve the policy as an HTTPS admission webhook.
    Serve(Box<serve::ServeArgs>),
    /// Push an annotated policy to an OCI registry, like `kwctl push`.
    Push(push::PushArgs),
    /// Pull a policy from an OCI registry, like `kwctl pull`.
    Pull(push::PullArgs),
    /// Benchmark one request, like `kwctl bench` but with a fresh instance per evaluation.
    Bench(bench::BenchArgs),
}

impl Cli {
    /// Runs the selected command.
    pub fn execute(self) -> anyhow::Result<()> {
        match self.command {
            Command::Run(args) => run::execute(&args),
            Command::Annotate(args) => annotate::execute(&args),
            Command::Inspect(args) => inspect::execute(&args),
            Command::Serve(args) => serve::execute(&args),
            Command::Push(args) => push::push(&args),
            Command::Pull(args) => push::pull(&args),
            Command::Bench(args) => bench::execute(&args),
        }
    }
}
