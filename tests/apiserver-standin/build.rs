//! Generates the protobuf schema of the Kubernetes types: field tags and wire types from the
//! k8s-pb sources (prost's generated structs), JSON names from the k8s-openapi sources (its serde
//! field tables). Nothing of either crate is linked: their sources are the schema, read so that the
//! decoder needs no vendored .proto files and follows the crates' versions in Cargo.lock.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

/// The k8s-openapi feature the workspace enables (the JSON names of that Kubernetes release).
const OPENAPI_RELEASE: &str = "v1_33";

struct FieldDef {
    tag: u32,
    json: String,
    /// `String`, `Bytes`, `Bool`, `Int32`, `Int64`, `Double`, or a message path.
    kind: Kind,
    repeated: bool,
}

enum Kind {
    Scalar(&'static str),
    Message(String),
    Map(Box<Kind>),
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let lock = find_up(&manifest, "Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let lock_text = fs::read_to_string(&lock).expect("read Cargo.lock");
    let pb = crate_source(&lock_text, "k8s-pb").join("src");
    let openapi = crate_source(&lock_text, "k8s-openapi")
        .join("src")
        .join(OPENAPI_RELEASE);

    let names = json_names(&openapi);
    let mut messages: BTreeMap<String, Vec<FieldDef>> = BTreeMap::new();
    let mut kinds: Vec<(String, String, String)> = Vec::new();
    for file in rust_files(&pb) {
        let rel = file
            .parent()
            .and_then(|p| p.strip_prefix(&pb).ok())
            .map(|p| p.to_string_lossy().replace('/', "::"))
            .unwrap_or_default();
        let text = fs::read_to_string(&file).expect("read k8s-pb source");
        parse_messages(&rel, &text, &names, &mut messages);
        parse_resources(&rel, &text, &mut kinds);
    }
    let out = render(&messages, &kinds);
    let dest = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("protobuf_schema.rs");
    fs::write(dest, out).expect("write schema");
}

fn find_up(start: &Path, name: &str) -> PathBuf {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if d.join(name).is_file() {
            return d.join(name);
        }
        dir = d.parent();
    }
    panic!("no {name} above {}", start.display());
}

/// The unpacked registry source of a locked package.
fn crate_source(lock: &str, package: &str) -> PathBuf {
    let needle = format!("name = \"{package}\"\nversion = \"");
    let version = lock
        .find(&needle)
        .map(|i| &lock[i + needle.len()..])
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{package} is not in Cargo.lock"));
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registries = home.join("registry").join("src");
    let dir_name = format!("{package}-{version}");
    fs::read_dir(&registries)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(&dir_name))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| {
            panic!(
                "the sources of {dir_name} are not under {} (run `cargo fetch`)",
                registries.display()
            )
        })
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `host_ipc` → `hostipc`: the spelling both crates' snake names share.
fn normalize(snake: &str) -> String {
    snake
        .trim_start_matches("r#")
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_lowercase()
}

/// k8s-openapi's `"hostIPC" => Field::Key_host_ipc` lines: (module, struct, normalized) → JSON.
fn json_names(root: &Path) -> HashMap<(String, String, String), String> {
    let mut map = HashMap::new();
    for file in rust_files(root) {
        let module = file
            .parent()
            .and_then(|p| p.strip_prefix(root).ok())
            .map(|p| p.to_string_lossy().replace('/', "::"))
            .unwrap_or_default();
        let text = fs::read_to_string(&file).expect("read k8s-openapi source");
        let mut current = String::new();
        for line in text.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("pub struct ") {
                current = rest
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .next()
                    .unwrap_or("")
                    .to_string();
            }
            if let Some((json, key)) = t.split_once("\" => Field::Key_")
                && let Some(json) = json.strip_prefix('"')
            {
                let key = key.trim_end_matches(',');
                map.insert(
                    (module.clone(), current.clone(), normalize(key)),
                    json.to_string(),
                );
            }
        }
    }
    map
}

fn lower_camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.trim_start_matches("r#").chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Resolves a Rust type path written in `module` to a message path `a::b::Name`.
fn resolve(module: &str, ty: &str) -> String {
    let mut segments: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    let mut parts: Vec<&str> = ty.split("::").filter(|s| !s.is_empty()).collect();
    if parts.first() == Some(&"crate") {
        segments.clear();
        parts.remove(0);
    }
    while parts.first() == Some(&"super") {
        segments.pop();
        parts.remove(0);
    }
    segments.extend(parts);
    segments.join("::")
}

/// The message type inside `Option<…>`, `Vec<…>`, `Box<…>` or a map's value.
fn inner_type(ty: &str) -> String {
    let compact: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    // rustfmt leaves a trailing comma in generics split over lines.
    let compact = compact.replace(",>", ">");
    let mut t = compact.as_str();
    while let Some(open) = t.find('<') {
        let head = &t[..open];
        let body = &t[open + 1..t.len() - 1];
        t = if head.ends_with("BTreeMap") {
            body.split_once(',').map(|(_, v)| v).unwrap_or(body)
        } else {
            body
        };
    }
    t.to_string()
}

fn scalar(name: &str) -> Option<&'static str> {
    Some(match name {
        "string" => "String",
        "bytes" => "Bytes",
        "bool" => "Bool",
        "int32" => "Int32",
        "int64" => "Int64",
        "double" => "Double",
        _ => return None,
    })
}

fn parse_messages(
    module: &str,
    text: &str,
    names: &HashMap<(String, String, String), String>,
    out: &mut BTreeMap<String, Vec<FieldDef>>,
) {
    let code: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .collect();
    let joined = code.join("\n");
    let mut rest = joined.as_str();
    while let Some(start) = rest.find("::prost::Message)]\npub struct ") {
        rest = &rest[start + "::prost::Message)]\npub struct ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let end = if rest[name.len()..].starts_with(" {}") {
            name.len()
        } else {
            rest.find("\n}").unwrap_or(rest.len())
        };
        let body = &rest[..end];
        let fields = parse_fields(module, &name, body, names);
        out.insert(format!("{module}::{name}"), fields);
        rest = &rest[end..];
    }
}

fn parse_fields(
    module: &str,
    message: &str,
    body: &str,
    names: &HashMap<(String, String, String), String>,
) -> Vec<FieldDef> {
    let mut fields = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("#[prost(") {
        rest = &rest[start + "#[prost(".len()..];
        let Some(close) = rest.find(")]") else { break };
        let attr = &rest[..close];
        rest = &rest[close + 2..];
        let decl = rest.trim_start().trim_start_matches("pub ");
        let Some((field, after)) = decl.split_once(':') else {
            break;
        };
        let mut depth = 0i32;
        let ty_end = after
            .char_indices()
            .find(|(_, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                *c == ',' && depth == 0
            })
            .map_or(after.len(), |(i, _)| i);
        let ty = &after[..ty_end];
        let field = field.trim();
        let tag: u32 = attr
            .split("tag = \"")
            .nth(1)
            .and_then(|t| t.split('"').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no tag in {module}::{message}.{field}"));
        let first = attr.split(',').next().unwrap_or("").trim();
        let repeated = attr.contains("repeated");
        let kind = if let Some(map) = attr.strip_prefix("btree_map = \"") {
            let value = map
                .split('"')
                .next()
                .and_then(|kv| kv.split(", ").nth(1))
                .unwrap_or("");
            Kind::Map(Box::new(match scalar(value) {
                Some(s) => Kind::Scalar(s),
                None => Kind::Message(resolve(module, &inner_type(ty))),
            }))
        } else if first == "message" {
            Kind::Message(resolve(module, &inner_type(ty)))
        } else {
            let name = first.split(' ').next().unwrap_or(first);
            Kind::Scalar(
                scalar(name).unwrap_or_else(|| panic!("unknown prost type {first} in {message}")),
            )
        };
        let json = names
            .get(&(module.to_string(), message.to_string(), normalize(field)))
            .cloned()
            .unwrap_or_else(|| match (message, field) {
                // k8s-openapi names these `ref_path` and `schema`, with JSON names `$ref`/`$schema`.
                ("JsonSchemaProps", "r#ref") => "$ref".to_string(),
                ("JsonSchemaProps", "schema") => "$schema".to_string(),
                _ => lower_camel(field),
            });
        fields.push(FieldDef {
            tag,
            json,
            kind,
            repeated,
        });
        rest = &after[ty_end..];
    }
    fields.sort_by_key(|f| f.tag);
    fields
}

/// `impl crate::Resource for X { const API_VERSION = "…"; … const KIND = "…"; }`.
fn parse_resources(module: &str, text: &str, out: &mut Vec<(String, String, String)>) {
    let mut rest = text;
    while let Some(start) = rest.find("impl crate::Resource for ") {
        rest = &rest[start + "impl crate::Resource for ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let const_str = |key: &str| {
            rest.split(&format!("const {key}: &'static str = \""))
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        out.push((
            const_str("API_VERSION"),
            const_str("KIND"),
            format!("{module}::{name}"),
        ));
    }
}

fn kind_code(kind: &Kind, index: &HashMap<&str, usize>) -> String {
    match kind {
        Kind::Scalar(s) => format!("Kind::{s}"),
        Kind::Message(path) => match index.get(path.as_str()) {
            Some(i) => format!("Kind::Message({i})"),
            None => panic!("message {path} is not generated"),
        },
        Kind::Map(value) => format!("Kind::Map(&{})", kind_code(value, index)),
    }
}

fn render(
    messages: &BTreeMap<String, Vec<FieldDef>>,
    kinds: &[(String, String, String)],
) -> String {
    let index: HashMap<&str, usize> = messages
        .keys()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut out =
        String::from("// Generated by build.rs from the k8s-pb and k8s-openapi sources.\n");
    out.push_str("pub static MESSAGES: &[Message] = &[\n");
    for (path, fields) in messages {
        let _ = write!(out, "    Message {{ path: {path:?}, fields: &[");
        for f in fields {
            let _ = write!(
                out,
                "Field {{ tag: {}, json: {:?}, kind: {}, repeated: {} }}, ",
                f.tag,
                f.json,
                kind_code(&f.kind, &index),
                f.repeated
            );
        }
        out.push_str("] },\n");
    }
    out.push_str("];\n\npub static KINDS: &[(&str, &str, usize)] = &[\n");
    let mut sorted: Vec<_> = kinds.iter().collect();
    sorted.sort();
    for (api_version, kind, path) in sorted {
        if let Some(i) = index.get(path.as_str()) {
            let _ = writeln!(out, "    ({api_version:?}, {kind:?}, {i}),");
        }
    }
    out.push_str("];\n");
    out
}
