//! Rule 15's volume comparison: only volumes that decode to deep-unequal core/v1 `Volume`s
//! conflict (audit finding F3).

use super::*;
use serde_json::json;

fn with_volume(name: &str, volume: Value) -> SidecarSet {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": "web"}}, "volumes": [volume]}}))
    .expect("valid SidecarSet JSON")
}

/// The number of rule-15 errors for a new SidecarSet with `mine` next to one with `theirs`.
fn conflicts(mine: Value, theirs: Value) -> usize {
    let errs = validate_conflicts(&with_volume("new", mine), &[with_volume("old", theirs)]);
    for err in &errs {
        assert_eq!(err.field, "spec.volumes[0].name");
        assert!(
            err.message.contains("in conflict with sidecarset old"),
            "{errs:?}"
        );
    }
    errs.len()
}

#[test]
fn an_empty_string_medium_is_the_zero_value() {
    let mine = json!({"name": "logs", "emptyDir": {"medium": ""}});
    assert_eq!(conflicts(mine, json!({"name": "logs", "emptyDir": {}})), 0);
}

#[test]
fn a_false_read_only_is_the_zero_value() {
    let nfs = |extra: Value| {
        let mut nfs = json!({"server": "nfs.local", "path": "/exports"});
        if let (Some(nfs), Value::Object(extra)) = (nfs.as_object_mut(), extra) {
            nfs.extend(extra);
        }
        json!({"name": "share", "nfs": nfs})
    };
    assert_eq!(
        conflicts(nfs(json!({"readOnly": false})), nfs(json!({}))),
        0
    );
    assert_eq!(conflicts(nfs(json!({"readOnly": true})), nfs(json!({}))), 1);
}

#[test]
fn pointer_fields_set_to_their_zero_value_differ_from_absent() {
    let config = |extra: Value| {
        let mut cm = json!({"name": "settings"});
        if let (Some(cm), Value::Object(extra)) = (cm.as_object_mut(), extra) {
            cm.extend(extra);
        }
        json!({"name": "config", "configMap": cm})
    };
    assert_eq!(
        conflicts(config(json!({"defaultMode": 420})), config(json!({}))),
        1
    );
    assert_eq!(
        conflicts(config(json!({"optional": false})), config(json!({}))),
        1
    );
    assert_eq!(
        conflicts(
            config(json!({"defaultMode": 420})),
            config(json!({"defaultMode": 420}))
        ),
        0
    );
}

#[test]
fn unknown_members_are_dropped_as_go_drops_them() {
    let mine = json!({"name": "logs", "emptyDir": {"x-note": "mine"}, "comment": 1});
    assert_eq!(conflicts(mine, json!({"name": "logs", "emptyDir": {}})), 0);
}

#[test]
fn different_paths_conflict() {
    let host = |path: &str| json!({"name": "logs", "hostPath": {"path": path}});
    assert_eq!(conflicts(host("/var/log/a"), host("/var/log/b")), 1);
    assert_eq!(conflicts(host("/var/log/a"), host("/var/log/a")), 0);
}

#[test]
fn equal_size_limits_are_equal() {
    let sized = |limit: Value| json!({"name": "cache", "emptyDir": {"sizeLimit": limit}});
    assert_eq!(conflicts(sized(json!("1Gi")), sized(json!("1Gi"))), 0);
    assert_eq!(conflicts(sized(json!("1Gi")), sized(json!("2Gi"))), 1);
}

#[test]
fn a_source_present_but_empty_differs_from_another_source() {
    let mine = json!({"name": "scratch", "emptyDir": {}});
    assert_eq!(
        conflicts(
            mine,
            json!({"name": "scratch", "hostPath": {"path": "/tmp"}})
        ),
        1
    );
}

#[test]
fn volumes_go_would_not_decode_fall_back_to_the_raw_comparison() {
    let bad = json!({"name": "logs", "emptyDir": {"medium": 5}});
    assert_eq!(conflicts(bad.clone(), bad.clone()), 0);
    assert_eq!(conflicts(bad, json!({"name": "logs", "emptyDir": {}})), 1);
    let with_null = json!({"name": "logs", "emptyDir": {"medium": 5, "sizeLimit": null}});
    assert_eq!(
        conflicts(
            with_null,
            json!({"name": "logs", "emptyDir": {"medium": 5}})
        ),
        0
    );
}
