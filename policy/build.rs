//! Link settings of `policy.wasm`.

/// Linear memory the module starts with: stack (1 MiB), data, the allocator's arena (2 MiB,
/// `src/arena.rs`) and headroom. Every evaluation is a fresh instance, so growing the memory
/// would cost two `mprotect`s (and TLB shootdowns across the host's threads) per request.
const INITIAL_MEMORY_BYTES: u32 = 4 * 1024 * 1024;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-cdylib-link-arg=--initial-memory={INITIAL_MEMORY_BYTES}");
    }
}
