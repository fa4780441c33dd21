//! A small checker for structural OpenAPI v3 schemas, with the API server's semantics for the
//! keywords the SidecarSet CRD uses: type, properties, additionalProperties, required, items,
//! enum, x-kubernetes-int-or-string and x-kubernetes-preserve-unknown-fields. Unknown fields
//! are pruned (accepted), not rejected, and a `null` reads as absent, as for non-nullable
//! fields on the server.

use serde_json::Value;

/// Every violation of `schema` by `value`, as `path: message`.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, value, "", &mut errors);
    errors
}

fn check(schema: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    if value.is_null() {
        return;
    }
    let mut fail = |message: String| errors.push(format!("{}: {message}", display(path)));
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        fail(format!("{value} is not one of {allowed:?}"));
        return;
    }
    if flag(schema, "x-kubernetes-int-or-string") {
        if !(value.is_i64() || value.is_u64() || value.is_string()) {
            fail(format!("{value} is neither an integer nor a string"));
        }
        return;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => check_object(schema, value, path, errors),
        Some("array") => match value.as_array() {
            Some(items) => {
                let item_schema = schema.get("items").unwrap_or(&Value::Null);
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{path}[{i}]"), errors);
                }
            }
            None => fail(format!("{value} is not an array")),
        },
        Some("string") if !value.is_string() => fail(format!("{value} is not a string")),
        Some("boolean") if !value.is_boolean() => fail(format!("{value} is not a boolean")),
        Some("number") if !value.is_number() => fail(format!("{value} is not a number")),
        Some("integer") => check_integer(schema, value, &mut fail),
        // No type: only legal with preserve-unknown-fields (checked by `structural_errors`).
        _ => {}
    }
}

fn check_integer(schema: &Value, value: &Value, fail: &mut impl FnMut(String)) {
    let Some(number) = value.as_i64() else {
        return fail(format!("{value} is not an integer"));
    };
    let format = schema.get("format").and_then(Value::as_str);
    if format == Some("int32") && i32::try_from(number).is_err() {
        fail(format!("{number} does not fit in int32"));
    }
}

fn check_object(schema: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(object) = value.as_object() else {
        errors.push(format!("{}: {value} is not an object", display(path)));
        return;
    };
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = required.as_str().unwrap_or("");
        if object.get(key).is_none_or(Value::is_null) {
            errors.push(format!(
                "{}: required field {key:?} is missing",
                display(path)
            ));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    for (key, child) in object {
        let child_path = format!("{path}.{key}");
        if let Some(child_schema) = properties.and_then(|p| p.get(key)) {
            check(child_schema, child, &child_path, errors);
        } else if let Some(child_schema) = additional.filter(|a| a.is_object()) {
            check(child_schema, child, &child_path, errors);
        }
        // Otherwise pruned by the API server (or kept by preserve-unknown-fields): not an error.
    }
}

/// Where the schema is not structural: a node without `type` that is neither int-or-string
/// nor preserve-unknown-fields, or `anyOf` outside the int-or-string pattern.
pub fn structural_errors(schema: &Value, path: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let int_or_string = flag(schema, "x-kubernetes-int-or-string");
    if schema.get("type").is_none()
        && !int_or_string
        && !flag(schema, "x-kubernetes-preserve-unknown-fields")
    {
        errors.push(format!("{}: no type", display(path)));
    }
    if schema.get("anyOf").is_some() && !int_or_string {
        errors.push(format!(
            "{}: anyOf outside x-kubernetes-int-or-string",
            display(path)
        ));
    }
    for (key, child) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        errors.extend(structural_errors(child, &format!("{path}.{key}")));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = schema.get(key).filter(|c| c.is_object()) {
            errors.extend(structural_errors(child, &format!("{path}.{key}")));
        }
    }
    errors
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn display(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}
