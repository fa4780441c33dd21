use super::*;
use proptest::prelude::*;
use serde_json::json;

/// The derived decoder this one replaces, kept as the reference it must agree with (same type
/// name, so the same messages).
mod derived {
    use super::super::super::super::nullable::or_default;
    use super::super::super::{ShareVolumePolicy, SidecarContainerUpgradeStrategy, TransferEnvVar};
    use serde::Deserialize;
    use serde_json::{Map, Value};

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SidecarContainer {
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        #[serde(default, deserialize_with = "or_default")]
        pub pod_inject_policy: String,
        #[serde(default, deserialize_with = "or_default")]
        pub upgrade_strategy: SidecarContainerUpgradeStrategy,
        #[serde(default, deserialize_with = "or_default")]
        pub share_volume_policy: ShareVolumePolicy,
        #[serde(default)]
        pub share_volume_device_policy: Option<ShareVolumePolicy>,
        #[serde(default, deserialize_with = "or_default")]
        pub transfer_env: Vec<TransferEnvVar>,
        #[serde(default)]
        pub resources_policy: Option<Value>,
        #[serde(flatten)]
        pub container: Map<String, Value>,
    }
}

impl From<derived::SidecarContainer> for SidecarContainer {
    fn from(d: derived::SidecarContainer) -> Self {
        SidecarContainer {
            name: d.name,
            pod_inject_policy: d.pod_inject_policy,
            upgrade_strategy: d.upgrade_strategy,
            share_volume_policy: d.share_volume_policy,
            share_volume_device_policy: d.share_volume_device_policy,
            transfer_env: d.transfer_env,
            resources_policy: d.resources_policy,
            container: d.container,
        }
    }
}

fn agree_on_value(value: &Value) {
    let ours = SidecarContainer::deserialize(value.clone()).map_err(|e| e.to_string());
    let derived = derived::SidecarContainer::deserialize(value.clone())
        .map(SidecarContainer::from)
        .map_err(|e| e.to_string());
    assert_eq!(ours, derived, "{value}");
}

fn agree_on_text(text: &str) {
    let ours = serde_json::from_str::<SidecarContainer>(text).map_err(|e| e.to_string());
    let derived = serde_json::from_str::<derived::SidecarContainer>(text)
        .map(SidecarContainer::from)
        .map_err(|e| e.to_string());
    assert_eq!(ours, derived, "{text}");
}

#[test]
fn agrees_with_the_derived_decoder() {
    for value in [
        json!({"name": "c", "image": "i", "podInjectPolicy": "BeforeAppContainer",
               "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "e"},
               "shareVolumePolicy": {"type": "enabled"}, "shareVolumeDevicePolicy": null,
               "transferEnv": [{"sourceContainerName": "app", "envNames": ["A"]}],
               "resourcesPolicy": null, "env": [{"name": "A", "value": "1"}], "x": 1.5}),
        json!({"name": null, "podInjectPolicy": null, "upgradeStrategy": null,
               "shareVolumePolicy": null, "transferEnv": null, "resourcesPolicy": {"a": 1}}),
        json!({}),
        json!({"name": 3}),
        json!({"image": "i", "transferEnv": "no"}),
        json!({"shareVolumeDevicePolicy": {"type": 1}}),
        json!("a string"),
        json!(["name"]),
        json!(null),
        json!(7),
    ] {
        agree_on_value(&value);
        agree_on_text(&value.to_string());
    }
    for text in [
        r#"{"name": "a", "name": "b"}"#,
        r#"{"image": "a", "image": "b"}"#,
        r#"{"transferEnv": [], "transferEnv": []}"#,
        r#"{"resourcesPolicy": 1, "resourcesPolicy": 2}"#,
        r#"{"name": "a", "env": [1, 2"#,
    ] {
        agree_on_text(text);
    }
}

fn member_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(-2)),
        Just(json!(0.5)),
        "[a-z]{0,3}".prop_map(Value::from),
        Just(json!({"type": "enabled"})),
        Just(json!({"upgradeType": "ColdUpgrade"})),
        Just(json!([{"sourceContainerName": "app", "envName": "A"}])),
        Just(json!([{"name": "A", "value": "1"}])),
        Just(json!({"limits": {"cpu": "1"}})),
    ]
}

proptest! {
    #[test]
    fn agrees_with_the_derived_decoder_on_any_members(
        members in prop::collection::vec((prop::sample::select(&[
            "name", "image", "podInjectPolicy", "upgradeStrategy", "shareVolumePolicy",
            "shareVolumeDevicePolicy", "transferEnv", "resourcesPolicy", "env", "resources",
        ][..]), member_value()), 0..6)
    ) {
        let value = Value::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        agree_on_value(&value);
        agree_on_text(&value.to_string());
    }
}
