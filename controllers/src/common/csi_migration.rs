//! CSI migration (upstream `pkg/volume/csimigration` and
//! csi-translation-lib): every in-tree plugin that provisioned, attached or
//! expanded volumes is migrated in 1.37, its gate locked on, so each of
//! the seven below hands its volumes to its CSI driver. The binder names
//! that driver as a claim's provisioner; the expander names it as the
//! claim's resizer.

use k8s_openapi::api::core::v1::PersistentVolume;

/// The in-tree plugins migrated to CSI, and their drivers, in the order
/// of [`migrated_plugin`]'s sources (upstream
/// `PluginManager.IsMigrationEnabledForPlugin`, csi-translation-lib's
/// `inTreePlugins`).
const MIGRATED: [(&str, &str); 7] = [
    ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    ("kubernetes.io/azure-file", "file.csi.azure.com"),
    ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
];

/// The CSI driver an in-tree plugin is migrated to, if it is (upstream
/// `GetCSINameFromInTreeName`).
pub fn csi_driver(plugin: &str) -> Option<&'static str> {
    MIGRATED.iter().find(|(name, _)| *name == plugin).map(|(_, driver)| *driver)
}

/// The migrated in-tree plugin whose source a volume has, and its CSI
/// driver, if any (upstream `GetInTreePluginNameFromSpec` over the seven
/// translators' `CanSupport`; a volume has one source).
pub fn migrated_plugin(volume: &PersistentVolume) -> Option<(&'static str, &'static str)> {
    let spec = volume.spec.as_ref()?;
    let sources = [
        spec.aws_elastic_block_store.is_some(),
        spec.gce_persistent_disk.is_some(),
        spec.azure_file.is_some(),
        spec.azure_disk.is_some(),
        spec.cinder.is_some(),
        spec.vsphere_volume.is_some(),
        spec.portworx_volume.is_some(),
    ];
    sources.into_iter().zip(MIGRATED).find_map(|(has, migrated)| has.then_some(migrated))
}
