//! `SidecarContainer`'s decoder, written out: what `#[serde(flatten)]` derives, minus its
//! buffering. The derived one copies every core/v1 field twice (into serde's `Content`, then
//! into the map); this one moves each into `container` as it comes.

use super::super::nullable::{OrDefault, or_default};
use super::SidecarContainer;
use serde::de::{DeserializeOwned, Error, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

impl<'de> Deserialize<'de> for SidecarContainer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A map, as the derive asks for a struct with a flattened field.
        deserializer.deserialize_map(ContainerVisitor::<OwnDecoders>(PhantomData))
    }
}

/// How the extension fields (typed, unlike the core/v1 ones) are read.
pub(in crate::api) trait Extensions {
    fn read<'de, A: MapAccess<'de>, T: DeserializeOwned + Default>(
        map: &mut A,
    ) -> Result<T, A::Error>;
}

/// By their own decoders: `null` as the zero value, errors where serde raises them.
pub(in crate::api) struct OwnDecoders;

impl Extensions for OwnDecoders {
    fn read<'de, A: MapAccess<'de>, T: DeserializeOwned + Default>(
        map: &mut A,
    ) -> Result<T, A::Error> {
        map.next_value_seed(OrDefault(PhantomData))
    }
}

/// Through a `Value`, with the decoders the `Value` path already compiles: the direct text
/// decode (`spec::text`) then adds no second copy of them to the module. Same results; an
/// error's position differs, which is why only that path (which retries on error) uses this.
pub(in crate::api) struct ThroughValue;

impl Extensions for ThroughValue {
    fn read<'de, A: MapAccess<'de>, T: DeserializeOwned + Default>(
        map: &mut A,
    ) -> Result<T, A::Error> {
        let value: Value = map.next_value()?;
        or_default(value).map_err(A::Error::custom)
    }
}

/// A `SidecarContainer` whose extension fields are read the `E` way.
pub(in crate::api) struct ContainerVisitor<E>(pub PhantomData<E>);

impl<'de, E: Extensions> Visitor<'de> for ContainerVisitor<E> {
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
                    out.upgrade_strategy = E::read(&mut map)?;
                }
                "shareVolumePolicy" => {
                    once(3, "shareVolumePolicy")?;
                    out.share_volume_policy = E::read(&mut map)?;
                }
                "shareVolumeDevicePolicy" => {
                    once(4, "shareVolumeDevicePolicy")?;
                    out.share_volume_device_policy = E::read(&mut map)?;
                }
                "transferEnv" => {
                    once(5, "transferEnv")?;
                    out.transfer_env = E::read(&mut map)?;
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

#[cfg(test)]
mod tests;
