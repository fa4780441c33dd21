//! `conformance [--module policy.wasm] DIR...`: runs every admission case of the folders
//! through the policy module in the bundled host; prints a line per case and `N passed, M failed`.

use anyhow::{Context, Result, bail};
use sidecarset_host::{EngineConfig, PolicyEngine};
use sidecarset_tests::conformance;
use std::path::PathBuf;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut module = PathBuf::from("annotated-policy.wasm");
    let mut dirs = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--module" | "-m" => module = args.next().context("--module needs a path")?.into(),
            "--help" | "-h" => {
                println!("usage: conformance [--module policy.wasm] DIR...");
                return Ok(());
            }
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    if dirs.is_empty() {
        bail!("usage: conformance [--module policy.wasm] DIR...");
    }
    let engine = PolicyEngine::from_file(&module, EngineConfig::default())
        .with_context(|| format!("loading {}", module.display()))?;
    let (mut passed, mut failed) = (0, 0);
    for dir in &dirs {
        for file in conformance::case_files(dir)? {
            let result = conformance::load(&file).and_then(|case| {
                conformance::run_case(&engine, &case).map(|mismatches| (case.name, mismatches))
            });
            match result {
                Ok((name, mismatches)) if mismatches.is_empty() => {
                    passed += 1;
                    println!("ok   {} ({name})", file.display());
                }
                Ok((name, mismatches)) => {
                    failed += 1;
                    println!("FAIL {} ({name})", file.display());
                    for mismatch in mismatches {
                        println!("       {mismatch}");
                    }
                }
                Err(error) => {
                    failed += 1;
                    println!("FAIL {}: {error:#}", file.display());
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
