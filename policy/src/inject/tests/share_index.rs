//! The pod's env index (`PodEnvs`) and the borrowed path sets against the scans they replaced.

use crate::annotations::IS_INJECTED_ENV;
use crate::api::{SidecarContainer, TransferEnvVar};
use crate::inject::pod::{list, name_of, str_of};
use crate::inject::share::{
    NamedEnvVar, PodEnvs, add_path, pick_by_path, shared_devices_of, shared_mounts,
    transfer_envs_of,
};
use crate::selector::Labels;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The previous `app_containers`: a scan of each container's env for its first IS_INJECTED
/// (upstream's `GetContainerEnvValue`).
fn old_apps(pod: &[Value]) -> impl Iterator<Item = &Map<String, Value>> {
    pod.iter().filter_map(Value::as_object).filter(|c| {
        list(c, "env")
            .iter()
            .find(|env| name_of(env) == IS_INJECTED_ENV)
            .is_none_or(|env| env.get("value").and_then(Value::as_str) != Some("true"))
    })
}

fn old_shared_mounts(pod: &[Value]) -> (Vec<&Value>, Vec<&Value>) {
    let (mut mounts, mut envs) = (Vec::new(), Vec::new());
    for container in old_apps(pod) {
        let container_envs = list(container, "env");
        for mount in list(container, "volumeMounts") {
            let expr = str_of(mount, "subPathExpr");
            // The reference parser: every well-formed `$(NAME)`.
            for name in expr.split("$(").skip(1).filter_map(|s| s.split_once(')')) {
                let name = name.0;
                let ok = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '-' | '.' | '_'))
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
                if !ok {
                    continue;
                }
                if let Some(env) = container_envs.iter().find(|e| name_of(e) == name) {
                    envs.push(env);
                }
            }
            mounts.push(mount);
        }
    }
    (mounts, envs)
}

fn old_transfer(sidecar: &SidecarContainer, pod: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for item in &sidecar.transfer_env {
        let source = item.source_container_name.as_str();
        let names: BTreeSet<&str> = std::iter::once(item.env_name.as_str())
            .filter(|n| !n.is_empty())
            .chain(item.env_names.iter().map(String::as_str))
            .collect();
        // Upstream's index: `container/env` over every container, the last of each key wins.
        let sources = pod
            .iter()
            .filter_map(Value::as_object)
            .filter(|c| c.get("name").and_then(Value::as_str) == Some(source));
        let envs: Vec<&Value> = sources.flat_map(|c| list(c, "env")).collect();
        for name in names {
            if let Some(env) = envs.iter().rev().find(|e| name_of(e) == name) {
                out.push((*env).clone());
            }
        }
    }
    out
}

fn old_merge(
    own: &[Value],
    shared: &[&Value],
    key: &str,
    used: &mut BTreeSet<String>,
) -> Vec<Value> {
    let mut out = own.to_vec();
    for item in shared {
        if used.insert(str_of(item, key).to_string()) {
            out.push((*item).clone());
        }
    }
    out
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("A".to_string()),
        Just("B".to_string()),
        Just("".to_string()),
        Just(IS_INJECTED_ENV.to_string())
    ]
}

fn env() -> impl Strategy<Value = Value> {
    (
        name(),
        prop::option::of(prop_oneof![Just("true"), Just("x")]),
        any::<bool>(),
    )
        .prop_map(|(name, value, named)| {
            let mut env = Map::new();
            if named {
                env.insert("name".into(), json!(name));
            }
            if let Some(value) = value {
                env.insert("value".into(), json!(value));
            }
            Value::Object(env)
        })
}

fn path_item(key: &'static str) -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("/a"), Just("/b"), Just("")],
        prop_oneof![Just(""), Just("$(A)"), Just("$(B)/$(A)"), Just("$(1)")],
    )
        .prop_map(move |(path, expr)| json!({key: path, "subPathExpr": expr}))
}

fn container() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![Just("app"), Just(""), Just("other")]),
        prop::collection::vec(env(), 0..5),
        prop::collection::vec(path_item("mountPath"), 0..3),
        prop::collection::vec(path_item("devicePath"), 0..3),
    )
        .prop_map(|(name, env, mounts, devices)| {
            let mut c = json!({"env": env, "volumeMounts": mounts, "volumeDevices": devices});
            if let Some(name) = name {
                c["name"] = json!(name);
            }
            c
        })
}

/// `containers` as a pod CREATE's pod read by shape has them: each container's env kept as text.
fn shaped_containers(containers: &[Value]) -> Vec<Value> {
    let pod = serde_json::to_vec(&json!({"spec": {"containers": containers}})).unwrap();
    let mut pod = crate::rawjson::shaped::parse(&pod, &crate::inject::pod::SHAPE).unwrap();
    let shaped = pod["spec"]["containers"].take();
    let shaped = shaped.as_array().unwrap();
    assert!(
        shaped
            .iter()
            .all(|c| c.get("\u{2}env").is_some() && c.get("env").is_none()),
        "the env stays text"
    );
    shaped.clone()
}

/// The vars as JSON values, each with the name it was found under.
fn built(envs: Vec<NamedEnvVar<'_>>) -> Vec<Value> {
    envs.into_iter()
        .map(|(name, env)| {
            let value = env.to_value();
            assert_eq!(name, name_of(&value), "found under its own name");
            value
        })
        .collect()
}

proptest! {
    #[test]
    fn index_matches_scans(
        pod in prop::collection::vec(container(), 0..4),
        source in prop_oneof![Just("app"), Just(""), Just("other")],
        names in prop::collection::vec(name(), 0..4),
        own in prop::collection::vec(path_item("mountPath"), 0..3),
    ) {
        let index = PodEnvs::new(&pod);
        let (old_mounts, old_envs) = old_shared_mounts(&pod);
        let old_envs: Vec<Value> = old_envs.into_iter().cloned().collect();
        let (mounts, envs) = shared_mounts(&index);
        prop_assert_eq!((mounts, built(envs)), (old_mounts.clone(), old_envs.clone()));
        // The same pod read by shape: its containers' env is found in their text.
        let shaped = shaped_containers(&pod);
        let text_index = PodEnvs::new(&shaped);
        let (text_mounts, text_envs) = shared_mounts(&text_index);
        prop_assert_eq!(text_mounts.into_iter().cloned().collect::<Vec<_>>(),
            old_mounts.into_iter().cloned().collect::<Vec<_>>());
        prop_assert_eq!(built(text_envs), old_envs);

        let sidecar = SidecarContainer {
            transfer_env: vec![TransferEnvVar {
                source_container_name: source.to_string(),
                env_names: names,
                ..Default::default()
            }],
            ..Default::default()
        };
        let none = Labels::new();
        prop_assert_eq!(built(transfer_envs_of(&sidecar, &index, &none, &none)), old_transfer(&sidecar, &pod));
        prop_assert_eq!(built(transfer_envs_of(&sidecar, &text_index, &none, &none)), old_transfer(&sidecar, &pod));

        let (mounts, _) = shared_mounts(&index);
        let devices = shared_devices_of(&index);
        let mut old_used: BTreeSet<String> =
            own.iter().map(|m| str_of(m, "mountPath").to_string()).collect();
        let expected = old_merge(&own, &mounts, "mountPath", &mut old_used);
        let expected_devices = old_merge(&[], &devices, "devicePath", &mut old_used);
        let mut used = Vec::new();
        for m in &own {
            add_path(&mut used, str_of(m, "mountPath"));
        }
        let mut merged = own.clone();
        merged.extend(pick_by_path(&mounts, "mountPath", &mut used).into_iter().cloned());
        let merged_devices: Vec<Value> =
            pick_by_path(&devices, "devicePath", &mut used).into_iter().cloned().collect();
        prop_assert_eq!(merged, expected);
        prop_assert_eq!(merged_devices, expected_devices);
    }
}
