//! Planning-time benchmarks (filled in below once the planner lands).

use criterion::{Criterion, criterion_group, criterion_main};

fn bench_plan(_c: &mut Criterion) {}

criterion_group!(benches, bench_plan);
criterion_main!(benches);
