//! What the simulator remembers about pods and their containers between evaluations.

use std::collections::HashMap;
use std::time::Instant;

/// How one run of a container ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code.
    pub code: i64,
    /// When the run started.
    pub started: Instant,
    /// When it ended.
    pub finished: Instant,
    /// The image it ran.
    pub image: String,
    /// Which run it was (its restartCount).
    pub run: i64,
}

/// Why a container that is not running waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// Never created yet: ContainerCreating, or PodInitializing in a pod with init containers.
    Create,
    /// Killed for an image change, being recreated: ContainerCreating.
    Restart,
    /// Exited, restarted after the back-off: CrashLoopBackOff.
    BackOff,
    /// Its env cannot be built (a ConfigMap or Secret is missing), last tried at `tried`.
    ConfigError {
        /// As the kubelet words it.
        message: String,
        /// The last attempt.
        tried: Instant,
    },
}

/// The state of one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Not its turn yet (init containers start one after the other, app containers after them).
    Blocked,
    /// Waiting since `since`; created after the delay its `wait` calls for.
    Waiting {
        /// When it started waiting.
        since: Instant,
        /// What it is waiting for.
        wait: Wait,
    },
    /// Running since `since`.
    Running {
        /// When this run started.
        since: Instant,
        /// The image it runs.
        image: String,
    },
    /// Exited for good (no restart will follow).
    Terminated(Exit),
}

/// What the simulator remembers about one container.
#[derive(Debug, Clone)]
pub struct ContainerTrack {
    /// Containers created so far for it (its restartCount is one less).
    pub runs: i64,
    /// Its current state.
    pub state: State,
    /// The previous run's end (`lastState`).
    pub last: Option<Exit>,
}

impl ContainerTrack {
    /// A container not started yet.
    pub fn new(state: State) -> Self {
        ContainerTrack {
            runs: 0,
            state,
            last: None,
        }
    }

    /// Its restartCount.
    pub fn restart_count(&self) -> i64 {
        (self.runs - 1).max(0)
    }
}

/// What the simulator remembers about one pod.
#[derive(Debug, Clone)]
pub struct PodTrack {
    /// First sight.
    pub seen: Instant,
    /// The wall-clock time of first sight: all reported times derive from it, so they stay
    /// the same from one evaluation to the next.
    pub wall_seen: jiff::Timestamp,
    /// Containers by `c/<name>` or `i/<name>`.
    pub containers: HashMap<String, ContainerTrack>,
    /// When a deletionTimestamp was first seen.
    pub deleting_since: Option<Instant>,
    /// When the pod stopped for good (Succeeded or Failed), its sidecars stopped with it.
    pub ended: Option<Instant>,
}

impl PodTrack {
    /// A pod seen for the first time at `now` (wall-clock `wall_now`).
    pub fn new(now: Instant, wall_now: jiff::Timestamp) -> Self {
        PodTrack {
            seen: now,
            wall_seen: wall_now,
            containers: HashMap::new(),
            deleting_since: None,
            ended: None,
        }
    }

    /// The wall-clock time of `t` as RFC 3339 with seconds precision (`metav1.Time`).
    pub fn wall(&self, t: Instant) -> String {
        let since = t.saturating_duration_since(self.seen);
        let at = self.wall_seen.checked_add(since).unwrap_or(self.wall_seen);
        at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}
