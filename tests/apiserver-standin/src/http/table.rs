//! `meta.k8s.io/v1` Table answers, for `kubectl get` (which asks for `as=Table`).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::meta;
use crate::resources::ResourceDef;

fn age(obj: &Value) -> String {
    let created = meta::meta_str(obj, "creationTimestamp");
    let Ok(ts) = created.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    let secs = jiff::Timestamp::now().duration_since(ts).as_secs().max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn col(name: &str, ty: &str, format: &str) -> Value {
    json!({ "name": name, "type": ty, "format": format, "description": "", "priority": 0 })
}

fn columns(def: &ResourceDef) -> Vec<Value> {
    let mut cols = vec![col("Name", "string", "name")];
    match def.storage {
        "pods" => {
            cols.push(col("Ready", "string", ""));
            cols.push(col("Status", "string", ""));
            cols.push(col("Restarts", "string", ""));
        }
        "namespaces" => cols.push(col("Status", "string", "")),
        "sidecarsets" => {
            cols.push(col("Matched", "integer", ""));
            cols.push(col("Updated", "integer", ""));
            cols.push(col("Ready", "integer", ""));
        }
        "leases" => cols.push(col("Holder", "string", "")),
        _ => {}
    }
    cols.push(col("Age", "string", ""));
    cols
}

fn cells(def: &ResourceDef, obj: &Value) -> Vec<Value> {
    let mut cells = vec![json!(meta::name(obj))];
    match def.storage {
        "pods" => {
            let statuses = obj
                .get("status")
                .and_then(|s| s.get("containerStatuses"))
                .and_then(Value::as_array);
            let total = obj
                .get("spec")
                .and_then(|s| s.get("containers"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let ready = statuses.map_or(0, |s| {
                s.iter()
                    .filter(|c| c.get("ready") == Some(&json!(true)))
                    .count()
            });
            let restarts: i64 = statuses.map_or(0, |s| {
                s.iter()
                    .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
                    .sum()
            });
            let status = if obj
                .get("metadata")
                .and_then(|m| m.get("deletionTimestamp"))
                .is_some()
            {
                "Terminating".to_string()
            } else {
                meta::path_string(obj, "status.phase")
            };
            cells.push(json!(format!("{ready}/{total}")));
            cells.push(json!(status));
            cells.push(json!(restarts.to_string()));
        }
        "namespaces" => cells.push(json!(meta::path_string(obj, "status.phase"))),
        "sidecarsets" => {
            for f in ["matchedPods", "updatedPods", "readyPods"] {
                cells.push(
                    obj.get("status")
                        .and_then(|s| s.get(f))
                        .cloned()
                        .unwrap_or(json!(0)),
                );
            }
        }
        "leases" => cells.push(json!(meta::path_string(obj, "spec.holderIdentity"))),
        _ => {}
    }
    cells.push(json!(age(obj)));
    cells
}

/// A Table of `items`; `list` carries the list's resourceVersion and continue token.
pub fn table(
    def: &ResourceDef,
    items: &[Value],
    list: Option<(u64, Option<String>)>,
    query: &HashMap<String, String>,
) -> Value {
    let full = query.get("includeObject").is_some_and(|v| v == "Object");
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let object = if full {
                o.clone()
            } else {
                json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": o.get("metadata").cloned().unwrap_or(json!({})),
                })
            };
            json!({ "cells": cells(def, o), "object": object })
        })
        .collect();
    let mut metadata = json!({});
    if let Some((rv, cont)) = list {
        metadata["resourceVersion"] = json!(rv.to_string());
        if let Some(c) = cont {
            metadata["continue"] = json!(c);
        }
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": columns(def),
        "rows": rows,
    })
}
