//! Native `evaluate` in a plain loop, for instruction counts under callgrind (wall-clock
//! benchmarks mean little on a shared machine; instruction counts do not depend on the load):
//! `valgrind --tool=callgrind --toggle-collect='sidecarset_policy::evaluate::evaluate'
//! target/debug/deps/policy_instructions-* [SIDECARSETS] [ITERATIONS]`, then divide `evaluate`'s
//! inclusive count by ITERATIONS. The inputs are the `policy` bench's, copied outside `evaluate`.

use sidecarset_policy::evaluate::{Outcome, evaluate};
use sidecarset_policy::settings::Settings;
use std::hint::black_box;

mod fixtures;

use fixtures::{InMemory, NOW, list_json, pod_request, sidecarsets};

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let request = pod_request();
    let list = list_json(&sidecarsets(count));
    let settings = Settings::default();
    for _ in 0..iterations {
        let (request, mut cluster) = (request.clone(), InMemory(list.clone()));
        let verdict = black_box(evaluate(request, &settings, &mut cluster, NOW));
        assert!(
            matches!(verdict.outcome, Outcome::Mutate(_)),
            "the benchmark pod is injected"
        );
    }
    println!("{iterations} evaluations at {count} SidecarSets");
}
