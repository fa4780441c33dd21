//! The verbs on resources: get, list, watch, create, update, patch, delete, deletecollection.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{AppState, Target, admitted, json_response, scale, stream_response, table};
use crate::admission::Record;
use crate::error::ApiError;
use crate::fault::Verb;
use crate::patch::PatchType;
use crate::protobuf;
use crate::selectors::Filter;
use crate::store::{DeleteOptions, Subresource, WatchFrom};
use crate::watch::{self, WatchRequest};

/// One request on a resource.
pub struct Request<'a> {
    pub state: &'a AppState,
    pub target: Target,
    pub query: HashMap<String, String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Request<'_> {
    pub(super) fn ns(&self) -> &str {
        self.target.namespace.as_deref().unwrap_or("")
    }

    pub(super) fn name(&self) -> Result<&str, ApiError> {
        self.target
            .name
            .as_deref()
            .ok_or_else(|| ApiError::bad_request("a resource name is required"))
    }

    pub(super) fn sub(&self) -> Subresource {
        if self.target.subresource.is_some() {
            Subresource::Status
        } else {
            Subresource::Main
        }
    }

    pub(super) fn dry_run(&self) -> bool {
        self.query.get("dryRun").is_some_and(|v| v == "All")
    }

    /// The patch type named by the request's Content-Type.
    pub(super) fn patch_type(&self) -> Result<PatchType, ApiError> {
        let ct = self
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        PatchType::from_content_type(ct)
    }

    pub(super) fn json_body(&self) -> Result<Value, ApiError> {
        let ct = self
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json");
        let def = self.target.def;
        let media = ct.split(';').next().unwrap_or("").trim();
        // Custom resources have no protobuf form; built-ins accept it.
        let protobuf_ok = !def.custom;
        if media == protobuf::MEDIA_TYPE && protobuf_ok {
            return protobuf::decode_body(&self.body, &def.api_version(), def.kind).map_err(|e| {
                ApiError::bad_request(if e.kind.is_empty() {
                    e.message
                } else {
                    format!(
                        "{} in version \"{}\" cannot be handled as a {}: {}",
                        e.kind, e.version, def.kind, e.message
                    )
                })
            });
        }
        if media.contains("protobuf") || media.contains("cbor") {
            let accepted = if protobuf_ok {
                "application/json, application/yaml, application/vnd.kubernetes.protobuf"
            } else {
                "application/json, application/yaml"
            };
            return Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            )));
        }
        if ct.contains("yaml") {
            return serde_norway::from_slice(&self.body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")));
        }
        serde_json::from_slice(&self.body).map_err(|e| {
            ApiError::bad_request(format!(
                "the body of the request could not be decoded as JSON: {e}"
            ))
        })
    }

    fn filter(&self) -> Result<Filter, ApiError> {
        Filter::parse(
            self.target.def,
            self.target.namespace.clone(),
            self.query.get("labelSelector").map(String::as_str),
            self.query.get("fieldSelector").map(String::as_str),
        )
    }

    fn wants_table(&self) -> bool {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=Table"))
    }
}

/// Handles one verb.
pub async fn handle(verb: Verb, req: Request<'_>) -> Result<Response, ApiError> {
    if req.target.subresource.as_deref() == Some("scale") {
        return scale::handle(verb, &req);
    }
    let store = &req.state.store;
    let def = req.target.def;
    match verb {
        Verb::Get => {
            let obj = store.get(def, req.ns(), req.name()?)?;
            if req.wants_table() {
                return Ok(json_response(
                    StatusCode::OK,
                    &table::table(def, &[obj], None, &req.query),
                ));
            }
            Ok(json_response(StatusCode::OK, &obj))
        }
        Verb::List => list(&req),
        Verb::Watch => watch(&req),
        Verb::Create | Verb::Update | Verb::Patch | Verb::Delete => {
            let mut record = Record::default();
            let result = admitted_write(verb, &req, &mut record).await;
            let mut resp = match result {
                Ok(r) => r,
                Err(e) => e.into_response(),
            };
            for w in admitted::warning_headers(&record) {
                if let Ok(v) = HeaderValue::from_str(&w) {
                    resp.headers_mut().append(header::WARNING, v);
                }
            }
            Ok(resp)
        }
        Verb::DeleteCollection => {
            let opts = delete_options(&req)?;
            let filter = req.filter()?;
            let page = store.list(def, &filter, None, None)?;
            let mut items = Vec::new();
            for obj in page.items {
                let ns = crate::meta::namespace(&obj).to_string();
                let name = crate::meta::name(&obj).to_string();
                match store.delete(def, &ns, &name, &opts) {
                    Ok(d) => items.push(d.object),
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(json_response(
                StatusCode::OK,
                &list_doc(def, items, store.resource_version(), None, None),
            ))
        }
    }
}

async fn admitted_write(
    verb: Verb,
    req: &Request<'_>,
    record: &mut Record,
) -> Result<Response, ApiError> {
    let def = req.target.def;
    match verb {
        Verb::Create => {
            let obj = admitted::create(req, record).await?;
            Ok(json_response(StatusCode::CREATED, &obj))
        }
        Verb::Update => {
            let (obj, created) = admitted::update(req, record).await?;
            let code = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            Ok(json_response(code, &obj))
        }
        Verb::Patch => {
            let obj = admitted::patch(req, req.patch_type()?, record).await?;
            Ok(json_response(StatusCode::OK, &obj))
        }
        _ => {
            let opts = delete_options(req)?;
            let body = if req.body.is_empty() {
                Value::Null
            } else {
                req.json_body()?
            };
            let deleted = admitted::delete(req, &opts, body, record).await?;
            if deleted.removed && !def.return_deleted_object {
                return Ok(json_response(
                    StatusCode::OK,
                    &success_status(def, &deleted.object),
                ));
            }
            Ok(json_response(StatusCode::OK, &deleted.object))
        }
    }
}

fn success_status(def: &crate::resources::ResourceDef, obj: &Value) -> Value {
    let mut details = json!({
        "name": crate::meta::name(obj),
        "kind": def.plural,
        "uid": crate::meta::meta_str(obj, "uid"),
    });
    if !def.group.is_empty() {
        details["group"] = json!(def.group);
    }
    json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details })
}

fn delete_options(req: &Request<'_>) -> Result<DeleteOptions, ApiError> {
    let mut opts = DeleteOptions {
        dry_run: req.dry_run(),
        ..DeleteOptions::default()
    };
    if !req.body.is_empty() {
        let body = req.json_body()?;
        opts.grace_period_seconds = body.get("gracePeriodSeconds").and_then(Value::as_i64);
        let pre = body.get("preconditions");
        opts.uid = pre
            .and_then(|p| p.get("uid"))
            .and_then(Value::as_str)
            .map(String::from);
        opts.resource_version = pre
            .and_then(|p| p.get("resourceVersion"))
            .and_then(Value::as_str)
            .map(String::from);
        if body
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"))
        {
            opts.dry_run = true;
        }
    }
    if let Some(g) = req.query.get("gracePeriodSeconds") {
        opts.grace_period_seconds = Some(
            g.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds: {g}")))?,
        );
    }
    Ok(opts)
}

fn list_doc(
    def: &crate::resources::ResourceDef,
    items: Vec<Value>,
    rv: u64,
    cont: Option<String>,
    remaining: Option<u64>,
) -> Value {
    let mut metadata = json!({ "resourceVersion": rv.to_string() });
    if let Some(c) = cont {
        metadata["continue"] = json!(c);
    }
    if let Some(r) = remaining {
        metadata["remainingItemCount"] = json!(r);
    }
    json!({
        "kind": format!("{}List", def.kind),
        "apiVersion": def.api_version(),
        "metadata": metadata,
        "items": items,
    })
}

fn list(req: &Request<'_>) -> Result<Response, ApiError> {
    let filter = req.filter()?;
    let limit = match req.query.get("limit") {
        Some(l) => Some(
            l.parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?,
        ),
        None => None,
    };
    let page = req.state.store.list(
        req.target.def,
        &filter,
        limit,
        req.query.get("continue").map(String::as_str),
    )?;
    if req.wants_table() {
        return Ok(json_response(
            StatusCode::OK,
            &table::table(
                req.target.def,
                &page.items,
                Some((page.resource_version, page.continue_token)),
                &req.query,
            ),
        ));
    }
    Ok(json_response(
        StatusCode::OK,
        &list_doc(
            req.target.def,
            page.items,
            page.resource_version,
            page.continue_token,
            page.remaining,
        ),
    ))
}

/// The filter of a watch; a watch on `.../NAME` selects that name as `metadata.name=NAME`
/// (and a field selector naming another object is a 400), as `ListResource` does.
fn watch_filter(req: &Request<'_>) -> Result<Filter, ApiError> {
    let Some(name) = req.target.name.as_deref() else {
        return req.filter();
    };
    let given = req
        .query
        .get("fieldSelector")
        .map(String::as_str)
        .filter(|s| !s.trim().is_empty());
    let by_name = format!("metadata.name={name}");
    let selector = match given {
        None => by_name.as_str(),
        Some(sel) => {
            let parsed = crate::selectors::FieldSelector::parse(req.target.def, sel)?;
            if parsed.exact_name() != Some(name) {
                return Err(ApiError::bad_request(
                    "fieldSelector metadata.name doesn't match requested name",
                ));
            }
            sel
        }
    };
    Filter::parse(
        req.target.def,
        req.target.namespace.clone(),
        req.query.get("labelSelector").map(String::as_str),
        Some(selector),
    )
}

fn watch(req: &Request<'_>) -> Result<Response, ApiError> {
    let filter = watch_filter(req)?;
    let from = match req.query.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => WatchFrom::Now,
        Some(rv) => WatchFrom::Version(
            rv.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?,
        ),
    };
    let initial_events = req
        .query
        .get("sendInitialEvents")
        .is_some_and(|v| v == "true");
    let bookmarks = req
        .query
        .get("allowWatchBookmarks")
        .is_some_and(|v| v == "true");
    let timeout = match req.query.get("timeoutSeconds") {
        Some(t) => Duration::from_secs(
            t.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds: {t}")))?,
        ),
        None => Duration::from_secs(1800),
    };
    let start = match req.state.store.watch(req.target.def, from, initial_events) {
        Ok(s) => s,
        Err(e) if e.code == 410 => return Ok(stream_response(watch::error_stream(&e))),
        Err(e) => return Err(e),
    };
    let render: Option<watch::Renderer> = if req.wants_table() {
        let def = req.target.def;
        let query = req.query.clone();
        Some(Box::new(move |obj: &Value, first: bool| {
            let mut t = table::table(def, std::slice::from_ref(obj), None, &query);
            if !first {
                t["columnDefinitions"] = json!([]);
            }
            t
        }))
    } else {
        None
    };
    Ok(stream_response(watch::stream(WatchRequest {
        def: req.target.def,
        filter,
        start,
        bookmarks,
        initial_events_end: initial_events,
        timeout,
        bookmark_interval: req.state.bookmark_interval,
        render,
    })))
}
