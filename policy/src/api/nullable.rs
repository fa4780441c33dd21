//! Go's JSON decoder reads `null` as the zero value; serde's defaults reject it for non-Options.

use serde::{Deserialize, Deserializer};

/// Deserialize `T`, reading JSON `null` as `T::default()`.
pub(crate) fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
