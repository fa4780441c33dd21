//! The HTTP front: path parsing, discovery, the fault switch, and dispatch to the store.

mod admitted;
mod discovery;
mod openapi;
mod resource;
mod scale;
mod table;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::ApiError;
use crate::fault::{FaultAction, Faults, RequestInfo, Verb};
use crate::resources::{self, ResourceDef};
use crate::store::Store;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct AppState {
    /// The object store.
    pub store: Arc<Store>,
    /// The fault switch.
    pub faults: Faults,
    /// The admission chain's state.
    pub admission: crate::admission::Admission,
    /// How often watches send progress bookmarks.
    pub bookmark_interval: Duration,
    /// The address the server is bound to (for `/api`).
    pub addr: SocketAddr,
}

/// Builds the router.
pub fn router(state: AppState) -> Router {
    Router::new().fallback(dispatch).with_state(state)
}

/// A JSON response.
pub fn json_response(code: StatusCode, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = (code, bytes).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = json_response(code, &self.to_status());
        if self.code == 429 {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        resp
    }
}

/// A parsed resource path.
#[derive(Debug, Clone)]
pub struct Target {
    /// The resource.
    pub def: &'static ResourceDef,
    /// Namespace of the request (`None`: cluster-wide or cluster-scoped).
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`).
    pub subresource: Option<String>,
}

enum Route {
    Json(Value),
    Resource(Target),
}

fn parse_route(state: &AppState, segs: &[&str]) -> Result<Route, ApiError> {
    let (group, version, rest) = match segs {
        ["version"] => return Ok(Route::Json(discovery::version())),
        ["api"] => {
            return Ok(Route::Json(discovery::core_versions(
                &state.addr.to_string(),
            )));
        }
        ["apis"] => return Ok(Route::Json(discovery::group_list())),
        ["apis", g] => {
            return discovery::group(g)
                .map(Route::Json)
                .ok_or_else(ApiError::path_not_found);
        }
        ["api", v] => {
            return discovery::resource_list("", v)
                .map(Route::Json)
                .ok_or_else(ApiError::path_not_found);
        }
        ["apis", g, v] => {
            return discovery::resource_list(g, v)
                .map(Route::Json)
                .ok_or_else(ApiError::path_not_found);
        }
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::path_not_found()),
    };
    let namespaced = match rest {
        ["namespaces", ns, plural, tail @ ..] => resources::find(group, version, plural)
            .filter(|d| d.namespaced)
            .map(|d| (d, Some((*ns).to_string()), tail)),
        _ => None,
    };
    let (def, namespace, tail) = match namespaced {
        Some(t) => t,
        None => match rest {
            [plural, tail @ ..] => (
                resources::find(group, version, plural).ok_or_else(ApiError::path_not_found)?,
                None,
                tail,
            ),
            [] => return Err(ApiError::path_not_found()),
        },
    };
    let (name, subresource) = match tail {
        [] => (None, None),
        [name] => (Some((*name).to_string()), None),
        [name, sub] => (Some((*name).to_string()), Some((*sub).to_string())),
        _ => return Err(ApiError::path_not_found()),
    };
    if def.namespaced && namespace.is_none() && name.is_some() {
        return Err(ApiError::path_not_found());
    }
    if let Some(sub) = &subresource
        && !(sub == "status" && def.status_subresource)
        && !(sub == "scale" && def.scale_subresource)
    {
        return Err(ApiError::path_not_found());
    }
    Ok(Route::Resource(Target {
        def,
        namespace,
        name,
        subresource,
    }))
}

fn verb_of(
    method: &Method,
    target: &Target,
    query: &HashMap<String, String>,
) -> Result<Verb, ApiError> {
    let watch = query.get("watch").is_some_and(|w| w == "true" || w == "1");
    let named = target.name.is_some();
    Ok(match (method.as_str(), named) {
        ("GET", true) if watch => Verb::Watch,
        ("GET", true) => Verb::Get,
        ("GET", false) if watch => Verb::Watch,
        ("GET", false) => Verb::List,
        ("POST", false) if target.subresource.is_none() => Verb::Create,
        ("PUT", true) => Verb::Update,
        ("PATCH", true) => Verb::Patch,
        ("DELETE", true) if target.subresource.is_none() => Verb::Delete,
        ("DELETE", false) => Verb::DeleteCollection,
        _ => {
            return Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({method} {})",
                target.def.qualified()
            )));
        }
    })
}

async fn dispatch(
    State(state): State<AppState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    if segs.first() == Some(&"openapi") {
        let doc = match segs.as_slice() {
            ["openapi", "v3"] => Some(openapi::root()),
            ["openapi", "v3", rest @ ..] => openapi::group_version(&rest.join("/")),
            _ => None,
        };
        return match doc {
            Some(d) => json_response(StatusCode::OK, &d),
            None => ApiError::path_not_found().into_response(),
        };
    }
    let route = match parse_route(&state, &segs) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let target = match route {
        Route::Json(doc) if method == Method::GET => return json_response(StatusCode::OK, &doc),
        Route::Json(_) => {
            return ApiError::method_not_allowed("discovery documents are read-only")
                .into_response();
        }
        Route::Resource(t) => t,
    };
    let verb = match verb_of(&method, &target, &query) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let info = RequestInfo {
        verb,
        resource: target.def.plural.to_string(),
        subresource: target.subresource.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
    };
    tracing::debug!(?info, "request");
    for action in state.faults.take(&info) {
        match action {
            FaultAction::Delay(d) => tokio::time::sleep(d).await,
            FaultAction::Fail(code) => return ApiError::injected(code).into_response(),
        }
    }
    let req = resource::Request {
        state: &state,
        target,
        query,
        headers,
        body,
    };
    match resource::handle(verb, req).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    }
}

/// A body that streams watch events.
pub fn stream_response(
    stream: impl futures::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static,
) -> Response {
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}
