//! `SidecarContainer`'s decoder, written out: what `#[serde(flatten)]` derives, minus its
//! buffering. The derived one copies every core/v1 field twice (into serde's `Content`, then
//! into the map); this one moves each into `container` as it comes.

use super::super::nullable::or_default;
use super::SidecarContainer;
use serde::de::{DeserializeSeed, Error, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

impl<'de> Deserialize<'de> for SidecarContainer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A map, as the derive asks for a struct with a flattened field.
        deserializer.deserialize_map(ContainerVisitor)
    }
}

struct ContainerVisitor;

impl<'de> Visitor<'de> for ContainerVisitor {
    type Value = SidecarContainer;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("struct SidecarContainer")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SidecarContainer, A::Error> {
        let mut out = SidecarContainer::default();
        // The derive's duplicate check, one bit per extension field.
        let mut seen = 0u8;
        let mut once = |bit: u8, field: &'static str| {
            if seen & (1 << bit) != 0 {
                return Err(A::Error::duplicate_field(field));
            }
            seen |= 1 << bit;
            Ok(())
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => {
                    once(0, "name")?;
                    out.name = map.next_value_seed(OrDefault(PhantomData))?;
                }
                "podInjectPolicy" => {
                    once(1, "podInjectPolicy")?;
                    out.pod_inject_policy = map.next_value_seed(OrDefault(PhantomData))?;
                }
                "upgradeStrategy" => {
                    once(2, "upgradeStrategy")?;
                    out.upgrade_strategy = map.next_value_seed(OrDefault(PhantomData))?;
                }
                "shareVolumePolicy" => {
                    once(3, "shareVolumePolicy")?;
                    out.share_volume_policy = map.next_value_seed(OrDefault(PhantomData))?;
                }
                "shareVolumeDevicePolicy" => {
                    once(4, "shareVolumeDevicePolicy")?;
                    out.share_volume_device_policy = map.next_value()?;
                }
                "transferEnv" => {
                    once(5, "transferEnv")?;
                    out.transfer_env = map.next_value_seed(OrDefault(PhantomData))?;
                }
                "resourcesPolicy" => {
                    once(6, "resourcesPolicy")?;
                    out.resources_policy = map.next_value()?;
                }
                // A core/v1 field: kept as served (the last of duplicated ones, as a map keeps).
                _ => {
                    let value: Value = map.next_value()?;
                    out.container.insert(key, value);
                }
            }
        }
        Ok(out)
    }
}

/// `or_default` as a seed: `null` reads as the zero value, as Go's decoder does.
struct OrDefault<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> DeserializeSeed<'de> for OrDefault<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        or_default(deserializer)
    }
}

#[cfg(test)]
mod tests;
