//! Label and field selectors, parsed from the query string of list and watch requests.

mod field;
mod label;

pub use field::FieldSelector;
pub use label::LabelSelector;

use serde_json::Value;

use crate::error::ApiError;
use crate::resources::ResourceDef;

/// The label and field selectors of one request.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// The namespace of the request (`None` for all namespaces).
    pub namespace: Option<String>,
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
}

impl Filter {
    /// Parses the selectors of a request for `def`.
    pub fn parse(
        def: &ResourceDef,
        namespace: Option<String>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Filter, ApiError> {
        Ok(Filter {
            namespace,
            labels: LabelSelector::parse(label_selector.unwrap_or(""))?,
            fields: FieldSelector::parse(def, field_selector.unwrap_or(""))?,
        })
    }

    /// Whether an object (in its stored form) passes the filter.
    pub fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && crate::meta::namespace(obj) != ns
        {
            return false;
        }
        let labels = obj.get("metadata").and_then(|m| m.get("labels"));
        self.labels.matches(labels) && self.fields.matches(obj)
    }
}
