use super::*;
use crate::selector::Labels;
use proptest::prelude::*;
use serde_json::{Value, json};

fn by_serde(text: &[u8]) -> Result<SidecarSetHead, String> {
    serde_json::from_slice(text).map_err(|e| e.to_string())
}

#[test]
fn a_served_sidecarset_scans_to_its_selection_fields() {
    let item = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "log\u{e9}", "annotations": {
            "apps.kruise.io/sidecarset-canary": "true", "apps.kruise.io/sidecarset-base": "base",
            "kruise.io/sidecarset-hash": "x"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "namespace": "ns",
                 "namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "Exists"}]},
                 "injectionStrategy": {"paused": true},
                 "containers": [{"name": "c", "image": "i"}]},
    });
    let text = serde_json::to_vec(&item).expect("json");
    let scanned = head(&mut Cursor::new(&text)).expect("the plain shape scans");
    assert_eq!(Ok(scanned.clone()), by_serde(&text));
    assert_eq!(
        scanned.metadata.annotations.len(),
        2,
        "only selection's annotations"
    );
    assert!(scanned.spec.injection_strategy.paused);
    assert_eq!(SidecarSetHead::from_json(&text).ok(), Some(scanned));
}

#[test]
fn shapes_the_scan_does_not_take_are_serdes_to_judge() {
    for text in [
        &br#"{"metadata": {"name": 1}}"#[..],
        br#"{"metadata": {"annotations": {"other": 1}}}"#,
        br#"{"metadata": {"name": "a", "name": "b"}}"#,
        br#"{"spec": {"selector": "app=web"}}"#,
        br#"{"spec": {"injectionStrategy": {"paused": "yes"}}}"#,
        br#"{"metadata": ["positional"]}"#,
        br#"[]"#,
        b"{",
    ] {
        assert!(
            head(&mut Cursor::new(text)).is_err(),
            "{}",
            String::from_utf8_lossy(text)
        );
        assert_eq!(
            SidecarSetHead::from_json(text).map_err(|e| e.to_string()),
            by_serde(text),
        );
    }
}

fn text_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(7)),
        "[a-z\\\\\"]{0,4}".prop_map(Value::from),
        Just(json!({"matchLabels": {"app": "web"}})),
        Just(json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]})),
        Just(json!({"paused": true})),
        Just(json!({"paused": null})),
        Just(json!({"apps.kruise.io/sidecarset-canary": "true", "x": "y"})),
        Just(json!({"apps.kruise.io/sidecarset-base": 3})),
        Just(json!([1, {"a": "}"}])),
    ]
}

fn object(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(keys), text_value()), 0..5).prop_map(|members| {
        Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    })
}

fn sidecarset_like() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(Value::Null),
            object(&["name", "annotations", "labels"])
        ],
        prop_oneof![
            Just(Value::Null),
            object(&[
                "selector",
                "namespace",
                "namespaceSelector",
                "injectionStrategy",
                "containers"
            ])
        ],
        any::<bool>(),
    )
        .prop_map(|(metadata, spec, kind)| {
            let mut item = json!({"metadata": metadata, "spec": spec});
            if kind {
                item["kind"] = json!("SidecarSet");
            }
            item
        })
}

proptest! {
    #[test]
    fn the_scan_agrees_with_serde(item in sidecarset_like(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_vec_pretty(&item) } else { serde_json::to_vec(&item) }
            .expect("json");
        if let Ok(scanned) = head(&mut Cursor::new(&text)) {
            prop_assert_eq!(Ok(scanned), by_serde(&text));
        }
        prop_assert_eq!(SidecarSetHead::from_json(&text).map_err(|e| e.to_string()), by_serde(&text));
    }
}

/// Selectors and names read without serde agree with serde, whatever their text.
#[test]
fn selectors_and_names_read_directly_agree_with_serde() {
    for spec in [
        r#"{"selector": {"matchLabels": {"app": "web", "tier": "a"}}}"#,
        r#"{"selector": {"matchLabels": {"app": "web", "app": "db"}}}"#,
        r#"{"selector": {"matchLabels": {"app": "w\u00e9b"}}}"#,
        r#"{"selector": {"matchLabels": {"a\"pp": "web"}}}"#,
        r#"{"selector": {"matchLabels": {"app": null}}}"#,
        r#"{"selector": {"matchLabels": {"app": 1}}}"#,
        r#"{"selector": {"matchLabels": null}}"#,
        r#"{"selector": {"matchLabels": {}, "matchLabels": {"a": "b"}}}"#,
        r#"{"selector": {"matchLabels": {"a": "b"}, "other": [1, }]}}"#,
        r#"{"selector": {"matchLabels": {"a": "b",}}}"#,
        r#"{"selector": {"matchLabels": {"a": "b"}, "matchExpressions": null}}"#,
        r#"{"selector": {"match\u004cabels": {"a": "b"}}}"#,
        r#"{"selector": {}}"#,
        r#"{"selector": null}"#,
        r#"{"selector": nul}"#,
        r#"{"selector": {"matchLabels": {"a": "tab	here"}}}"#,
        r#"{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ns"}}}"#,
        r#"{"namespace": "n\u0073", "namespaceSelector": {"matchLabels": {"x": "y"}}}"#,
    ] {
        for metadata in [
            r#"{"name": "plain"}"#,
            r#"{"name": "esc\"aped"}"#,
            r#"{"name": null}"#,
        ] {
            let text = format!(r#"{{"metadata": {metadata}, "spec": {spec}}}"#);
            if let Ok(scanned) = head(&mut Cursor::new(text.as_bytes())) {
                assert_eq!(Ok(scanned), by_serde(text.as_bytes()), "{text}");
            }
            assert_eq!(
                SidecarSetHead::from_json(text.as_bytes()).map_err(|e| e.to_string()),
                by_serde(text.as_bytes()),
                "{text}"
            );
        }
    }
    let invalid_utf8 = b"{\"spec\": {\"selector\": {\"matchLabels\": {\"a\": \"\xff\"}}}}";
    assert!(head(&mut Cursor::new(invalid_utf8)).is_err());
}

fn pod_labels() -> impl Strategy<Value = Labels> {
    prop::collection::btree_map(
        prop::sample::select(&["app", "tier", "a\"pp"][..]),
        prop::sample::select(&["web", "db", "b"][..]),
        0..3,
    )
    .prop_map(|labels| {
        labels
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}

fn selector_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        text_value(),
        Just(json!({"matchLabels": {"app": "db"}})),
        Just(json!({"matchLabels": {"app": "web", "tier": "b"}})),
        Just(json!({"matchLabels": {}})),
        Just(json!({"matchLabels": null})),
        Just(json!({"matchLabels": {"app": 1}})),
        Just(json!({"matchLabels": {"app": "web"}, "matchExpressions": []})),
        Just(json!({"matchExpressions": [{"key": "app", "operator": "Bad"}]})),
    ]
}

fn selecting_sidecarset() -> impl Strategy<Value = Value> {
    (
        sidecarset_like(),
        prop::option::of(selector_value()),
        prop::option::of(selector_value()),
    )
        .prop_map(|(mut item, selector, namespace_selector)| {
            if let Some(spec) = item.get_mut("spec").and_then(Value::as_object_mut) {
                spec.extend(selector.map(|s| ("selector".to_string(), s)));
                spec.extend(namespace_selector.map(|s| ("namespaceSelector".to_string(), s)));
            }
            item
        })
}

proptest! {
    /// A head dropped unread is one serde decodes and that selects the pod under no Namespace.
    #[test]
    fn heads_that_cannot_select_do_not(item in selecting_sidecarset(), labels in pod_labels(),
                                       namespace_found in any::<bool>()) {
        let text = serde_json::to_vec(&item).expect("json");
        let Ok(scanned) = head_text(&mut Cursor::new(&text)) else {
            return Ok(());
        };
        if !scanned.cannot_select(&labels) {
            return Ok(());
        }
        let head = by_serde(&text).expect("a head that cannot select decodes");
        let mut lookup = |_: &str| namespace_found.then(Labels::new);
        let selected = crate::inject::pod_matches(&head, "ns", &labels, &mut lookup);
        prop_assert_eq!(selected, Ok(false));
    }
}
