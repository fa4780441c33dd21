//! Go struct schemas of `SidecarContainer`: k8s.io/api v0.32.10 core/v1 `Container` (and every
//! type nested in it) followed by the OpenKruise extension fields. Fields are listed in Go
//! declaration order with their JSON names; embedded structs (`ProbeHandler` in `Probe`,
//! `LocalObjectReference` in the key selectors and env sources) are flattened where Go promotes
//! their fields. Later Kubernetes additions (`Lifecycle.stopSignal` 1.33, `EnvVarSource.fileKeyRef`
//! and `Container.restartPolicyRules` 1.34) are deliberately absent: Go Kruise built against
//! v0.32 drops them before hashing. The core/v1 `Volume` schema (§2.2 rule 15) is in `volume`,
//! the ephemeral volume's claim template in `claim`.

mod claim;
mod volume;

pub(crate) use volume::VOLUME;

/// The Go type of a field, as far as JSON encoding is concerned.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ty {
    /// `string` or a string-kinded named type.
    Str,
    Bool,
    /// `int32` (decoding rejects values outside its range).
    I32,
    I64,
    /// `resource.Quantity` (a struct: `omitempty` never omits it).
    Quantity,
    /// `intstr.IntOrString` (a struct: `omitempty` never omits it).
    IntOrString,
    Struct(&'static [Field]),
    Slice(&'static Ty),
    /// `map[string]Quantity` (`ResourceList`), keys sorted.
    QuantityMap,
    /// `map[string]string`, keys sorted.
    StrMap,
    /// `metav1.Time` (a struct: `omitempty` never omits it; the zero time encodes as `null`).
    Time,
    /// Raw JSON kept as written (`metav1.FieldsV1`).
    Raw,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    pub json: &'static str,
    pub ty: Ty,
    pub omitempty: bool,
    /// A Go pointer: absent means nil, and `omitempty` omits exactly nil.
    pub ptr: bool,
}

/// `json:"name,omitempty"` on a value field.
const fn opt(json: &'static str, ty: Ty) -> Field {
    Field {
        json,
        ty,
        omitempty: true,
        ptr: false,
    }
}

/// `json:"name"` on a value field.
const fn req(json: &'static str, ty: Ty) -> Field {
    Field {
        json,
        ty,
        omitempty: false,
        ptr: false,
    }
}

/// `json:"name,omitempty"` on a pointer field.
const fn ptr(json: &'static str, ty: Ty) -> Field {
    Field {
        json,
        ty,
        omitempty: true,
        ptr: true,
    }
}

const STRINGS: Ty = Ty::Slice(&Ty::Str);

const CONTAINER_PORT: &[Field] = &[
    opt("name", Ty::Str),
    opt("hostPort", Ty::I32),
    req("containerPort", Ty::I32),
    opt("protocol", Ty::Str),
    opt("hostIP", Ty::Str),
];

/// `ConfigMapEnvSource` / `SecretEnvSource` (LocalObjectReference inlined).
const ENV_SOURCE_REF: &[Field] = &[opt("name", Ty::Str), ptr("optional", Ty::Bool)];

const ENV_FROM_SOURCE: &[Field] = &[
    opt("prefix", Ty::Str),
    ptr("configMapRef", Ty::Struct(ENV_SOURCE_REF)),
    ptr("secretRef", Ty::Struct(ENV_SOURCE_REF)),
];

pub(crate) const OBJECT_FIELD_SELECTOR: &[Field] =
    &[opt("apiVersion", Ty::Str), req("fieldPath", Ty::Str)];

const RESOURCE_FIELD_SELECTOR: &[Field] = &[
    opt("containerName", Ty::Str),
    req("resource", Ty::Str),
    opt("divisor", Ty::Quantity),
];

/// `ConfigMapKeySelector` / `SecretKeySelector` (LocalObjectReference inlined).
const KEY_SELECTOR: &[Field] = &[
    opt("name", Ty::Str),
    req("key", Ty::Str),
    ptr("optional", Ty::Bool),
];

const ENV_VAR_SOURCE: &[Field] = &[
    ptr("fieldRef", Ty::Struct(OBJECT_FIELD_SELECTOR)),
    ptr("resourceFieldRef", Ty::Struct(RESOURCE_FIELD_SELECTOR)),
    ptr("configMapKeyRef", Ty::Struct(KEY_SELECTOR)),
    ptr("secretKeyRef", Ty::Struct(KEY_SELECTOR)),
];

const ENV_VAR: &[Field] = &[
    req("name", Ty::Str),
    opt("value", Ty::Str),
    ptr("valueFrom", Ty::Struct(ENV_VAR_SOURCE)),
];

const RESOURCE_CLAIM: &[Field] = &[req("name", Ty::Str), opt("request", Ty::Str)];

const RESOURCE_REQUIREMENTS: &[Field] = &[
    opt("limits", Ty::QuantityMap),
    opt("requests", Ty::QuantityMap),
    opt("claims", Ty::Slice(&Ty::Struct(RESOURCE_CLAIM))),
];

const CONTAINER_RESIZE_POLICY: &[Field] =
    &[req("resourceName", Ty::Str), req("restartPolicy", Ty::Str)];

const VOLUME_MOUNT: &[Field] = &[
    req("name", Ty::Str),
    opt("readOnly", Ty::Bool),
    ptr("recursiveReadOnly", Ty::Str),
    req("mountPath", Ty::Str),
    opt("subPath", Ty::Str),
    ptr("mountPropagation", Ty::Str),
    opt("subPathExpr", Ty::Str),
];

const VOLUME_DEVICE: &[Field] = &[req("name", Ty::Str), req("devicePath", Ty::Str)];

const EXEC_ACTION: &[Field] = &[opt("command", STRINGS)];

const HTTP_HEADER: &[Field] = &[req("name", Ty::Str), req("value", Ty::Str)];

const HTTP_GET_ACTION: &[Field] = &[
    opt("path", Ty::Str),
    req("port", Ty::IntOrString),
    opt("host", Ty::Str),
    opt("scheme", Ty::Str),
    opt("httpHeaders", Ty::Slice(&Ty::Struct(HTTP_HEADER))),
];

const TCP_SOCKET_ACTION: &[Field] = &[req("port", Ty::IntOrString), opt("host", Ty::Str)];

const GRPC_ACTION: &[Field] = &[
    req("port", Ty::I32),
    // `Service *string json:"service"`: a pointer without omitempty, so nil encodes as null.
    Field {
        json: "service",
        ty: Ty::Str,
        omitempty: false,
        ptr: true,
    },
];

const SLEEP_ACTION: &[Field] = &[req("seconds", Ty::I64)];

/// `Probe` with its embedded `ProbeHandler` promoted.
const PROBE: &[Field] = &[
    ptr("exec", Ty::Struct(EXEC_ACTION)),
    ptr("httpGet", Ty::Struct(HTTP_GET_ACTION)),
    ptr("tcpSocket", Ty::Struct(TCP_SOCKET_ACTION)),
    ptr("grpc", Ty::Struct(GRPC_ACTION)),
    opt("initialDelaySeconds", Ty::I32),
    opt("timeoutSeconds", Ty::I32),
    opt("periodSeconds", Ty::I32),
    opt("successThreshold", Ty::I32),
    opt("failureThreshold", Ty::I32),
    ptr("terminationGracePeriodSeconds", Ty::I64),
];

const LIFECYCLE_HANDLER: &[Field] = &[
    ptr("exec", Ty::Struct(EXEC_ACTION)),
    ptr("httpGet", Ty::Struct(HTTP_GET_ACTION)),
    ptr("tcpSocket", Ty::Struct(TCP_SOCKET_ACTION)),
    ptr("sleep", Ty::Struct(SLEEP_ACTION)),
];

const LIFECYCLE: &[Field] = &[
    ptr("postStart", Ty::Struct(LIFECYCLE_HANDLER)),
    ptr("preStop", Ty::Struct(LIFECYCLE_HANDLER)),
];

const CAPABILITIES: &[Field] = &[opt("add", STRINGS), opt("drop", STRINGS)];

const SE_LINUX_OPTIONS: &[Field] = &[
    opt("user", Ty::Str),
    opt("role", Ty::Str),
    opt("type", Ty::Str),
    opt("level", Ty::Str),
];

const WINDOWS_OPTIONS: &[Field] = &[
    ptr("gmsaCredentialSpecName", Ty::Str),
    ptr("gmsaCredentialSpec", Ty::Str),
    ptr("runAsUserName", Ty::Str),
    ptr("hostProcess", Ty::Bool),
];

/// `SeccompProfile` and `AppArmorProfile` share this shape.
const PROFILE: &[Field] = &[req("type", Ty::Str), ptr("localhostProfile", Ty::Str)];

const SECURITY_CONTEXT: &[Field] = &[
    ptr("capabilities", Ty::Struct(CAPABILITIES)),
    ptr("privileged", Ty::Bool),
    ptr("seLinuxOptions", Ty::Struct(SE_LINUX_OPTIONS)),
    ptr("windowsOptions", Ty::Struct(WINDOWS_OPTIONS)),
    ptr("runAsUser", Ty::I64),
    ptr("runAsGroup", Ty::I64),
    ptr("runAsNonRoot", Ty::Bool),
    ptr("readOnlyRootFilesystem", Ty::Bool),
    ptr("allowPrivilegeEscalation", Ty::Bool),
    ptr("procMount", Ty::Str),
    ptr("seccompProfile", Ty::Struct(PROFILE)),
    ptr("appArmorProfile", Ty::Struct(PROFILE)),
];

const UPGRADE_STRATEGY: &[Field] = &[
    opt("upgradeType", Ty::Str),
    opt("hotUpgradeEmptyImage", Ty::Str),
];

const SHARE_VOLUME_POLICY: &[Field] = &[opt("type", Ty::Str)];

const SOURCE_CONTAINER_NAME_SOURCE: &[Field] =
    &[ptr("fieldRef", Ty::Struct(OBJECT_FIELD_SELECTOR))];

const TRANSFER_ENV_VAR: &[Field] = &[
    opt("sourceContainerName", Ty::Str),
    ptr(
        "sourceContainerNameFrom",
        Ty::Struct(SOURCE_CONTAINER_NAME_SOURCE),
    ),
    opt("envName", Ty::Str),
    opt("envNames", STRINGS),
];

/// `ResourceExprLimits` / `ResourceExprRequests`.
const RESOURCE_EXPR_VALUES: &[Field] = &[opt("cpu", Ty::Str), opt("memory", Ty::Str)];

const RESOURCES_EXPR: &[Field] = &[
    ptr("limits", Ty::Struct(RESOURCE_EXPR_VALUES)),
    ptr("requests", Ty::Struct(RESOURCE_EXPR_VALUES)),
];

const RESOURCES_POLICY: &[Field] = &[
    req("targetContainersMode", Ty::Str),
    opt("targetContainersNameRegex", Ty::Str),
    req("resourcesExpr", Ty::Struct(RESOURCES_EXPR)),
];

/// `SidecarContainer`: the inlined core/v1 `Container`, then the Kruise extension fields.
pub(crate) const SIDECAR_CONTAINER: &[Field] = &[
    req("name", Ty::Str),
    opt("image", Ty::Str),
    opt("command", STRINGS),
    opt("args", STRINGS),
    opt("workingDir", Ty::Str),
    opt("ports", Ty::Slice(&Ty::Struct(CONTAINER_PORT))),
    opt("envFrom", Ty::Slice(&Ty::Struct(ENV_FROM_SOURCE))),
    opt("env", Ty::Slice(&Ty::Struct(ENV_VAR))),
    opt("resources", Ty::Struct(RESOURCE_REQUIREMENTS)),
    opt(
        "resizePolicy",
        Ty::Slice(&Ty::Struct(CONTAINER_RESIZE_POLICY)),
    ),
    ptr("restartPolicy", Ty::Str),
    opt("volumeMounts", Ty::Slice(&Ty::Struct(VOLUME_MOUNT))),
    opt("volumeDevices", Ty::Slice(&Ty::Struct(VOLUME_DEVICE))),
    ptr("livenessProbe", Ty::Struct(PROBE)),
    ptr("readinessProbe", Ty::Struct(PROBE)),
    ptr("startupProbe", Ty::Struct(PROBE)),
    ptr("lifecycle", Ty::Struct(LIFECYCLE)),
    opt("terminationMessagePath", Ty::Str),
    opt("terminationMessagePolicy", Ty::Str),
    opt("imagePullPolicy", Ty::Str),
    ptr("securityContext", Ty::Struct(SECURITY_CONTEXT)),
    opt("stdin", Ty::Bool),
    opt("stdinOnce", Ty::Bool),
    opt("tty", Ty::Bool),
    // Kruise extension fields.
    opt("podInjectPolicy", Ty::Str),
    opt("upgradeStrategy", Ty::Struct(UPGRADE_STRATEGY)),
    opt("shareVolumePolicy", Ty::Struct(SHARE_VOLUME_POLICY)),
    ptr("shareVolumeDevicePolicy", Ty::Struct(SHARE_VOLUME_POLICY)),
    opt("transferEnv", Ty::Slice(&Ty::Struct(TRANSFER_ENV_VAR))),
    ptr("resourcesPolicy", Ty::Struct(RESOURCES_POLICY)),
];
