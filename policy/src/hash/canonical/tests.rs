use super::*;
use serde_json::json;

/// A volume of every v0.32 source type, each field set to a non-zero value and written in Go
/// declaration order: decoding then encoding must give the very same text back.
const FULL_VOLUMES: &[&str] = &[
    r#"{"name":"v","hostPath":{"path":"/var/log","type":"DirectoryOrCreate"}}"#,
    r#"{"name":"v","emptyDir":{"medium":"Memory","sizeLimit":"1Gi"}}"#,
    r#"{"name":"v","gcePersistentDisk":{"pdName":"pd","fsType":"ext4","partition":1,"readOnly":true}}"#,
    r#"{"name":"v","awsElasticBlockStore":{"volumeID":"vol-1","fsType":"ext4","partition":2,"readOnly":true}}"#,
    r#"{"name":"v","gitRepo":{"repository":"https://example.com/r.git","revision":"abc","directory":"."}}"#,
    r#"{"name":"v","secret":{"secretName":"s","items":[{"key":"k","path":"p","mode":256}],"defaultMode":420,"optional":false}}"#,
    r#"{"name":"v","nfs":{"server":"nfs.local","path":"/exports","readOnly":true}}"#,
    concat!(
        r#"{"name":"v","iscsi":{"targetPortal":"10.0.0.1:3260","iqn":"iqn.2001-04.com.example:storage","lun":0,"#,
        r#""iscsiInterface":"default","fsType":"ext4","readOnly":true,"portals":["10.0.0.2:3260"],"chapAuthDiscovery":true,"#,
        r#""chapAuthSession":true,"secretRef":{"name":"chap"},"initiatorName":"iqn.1996-04.de.suse:01:1"}}"#
    ),
    r#"{"name":"v","glusterfs":{"endpoints":"ep","path":"vol","readOnly":true}}"#,
    r#"{"name":"v","persistentVolumeClaim":{"claimName":"c","readOnly":true}}"#,
    concat!(
        r#"{"name":"v","rbd":{"monitors":["m1:6789"],"image":"img","fsType":"ext4","pool":"rbd","user":"admin","#,
        r#""keyring":"/etc/ceph/keyring","secretRef":{"name":"ceph"},"readOnly":true}}"#
    ),
    r#"{"name":"v","flexVolume":{"driver":"example/lvm","fsType":"ext4","secretRef":{},"readOnly":true,"options":{"a":"1","b":"2"}}}"#,
    r#"{"name":"v","cinder":{"volumeID":"vol","fsType":"ext4","readOnly":true,"secretRef":{"name":"os"}}}"#,
    concat!(
        r#"{"name":"v","cephfs":{"monitors":["m1:6789","m2:6789"],"path":"/","user":"admin","#,
        r#""secretFile":"/etc/ceph/user.secret","secretRef":{"name":"ceph"},"readOnly":true}}"#
    ),
    r#"{"name":"v","flocker":{"datasetName":"ds","datasetUUID":"uuid"}}"#,
    concat!(
        r#"{"name":"v","downwardAPI":{"items":[{"path":"labels","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels"}},"#,
        r#"{"path":"cpu","resourceFieldRef":{"containerName":"c","resource":"limits.cpu","divisor":"1m"},"mode":292}],"#,
        r#""defaultMode":420}}"#
    ),
    r#"{"name":"v","fc":{"targetWWNs":["500a0982991b8dc5"],"lun":2,"fsType":"ext4","readOnly":true,"wwids":["w"]}}"#,
    r#"{"name":"v","azureFile":{"secretName":"az","shareName":"share","readOnly":true}}"#,
    r#"{"name":"v","configMap":{"name":"cm","items":[{"key":"k","path":"p"}],"defaultMode":420,"optional":true}}"#,
    r#"{"name":"v","vsphereVolume":{"volumePath":"[ds] v.vmdk","fsType":"ext4","storagePolicyName":"gold","storagePolicyID":"id"}}"#,
    r#"{"name":"v","quobyte":{"registry":"r:7861","volume":"vol","readOnly":true,"user":"u","group":"g","tenant":"t"}}"#,
    concat!(
        r#"{"name":"v","azureDisk":{"diskName":"d","diskURI":"https://example.com/d.vhd","cachingMode":"ReadWrite","#,
        r#""fsType":"ext4","readOnly":false,"kind":"Managed"}}"#
    ),
    r#"{"name":"v","photonPersistentDisk":{"pdID":"pd","fsType":"ext4"}}"#,
    concat!(
        r#"{"name":"v","projected":{"sources":[{"secret":{"name":"s","items":[{"key":"k","path":"p"}],"optional":false}},"#,
        r#"{"downwardAPI":{"items":[{"path":"n","fieldRef":{"fieldPath":"metadata.name"}}]}},{"configMap":{"name":"cm"}},"#,
        r#"{"serviceAccountToken":{"audience":"api","expirationSeconds":3600,"path":"token"}},"#,
        r#"{"clusterTrustBundle":{"name":"ctb","signerName":"example.com/s","labelSelector":{"matchLabels":{"a":"b"},"#,
        r#""matchExpressions":[{"key":"k","operator":"In","values":["x"]}]},"optional":true,"path":"ca.pem"}}],"#,
        r#""defaultMode":420}}"#
    ),
    r#"{"name":"v","portworxVolume":{"volumeID":"px","fsType":"ext4","readOnly":true}}"#,
    concat!(
        r#"{"name":"v","scaleIO":{"gateway":"https://gw","system":"sys","secretRef":{"name":"sio"},"sslEnabled":true,"#,
        r#""protectionDomain":"pd","storagePool":"sp","storageMode":"ThinProvisioned","volumeName":"vol","fsType":"xfs","#,
        r#""readOnly":true}}"#
    ),
    r#"{"name":"v","storageos":{"volumeName":"vol","volumeNamespace":"ns","fsType":"ext4","readOnly":true,"secretRef":{"name":"sos"}}}"#,
    concat!(
        r#"{"name":"v","csi":{"driver":"inline.storage.kubernetes.io","readOnly":true,"fsType":"ext4","#,
        r#""volumeAttributes":{"foo":"bar"},"nodePublishSecretRef":{"name":"csi"}}}"#
    ),
    concat!(
        r#"{"name":"v","ephemeral":{"volumeClaimTemplate":{"metadata":{"name":"t","generateName":"g-","namespace":"ns","#,
        r#""selfLink":"/x","uid":"u","resourceVersion":"1","generation":2,"creationTimestamp":"2024-01-01T00:00:00Z","#,
        r#""deletionTimestamp":"2024-01-02T00:00:00Z","deletionGracePeriodSeconds":30,"labels":{"app":"web"},"#,
        r#""annotations":{"a":"b"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"pu","#,
        r#""controller":true,"blockOwnerDeletion":true}],"finalizers":["f"],"managedFields":[{"manager":"kubectl","#,
        r#""operation":"Apply","apiVersion":"v1","time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","#,
        r#""fieldsV1":{"f:metadata":{}},"subresource":"status"}]},"spec":{"accessModes":["ReadWriteOnce"],"#,
        r#""selector":{"matchLabels":{"tier":"db"}},"resources":{"limits":{"storage":"2Gi"},"requests":{"storage":"1Gi"}},"#,
        r#""volumeName":"pv","storageClassName":"fast","volumeMode":"Filesystem","#,
        r#""dataSource":{"apiGroup":null,"kind":"PersistentVolumeClaim","name":"src"},"#,
        r#""dataSourceRef":{"apiGroup":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"snap","namespace":"ns"},"#,
        r#""volumeAttributesClassName":"gold"}}}}"#
    ),
    r#"{"name":"v","image":{"reference":"quay.io/x/artifact:v1","pullPolicy":"IfNotPresent"}}"#,
];

#[test]
fn every_source_type_round_trips() {
    assert_eq!(FULL_VOLUMES.len(), VOLUME.len() - 1, "one case per source");
    for (case, source) in FULL_VOLUMES.iter().zip(&VOLUME[1..]) {
        let value: Value = serde_json::from_str(case).expect("test JSON");
        assert!(
            case.contains(&format!(r#""{}":{{"#, source.json)),
            "{case} is not the {} case",
            source.json
        );
        assert_eq!(canonical_volume(&value).as_deref(), Some(*case));
    }
}

#[test]
fn zero_values_unknown_members_and_nulls_normalise() {
    let got = canonical_volume(&json!({
        "unknown": true, "nfs": null, "hostPath": null, "name": "v",
        "emptyDir": {"medium": "", "unknownField": 1, "sizeLimit": null}
    }));
    assert_eq!(got.as_deref(), Some(r#"{"name":"v","emptyDir":{}}"#));
    let got = canonical_volume(
        &json!({"name": "v", "nfs": {"readOnly": false, "path": "/p", "server": "s"}}),
    );
    assert_eq!(
        got.as_deref(),
        Some(r#"{"name":"v","nfs":{"server":"s","path":"/p"}}"#)
    );
}

#[test]
fn absent_required_and_unomitted_fields_encode_as_go_zero_values() {
    let got = canonical_volume(&json!({
        "name": "e", "scaleIO": {}, "projected": {},
        "ephemeral": {"volumeClaimTemplate": {"spec": {"dataSource": {"kind": "K", "name": "n"}}}}
    }));
    assert_eq!(
        got.as_deref(),
        Some(concat!(
            r#"{"name":"e","projected":{"sources":null},"scaleIO":{"gateway":"","system":"","secretRef":null},"#,
            r#""ephemeral":{"volumeClaimTemplate":{"metadata":{"creationTimestamp":null},"#,
            r#""spec":{"resources":{},"dataSource":{"apiGroup":null,"kind":"K","name":"n"}}}}}"#
        ))
    );
    assert_eq!(
        canonical_volume(&Value::Null).as_deref(),
        Some(r#"{"name":""}"#)
    );
}

#[test]
fn maps_sort_and_null_entries_are_empty_strings() {
    let got = canonical_volume(&json!({"name": "v", "csi": {"driver": "d",
        "volumeAttributes": {"b": "2", "a": null, "c<": "x"}}}));
    assert_eq!(
        got.as_deref(),
        Some(
            r#"{"name":"v","csi":{"driver":"d","volumeAttributes":{"a":"","b":"2","c\u003c":"x"}}}"#
        )
    );
}

#[test]
fn values_go_would_not_decode_have_no_canonical_form() {
    for volume in [
        json!("x"),
        json!([]),
        json!({"name": 1}),
        json!({"name": "v", "emptyDir": {"medium": 5}}),
        json!({"name": "v", "emptyDir": {"sizeLimit": "lots"}}),
        json!({"name": "v", "emptyDir": []}),
        json!({"name": "v", "iscsi": {"lun": 1.5}}),
        json!({"name": "v", "secret": {"defaultMode": 4_294_967_296_u64}}),
        json!({"name": "v", "secret": {"items": [{"key": "k", "path": 7}]}}),
        json!({"name": "v", "csi": {"driver": "d", "volumeAttributes": {"a": 1}}}),
        json!({"name": "v", "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": []}}}}),
        json!({"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "x"}}}}}}),
    ] {
        assert_eq!(canonical_volume(&volume), None, "{volume}");
    }
}
