//! Label selectors in the string syntax of `labelSelector=`.

use serde_json::Value;

use crate::error::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq(String),
    NotEq(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    NotExists,
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, Clone, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {
    reqs: Vec<Requirement>,
}

fn bad(sel: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "unable to parse requirement: {why} (selector \"{sel}\")"
    ))
}

/// Splits at commas that are not inside parentheses.
fn split_top(sel: &str) -> Result<Vec<&str>, ApiError> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in sel.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(bad(sel, "unbalanced parenthesis"));
                }
            }
            ',' if depth == 0 => {
                parts.push(&sel[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(bad(sel, "unbalanced parenthesis"));
    }
    parts.push(&sel[start..]);
    Ok(parts)
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(v: &str) -> bool {
    v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn parse_set(sel: &str, rest: &str) -> Result<Vec<String>, ApiError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad(sel, "found '(' expected: set of values in parentheses"))?;
    let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(|v| !valid_value(v)) {
        return Err(bad(sel, "invalid label value"));
    }
    Ok(values)
}

fn parse_req(sel: &str, part: &str) -> Result<Requirement, ApiError> {
    let part = part.trim();
    if let Some(key) = part.strip_prefix('!') {
        let key = key.trim();
        if !valid_key(key) {
            return Err(bad(sel, "invalid label key"));
        }
        return Ok(Requirement {
            key: key.to_string(),
            op: Op::NotExists,
        });
    }
    for (token, make) in [("==", 0u8), ("!=", 1), ("=", 2), (">", 3), ("<", 4)] {
        if let Some((k, v)) = part.split_once(token) {
            let key = k.trim();
            let value = v.trim();
            if !valid_key(key) {
                return Err(bad(sel, "invalid label key"));
            }
            let op = match make {
                0 | 2 => Op::Eq(value.to_string()),
                1 => Op::NotEq(value.to_string()),
                n => {
                    let num: i64 = value.parse().map_err(|_| {
                        bad(
                            sel,
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        )
                    })?;
                    if n == 3 { Op::Gt(num) } else { Op::Lt(num) }
                }
            };
            if let Op::Eq(v) | Op::NotEq(v) = &op
                && !valid_value(v)
            {
                return Err(bad(sel, "invalid label value"));
            }
            return Ok(Requirement {
                key: key.to_string(),
                op,
            });
        }
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or("").trim();
    let rest = words.next().unwrap_or("").trim();
    if !valid_key(key) {
        return Err(bad(sel, "invalid label key"));
    }
    if rest.is_empty() {
        return Ok(Requirement {
            key: key.to_string(),
            op: Op::Exists,
        });
    }
    if let Some(r) = rest.strip_prefix("notin") {
        return Ok(Requirement {
            key: key.to_string(),
            op: Op::NotIn(parse_set(sel, r)?),
        });
    }
    if let Some(r) = rest.strip_prefix("in") {
        return Ok(Requirement {
            key: key.to_string(),
            op: Op::In(parse_set(sel, r)?),
        });
    }
    Err(bad(sel, "found unexpected operator"))
}

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (f,g),!h,i`.
    pub fn parse(sel: &str) -> Result<LabelSelector, ApiError> {
        if sel.trim().is_empty() {
            return Ok(LabelSelector::default());
        }
        let reqs = split_top(sel)?
            .into_iter()
            .map(|p| parse_req(sel, p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LabelSelector { reqs })
    }

    /// A `metav1.LabelSelector` object (`matchLabels` and `matchExpressions`), as
    /// `LabelSelectorAsSelector` reads it; `{}` matches everything.
    pub fn from_api(sel: &Value) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                let v = v
                    .as_str()
                    .ok_or_else(|| format!("label value of {k:?} is not a string"))?;
                reqs.push(Requirement {
                    key: k.clone(),
                    op: Op::Eq(v.to_string()),
                });
            }
        }
        for e in sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = e
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let values: Vec<String> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            let operator = e.get("operator").and_then(Value::as_str).unwrap_or("");
            let op = match operator {
                "In" | "NotIn" if values.is_empty() => {
                    return Err("for 'in', 'notin' operators, values set can't be empty".into());
                }
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Err("values set must be empty for exists and does not exist".into());
                }
                "In" => Op::In(values),
                "NotIn" => Op::NotIn(values),
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::NotExists,
                other => return Err(format!("{other:?} is not a valid label selector operator")),
            };
            reqs.push(Requirement { key, op });
        }
        Ok(LabelSelector { reqs })
    }

    /// Whether a `metadata.labels` object matches.
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        self.reqs.iter().all(|r| {
            let v = labels.and_then(|l| l.get(&r.key)).and_then(Value::as_str);
            match (&r.op, v) {
                (Op::Eq(want), Some(v)) => v == want,
                (Op::Eq(_), None) => false,
                (Op::NotEq(want), v) => v != Some(want.as_str()),
                (Op::In(set), Some(v)) => set.iter().any(|s| s == v),
                (Op::In(_), None) => false,
                (Op::NotIn(set), v) => v.is_none_or(|v| !set.iter().any(|s| s == v)),
                (Op::Exists, v) => v.is_some(),
                (Op::NotExists, v) => v.is_none(),
                (Op::Gt(n), Some(v)) => v.parse::<i64>().is_ok_and(|x| x > *n),
                (Op::Lt(n), Some(v)) => v.parse::<i64>().is_ok_and(|x| x < *n),
                (Op::Gt(_) | Op::Lt(_), None) => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(sel: &str, labels: Value) -> bool {
        LabelSelector::parse(sel)
            .map(|s| s.matches(Some(&labels)))
            .unwrap_or(false)
    }

    #[test]
    fn operators() {
        let l = json!({"app": "web", "tier": "front", "n": "5"});
        assert!(m("app=web", l.clone()));
        assert!(m("app==web,tier", l.clone()));
        assert!(!m("app!=web", l.clone()));
        assert!(m("app in (web, db),tier notin (back)", l.clone()));
        assert!(!m("app notin (web)", l.clone()));
        assert!(m("!missing", l.clone()));
        assert!(!m("!app", l.clone()));
        assert!(m("n>4,n<6", l.clone()));
        assert!(m("", l));
        assert!(LabelSelector::parse("app in (a").is_err());
        assert!(LabelSelector::parse("app=a b").is_err());
    }
}
