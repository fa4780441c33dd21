//! `sidecarset-host inspect`: print the metadata embedded by `annotate`, like `kwctl inspect`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use sidecarset_host::annotate::{Metadata, USAGE_ANNOTATION, embedded_metadata};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Details, annotations, rules and usage, for people.
    Text,
    /// The embedded metadata as YAML.
    Yaml,
}

/// Arguments of `inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// The annotated module (a `file://` prefix is accepted).
    #[arg(value_name = "MODULE")]
    pub module: String,
}

/// Runs the command.
pub fn execute(args: &InspectArgs) -> anyhow::Result<()> {
    let path = PathBuf::from(args.module.strip_prefix("file://").unwrap_or(&args.module));
    let wasm = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let Some(metadata) = embedded_metadata(&wasm)? else {
        bail!(
            "No Kubewarden metadata found inside of '{}'",
            path.display()
        );
    };
    let text = match args.output {
        Format::Yaml => serde_norway::to_string(&metadata)?,
        Format::Text => render(&metadata)?,
    };
    print!("{text}");
    Ok(())
}

fn annotation<'a>(metadata: &'a Metadata, key: &str) -> &'a str {
    metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map_or("", String::as_str)
}

/// kwctl's layout: details, annotations (without the usage), rules, context-aware resources, usage.
pub fn render(metadata: &Metadata) -> anyhow::Result<String> {
    let mut out = String::new();
    let policy = |key: &str| annotation(metadata, &format!("io.kubewarden.policy.{key}"));
    writeln!(out, "Details")?;
    for (label, value) in [
        ("title", policy("title").to_string()),
        ("description", policy("description").to_string()),
        ("author", policy("author").to_string()),
        ("url", policy("url").to_string()),
        ("source", policy("source").to_string()),
        ("license", policy("license").to_string()),
        ("mutating", metadata.mutating.to_string()),
        (
            "background audit support",
            metadata.background_audit.to_string(),
        ),
        (
            "context aware",
            (!metadata.context_aware_resources.is_empty()).to_string(),
        ),
        ("policy type", serde_value(&metadata.policy_type)),
        ("execution mode", serde_value(&metadata.execution_mode)),
        (
            "protocol version",
            metadata.protocol_version.clone().unwrap_or_default(),
        ),
        (
            "minimum kubewarden version",
            metadata
                .minimum_kubewarden_version
                .clone()
                .unwrap_or_default(),
        ),
    ] {
        writeln!(out, "{:<28}{value}", format!("{label}:"))?;
    }
    writeln!(out, "\nAnnotations")?;
    for (key, value) in metadata.annotations.iter().flatten() {
        if key != USAGE_ANNOTATION {
            writeln!(out, "{key:<40} {value}")?;
        }
    }
    writeln!(out, "\nRules")?;
    write!(out, "{}", serde_norway::to_string(&metadata.rules)?)?;
    if !metadata.context_aware_resources.is_empty() {
        writeln!(out, "\nContext Aware")?;
        write!(
            out,
            "{}",
            serde_norway::to_string(&metadata.context_aware_resources)?
        )?;
    }
    if let Some(capabilities) = &metadata.host_capabilities {
        writeln!(out, "\nHost Capabilities")?;
        write!(out, "{}", serde_norway::to_string(capabilities)?)?;
    }
    if let Some(usage) = metadata.usage() {
        writeln!(out, "\nUsage")?;
        writeln!(out, "{}", usage.trim_end())?;
    }
    Ok(out)
}

fn serde_value<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
