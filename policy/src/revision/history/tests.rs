use super::*;
use serde_json::json;

fn current(revision: Value) -> SidecarSet {
    SidecarSet::deserialize_value(&json!({
        "metadata": {"name": "mesh", "annotations": {
            SIDECARSET_HASH: "now-hash", SIDECARSET_HASH_WITHOUT_IMAGE: "now-without", "team": "a"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "envoy", "image": "envoy:2"}],
                 "injectionStrategy": {"revision": revision},
                 "updateStrategy": {"type": "NotUpdate"}}
    }))
    .unwrap()
}

/// A revision as Kruise's history control writes it.
fn controller_revision(name: &str, annotations: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
           "metadata": {"name": name, "namespace": "kruise-system", "annotations": annotations,
                        "labels": {REVISION_SIDECARSET_LABEL: "mesh"}},
           "revision": 1,
           "data": {"spec": {"$patch": "replace",
                             "containers": [{"name": "envoy", "image": "envoy:1"}],
                             "initContainers": null, "volumes": null,
                             "imagePullSecrets": [{"name": "reg"}], "patchPodMetadata": null}}})
}

#[test]
fn a_revision_name_wins_over_a_custom_version() {
    let both = current(json!({"revisionName": "mesh-1", "customVersion": "v1"}));
    assert_eq!(
        RevisionQuery::of(&both),
        Some(RevisionQuery::Named("mesh-1"))
    );
    let custom = current(json!({"customVersion": "v1"}));
    assert_eq!(
        RevisionQuery::of(&custom),
        Some(RevisionQuery::CustomVersion {
            sidecarset: "mesh",
            version: "v1"
        })
    );
    assert_eq!(
        RevisionQuery::of(&current(json!({"policy": "Always"}))),
        None
    );
    assert_eq!(RevisionQuery::of(&current(Value::Null)), None);
    assert_eq!(
        RevisionQuery::label_selector("mesh", "v1"),
        "kruise.io/sidecarset-name=mesh,apps.kruise.io/sidecarset-custom-version=v1"
    );
}

#[test]
fn the_newest_revision_of_a_custom_version_is_taken() {
    let revision = |name: &str, number: i64, created: &str, version: &str| {
        json!({"metadata": {"name": name, "creationTimestamp": created,
                            "labels": {REVISION_SIDECARSET_LABEL: "mesh",
                                       CUSTOM_VERSION_LABEL: version}},
               "revision": number})
    };
    let listed = [
        revision("c", 2, "2026-01-01T00:00:00Z", "v1"),
        revision("a", 3, "2026-01-01T00:00:00Z", "v1"),
        revision("b", 3, "2026-01-02T00:00:00Z", "v1"),
        revision("z", 9, "2026-01-03T00:00:00Z", "v2"),
        revision("d", 3, "2026-01-02T00:00:00Z", "v1"),
    ];
    let name = |r: Option<&Value>| r.and_then(|r| r.pointer("/metadata/name")).cloned();
    assert_eq!(name(newest(&listed, "mesh", "v1")), Some(json!("d")));
    assert_eq!(name(newest(&listed, "mesh", "v2")), Some(json!("z")));
    assert_eq!(newest(&listed, "mesh", "v3"), None);
    assert_eq!(newest(&listed, "other", "v1"), None);
}

#[test]
fn restoring_keeps_the_recorded_spec_and_the_current_metadata() {
    let revision = controller_revision(
        "mesh-1",
        json!({SIDECARSET_HASH: "old-hash", SIDECARSET_HASH_WITHOUT_IMAGE: "old-without"}),
    );
    let history = restore(&current(json!({"revisionName": "mesh-1"})), &revision).unwrap();
    assert_eq!(history.spec.containers.len(), 1);
    assert_eq!(history.spec.containers[0].image(), "envoy:1");
    assert_eq!(history.spec.image_pull_secrets[0].name, "reg");
    // `$patch: replace` drops what the revision does not record.
    assert_eq!(history.spec.selector, None);
    assert!(history.spec.injection_strategy.revision.is_none());
    assert_eq!(history.annotation("team"), Some("a"));
    assert_eq!(history.annotation(SIDECARSET_HASH), Some("old-hash"));
    assert_eq!(
        history.annotation(SIDECARSET_HASH_WITHOUT_IMAGE),
        Some("old-without")
    );
    assert_eq!(
        history.status.and_then(|s| s.latest_revision).as_deref(),
        Some("mesh-1")
    );
}

#[test]
fn hashes_missing_from_the_revision_are_computed_from_the_restored_containers() {
    let revision = controller_revision("mesh-1", json!({SIDECARSET_HASH: ""}));
    let history = restore(&current(Value::Null), &revision).unwrap();
    let expected = hash::compute(&hashed_spec(&history));
    assert_eq!(
        history.annotation(SIDECARSET_HASH),
        Some(expected.hash.as_str())
    );
    assert_ne!(history.annotation(SIDECARSET_HASH), Some("now-hash"));
    assert_eq!(
        history.annotation(SIDECARSET_HASH_WITHOUT_IMAGE),
        Some(expected.without_image.as_str())
    );
}

/// The replaced spec loses its directives, nested ones included.
#[test]
fn directives_are_not_part_of_the_restored_spec() {
    let mut revision = controller_revision("mesh-1", json!({}));
    revision["data"]["spec"]["updateStrategy"] = json!({"$retainKeys": ["paused"], "paused": true});
    let history = restore(&current(Value::Null), &revision).unwrap();
    assert!(history.spec.update_strategy.paused);
    assert_eq!(history.spec.update_strategy.type_, "");
}

#[test]
fn data_that_does_not_restore_a_sidecarset_is_an_error() {
    let set = current(Value::Null);
    for data in [
        json!("text"),
        json!({"spec": {"$patch": "replace", "containers": "envoy"}}),
        json!({"spec": {"$patch": 7}}),
        json!({"spec": {"$patch": "replace"}, "metadata": {"labels": {"a": "b"}}}),
        json!({"spec": {"containers": []}}),
        json!({"spec": null}),
    ] {
        let mut revision = controller_revision("mesh-1", json!({}));
        revision["data"] = data;
        let error = restore(&set, &revision).unwrap_err();
        assert!(
            matches!(&error, HistoryError::Restore { revision, .. } if revision == "mesh-1"),
            "{error}"
        );
    }
    // A revision without data restores the SidecarSet as it is, under the revision's name.
    let mut bare = controller_revision("mesh-2", json!({}));
    bare.as_object_mut().unwrap().remove("data");
    let same = restore(&set, &bare).unwrap();
    assert_eq!(same.spec.containers, set.spec.containers);
}
