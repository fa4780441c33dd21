//! Connection threads: each runs a current-thread runtime that owns the webhook connections handed
//! to it, so an admission is read, evaluated and answered on one thread with no handoff (the
//! guest runs inline when it cannot block on a runtime). A slow guest holds up only the
//! connections of its own thread; the accept loops, `/metrics` listener and caches stay on the
//! main runtime.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

thread_local! {
    static CONNECTION_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether the caller runs on a connection thread (where a guest may run inline).
pub(crate) fn on_connection_thread() -> bool {
    CONNECTION_THREAD.with(Cell::get)
}

/// Builds a connection's future on its thread (where its socket is registered).
pub(crate) type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

pub(crate) struct ConnectionThreads {
    queues: Vec<mpsc::UnboundedSender<Job>>,
    next: AtomicUsize,
}

impl ConnectionThreads {
    /// `count` threads (at least one), each with its own runtime.
    pub(crate) fn start(count: usize) -> std::io::Result<Self> {
        let mut queues = Vec::new();
        for index in 0..count.max(1) {
            let (queue, mut jobs) = mpsc::unbounded_channel::<Job>();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            std::thread::Builder::new()
                .name(format!("serve-conn-{index}"))
                .spawn(move || {
                    CONNECTION_THREAD.with(|flag| flag.set(true));
                    runtime.block_on(async move {
                        let mut connections = tokio::task::JoinSet::new();
                        while let Some(job) = jobs.recv().await {
                            connections.spawn(job());
                            while connections.try_join_next().is_some() {}
                        }
                        // The queue closes after the drain: what is left is past its timeout.
                    });
                })?;
            queues.push(queue);
        }
        Ok(Self {
            queues,
            next: AtomicUsize::new(0),
        })
    }

    /// Hands a connection to the next thread, round robin.
    pub(crate) fn spawn(&self, job: Job) {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.queues.len().max(1);
        if let Some(queue) = self.queues.get(index) {
            // A thread whose runtime has stopped drops the connection, as a shutdown does.
            let _ = queue.send(job);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_go_round_robin_to_flagged_threads() {
        let threads = ConnectionThreads::start(2).expect("threads start");
        let (sent, received) = std::sync::mpsc::channel();
        for _ in 0..4 {
            let sent = sent.clone();
            threads.spawn(Box::new(move || {
                Box::pin(async move {
                    let name = std::thread::current().name().map(str::to_owned);
                    let _ = sent.send((name, on_connection_thread()));
                })
            }));
        }
        let mut seen: Vec<_> = (0..4)
            .map(|_| received.recv().expect("a job ran"))
            .collect();
        seen.sort();
        let flagged = |name: &str| (Some(name.to_string()), true);
        assert_eq!(
            seen,
            [
                flagged("serve-conn-0"),
                flagged("serve-conn-0"),
                flagged("serve-conn-1"),
                flagged("serve-conn-1")
            ]
        );
        assert!(!on_connection_thread(), "the test's own thread is not one");
    }
}
