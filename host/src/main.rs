//! `sidecarset-host`: thin entry point; each command lives in `commands/`.

mod commands;

use clap::Parser;

fn main() -> anyhow::Result<()> {
    commands::Cli::parse().execute()
}
