//! One module per `sidecarset-host` subcommand.

pub mod run;

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
}

impl Cli {
    /// Runs the selected command.
    pub fn execute(self) -> anyhow::Result<()> {
        match self.command {
            Command::Run(args) => run::execute(&args),
        }
    }
}
