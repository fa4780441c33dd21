//! §3.7 buildSidecars: what each matched SidecarSet adds to a new pod.

use super::InjectError;
use super::pod::str_of;
use super::share::{
    PodEnvs, add_path, append_missing_env, first_of_each_name, pick_by_path, shared_devices_of,
    shared_mounts, transfer_envs_of,
};
use crate::annotations::{
    self, IS_INJECTED_ENV, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE, UpgradeSpec,
};
use crate::api::{SidecarContainer, SidecarSet};
use crate::hotupgrade;
use crate::resources::resources_for;
use crate::revision::current_hashes;
use crate::selector::Labels;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// A container ready for the pod, with the placement its SidecarSet asked for.
pub(crate) struct Injected {
    pub container: Map<String, Value>,
    pub policy: String,
}

impl Injected {
    pub fn name(&self) -> &str {
        self.container
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// Everything the matched SidecarSets add, before merging into the pod.
#[derive(Default)]
pub(crate) struct Built {
    pub init_containers: Vec<Injected>,
    pub containers: Vec<Injected>,
    pub volumes: Vec<Value>,
    pub secrets: Vec<Value>,
    /// Pod annotations to write (overwriting) when anything is injected.
    pub annotations: Labels,
}

/// The pod as buildSidecars reads it (after patchPodMetadata).
pub(crate) struct PodView<'a> {
    pub init_containers: &'a [Value],
    pub containers: &'a [Value],
    pub labels: &'a Labels,
    pub annotations: &'a Labels,
}

/// The SidecarSets' containers move into the pod when they are owned (`Cow::Owned`).
pub(crate) fn build_sidecars(
    pod: PodView<'_>,
    sidecarsets: Vec<Cow<'_, SidecarSet>>,
    now: &str,
) -> Result<Built, InjectError> {
    let mut hashes = annotations::parse_hash_annotation(
        SIDECARSET_HASH,
        pod.annotations.get(SIDECARSET_HASH).map(String::as_str),
    )?;
    let mut hashes_without_image = annotations::parse_hash_annotation(
        SIDECARSET_HASH_WITHOUT_IMAGE,
        pod.annotations
            .get(SIDECARSET_HASH_WITHOUT_IMAGE)
            .map(String::as_str),
    )?;
    let mut working = annotations::parse_working_map(
        pod.annotations
            .get(annotations::WORKING_HOT_UPGRADE_CONTAINER)
            .map(String::as_str),
    );
    let mut names = annotations::parse_injected_list(
        pod.annotations
            .get(annotations::INJECTED_LIST)
            .map(String::as_str),
    );
    let sidecar_names = resources_policy_exclusions(&sidecarsets);
    let mut built = Built::default();
    let mut hot_upgraded = false;
    // The pod's env names, read when the first sidecar shares or transfers anything.
    let mut envs = None;

    for mut sidecarset in sidecarsets {
        // Read before the containers move out: the hashes may be computed from them.
        let current = current_hashes(&sidecarset);
        let (init_containers, containers) = take_containers(&mut sidecarset);
        names.insert(sidecarset.name().to_string());
        let volumes = sidecarset.spec.volumes.as_slice();
        let mut sidecar_list = BTreeSet::new();
        let injected_before = built.init_containers.len() + built.containers.len();

        for mut init in init_containers {
            let native = init.is_native_sidecar();
            if native {
                sidecar_list.insert(init.name.clone());
            }
            let mut container = prepare(&mut init, &pod, &mut envs, volumes, &mut built.volumes);
            apply_resources_policy(&init, &mut container, &pod, &sidecar_names, &sidecarset)?;
            let hot = native && init.is_hot_upgrade();
            hot_upgraded |= hot;
            push(
                &mut built.init_containers,
                &mut built.annotations,
                &mut working,
                &init,
                container,
                hot,
            );
        }
        built
            .secrets
            .extend(sidecarset.spec.image_pull_secrets.iter().map(|s| {
                let mut secret = Map::new();
                secret.insert("name".into(), Value::String(s.name.clone()));
                Value::Object(secret)
            }));
        for mut sidecar in containers {
            sidecar_list.insert(sidecar.name.clone());
            let mut container = prepare(&mut sidecar, &pod, &mut envs, volumes, &mut built.volumes);
            apply_resources_policy(&sidecar, &mut container, &pod, &sidecar_names, &sidecarset)?;
            let hot = sidecar.is_hot_upgrade();
            hot_upgraded |= hot;
            push(
                &mut built.containers,
                &mut built.annotations,
                &mut working,
                &sidecar,
                container,
                hot,
            );
        }

        if built.init_containers.len() + built.containers.len() > injected_before {
            let entry = |hash: String, controller_revision: String| UpgradeSpec {
                update_timestamp: Some(now.to_string()),
                hash,
                sidecar_set_name: sidecarset.name().to_string(),
                sidecar_list: Some(sidecar_list.iter().cloned().collect()),
                controller_revision,
            };
            let revision = sidecarset
                .status
                .as_ref()
                .and_then(|s| s.latest_revision.clone())
                .unwrap_or_default();
            hashes.insert(sidecarset.name().to_string(), entry(current.hash, revision));
            hashes_without_image.insert(
                sidecarset.name().to_string(),
                entry(current.without_image, String::new()),
            );
        }
    }

    let out = &mut built.annotations;
    out.insert(SIDECARSET_HASH.into(), annotations::to_json(&hashes));
    out.insert(
        SIDECARSET_HASH_WITHOUT_IMAGE.into(),
        annotations::to_json(&hashes_without_image),
    );
    out.insert(
        annotations::INJECTED_LIST.into(),
        annotations::format_injected_list(&names),
    );
    if hot_upgraded {
        out.insert(
            annotations::WORKING_HOT_UPGRADE_CONTAINER.into(),
            annotations::to_json(&working),
        );
    }
    Ok(built)
}

/// §3.7.7 step 1: the container names of every matched SidecarSet, never resource targets;
/// empty when no sidecar has a resourcesPolicy.
fn resources_policy_exclusions(sidecarsets: &[Cow<'_, SidecarSet>]) -> BTreeSet<String> {
    let all = || {
        sidecarsets
            .iter()
            .flat_map(|s| s.spec.init_containers.iter().chain(&s.spec.containers))
    };
    if !all().any(|c| c.resources_policy.is_some()) {
        return BTreeSet::new();
    }
    crate::order::set_of(all().map(|c| c.name.clone()))
}

/// §3.7.1/§3.7.2 step 2: a sidecar with a resourcesPolicy gets the resources it computes (before
/// any hot-upgrade twin is made, so both twins carry them).
fn apply_resources_policy(
    sidecar: &SidecarContainer,
    container: &mut Map<String, Value>,
    pod: &PodView<'_>,
    sidecar_names: &BTreeSet<String>,
    sidecarset: &SidecarSet,
) -> Result<(), InjectError> {
    let Some(policy) = &sidecar.resources_policy else {
        return Ok(());
    };
    let resources = resources_for(policy, pod.init_containers, pod.containers, sidecar_names)
        .map_err(|source| InjectError::ResourcesPolicy {
            sidecarset: sidecarset.name().to_string(),
            container: sidecar.name.clone(),
            source: Box::new(source),
        })?;
    container.insert("resources".into(), resources);
    Ok(())
}

/// The SidecarSet's init containers and containers: moved out of an owned one, else copied.
fn take_containers(
    sidecarset: &mut Cow<'_, SidecarSet>,
) -> (Vec<SidecarContainer>, Vec<SidecarContainer>) {
    match sidecarset {
        Cow::Borrowed(borrowed) => (
            borrowed.spec.init_containers.clone(),
            borrowed.spec.containers.clone(),
        ),
        Cow::Owned(owned) => (
            std::mem::take(&mut owned.spec.init_containers),
            std::mem::take(&mut owned.spec.containers),
        ),
    }
}

/// Shared mounts, env and devices merged into the sidecar (§3.7.1 steps 3–7); collects the
/// SidecarSet volumes its own mounts and devices reference. The sidecar's core/v1 fields move
/// into the result.
fn prepare<'a>(
    sidecar: &mut SidecarContainer,
    pod: &PodView<'a>,
    envs: &mut Option<PodEnvs<'a>>,
    volumes: &[Value],
    injected_volumes: &mut Vec<Value>,
) -> Map<String, Value> {
    let (mounts, subpath_envs) = if sidecar.share_volume_policy.enabled() {
        shared_mounts(envs.get_or_insert_with(|| PodEnvs::new(pod.containers)))
    } else {
        (Vec::new(), Vec::new())
    };
    let mut transfer = if sidecar.transfer_env.is_empty() {
        Vec::new()
    } else {
        let envs = envs.get_or_insert_with(|| PodEnvs::new(pod.containers));
        transfer_envs_of(sidecar, envs, pod.labels, pod.annotations)
    };
    transfer.extend(subpath_envs);
    let deduped = first_of_each_name(transfer);

    injected_volumes.extend(
        sidecar
            .own_volume_names()
            // The last of the SidecarSet's volumes with that name, as a map by name keeps.
            .filter_map(|name| volumes.iter().rev().find(|v| str_of(v, "name") == name))
            .cloned(),
    );

    let mut container = sidecar.take_pod_container();
    // The container's own lists are moved out (an empty list left in place), not copied.
    let mut merged_mounts = take_list(&mut container, "volumeMounts");
    let mut merged_devices = take_list(&mut container, "volumeDevices");
    let mut used = used_paths(&merged_mounts, &merged_devices);
    let picked = pick_by_path(&mounts, "mountPath", &mut used);
    drop(used);
    merged_mounts.extend(picked.into_iter().cloned());

    let mut env = take_list(&mut container, "env");
    env.reserve(1 + deduped.len());
    env.push(serde_json::json!({"name": IS_INJECTED_ENV, "value": "true"}));
    append_missing_env(&mut env, deduped);

    let share_devices = sidecar
        .share_volume_device_policy
        .as_ref()
        .is_some_and(|p| p.enabled());
    if share_devices {
        let shared = shared_devices_of(envs.get_or_insert_with(|| PodEnvs::new(pod.containers)));
        let mut used = used_paths(&merged_mounts, &merged_devices);
        let picked = pick_by_path(&shared, "devicePath", &mut used);
        drop(used);
        merged_devices.extend(picked.into_iter().cloned());
    }

    container.insert("env".into(), Value::Array(env));
    if !merged_mounts.is_empty() {
        container.insert("volumeMounts".into(), Value::Array(merged_mounts));
    }
    if !merged_devices.is_empty() {
        container.insert("volumeDevices".into(), Value::Array(merged_devices));
    }
    container
}

/// The array under `key`, moved out and an empty one left in its place; anything else under
/// `key` stays as it is and reads as empty (as `list` does).
fn take_list(object: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match object.get_mut(key) {
        Some(Value::Array(items)) => std::mem::take(items),
        _ => Vec::new(),
    }
}

/// Add the prepared container, or its hot-upgrade twins (§3.7.6).
fn push(
    out: &mut Vec<Injected>,
    annotations_out: &mut Labels,
    working: &mut BTreeMap<String, String>,
    sidecar: &SidecarContainer,
    container: Map<String, Value>,
    hot: bool,
) {
    let policy = sidecar.pod_inject_policy.clone();
    if !hot {
        out.push(Injected { container, policy });
        return;
    }
    let [first, second] = hotupgrade::twin_names(&sidecar.name);
    for (twin, version, version_alt) in [(&first, "1", "0"), (&second, "0", "1")] {
        let mut copy = container.clone();
        copy.insert("name".into(), Value::String(twin.clone()));
        if twin == &second {
            let empty = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
            copy.insert("image".into(), Value::String(empty.clone()));
        }
        if let Some(Value::Array(env)) = copy.get_mut("env") {
            env.extend(hotupgrade::version_env(twin));
        }
        annotations_out.insert(annotations::version_key(twin), version.into());
        annotations_out.insert(annotations::version_alt_key(twin), version_alt.into());
        out.push(Injected {
            container: copy,
            policy: policy.clone(),
        });
    }
    working.insert(sidecar.name.clone(), first);
}

/// The mount and device paths a container already uses, as a sorted set.
fn used_paths<'a>(mounts: &'a [Value], devices: &'a [Value]) -> Vec<&'a str> {
    let mut used = Vec::new();
    for mount in mounts {
        add_path(&mut used, str_of(mount, "mountPath"));
    }
    for device in devices {
        add_path(&mut used, str_of(device, "devicePath"));
    }
    used
}
