//! A minimal OpenAPI v3 discovery: enough for kubectl to learn that PATCH and POST accept
//! `fieldValidation` (so it validates on the server side and needs no schema).
//! /openapi/v2 answers 404, which kubectl tolerates once v3 says validation is server-side.

use serde_json::{Map, Value, json};

use crate::resources::{RESOURCES, ResourceDef};

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the index of group-version documents.
pub fn root() -> Value {
    let mut paths = Map::new();
    for r in RESOURCES {
        let p = gv_path(r.group, r.version);
        paths.entry(p.clone()).or_insert_with(
            || json!({ "serverRelativeURL": format!("/openapi/v3/{p}?hash=standin") }),
        );
    }
    json!({ "paths": paths })
}

fn operation(def: &ResourceDef, action: &str) -> Value {
    json!({
        "operationId": format!("{action}{}", def.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": { "group": def.group, "version": def.version, "kind": def.kind },
        "parameters": [
            { "name": "dryRun", "in": "query", "schema": { "type": "string" } },
            { "name": "fieldManager", "in": "query", "schema": { "type": "string" } },
            { "name": "fieldValidation", "in": "query", "schema": { "type": "string" } }
        ],
        "responses": { "200": { "description": "OK" } }
    })
}

/// `/openapi/v3/<api|apis/group>/<version>`, if served.
pub fn group_version(path: &str) -> Option<Value> {
    let mut paths = Map::new();
    for r in RESOURCES
        .iter()
        .filter(|r| gv_path(r.group, r.version) == path)
    {
        let base = if r.namespaced {
            format!("/{path}/namespaces/{{namespace}}/{}", r.plural)
        } else {
            format!("/{path}/{}", r.plural)
        };
        paths.insert(base.clone(), json!({ "post": operation(r, "post") }));
        paths.insert(
            format!("{base}/{{name}}"),
            json!({ "patch": operation(r, "patch"), "put": operation(r, "put") }),
        );
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes (apiserver-standin)", "version": "v1.33.0" },
        "paths": paths,
        "components": { "schemas": {} }
    }))
}
