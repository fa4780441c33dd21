//! Kubewarden release numbers, compared on major.minor as kwctl and policy-server do.

use std::fmt;

/// A Kubewarden release; patch, pre-release and build are ignored by Kubewarden's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubewardenVersion {
    /// Major number.
    pub major: u64,
    /// Minor number.
    pub minor: u64,
}

/// The Kubewarden release this host matches: kwctl and policy-server 1.36 (kubewarden.md §0).
pub const KUBEWARDEN_VERSION: KubewardenVersion = KubewardenVersion {
    major: 1,
    minor: 36,
};

impl KubewardenVersion {
    /// major.minor of a semantic version (`1.16.0`, `1.16.0-rc.1+build`); `None` if it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let core = text.split(['-', '+']).next().unwrap_or_default();
        let mut parts = core.split('.').map(number);
        let (Some(Some(major)), Some(Some(minor)), Some(Some(_patch)), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        Some(Self { major, minor })
    }
}

/// A semver numeric identifier: digits, no leading zero.
fn number(part: &str) -> Option<u64> {
    let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits || (part.len() > 1 && part.starts_with('0')) {
        return None;
    }
    part.parse().ok()
}

impl fmt::Display for KubewardenVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.0", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_major_minor_of_semver() {
        let v = |major, minor| Some(KubewardenVersion { major, minor });
        assert_eq!(KubewardenVersion::parse("1.16.0"), v(1, 16));
        assert_eq!(KubewardenVersion::parse("1.16.3-rc.1+b.2"), v(1, 16));
        for bad in [
            "1.16", "1.16.0.1", "v1.16.0", "01.16.0", "1..0", "1.x.0", "",
        ] {
            assert_eq!(KubewardenVersion::parse(bad), None, "{bad}");
        }
        assert_eq!(KUBEWARDEN_VERSION.to_string(), "1.36.0");
    }
}
