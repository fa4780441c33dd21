//! `registry://HOST[:PORT]/REPO[:TAG][@DIGEST]` references.

use super::OciError;

/// A parsed policy reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// `org/name`.
    pub repository: String,
    /// Tag (default `latest` when there is no digest).
    pub tag: Option<String>,
    /// `sha256:…`.
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `registry://…` (the scheme is optional).
    pub fn parse(text: &str) -> Result<Self, OciError> {
        let invalid = |why: &str| OciError::Reference(format!("{text}: {why}"));
        let rest = text.strip_prefix("registry://").unwrap_or(text);
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| invalid("expected registry://HOST/REPOSITORY[:TAG]"))?;
        if registry.is_empty() {
            return Err(invalid("no registry host"));
        }
        let (path, digest) = match path.split_once('@') {
            Some((path, digest)) => (path, Some(digest.to_string())),
            None => (path, None),
        };
        if let Some(digest) = &digest {
            let hex = digest
                .strip_prefix("sha256:")
                .ok_or_else(|| invalid("only sha256 digests are supported"))?;
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid("malformed digest"));
            }
        }
        // A tag follows the last ':' of the last path component.
        let last = path.rsplit('/').next().unwrap_or(path);
        let (repository, tag) = match last.rsplit_once(':') {
            Some((_, tag)) => (&path[..path.len() - tag.len() - 1], Some(tag.to_string())),
            None => (path, None),
        };
        let valid_component = |c: &str| {
            !c.is_empty()
                && c.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        };
        if !repository.split('/').all(valid_component) {
            return Err(invalid(
                "repository names are lower-case [a-z0-9._-] components",
            ));
        }
        if let Some(tag) = &tag {
            let ok = !tag.is_empty()
                && tag.len() <= 128
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !ok {
                return Err(invalid("malformed tag"));
            }
        }
        let tag = match (&tag, &digest) {
            (None, None) => Some("latest".to_string()),
            _ => tag,
        };
        Ok(Self {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// True for loopback registries, which are spoken to over plain HTTP.
    pub fn is_local(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(v6),
            None => self.registry.split(':').next().unwrap_or(&self.registry),
        };
        host == "localhost" || host == "::1" || host.starts_with("127.")
    }

    /// The digest if any, else the tag: what to ask the registry for.
    pub fn manifest_reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// `registry://host/repo:tag` (without the digest).
    pub fn without_digest(&self) -> String {
        match &self.tag {
            Some(tag) => format!("registry://{}/{}:{tag}", self.registry, self.repository),
            None => format!("registry://{}/{}", self.registry, self.repository),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let r = Reference::parse("registry://127.0.0.1:5000/policies/sidecarset:v0.1.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "policies/sidecarset");
        assert_eq!(r.tag.as_deref(), Some("v0.1.0"));
        assert!(r.is_local());
        let r = Reference::parse("registry://ghcr.io/org/policy").unwrap();
        assert_eq!(r.tag.as_deref(), Some("latest"));
        assert!(!r.is_local());
        let digest = format!("sha256:{}", "a".repeat(64));
        let r = Reference::parse(&format!("registry://localhost:1/p@{digest}")).unwrap();
        assert_eq!(r.manifest_reference(), digest);
        assert!(r.is_local());
        for bad in [
            "registry://nohost",
            "registry:///x",
            "registry://h/UPPER",
            "registry://h/x:bad tag",
            "registry://h/x@md5:00",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
    }
}
