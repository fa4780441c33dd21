//! Reads a folder of JSON / YAML Kubernetes objects.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::ContextError;

fn io_error(path: &Path, e: &std::io::Error) -> ContextError {
    ContextError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn parse_error(path: &Path, message: String) -> ContextError {
    ContextError::Parse {
        path: path.display().to_string(),
        message,
    }
}

/// Parses one file into its documents (a JSON array counts as several).
pub(crate) fn parse_file(path: &Path) -> Result<Vec<Value>, ContextError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, &e))?;
    let is_json = path.extension().is_some_and(|e| e == "json");
    let documents = if is_json {
        vec![serde_json::from_str::<Value>(&text).map_err(|e| parse_error(path, e.to_string()))?]
    } else {
        serde_norway::Deserializer::from_str(&text)
            .map(|doc| Value::deserialize(doc).map_err(|e| parse_error(path, e.to_string())))
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(documents
        .into_iter()
        .flat_map(|doc| match doc {
            Value::Array(items) => items,
            other => vec![other],
        })
        .collect())
}

/// Every object of every `*.json` / `*.yaml` / `*.yml` file in `dir`, in file-name order, with its source.
pub(crate) fn load_dir(dir: &Path) -> Result<Vec<(String, Value)>, ContextError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| io_error(dir, &e))?.path();
        let wanted = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "json" | "yaml" | "yml"));
        if wanted && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let mut objects = Vec::new();
    for file in files {
        let source = file.display().to_string();
        for object in parse_file(&file)? {
            objects.push((source.clone(), object));
        }
    }
    Ok(objects)
}
