//! The `imagePullPolicy` default of core/v1 `SetDefaults_Container`, which asks
//! `parsers.ParseImageName` (docker `reference.ParseNormalizedNamed`) for the image's tag.

use regex_lite::Regex;
use std::sync::OnceLock;

pub(super) const PULL_ALWAYS: &str = "Always";
pub(super) const PULL_IF_NOT_PRESENT: &str = "IfNotPresent";

/// `Always` when the image parses and its tag is `latest` or it has neither tag nor digest;
/// `IfNotPresent` otherwise (including an empty or unparsable image).
pub(super) fn default_pull_policy(image: &str) -> &'static str {
    match parse_tag_and_digest(image) {
        Some((tag, has_digest))
            if tag.as_deref() == Some("latest") || (tag.is_none() && !has_digest) =>
        {
            PULL_ALWAYS
        }
        _ => PULL_IF_NOT_PRESENT,
    }
}

/// The distribution/reference grammar, anchored: (name, tag?, digest?).
fn reference_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        let alphanumeric = "[a-z0-9]+";
        let separator = "(?:[._]|__|[-]+)";
        let path_component = format!("{alphanumeric}(?:{separator}{alphanumeric})*");
        let domain_component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
        let domain_name = format!(r"{domain_component}(?:\.{domain_component})*");
        let host = format!(r"(?:{domain_name}|\[(?:[a-fA-F0-9:]+)\])");
        let domain = format!("{host}(?::[0-9]+)?");
        let name = format!("(?:{domain}/)?{path_component}(?:/{path_component})*");
        let tag = r"[\w][\w.-]{0,127}";
        let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}";
        Regex::new(&format!("^({name})(?::({tag}))?(?:@({digest}))?$")).ok()
    })
    .as_ref()
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// go-digest `Digest.Validate` for the algorithms a Go binary links (sha256, sha384, sha512).
fn valid_digest(d: &str) -> bool {
    match d.split_once(':') {
        Some(("sha256", enc)) => is_lower_hex(enc, 64),
        Some(("sha384", enc)) => is_lower_hex(enc, 96),
        Some(("sha512", enc)) => is_lower_hex(enc, 128),
        _ => false,
    }
}

/// `reference.ParseNormalizedNamed` reduced to what the pull policy needs: `None` when the
/// image does not parse, else its tag and whether it has a digest.
fn parse_tag_and_digest(image: &str) -> Option<(Option<String>, bool)> {
    if is_lower_hex(image, 64) {
        return None;
    }
    let (domain, remainder) = split_docker_domain(image);
    let remote_name = remainder.split(':').next().unwrap_or_default();
    if remote_name.to_lowercase() != remote_name {
        return None;
    }
    let full = format!("{domain}/{remainder}");
    let caps = reference_regex()?.captures(&full)?;
    if caps.get(1).map_or(0, |m| m.as_str().len()) > 255 {
        return None;
    }
    let digest = caps.get(3).map(|m| m.as_str());
    if digest.is_some_and(|d| !valid_digest(d)) {
        return None;
    }
    Some((
        caps.get(2).map(|m| m.as_str().to_string()),
        digest.is_some(),
    ))
}

fn split_docker_domain(name: &str) -> (String, String) {
    let (mut domain, mut remainder) = match name.find('/') {
        Some(i)
            if name[..i].contains(['.', ':'])
                || &name[..i] == "localhost"
                || name[..i].to_lowercase() != name[..i] =>
        {
            (name[..i].to_string(), name[i + 1..].to_string())
        }
        _ => ("docker.io".to_string(), name.to_string()),
    };
    if domain == "index.docker.io" {
        domain = "docker.io".to_string();
    }
    if domain == "docker.io" && !remainder.contains('/') {
        remainder = format!("library/{remainder}");
    }
    (domain, remainder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        let cases = [
            ("busybox", PULL_ALWAYS),
            ("busybox:latest", PULL_ALWAYS),
            ("busybox:1.36", PULL_IF_NOT_PRESENT),
            ("dns:1.0", PULL_IF_NOT_PRESENT),
            ("docker.io/library/nginx", PULL_ALWAYS),
            ("registry.example.com:5000/team/app", PULL_ALWAYS),
            ("registry.example.com:5000/team/app:v2", PULL_IF_NOT_PRESENT),
            ("localhost/app:latest", PULL_ALWAYS),
            ("fluent/fluent-bit:3.0.4", PULL_IF_NOT_PRESENT),
            (
                "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                PULL_IF_NOT_PRESENT,
            ),
            (
                "nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                PULL_ALWAYS,
            ),
            // Invalid digest: unparsable, so IfNotPresent even with tag latest.
            ("nginx:latest@sha256:abc", PULL_IF_NOT_PRESENT),
            ("", PULL_IF_NOT_PRESENT),
            ("Busybox", PULL_IF_NOT_PRESENT),
            ("busy box", PULL_IF_NOT_PRESENT),
            (
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                PULL_IF_NOT_PRESENT,
            ),
            ("MyRegistry/app", PULL_ALWAYS),
            ("[::1]:5000/app:latest", PULL_ALWAYS),
            ("app:", PULL_IF_NOT_PRESENT),
            ("é", PULL_IF_NOT_PRESENT),
        ];
        for (image, want) in cases {
            assert_eq!(default_pull_policy(image), want, "image {image:?}");
        }
    }
}
