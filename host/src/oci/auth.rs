//! Registry credentials from the Docker config file, and `WWW-Authenticate` challenges.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::OciError;

/// A user name and password (or identity token) for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// `Authorization: Basic …` value.
    pub fn basic(&self) -> String {
        format!(
            "Basic {}",
            STANDARD.encode(format!("{}:{}", self.username, self.password))
        )
    }
}

#[derive(Debug, Default, Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
}

#[derive(Debug, Default, Deserialize)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
}

/// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
pub fn default_docker_config() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker/config.json"))
}

/// `https://host/v1/` → `host`.
fn registry_key(key: &str) -> &str {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

/// The credentials for `host` in the Docker config at `path`; a missing file means none.
pub fn credentials_for(path: &Path, host: &str) -> Result<Option<Credentials>, OciError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OciError::Config(format!("{}: {e}", path.display()))),
    };
    let config: DockerConfig = serde_json::from_str(&text)
        .map_err(|e| OciError::Config(format!("{}: {e}", path.display())))?;
    let wanted = if host == "docker.io" {
        "index.docker.io"
    } else {
        host
    };
    let Some(entry) = config
        .auths
        .iter()
        .find(|(key, _)| registry_key(key) == wanted)
        .map(|(_, entry)| entry)
    else {
        return Ok(None);
    };
    if let (Some(username), Some(password)) = (&entry.username, &entry.password) {
        return Ok(Some(Credentials {
            username: username.clone(),
            password: password.clone(),
        }));
    }
    let Some(auth) = &entry.auth else {
        return Ok(None);
    };
    let decoded = STANDARD
        .decode(auth.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| {
            OciError::Config(format!("{}: auth of {host} is not base64", path.display()))
        })?;
    let (username, password) = decoded.split_once(':').ok_or_else(|| {
        OciError::Config(format!(
            "{}: auth of {host} is not user:password",
            path.display()
        ))
    })?;
    Ok(Some(Credentials {
        username: username.into(),
        password: password.into(),
    }))
}

/// A parsed `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// `Basic realm=…`.
    Basic,
    /// `Bearer realm=…,service=…,scope=…`.
    Bearer(BTreeMap<String, String>),
}

/// Parses `Basic …` or `Bearer k="v",k2=v2`.
pub fn parse_challenge(header: &str) -> Option<Challenge> {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut params = BTreeMap::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.is_empty() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            value = chars.by_ref().take_while(|c| *c != ',').collect();
        }
        params.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    Some(Challenge::Bearer(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_are_parsed() {
        let challenge = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#,
        );
        let Some(Challenge::Bearer(params)) = challenge else {
            panic!("{challenge:?}")
        };
        assert_eq!(params["realm"], "https://auth.example/token");
        assert_eq!(params["service"], "registry.example");
        assert_eq!(params["scope"], "repository:a/b:pull,push");
        assert_eq!(parse_challenge("Basic realm=\"x\""), Some(Challenge::Basic));
        assert_eq!(parse_challenge("Negotiate"), None);
    }

    #[test]
    fn docker_config_entries() {
        let dir = std::env::temp_dir().join(format!("oci-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.json");
        std::fs::write(
            &path,
            r#"{"auths":{"https://ghcr.io":{"auth":"dXNlcjpwYXNz"},"127.0.0.1:5000":{"username":"u","password":"p"}}}"#,
        )
        .unwrap();
        let ghcr = credentials_for(&path, "ghcr.io").unwrap().unwrap();
        assert_eq!(
            (ghcr.username.as_str(), ghcr.password.as_str()),
            ("user", "pass")
        );
        assert_eq!(ghcr.basic(), "Basic dXNlcjpwYXNz");
        assert_eq!(
            credentials_for(&path, "127.0.0.1:5000")
                .unwrap()
                .unwrap()
                .username,
            "u"
        );
        assert_eq!(credentials_for(&path, "quay.io").unwrap(), None);
        assert_eq!(
            credentials_for(&dir.join("missing.json"), "x").unwrap(),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
