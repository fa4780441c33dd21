//! Container image references as docker's (non-normalising) `reference.Parse` reads them: what
//! §5.6 state consistency compares, evaluated once per cached container.

/// An image reference split as docker's (non-normalising) `reference.Parse` does.
#[derive(Debug, PartialEq, Eq)]
struct ImageReference<'a> {
    repository: &'a str,
    tag: &'a str,
    digest: &'a str,
}

fn parse_image(image: &str) -> Option<ImageReference<'_>> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) if is_valid_digest(digest) => (name, digest),
        Some(_) => return None,
        None => (image, ""),
    };
    let (repository, tag) = match name.rfind(':') {
        Some(colon) if !name[colon..].contains('/') => (&name[..colon], &name[colon + 1..]),
        _ => (name, ""),
    };
    let tag_ok = tag.is_empty()
        || (tag.len() <= 128
            && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')));
    (!repository.is_empty() && tag_ok).then_some(ImageReference {
        repository,
        tag,
        digest,
    })
}

/// `algorithm:hex` with at least 32 hex digits (the reference grammar's digest).
fn is_valid_digest(digest: &str) -> bool {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return false;
    };
    algorithm.starts_with(|c: char| c.is_ascii_alphabetic())
        && algorithm
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.'))
        && encoded.len() >= 32
        && encoded.chars().all(|c| c.is_ascii_hexdigit())
}

/// util.IsImageDigest.
pub(crate) fn is_digest_image(image: &str) -> bool {
    parse_image(image).is_some_and(|r| !r.digest.is_empty())
}

/// util.IsContainerImageEqual: by digest when both have one, else by repository and tag.
pub(crate) fn images_equal(a: &str, b: &str) -> bool {
    let (Some(a), Some(b)) = (parse_image(a), parse_image(b)) else {
        return false;
    };
    if !a.digest.is_empty() && !b.digest.is_empty() {
        a.repository == b.repository && a.digest == b.digest
    } else {
        a.repository == b.repository && a.tag == b.tag
    }
}

/// Status imageIDs may carry a runtime scheme such as `docker-pullable://`.
pub(crate) fn strip_image_id_scheme(image_id: &str) -> &str {
    image_id
        .split_once("://")
        .map_or(image_id, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d";

    #[test]
    fn image_references() {
        assert_eq!(
            parse_image("registry:5000/team/app:v2"),
            Some(ImageReference {
                repository: "registry:5000/team/app",
                tag: "v2",
                digest: ""
            })
        );
        assert_eq!(
            parse_image("registry:5000/team/app").map(|r| r.tag),
            Some("")
        );
        assert!(is_digest_image(&format!("docker.io/busybox@{DIGEST}")));
        assert!(!is_digest_image("busybox:1.36"));
        assert!(!is_digest_image("busybox@sha256:abc"));
        assert!(parse_image("").is_none());
    }

    #[test]
    fn image_equality() {
        let with_digest = format!("docker.io/busybox@{DIGEST}");
        let tagged_digest = format!("docker.io/busybox:1.0@{DIGEST}");
        assert!(images_equal(&with_digest, &tagged_digest));
        assert!(images_equal("nginx:1.0", "nginx:1.0"));
        assert!(!images_equal("nginx:1.0", "nginx:2.0"));
        assert!(!images_equal(&with_digest, "busybox:latest"));
        assert_eq!(
            strip_image_id_scheme(&format!("docker-pullable://docker.io/busybox@{DIGEST}")),
            with_digest
        );
    }
}
