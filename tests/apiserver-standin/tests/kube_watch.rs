//! Watches against kube-rs: event streams, selectors, bookmarks, 410 Gone, and a reflector.

mod common;

use std::time::Duration;

use apiserver_standin::Options;
use common::*;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use serde_json::json;

async fn next_event<S>(stream: &mut S) -> WatchEvent<Pod>
where
    S: futures::Stream<Item = kube::Result<WatchEvent<Pod>>> + Unpin,
{
    tokio::time::timeout(TIMEOUT, stream.next())
        .await
        .expect("event in time")
        .expect("stream open")
        .expect("event ok")
}

fn name_of(e: &WatchEvent<Pod>) -> (&'static str, String) {
    match e {
        WatchEvent::Added(p) => ("ADDED", p.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Modified(p) => ("MODIFIED", p.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Deleted(p) => ("DELETED", p.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Bookmark(_) => ("BOOKMARK", String::new()),
        WatchEvent::Error(e) => panic!("error event {e:?}"),
    }
}

#[tokio::test]
async fn watch_streams_changes_in_order_with_selectors() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let pp = PostParams::default();
    pods.create(&pp, &pod("before", json!({"app": "web"}), &[("m", "i:1")]))
        .await
        .expect("create");
    let rv = pods
        .get("before")
        .await
        .expect("get")
        .metadata
        .resource_version
        .expect("rv");

    let mut all = pods
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    let mut web = pods
        .watch(&WatchParams::default().labels("app=web"), &rv)
        .await
        .expect("watch")
        .boxed();

    pods.create(&pp, &pod("a", json!({"app": "web"}), &[("m", "i:1")]))
        .await
        .expect("a");
    pods.create(&pp, &pod("b", json!({"app": "db"}), &[("m", "i:1")]))
        .await
        .expect("b");
    let relabel = json!({"metadata": {"labels": {"app": "other"}}});
    pods.patch("a", &PatchParams::default(), &Patch::Merge(&relabel))
        .await
        .expect("relabel");
    pods.delete("b", &DeleteParams::default())
        .await
        .expect("delete");

    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(name_of(&next_event(&mut all).await));
    }
    assert_eq!(
        seen,
        vec![
            ("ADDED", "a".to_string()),
            ("ADDED", "b".to_string()),
            ("MODIFIED", "a".to_string()),
            ("DELETED", "b".to_string()),
        ]
    );
    // With a selector, leaving the selection is a DELETED event.
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(name_of(&next_event(&mut web).await));
    }
    assert_eq!(
        seen,
        vec![("ADDED", "a".to_string()), ("DELETED", "a".to_string())]
    );

    // From "0": the current objects first.
    let mut from_zero = pods
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    let mut names = Vec::new();
    for _ in 0..2 {
        names.push(name_of(&next_event(&mut from_zero).await).1);
    }
    names.sort();
    assert_eq!(names, vec!["a", "before"]);
}

#[tokio::test]
async fn bookmarks_and_timeouts() {
    let s = start_with(Options {
        bookmark_interval: Duration::from_millis(50),
        ..Options::default()
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let rv = s.store().resource_version().to_string();
    let mut stream = pods
        .watch(
            &WatchParams {
                bookmarks: true,
                ..WatchParams::default()
            }
            .timeout(1),
            &rv,
        )
        .await
        .expect("watch")
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, rv),
        other => panic!("expected a bookmark, got {other:?}"),
    }
    // timeoutSeconds=1 ends the stream.
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(item) = stream.next().await {
            item.expect("ok");
        }
    })
    .await;
    assert!(ended.is_ok(), "stream ended after timeoutSeconds");
}

#[tokio::test]
async fn too_old_resource_version_gets_410_gone() {
    let s = start_with(Options {
        history_limit: 3,
        ..Options::default()
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let old_rv = s.store().resource_version().to_string();
    for i in 0..5 {
        pods.create(
            &PostParams::default(),
            &pod(&format!("p{i}"), json!({}), &[("m", "i:1")]),
        )
        .await
        .expect("create");
    }
    let mut stream = pods
        .watch(&WatchParams::default(), &old_rv)
        .await
        .expect("watch")
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
            assert!(
                e.message.starts_with("too old resource version"),
                "{}",
                e.message
            );
        }
        other => panic!("expected 410, got {other:?}"),
    }
    // Within the retained history the watch works.
    let recent = s.store().resource_version() - 1;
    let mut ok = pods
        .watch(&WatchParams::default(), &recent.to_string())
        .await
        .expect("watch")
        .boxed();
    assert_eq!(
        name_of(&next_event(&mut ok).await),
        ("ADDED", "p4".to_string())
    );
}

#[tokio::test]
async fn reflector_round_trip_and_recovery_from_410() {
    let s = start_with(Options {
        bookmark_interval: Duration::from_secs(60),
        ..Options::default()
    })
    .await;
    let client = s.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    pods.create(&pp, &pod("one", json!({"app": "web"}), &[("m", "i:1")]))
        .await
        .expect("create");

    let (reader, writer) = reflector::store::<Pod>();
    let cfg = watcher::Config::default().labels("app=web").timeout(1);
    let (errors_tx, mut errors_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let stream = reflector(writer, watcher(pods.clone(), cfg))
        .map_err(move |e| {
            let _ = errors_tx.send(e.to_string());
            e
        })
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while stream.next().await.is_some() {}
    });
    tokio::time::timeout(TIMEOUT, reader.wait_until_ready())
        .await
        .expect("ready")
        .expect("ready ok");
    assert_eq!(reader.state().len(), 1);

    pods.create(&pp, &pod("two", json!({"app": "web"}), &[("m", "i:1")]))
        .await
        .expect("create");
    pods.create(&pp, &pod("other", json!({"app": "db"}), &[("m", "i:1")]))
        .await
        .expect("create");
    pods.delete("one", &DeleteParams::default())
        .await
        .expect("delete");
    let wait_names = |want: Vec<&'static str>| {
        let reader = reader.clone();
        async move {
            tokio::time::timeout(TIMEOUT, async {
                loop {
                    let mut names: Vec<String> = reader
                        .state()
                        .iter()
                        .filter_map(|p| p.metadata.name.clone())
                        .collect();
                    names.sort();
                    if names == want {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
            .await
            .expect("reflector caught up");
        }
    };
    wait_names(vec!["two"]).await;

    // Other resources move the resourceVersion; compaction then makes the watcher's version too
    // old: when its watch times out (1 s) it re-watches, gets 410 and re-lists.
    let leases: Api<Lease> = Api::namespaced(client, "default");
    let lease: Lease =
        serde_json::from_value(json!({"metadata": {"name": "bump"}})).expect("lease");
    leases.create(&pp, &lease).await.expect("lease");
    s.store().compact();
    pods.create(&pp, &pod("three", json!({"app": "db"}), &[("m", "i:1")]))
        .await
        .expect("create");
    s.store().compact();
    let err = tokio::time::timeout(TIMEOUT, errors_rx.recv())
        .await
        .expect("an error")
        .expect("open");
    assert!(err.contains("410") || err.contains("too old"), "{err}");
    let relabel = json!({"metadata": {"labels": {"app": "web"}}});
    pods.patch("three", &PatchParams::default(), &Patch::Merge(&relabel))
        .await
        .expect("relabel");
    wait_names(vec!["three", "two"]).await;
    task.abort();
}

#[tokio::test]
async fn streaming_list_watcher_gets_initial_events_and_the_end_bookmark() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let pp = PostParams::default();
    for name in ["x", "y"] {
        pods.create(&pp, &pod(name, json!({}), &[("m", "i:1")]))
            .await
            .expect("create");
    }
    let (reader, writer) = reflector::store::<Pod>();
    let stream = reflector(
        writer,
        watcher(pods.clone(), watcher::Config::default().streaming_lists()),
    )
    .default_backoff()
    .applied_objects();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while stream.next().await.is_some() {}
    });
    tokio::time::timeout(TIMEOUT, reader.wait_until_ready())
        .await
        .expect("ready")
        .expect("ready ok");
    assert_eq!(reader.state().len(), 2);
    pods.create(&pp, &pod("z", json!({}), &[("m", "i:1")]))
        .await
        .expect("create");
    tokio::time::timeout(TIMEOUT, async {
        while reader.state().len() != 3 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("z reflected");
    task.abort();
}

#[tokio::test]
async fn a_watch_on_a_named_path_sees_only_that_object() {
    let s = start().await;
    let client = s.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    for name in ["other", "watched"] {
        pods.create(&pp, &pod(name, json!({}), &[("m", "i:1")]))
            .await
            .expect("create");
    }
    let req = axum::http::Request::get("/api/v1/namespaces/default/pods/watched?watch=true")
        .body(Vec::new())
        .expect("request");
    let mut events = client
        .request_events::<Pod>(req)
        .await
        .expect("watch")
        .boxed();
    assert_eq!(
        name_of(&next_event(&mut events).await),
        ("ADDED", "watched".to_string())
    );
    let label = json!({"metadata": {"labels": {"touched": "yes"}}});
    for name in ["other", "watched"] {
        pods.patch(name, &PatchParams::default(), &Patch::Merge(&label))
            .await
            .expect("patch");
    }
    assert_eq!(
        name_of(&next_event(&mut events).await),
        ("MODIFIED", "watched".to_string())
    );

    // A field selector naming another object on a named path is a 400, as in ListResource.
    let req = axum::http::Request::get(
        "/api/v1/namespaces/default/pods/watched?watch=true&fieldSelector=metadata.name%3Dother",
    )
    .body(Vec::new())
    .expect("request");
    let err = status(
        client
            .request_text(req)
            .await
            .expect_err("mismatched name selector"),
    );
    assert_eq!((err.code, err.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        err.message,
        "fieldSelector metadata.name doesn't match requested name"
    );
}
