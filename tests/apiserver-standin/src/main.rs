//! `apiserver-standin --listen 127.0.0.1:PORT [--kubelet]`: the stand-in as a process.

use std::net::SocketAddr;
use std::time::Duration;

use apiserver_standin::{KubeletConfig, Options, StandIn};
use clap::Parser;

/// A kube-apiserver stand-in (plain HTTP) for the resources of the SidecarSet project.
#[derive(Debug, Parser)]
#[command(name = "apiserver-standin", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Also run the kubelet simulator.
    #[arg(long)]
    kubelet: bool,
    /// Kubelet: milliseconds from pod creation to Running.
    #[arg(long, default_value_t = 1000)]
    start_delay_ms: u64,
    /// Kubelet: milliseconds from running to ready.
    #[arg(long, default_value_t = 1000)]
    ready_delay_ms: u64,
    /// Kubelet: milliseconds from an image change to the restarted container.
    #[arg(long, default_value_t = 2000)]
    restart_delay_ms: u64,
    /// Number of events kept for watches (older resourceVersions get 410 Gone).
    #[arg(long, default_value_t = 10_000)]
    history: usize,
    /// Where a webhook Service listens: NAMESPACE/NAME:PORT=127.0.0.1:PORT (repeatable).
    #[arg(long = "service")]
    services: Vec<apiserver_standin::ServiceEndpoint>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let kubelet = args.kubelet.then(|| KubeletConfig {
        start_delay: Duration::from_millis(args.start_delay_ms),
        ready_delay: Duration::from_millis(args.ready_delay_ms),
        restart_delay: Duration::from_millis(args.restart_delay_ms),
        delete_delay: Duration::from_millis(args.start_delay_ms),
    });
    let standin = StandIn::start(Options {
        listen: args.listen,
        history_limit: args.history,
        kubelet,
        services: args.services,
        ..Options::default()
    })
    .await?;
    println!("apiserver-standin listening on {}", standin.url());
    tokio::signal::ctrl_c().await?;
    standin.shutdown().await;
    Ok(())
}
