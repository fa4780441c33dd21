//! Go's JSON decoder reads `null` as the zero value; serde's defaults reject it for non-Options.

use serde::de::DeserializeSeed;
use serde::{Deserialize, Deserializer};
use std::marker::PhantomData;

/// Deserialize `T`, reading JSON `null` as `T::default()`.
pub(crate) fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `or_default` as a seed: `null` reads as the zero value, as Go's decoder does.
pub(crate) struct OrDefault<T>(pub PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> DeserializeSeed<'de> for OrDefault<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        or_default(deserializer)
    }
}
