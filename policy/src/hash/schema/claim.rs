//! The ephemeral volume's `PersistentVolumeClaimTemplate`: apimachinery v0.32 metav1
//! `ObjectMeta` (and `LabelSelector`) and core/v1 `PersistentVolumeClaimSpec`.

use super::{Field, STRINGS, Ty, opt, ptr, req};

const LABEL_SELECTOR_REQUIREMENT: &[Field] = &[
    req("key", Ty::Str),
    req("operator", Ty::Str),
    opt("values", STRINGS),
];

pub(crate) const LABEL_SELECTOR: &[Field] = &[
    opt("matchLabels", Ty::StrMap),
    opt(
        "matchExpressions",
        Ty::Slice(&Ty::Struct(LABEL_SELECTOR_REQUIREMENT)),
    ),
];

const OWNER_REFERENCE: &[Field] = &[
    req("apiVersion", Ty::Str),
    req("kind", Ty::Str),
    req("name", Ty::Str),
    req("uid", Ty::Str),
    ptr("controller", Ty::Bool),
    ptr("blockOwnerDeletion", Ty::Bool),
];

const MANAGED_FIELDS_ENTRY: &[Field] = &[
    opt("manager", Ty::Str),
    opt("operation", Ty::Str),
    opt("apiVersion", Ty::Str),
    ptr("time", Ty::Time),
    opt("fieldsType", Ty::Str),
    ptr("fieldsV1", Ty::Raw),
    opt("subresource", Ty::Str),
];

/// v0.32 predates `omitzero` on `creationTimestamp`: the zero time is written as `null`.
const OBJECT_META: &[Field] = &[
    opt("name", Ty::Str),
    opt("generateName", Ty::Str),
    opt("namespace", Ty::Str),
    opt("selfLink", Ty::Str),
    opt("uid", Ty::Str),
    opt("resourceVersion", Ty::Str),
    opt("generation", Ty::I64),
    opt("creationTimestamp", Ty::Time),
    ptr("deletionTimestamp", Ty::Time),
    ptr("deletionGracePeriodSeconds", Ty::I64),
    opt("labels", Ty::StrMap),
    opt("annotations", Ty::StrMap),
    opt("ownerReferences", Ty::Slice(&Ty::Struct(OWNER_REFERENCE))),
    opt("finalizers", STRINGS),
    opt(
        "managedFields",
        Ty::Slice(&Ty::Struct(MANAGED_FIELDS_ENTRY)),
    ),
];

/// `VolumeResourceRequirements` (no `claims`, unlike a container's).
const VOLUME_RESOURCE_REQUIREMENTS: &[Field] = &[
    opt("limits", Ty::QuantityMap),
    opt("requests", Ty::QuantityMap),
];

/// `APIGroup *string json:"apiGroup"`: a pointer without omitempty, so nil encodes as null.
const API_GROUP: Field = Field {
    json: "apiGroup",
    ty: Ty::Str,
    omitempty: false,
    ptr: true,
};

const TYPED_LOCAL_OBJECT_REFERENCE: &[Field] =
    &[API_GROUP, req("kind", Ty::Str), req("name", Ty::Str)];

const TYPED_OBJECT_REFERENCE: &[Field] = &[
    API_GROUP,
    req("kind", Ty::Str),
    req("name", Ty::Str),
    ptr("namespace", Ty::Str),
];

const PERSISTENT_VOLUME_CLAIM_SPEC: &[Field] = &[
    opt("accessModes", STRINGS),
    ptr("selector", Ty::Struct(LABEL_SELECTOR)),
    opt("resources", Ty::Struct(VOLUME_RESOURCE_REQUIREMENTS)),
    opt("volumeName", Ty::Str),
    ptr("storageClassName", Ty::Str),
    ptr("volumeMode", Ty::Str),
    ptr("dataSource", Ty::Struct(TYPED_LOCAL_OBJECT_REFERENCE)),
    ptr("dataSourceRef", Ty::Struct(TYPED_OBJECT_REFERENCE)),
    ptr("volumeAttributesClassName", Ty::Str),
];

pub(crate) const PERSISTENT_VOLUME_CLAIM_TEMPLATE: &[Field] = &[
    opt("metadata", Ty::Struct(OBJECT_META)),
    req("spec", Ty::Struct(PERSISTENT_VOLUME_CLAIM_SPEC)),
];
