//! Kubernetes label and field selectors, evaluated against in-memory objects.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector (`a=b,c!=d,e in (f,g),h notin (i),j,!k`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// Splits on commas that are not inside parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&s[start..]);
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_error(selector: &str, term: &str) -> String {
    format!("unable to parse requirement: invalid selector term {term:?} in {selector:?}")
}

fn checked_key<'a>(key: &'a str, selector: &str, term: &str) -> Result<&'a str, String> {
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(parse_error(selector, term));
    }
    Ok(key)
}

impl LabelSelector {
    /// Parses the string form; an empty selector matches everything.
    pub fn parse(selector: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for term in split_terms(selector) {
            let requirement = if let Some(open) = term.find('(') {
                let close = term
                    .rfind(')')
                    .filter(|&c| c > open && term[c + 1..].trim().is_empty())
                    .ok_or_else(|| parse_error(selector, term))?;
                let values: Vec<String> = term[open + 1..close]
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .collect();
                let head: Vec<&str> = term[..open].split_whitespace().collect();
                match head.as_slice() {
                    [key, "in"] => Requirement::In((*key).to_string(), values),
                    [key, "notin"] => Requirement::NotIn((*key).to_string(), values),
                    _ => return Err(parse_error(selector, term)),
                }
            } else if let Some(key) = term.strip_prefix('!') {
                Requirement::DoesNotExist(checked_key(key, selector, term)?.to_string())
            } else if let Some((key, value)) = term.split_once("!=") {
                Requirement::NotEquals(
                    checked_key(key, selector, term)?.to_string(),
                    value.trim().to_string(),
                )
            } else if let Some((key, value)) = term.split_once("==").or(term.split_once('=')) {
                Requirement::Equals(
                    checked_key(key, selector, term)?.to_string(),
                    value.trim().to_string(),
                )
            } else {
                Requirement::Exists(checked_key(term, selector, term)?.to_string())
            };
            requirements.push(requirement);
        }
        Ok(Self { requirements })
    }

    /// True when every requirement holds for the object's `metadata.labels`.
    pub fn matches(&self, object: &Value) -> bool {
        let empty = Map::new();
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let label = |key: &str| labels.get(key).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        })
    }
}

/// A parsed field selector (`metadata.name=x,metadata.namespace!=y`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<(Vec<String>, bool, String)>,
}

impl FieldSelector {
    /// Parses the string form; an empty selector matches everything.
    pub fn parse(selector: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for term in split_terms(selector) {
            let (path, equal, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once("==").or(term.split_once('=')) {
                (p, true, v)
            } else {
                return Err(format!(
                    "invalid field selector: {term:?} is not of the form field=value or field!=value"
                ));
            };
            let path = checked_key(path, selector, term)?;
            requirements.push((
                path.split('.').map(str::to_string).collect(),
                equal,
                value.trim().to_string(),
            ));
        }
        Ok(Self { requirements })
    }

    /// True when every `field=value` / `field!=value` holds (a missing field reads as "").
    pub fn matches(&self, object: &Value) -> bool {
        self.requirements.iter().all(|(path, equal, value)| {
            let found = path
                .iter()
                .try_fold(object, |v, key| v.get(key))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            (found == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Value {
        json!({"metadata": {"name": "a", "namespace": "team", "labels": {"env": "prod", "tier": "web"}}})
    }

    #[test]
    fn label_selector_forms() {
        let o = obj();
        for (selector, expected) in [
            ("", true),
            ("env=prod", true),
            ("env==prod,tier=web", true),
            ("env!=prod", false),
            ("env in (dev, prod)", true),
            ("env notin (prod)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("missing notin (x)", true),
        ] {
            assert_eq!(
                LabelSelector::parse(selector).map(|s| s.matches(&o)),
                Ok(expected),
                "{selector}"
            );
        }
        assert!(LabelSelector::parse("env in (a").is_err());
        assert!(LabelSelector::parse("bad key=x").is_err());
    }

    #[test]
    fn field_selector_forms() {
        let o = obj();
        let check = |s: &str| FieldSelector::parse(s).map(|f| f.matches(&o));
        assert_eq!(check("metadata.name=a"), Ok(true));
        assert_eq!(check("metadata.namespace!=team"), Ok(false));
        assert_eq!(check("metadata.name==b"), Ok(false));
        assert!(check("metadata.name").is_err());
    }
}
