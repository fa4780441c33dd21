//! One release, one version: Cargo.toml's workspace version, policy/metadata.yml,
//! artifacthub-pkg.yml and the manifests agree, and artifacthub-pkg.yml says what
//! `kwctl scaffold artifacthub` would derive from metadata.yml.

mod deploy_support;

use deploy_support::kubewarden::{ClusterAdmissionPolicy, ContextAwareResource};
use deploy_support::{
    deploy_dir, metadata_yml, read_yaml, repo_root, typed, workspace_version, yaml_documents,
};
use serde_json::{Value, json};

fn artifacthub() -> Value {
    read_yaml(&repo_root().join("artifacthub-pkg.yml"))
        .pop()
        .expect("a document")
}

fn annotation<'a>(metadata: &'a Value, key: &str) -> &'a str {
    metadata["annotations"][key]
        .as_str()
        .unwrap_or_else(|| panic!("metadata.yml lacks {key}"))
}

fn csv(text: &str) -> Vec<Value> {
    text.split(',').map(|s| json!(s.trim())).collect()
}

/// A YAML string annotation of artifacthub-pkg.yml, parsed.
fn yaml_annotation(pkg: &Value, key: &str) -> Value {
    let text = pkg["annotations"][key]
        .as_str()
        .unwrap_or_else(|| panic!("artifacthub-pkg.yml lacks {key}"));
    yaml_documents(text).unwrap().pop().unwrap()
}

#[test]
fn versions_agree() {
    let version = workspace_version();
    let metadata = metadata_yml();
    assert_eq!(
        annotation(&metadata, "io.kubewarden.policy.version"),
        version
    );
    assert_eq!(
        annotation(&metadata, "com.github.release.tag"),
        format!("v{version}")
    );
    assert_eq!(artifacthub()["version"], json!(version));
    // Every image/module reference written in deploy/, not only the rendered ones.
    let reference = regex_like_references();
    assert!(!reference.is_empty());
    for (file, found) in reference {
        assert!(found.ends_with(&format!(":v{version}")), "{file}: {found}");
    }
}

/// `ghcr.io/sidecarset-kubewarden/...:TAG` occurrences and `newTag:` values under deploy/.
fn regex_like_references() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for path in deploy_support::yaml_files(&deploy_dir()) {
        let text = std::fs::read_to_string(&path).unwrap();
        for word in text.split_whitespace() {
            let word = word.trim_matches(|c| matches!(c, '"' | '\'' | '`'));
            if word.contains("ghcr.io/sidecarset-kubewarden/")
                && word
                    .rsplit('/')
                    .next()
                    .is_some_and(|last| last.contains(':'))
            {
                out.push((path.display().to_string(), word.to_string()));
            }
        }
        for line in text.lines() {
            if let Some(tag) = line.trim().strip_prefix("newTag:") {
                out.push((path.display().to_string(), format!(":{}", tag.trim())));
            }
        }
    }
    out
}

#[test]
fn artifacthub_package_is_derived_from_metadata() {
    let metadata = metadata_yml();
    let pkg = artifacthub();
    let version = annotation(&metadata, "io.kubewarden.policy.version");
    let oci = annotation(&metadata, "io.kubewarden.policy.ociUrl");
    let source = annotation(&metadata, "io.kubewarden.policy.source");
    assert_eq!(
        pkg["name"],
        json!(annotation(&metadata, "io.kubewarden.policy.title"))
    );
    assert_eq!(
        pkg["displayName"],
        json!(annotation(&metadata, "io.artifacthub.displayName"))
    );
    assert_eq!(
        pkg["description"],
        json!(annotation(&metadata, "io.kubewarden.policy.description"))
    );
    assert_eq!(
        pkg["license"],
        json!(annotation(&metadata, "io.kubewarden.policy.license"))
    );
    assert_eq!(
        pkg["homeURL"],
        json!(annotation(&metadata, "io.kubewarden.policy.url"))
    );
    assert_eq!(
        pkg["keywords"],
        Value::Array(csv(annotation(&metadata, "io.artifacthub.keywords")))
    );
    assert_eq!(
        pkg["containersImages"],
        json!([{"name": "policy", "image": format!("{oci}:v{version}")}])
    );
    assert_eq!(
        pkg["links"],
        json!([
            {"name": "policy", "url": format!("{source}/releases/download/v{version}/policy.wasm")},
            {"name": "source", "url": source}
        ])
    );
    let created = pkg["createdAt"].as_str().expect("createdAt");
    assert!(
        created.len() == 20 && created.ends_with('Z') && created.as_bytes()[10] == b'T',
        "RFC 3339: {created}"
    );
    let install = pkg["install"].as_str().expect("install");
    assert!(install.contains(&format!("kwctl pull {oci}:v{version}")));
    assert!(install.contains(&format!("kwctl scaffold manifest -t ClusterAdmissionPolicy --allow-context-aware registry://{oci}:v{version}")));
    let (name, email) = annotation(&metadata, "io.kubewarden.policy.author")
        .trim_end_matches('>')
        .split_once(" <")
        .unwrap();
    assert_eq!(pkg["maintainers"], json!([{"name": name, "email": email}]));
    assert_eq!(pkg["provider"], json!({"name": "kubewarden"}));
    assert_eq!(
        pkg["recommendations"][0]["url"],
        json!("https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller")
    );

    let annotations = &pkg["annotations"];
    assert_eq!(
        annotations["kubewarden/mutation"],
        json!(metadata["mutating"].as_bool().unwrap().to_string())
    );
    assert_eq!(
        annotations["kubewarden/resources"],
        json!(annotation(&metadata, "io.artifacthub.resources"))
    );
    assert_eq!(yaml_annotation(&pkg, "kubewarden/rules"), metadata["rules"]);
    assert_eq!(
        yaml_annotation(&pkg, "kubewarden/contextAwareResources"),
        metadata["contextAwareResources"]
    );
}

#[test]
fn kubewarden_policies_follow_metadata() {
    let metadata = metadata_yml();
    let version = annotation(&metadata, "io.kubewarden.policy.version");
    let module = format!(
        "registry://{}:v{version}",
        annotation(&metadata, "io.kubewarden.policy.ociUrl")
    );
    let declared: Vec<ContextAwareResource> =
        serde_json::from_value(metadata["contextAwareResources"].clone()).unwrap();
    let rules: Vec<Value> = metadata["rules"].as_array().unwrap().clone();
    let mut covered = Vec::new();
    for file in [
        "kubewarden/pod-injection.yaml",
        "kubewarden/sidecarset-validation.yaml",
    ] {
        let policy: ClusterAdmissionPolicy =
            typed::decode(&read_yaml(&deploy_dir().join(file))[0]).unwrap();
        assert_eq!(policy.spec.module, module, "{file}");
        assert_eq!(
            Some(policy.spec.mutating),
            metadata["mutating"].as_bool(),
            "{file}"
        );
        assert_eq!(
            policy.spec.background_audit,
            metadata["backgroundAudit"].as_bool(),
            "{file}"
        );
        // Never more context than the module declares (the policy-server would refuse it).
        for resource in policy.spec.context_aware_resources.iter().flatten() {
            assert!(
                declared.contains(resource),
                "{file}: {resource:?} not in metadata.yml"
            );
        }
        for rule in &policy.spec.rules {
            let rule = serde_json::to_value(rule).unwrap();
            assert!(
                rules.contains(&rule),
                "{file}: rule {rule} not in metadata.yml"
            );
            covered.push(rule);
        }
        let severity = policy
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("io.kubewarden.policy.severity"));
        assert_eq!(
            severity.map(String::as_str),
            Some(annotation(&metadata, "io.kubewarden.policy.severity"))
        );
    }
    for rule in &rules {
        assert!(covered.contains(rule), "metadata rule {rule} has no policy");
    }
}
