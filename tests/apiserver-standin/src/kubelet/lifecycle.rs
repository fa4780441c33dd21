//! Moving a pod's tracked containers through time, event by event in time order: init
//! containers one after the other, then app containers; exits, restarts by policy,
//! image-change restarts, and the pod's end (its sidecars stopped with it).

use std::time::{Duration, Instant};

use super::config::KubeletConfig;
use super::sources::{Sources, config_error};
use super::spec::{ContainerSpec, Kind, RestartPolicy};
use super::track::{ContainerTrack, Exit, PodTrack, State, Wait};

/// Bounds the events of one evaluation (zero delays with a zero `STANDIN_EXIT_AFTER_MS` loop forever).
const MAX_EVENTS: usize = 10_000;

/// What the lifecycle depends on besides the track.
pub struct Ctx<'a> {
    /// The delays.
    pub cfg: &'a KubeletConfig,
    /// The pod's restart policy.
    pub policy: RestartPolicy,
    /// The containers in start order.
    pub specs: &'a [ContainerSpec<'a>],
    /// The pod's namespace (for error messages).
    pub namespace: &'a str,
    /// The ConfigMaps and Secrets the pod refers to.
    pub sources: &'a Sources,
}

impl Ctx<'_> {
    /// When a waiting container gets created (`None`: only on a retry).
    pub fn due(&self, since: Instant, wait: &Wait) -> Option<Instant> {
        match wait {
            Wait::Create => Some(since + self.cfg.start_delay),
            Wait::Restart | Wait::BackOff => Some(since + self.cfg.restart_delay),
            Wait::ConfigError { .. } => None,
        }
    }

    /// How long after running a container counts as started (a startupProbe passes after the ready delay).
    pub fn startup(&self, spec: &ContainerSpec) -> Duration {
        if spec.startup_probe {
            self.cfg.ready_delay
        } else {
            Duration::ZERO
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Unblock(usize),
    Create(usize),
    Exit(usize),
}

/// Brings the track up to `now`, applies the image changes seen at `now`, and returns the
/// next instant a transition is due.
pub fn advance(track: &mut PodTrack, ctx: &Ctx, now: Instant) -> Option<Instant> {
    ensure_tracks(track, ctx);
    run(track, ctx, now);
    if track.ended.is_none() {
        image_changes(track, ctx, now);
    }
    run(track, ctx, now)
}

fn ensure_tracks(track: &mut PodTrack, ctx: &Ctx) {
    let seen = track.seen;
    for (i, s) in ctx.specs.iter().enumerate() {
        track.containers.entry(s.key()).or_insert_with(|| {
            // The first init container, or all app containers of a pod without any, start first.
            let first = i == 0 || (s.kind == Kind::App && ctx.specs[0].kind == Kind::App);
            ContainerTrack::new(if first {
                State::Waiting {
                    since: seen,
                    wait: Wait::Create,
                }
            } else {
                State::Blocked
            })
        });
    }
}

/// Applies the due events in time order; returns the first one not due yet.
fn run(track: &mut PodTrack, ctx: &Ctx, now: Instant) -> Option<Instant> {
    for _ in 0..MAX_EVENTS {
        if track.ended.is_some() {
            return None;
        }
        let (at, event) = next_event(track, ctx, now)?;
        if at > now {
            return Some(at);
        }
        apply(track, ctx, event, at, now);
    }
    None
}

fn container<'t>(track: &'t PodTrack, s: &ContainerSpec) -> Option<&'t ContainerTrack> {
    track.containers.get(&s.key())
}

/// When an init container let the next one start: a regular one completed, a sidecar started.
fn done_at(track: &PodTrack, ctx: &Ctx, s: &ContainerSpec) -> Option<Instant> {
    match (&container(track, s)?.state, s.kind) {
        (State::Terminated(exit), Kind::Init) if exit.code == 0 => Some(exit.finished),
        (State::Running { since, .. }, Kind::Sidecar) => Some(*since + ctx.startup(s)),
        _ => None,
    }
}

/// When a blocked container may start: after its previous init container, app containers
/// after the last one.
fn gate(track: &PodTrack, ctx: &Ctx, i: usize) -> Option<Instant> {
    let inits = ctx.specs.iter().filter(|s| s.kind != Kind::App).count();
    let before = if ctx.specs[i].kind == Kind::App {
        inits.checked_sub(1)
    } else {
        i.checked_sub(1)
    };
    match before {
        Some(j) => done_at(track, ctx, &ctx.specs[j]),
        None => Some(track.seen),
    }
}

fn next_event(track: &PodTrack, ctx: &Ctx, now: Instant) -> Option<(Instant, Event)> {
    let mut best: Option<(Instant, Event)> = None;
    for (i, s) in ctx.specs.iter().enumerate() {
        let Some(ct) = container(track, s) else {
            continue;
        };
        let candidate = match &ct.state {
            State::Blocked => gate(track, ctx, i).map(|t| (t, Event::Unblock(i))),
            State::Waiting {
                wait: Wait::ConfigError { tried, .. },
                ..
            } => (*tried < now).then_some((now, Event::Create(i))),
            State::Waiting { since, wait } => ctx.due(*since, wait).map(|t| (t, Event::Create(i))),
            State::Running { since, .. } => s.exit_after.map(|d| (*since + d, Event::Exit(i))),
            State::Terminated(_) => None,
        };
        if let Some(c) = candidate
            && best.is_none_or(|b| c.0 < b.0)
        {
            best = Some(c);
        }
    }
    best
}

fn apply(track: &mut PodTrack, ctx: &Ctx, event: Event, at: Instant, now: Instant) {
    let (Event::Unblock(i) | Event::Create(i) | Event::Exit(i)) = event;
    let s = &ctx.specs[i];
    let Some(ct) = track.containers.get_mut(&s.key()) else {
        return;
    };
    match event {
        Event::Unblock(_) => {
            ct.state = State::Waiting {
                since: at,
                wait: Wait::Create,
            }
        }
        Event::Create(_) => match config_error(s.raw, ctx.namespace, ctx.sources) {
            Some(message) => {
                // Checked against the sources as they are now: retried when they change.
                ct.state = State::Waiting {
                    since: at,
                    wait: Wait::ConfigError {
                        message,
                        tried: now,
                    },
                }
            }
            None => {
                ct.runs += 1;
                ct.state = State::Running {
                    since: at,
                    image: s.image.to_string(),
                };
            }
        },
        Event::Exit(_) => {
            let State::Running { since, image } = &ct.state else {
                return;
            };
            let exit = Exit {
                code: s.exit_code,
                started: *since,
                finished: at,
                image: image.clone(),
                run: ct.restart_count(),
            };
            let restarts = match s.kind {
                // Sidecars restart whatever the pod's policy; regular init containers on failure only.
                Kind::Sidecar => true,
                Kind::Init => exit.code != 0 && ctx.policy != RestartPolicy::Never,
                Kind::App => ctx.policy.restarts(exit.code),
            };
            if restarts {
                ct.last = Some(exit);
                ct.state = State::Waiting {
                    since: at,
                    wait: Wait::BackOff,
                };
            } else {
                ct.state = State::Terminated(exit);
            }
            end_if_done(track, ctx, at);
        }
    }
}

/// The pod ends when a regular init container failed for good, or every app container
/// exited for good; the kubelet then stops the sidecars (reported as exit 0).
fn end_if_done(track: &mut PodTrack, ctx: &Ctx, at: Instant) {
    let state = |s: &ContainerSpec| container(track, s).map(|c| &c.state);
    let failed_init = ctx.specs.iter().any(|s| {
        s.kind == Kind::Init && matches!(state(s), Some(State::Terminated(e)) if e.code != 0)
    });
    let apps_done = ctx
        .specs
        .iter()
        .filter(|s| s.kind == Kind::App)
        .all(|s| matches!(state(s), Some(State::Terminated(_))));
    if !failed_init && !apps_done {
        return;
    }
    for s in ctx.specs.iter().filter(|s| s.kind == Kind::Sidecar) {
        let Some(ct) = track.containers.get_mut(&s.key()) else {
            continue;
        };
        let run = ct.restart_count();
        match &ct.state {
            State::Running { since, image } => {
                ct.state = State::Terminated(Exit {
                    code: 0,
                    started: *since,
                    finished: at,
                    image: image.clone(),
                    run,
                });
            }
            State::Waiting { .. } => {
                if let Some(last) = ct.last.take() {
                    ct.state = State::Terminated(last);
                }
            }
            State::Blocked | State::Terminated(_) => {}
        }
    }
    track.ended = Some(at);
}

/// A running sidecar or app container whose image changed is killed (exit 0) and recreated
/// after the restart delay, whatever the restart policy; regular init containers keep theirs.
fn image_changes(track: &mut PodTrack, ctx: &Ctx, now: Instant) {
    for s in ctx.specs.iter().filter(|s| s.kind != Kind::Init) {
        let Some(ct) = track.containers.get_mut(&s.key()) else {
            continue;
        };
        let run = ct.restart_count();
        if let State::Running { since, image } = &ct.state
            && image != s.image
        {
            ct.last = Some(Exit {
                code: 0,
                started: *since,
                finished: now,
                image: image.clone(),
                run,
            });
            ct.state = State::Waiting {
                since: now,
                wait: Wait::Restart,
            };
        }
    }
}
