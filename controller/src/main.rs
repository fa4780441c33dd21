use clap::Parser;
use sidecarset_controller::{cli::Args, run, telemetry};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    telemetry::init(args.log_format == "json");
    let shutdown = CancellationToken::new();
    run::cancel_on_signals(shutdown.clone());
    run::run(args, shutdown).await?;
    Ok(())
}
