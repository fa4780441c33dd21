//! k8s.io/api v0.32 core/v1 `Volume`: the name, then every member of the inlined `VolumeSource`
//! in Go declaration order (`projected` sits between `photonPersistentDisk` and
//! `portworxVolume` there). `LocalObjectReference` is flattened where Go embeds it
//! (`configMap` and the projections); as a named `secretRef` it is a struct of its own.

use super::claim::{LABEL_SELECTOR, PERSISTENT_VOLUME_CLAIM_TEMPLATE};
use super::{Field, OBJECT_FIELD_SELECTOR, RESOURCE_FIELD_SELECTOR, STRINGS, Ty, opt, ptr, req};

/// `LocalObjectReference` as a named field.
const LOCAL_OBJECT_REFERENCE: &[Field] = &[opt("name", Ty::Str)];
const SECRET_REF: Ty = Ty::Struct(LOCAL_OBJECT_REFERENCE);

const HOST_PATH: &[Field] = &[req("path", Ty::Str), ptr("type", Ty::Str)];

const EMPTY_DIR: &[Field] = &[opt("medium", Ty::Str), ptr("sizeLimit", Ty::Quantity)];

const GCE_PERSISTENT_DISK: &[Field] = &[
    req("pdName", Ty::Str),
    opt("fsType", Ty::Str),
    opt("partition", Ty::I32),
    opt("readOnly", Ty::Bool),
];

const AWS_ELASTIC_BLOCK_STORE: &[Field] = &[
    req("volumeID", Ty::Str),
    opt("fsType", Ty::Str),
    opt("partition", Ty::I32),
    opt("readOnly", Ty::Bool),
];

const GIT_REPO: &[Field] = &[
    req("repository", Ty::Str),
    opt("revision", Ty::Str),
    opt("directory", Ty::Str),
];

const KEY_TO_PATH: &[Field] = &[
    req("key", Ty::Str),
    req("path", Ty::Str),
    ptr("mode", Ty::I32),
];
const KEYS_TO_PATHS: Ty = Ty::Slice(&Ty::Struct(KEY_TO_PATH));

const SECRET: &[Field] = &[
    opt("secretName", Ty::Str),
    opt("items", KEYS_TO_PATHS),
    ptr("defaultMode", Ty::I32),
    ptr("optional", Ty::Bool),
];

const NFS: &[Field] = &[
    req("server", Ty::Str),
    req("path", Ty::Str),
    opt("readOnly", Ty::Bool),
];

const ISCSI: &[Field] = &[
    req("targetPortal", Ty::Str),
    req("iqn", Ty::Str),
    req("lun", Ty::I32),
    opt("iscsiInterface", Ty::Str),
    opt("fsType", Ty::Str),
    opt("readOnly", Ty::Bool),
    opt("portals", STRINGS),
    opt("chapAuthDiscovery", Ty::Bool),
    opt("chapAuthSession", Ty::Bool),
    ptr("secretRef", SECRET_REF),
    ptr("initiatorName", Ty::Str),
];

const GLUSTERFS: &[Field] = &[
    req("endpoints", Ty::Str),
    req("path", Ty::Str),
    opt("readOnly", Ty::Bool),
];

const PERSISTENT_VOLUME_CLAIM: &[Field] = &[req("claimName", Ty::Str), opt("readOnly", Ty::Bool)];

const RBD: &[Field] = &[
    req("monitors", STRINGS),
    req("image", Ty::Str),
    opt("fsType", Ty::Str),
    opt("pool", Ty::Str),
    opt("user", Ty::Str),
    opt("keyring", Ty::Str),
    ptr("secretRef", SECRET_REF),
    opt("readOnly", Ty::Bool),
];

const FLEX_VOLUME: &[Field] = &[
    req("driver", Ty::Str),
    opt("fsType", Ty::Str),
    ptr("secretRef", SECRET_REF),
    opt("readOnly", Ty::Bool),
    opt("options", Ty::StrMap),
];

const CINDER: &[Field] = &[
    req("volumeID", Ty::Str),
    opt("fsType", Ty::Str),
    opt("readOnly", Ty::Bool),
    ptr("secretRef", SECRET_REF),
];

const CEPHFS: &[Field] = &[
    req("monitors", STRINGS),
    opt("path", Ty::Str),
    opt("user", Ty::Str),
    opt("secretFile", Ty::Str),
    ptr("secretRef", SECRET_REF),
    opt("readOnly", Ty::Bool),
];

const FLOCKER: &[Field] = &[opt("datasetName", Ty::Str), opt("datasetUUID", Ty::Str)];

const DOWNWARD_API_VOLUME_FILE: &[Field] = &[
    req("path", Ty::Str),
    ptr("fieldRef", Ty::Struct(OBJECT_FIELD_SELECTOR)),
    ptr("resourceFieldRef", Ty::Struct(RESOURCE_FIELD_SELECTOR)),
    ptr("mode", Ty::I32),
];
const DOWNWARD_API_ITEMS: Ty = Ty::Slice(&Ty::Struct(DOWNWARD_API_VOLUME_FILE));

const DOWNWARD_API: &[Field] = &[
    opt("items", DOWNWARD_API_ITEMS),
    ptr("defaultMode", Ty::I32),
];

const FC: &[Field] = &[
    opt("targetWWNs", STRINGS),
    ptr("lun", Ty::I32),
    opt("fsType", Ty::Str),
    opt("readOnly", Ty::Bool),
    opt("wwids", STRINGS),
];

const AZURE_FILE: &[Field] = &[
    req("secretName", Ty::Str),
    req("shareName", Ty::Str),
    opt("readOnly", Ty::Bool),
];

const CONFIG_MAP: &[Field] = &[
    opt("name", Ty::Str),
    opt("items", KEYS_TO_PATHS),
    ptr("defaultMode", Ty::I32),
    ptr("optional", Ty::Bool),
];

const VSPHERE_VOLUME: &[Field] = &[
    req("volumePath", Ty::Str),
    opt("fsType", Ty::Str),
    opt("storagePolicyName", Ty::Str),
    opt("storagePolicyID", Ty::Str),
];

const QUOBYTE: &[Field] = &[
    req("registry", Ty::Str),
    req("volume", Ty::Str),
    opt("readOnly", Ty::Bool),
    opt("user", Ty::Str),
    opt("group", Ty::Str),
    opt("tenant", Ty::Str),
];

const AZURE_DISK: &[Field] = &[
    req("diskName", Ty::Str),
    req("diskURI", Ty::Str),
    ptr("cachingMode", Ty::Str),
    ptr("fsType", Ty::Str),
    ptr("readOnly", Ty::Bool),
    ptr("kind", Ty::Str),
];

const PHOTON_PERSISTENT_DISK: &[Field] = &[req("pdID", Ty::Str), opt("fsType", Ty::Str)];

/// `SecretProjection` / `ConfigMapProjection` (LocalObjectReference inlined).
const KEYS_PROJECTION: &[Field] = &[
    opt("name", Ty::Str),
    opt("items", KEYS_TO_PATHS),
    ptr("optional", Ty::Bool),
];

const DOWNWARD_API_PROJECTION: &[Field] = &[opt("items", DOWNWARD_API_ITEMS)];

const SERVICE_ACCOUNT_TOKEN_PROJECTION: &[Field] = &[
    opt("audience", Ty::Str),
    ptr("expirationSeconds", Ty::I64),
    req("path", Ty::Str),
];

const CLUSTER_TRUST_BUNDLE_PROJECTION: &[Field] = &[
    ptr("name", Ty::Str),
    ptr("signerName", Ty::Str),
    ptr("labelSelector", Ty::Struct(LABEL_SELECTOR)),
    ptr("optional", Ty::Bool),
    req("path", Ty::Str),
];

/// `podCertificate` (1.34) is deliberately absent, like the later fields of `Container`.
const VOLUME_PROJECTION: &[Field] = &[
    ptr("secret", Ty::Struct(KEYS_PROJECTION)),
    ptr("downwardAPI", Ty::Struct(DOWNWARD_API_PROJECTION)),
    ptr("configMap", Ty::Struct(KEYS_PROJECTION)),
    ptr(
        "serviceAccountToken",
        Ty::Struct(SERVICE_ACCOUNT_TOKEN_PROJECTION),
    ),
    ptr(
        "clusterTrustBundle",
        Ty::Struct(CLUSTER_TRUST_BUNDLE_PROJECTION),
    ),
];

const PROJECTED: &[Field] = &[
    // `Sources []VolumeProjection json:"sources"`: no omitempty, so nil encodes as null.
    req("sources", Ty::Slice(&Ty::Struct(VOLUME_PROJECTION))),
    ptr("defaultMode", Ty::I32),
];

const PORTWORX_VOLUME: &[Field] = &[
    req("volumeID", Ty::Str),
    opt("fsType", Ty::Str),
    opt("readOnly", Ty::Bool),
];

const SCALE_IO: &[Field] = &[
    req("gateway", Ty::Str),
    req("system", Ty::Str),
    // `SecretRef *LocalObjectReference json:"secretRef"`: a pointer without omitempty.
    Field {
        json: "secretRef",
        ty: SECRET_REF,
        omitempty: false,
        ptr: true,
    },
    opt("sslEnabled", Ty::Bool),
    opt("protectionDomain", Ty::Str),
    opt("storagePool", Ty::Str),
    opt("storageMode", Ty::Str),
    opt("volumeName", Ty::Str),
    opt("fsType", Ty::Str),
    opt("readOnly", Ty::Bool),
];

const STORAGE_OS: &[Field] = &[
    opt("volumeName", Ty::Str),
    opt("volumeNamespace", Ty::Str),
    opt("fsType", Ty::Str),
    opt("readOnly", Ty::Bool),
    ptr("secretRef", SECRET_REF),
];

const CSI: &[Field] = &[
    req("driver", Ty::Str),
    ptr("readOnly", Ty::Bool),
    ptr("fsType", Ty::Str),
    opt("volumeAttributes", Ty::StrMap),
    ptr("nodePublishSecretRef", SECRET_REF),
];

const EPHEMERAL: &[Field] = &[ptr(
    "volumeClaimTemplate",
    Ty::Struct(PERSISTENT_VOLUME_CLAIM_TEMPLATE),
)];

const IMAGE: &[Field] = &[opt("reference", Ty::Str), opt("pullPolicy", Ty::Str)];

/// `Volume` with its `VolumeSource` inlined.
pub(crate) const VOLUME: &[Field] = &[
    req("name", Ty::Str),
    ptr("hostPath", Ty::Struct(HOST_PATH)),
    ptr("emptyDir", Ty::Struct(EMPTY_DIR)),
    ptr("gcePersistentDisk", Ty::Struct(GCE_PERSISTENT_DISK)),
    ptr("awsElasticBlockStore", Ty::Struct(AWS_ELASTIC_BLOCK_STORE)),
    ptr("gitRepo", Ty::Struct(GIT_REPO)),
    ptr("secret", Ty::Struct(SECRET)),
    ptr("nfs", Ty::Struct(NFS)),
    ptr("iscsi", Ty::Struct(ISCSI)),
    ptr("glusterfs", Ty::Struct(GLUSTERFS)),
    ptr("persistentVolumeClaim", Ty::Struct(PERSISTENT_VOLUME_CLAIM)),
    ptr("rbd", Ty::Struct(RBD)),
    ptr("flexVolume", Ty::Struct(FLEX_VOLUME)),
    ptr("cinder", Ty::Struct(CINDER)),
    ptr("cephfs", Ty::Struct(CEPHFS)),
    ptr("flocker", Ty::Struct(FLOCKER)),
    ptr("downwardAPI", Ty::Struct(DOWNWARD_API)),
    ptr("fc", Ty::Struct(FC)),
    ptr("azureFile", Ty::Struct(AZURE_FILE)),
    ptr("configMap", Ty::Struct(CONFIG_MAP)),
    ptr("vsphereVolume", Ty::Struct(VSPHERE_VOLUME)),
    ptr("quobyte", Ty::Struct(QUOBYTE)),
    ptr("azureDisk", Ty::Struct(AZURE_DISK)),
    ptr("photonPersistentDisk", Ty::Struct(PHOTON_PERSISTENT_DISK)),
    ptr("projected", Ty::Struct(PROJECTED)),
    ptr("portworxVolume", Ty::Struct(PORTWORX_VOLUME)),
    ptr("scaleIO", Ty::Struct(SCALE_IO)),
    ptr("storageos", Ty::Struct(STORAGE_OS)),
    ptr("csi", Ty::Struct(CSI)),
    ptr("ephemeral", Ty::Struct(EPHEMERAL)),
    ptr("image", Ty::Struct(IMAGE)),
];
