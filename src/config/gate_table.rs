//! The feature gates kube-controller-manager 1.37 registers, as data: each
//! gate's versioned spec ([`GATES`]), and the spec in force at 1.37
//! ([`Gate::at_target`]: the last entry at or below 1.37, as component-base's
//! `featureSpecAtEmulationVersion` picks it). Parsing `--feature-gates` and
//! deciding what kcm-rs honours is `feature_gates.rs`'s.
//!
//! # Where the table was read from
//!
//! Every gate kube-controller-manager 1.37.2 registers (its own, and the
//! generic gates of the staging modules it links), with each gate's whole
//! versioned spec, read off k8s.io/kubernetes v1.37.2 as built: the
//! versioned specs of the process's default feature gate once
//! kube-controller-manager's command package is linked, written here one
//! line per gate in our own form. Removed gates are unknown, as upstream.
//! A spec that holds only from a minimum compatibility version above 1.36
//! (`DRAFractionalCapacityRange`'s on-by-default 1.37 entry) is left out:
//! kcm-rs runs at upstream's default `--min-compatibility-version`, 1.36,
//! where upstream does not use it either.
//! The integration test `upstream_help` compares the alpha and beta gates
//! `--help` lists with kube-controller-manager 1.37.2's `--help`.

/// The minor version kcm-rs stands in for: Kubernetes 1.37.
pub const TARGET_MINOR: u32 = 37;

/// A gate's maturity (upstream's `PreRelease`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Alpha: off by default, set by `AllAlpha`.
    Alpha,
    /// Beta: set by `AllBeta`.
    Beta,
    /// Generally available.
    Ga,
    /// Deprecated.
    Deprecated,
}

/// One entry of a gate's versioned spec: from 1.`minor` on, until the next
/// entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The minor version the entry starts at (0 for upstream's "1.0").
    pub minor: u32,
    /// Whether the gate is on unless set.
    pub default: bool,
    /// Its maturity.
    pub stage: Stage,
    /// Whether only the default may be set (upstream's `LockToDefault`).
    pub locked: bool,
}

/// A feature gate and its versioned spec, oldest entry first.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    /// The name `--feature-gates` takes.
    pub name: &'static str,
    /// Its spec over releases.
    pub specs: &'static [Spec],
}

impl Gate {
    /// The spec in force at 1.37: the last entry at or below it.
    pub fn at_target(&self) -> Spec {
        let mut current = self.specs[0];
        for spec in self.specs.iter().filter(|s| s.minor <= TARGET_MINOR) {
            current = *spec;
        }
        current
    }
}

/// The gate a name names, if kube-controller-manager 1.37 knows it.
pub fn gate(name: &str) -> Option<&'static Gate> {
    GATES.iter().find(|g| g.name == name)
}

// === table ===

const fn g(name: &'static str, specs: &'static [Spec]) -> Gate {
    Gate { name, specs }
}

const fn spec(minor: u32, default: bool, stage: Stage, locked: bool) -> Spec {
    Spec { minor, default, stage, locked }
}

const fn a(minor: u32) -> Spec {
    spec(minor, false, Stage::Alpha, false)
}

const fn b(minor: u32) -> Spec {
    spec(minor, true, Stage::Beta, false)
}

const fn b_off(minor: u32) -> Spec {
    spec(minor, false, Stage::Beta, false)
}

const fn ga(minor: u32) -> Spec {
    spec(minor, true, Stage::Ga, false)
}

const fn ga_off(minor: u32) -> Spec {
    spec(minor, false, Stage::Ga, false)
}

const fn ga_locked(minor: u32) -> Spec {
    spec(minor, true, Stage::Ga, true)
}

const fn deprecated(minor: u32) -> Spec {
    spec(minor, false, Stage::Deprecated, false)
}

const fn deprecated_on(minor: u32) -> Spec {
    spec(minor, true, Stage::Deprecated, false)
}

const fn deprecated_locked(minor: u32) -> Spec {
    spec(minor, false, Stage::Deprecated, true)
}

const fn deprecated_on_locked(minor: u32) -> Spec {
    spec(minor, true, Stage::Deprecated, true)
}

/// Every gate kube-controller-manager 1.37 registers but `AllAlpha` and
/// `AllBeta` (which `feature_gates.rs` handles), sorted by name.
#[rustfmt::skip]
pub const GATES: &[Gate] = &[
    g("AggregatedDiscoveryRemoveBetaType", &[ga_off(0), deprecated_on(33), deprecated_on_locked(35)]),
    g("AllowDNSOnlyNodeCSR", &[ga(0), deprecated(31)]),
    g("AllowInsecureKubeletCertificateSigningRequests", &[ga(0), deprecated(31)]),
    g("AllowOverwriteTerminationGracePeriodSeconds", &[ga(0), deprecated(32), deprecated_locked(35)]),
    g("AllowParsingUserUIDFromCertAuth", &[b(33)]),
    g("AllowServiceExternalIPs", &[ga(0)]),
    g("AllowUnsafeMalformedObjectDeletion", &[a(32), b(37)]),
    g("APIResponseCompression", &[a(8), b(16)]),
    g("APIServerIdentity", &[a(20), b(26)]),
    g("APIServerWebhookAuthenticationToken", &[a(37)]),
    g("APIServingWithRoutine", &[a(30)]),
    g("AtomicFIFO", &[b(36)]),
    g("AtomicWriteVolumeUserFields", &[a(37)]),
    g("AuthorizePodWebsocketUpgradeCreatePermission", &[b(35)]),
    g("CBORServingAndStorage", &[a(32)]),
    g("ChangeContainerStatusOnKubeletRestart", &[ga(0), deprecated(35)]),
    g("ClearingNominatedNodeNameAfterBinding", &[a(34), b(35)]),
    g("ClientsAllowCARotation", &[b(36)]),
    g("ClientsAllowCBOR", &[a(32)]),
    g("ClientsAllowTLSCacheGC", &[b(36)]),
    g("ClientsPreferCBOR", &[a(32)]),
    g("CloudControllerManagerWatchBasedRoutesReconciliation", &[a(35)]),
    g("CloudControllerManagerWebhook", &[a(27)]),
    g("ClusterTrustBundle", &[a(27), b_off(33), ga(37)]),
    g("ClusterTrustBundleProjection", &[a(29), b_off(33), ga(37)]),
    g("ComponentFlagz", &[a(32), b(36)]),
    g("ComponentStatusz", &[a(32), b(36)]),
    g("CompositePodGroup", &[a(37)]),
    g("ConcurrentWatchObjectDecode", &[b_off(31), b(37)]),
    g("ConsistentListFromCacheSkipTimeoutFallback", &[a(37)]),
    g("ConstrainedImpersonation", &[a(35), b(36)]),
    g("ContainerCheckpoint", &[a(25), b(30)]),
    g("ContainerRestartRules", &[a(34), b(35)]),
    g("ContainerStopSignals", &[a(33)]),
    g("ContextualLogging", &[a(24), b(30)]),
    g("ControllerManagerReleaseLeaderElectionLockOnExit", &[a(36)]),
    g("CoordinatedLeaderElection", &[a(31), b_off(33)]),
    g("CPUManagerPolicyAlphaOptions", &[a(23)]),
    g("CPUManagerPolicyBetaOptions", &[b(23)]),
    g("CPUManagerPolicyOptions", &[a(22), b(23), ga_locked(33)]),
    g("CRDObservedGenerationTracking", &[b_off(35), b(36)]),
    g("CRDValidationRatcheting", &[a(28), b(30), ga_locked(33)]),
    g("CRIListStreaming", &[a(36)]),
    g("CrossNamespaceVolumeDataSource", &[a(26)]),
    g("CSIServiceAccountTokenSecrets", &[b(35), ga_locked(36)]),
    g("CSIVolumeHealth", &[a(21)]),
    g("CustomCPUCFSQuotaPeriod", &[a(12), ga(36)]),
    g("CustomResourceFieldSelectors", &[a(30), b(31), ga_locked(32)]),
    g("DeclarativeValidation", &[b(33), ga_locked(36)]),
    g("DeclarativeValidationBeta", &[b(36)]),
    g("DeclarativeValidationTakeover", &[b_off(33), deprecated(36), deprecated_locked(37)]),
    g("DefaultPodSysctls", &[a(37)]),
    g("DeploymentReplicaSetTerminatingReplicas", &[a(33), b(35)]),
    g("DetectCacheInconsistency", &[b(34)]),
    g("DisableAllocatorDualWrite", &[a(31), b_off(33), ga(34), ga_locked(35)]),
    g("DisableCPUQuotaWithExclusiveCPUs", &[b(33), deprecated_on(36), deprecated_on_locked(37)]),
    g("DisableNodeKubeProxyVersion", &[a(29), deprecated(31), deprecated_on(33), deprecated_on_locked(36)]),
    g("DRAAdminAccess", &[a(32), b(34), ga_locked(36)]),
    g("DRAConsumableCapacity", &[a(34), b(36)]),
    g("DRADerivedAttributes", &[a(37)]),
    g("DRADeviceBindingConditions", &[a(34), b(36)]),
    g("DRADeviceCompatibilityGroups", &[a(37)]),
    g("DRADeviceTaintRules", &[a(35), b_off(36), ga(37)]),
    g("DRADeviceTaints", &[a(33), b(36), ga(37)]),
    g("DRAExtendedResource", &[a(34), b(36), ga_locked(37)]),
    g("DRAFractionalCapacityRange", &[b_off(37)]),
    g("DRAListTypeAttributes", &[a(36)]),
    g("DRANodeAllocatableResources", &[a(36)]),
    g("DRAOptionalNodeOperations", &[a(37)]),
    g("DRAPartitionableDevices", &[a(33), b(36)]),
    g("DRAPartitionableDevicesType", &[a(37)]),
    g("DRAPrioritizedList", &[a(33), b(34), ga(36), ga_locked(37)]),
    g("DRAResourceClaimDeviceStatus", &[a(32), b(33), ga_locked(37)]),
    g("DRAResourceClaimGranularStatusAuthorization", &[b(36)]),
    g("DRAResourcePoolStatus", &[a(36)]),
    g("DRASchedulerFilterTimeout", &[b(34)]),
    g("DRAWorkloadResourceClaims", &[a(36), b_off(37)]),
    g("DynamicResourceAllocation", &[a(26), b_off(32), ga(34), ga_locked(35)]),
    g("EmptyDirVolumeMode", &[a(37)]),
    g("EnvFiles", &[a(34), b(35)]),
    g("EtcdRangeStream", &[b(37)]),
    g("EventedPLEG", &[a(26)]),
    g("EvictionRequestAPI", &[a(37)]),
    g("ExcludeAdmissionWebhookVirtualResources", &[b(37)]),
    g("ExecProbeTimeout", &[ga(20), ga_locked(35)]),
    g("ExtendWebSocketsToKubelet", &[b(36)]),
    g("ExternalServiceAccountTokenSigner", &[a(32), b(34), ga_locked(36)]),
    g("GenericWorkload", &[a(35), b_off(37)]),
    g("GitRepoVolumeDriver", &[ga(0), deprecated(33), deprecated_locked(36)]),
    g("GracefulNodeShutdown", &[a(20), b(21)]),
    g("GracefulNodeShutdownBasedOnPodPriority", &[a(23), b(24)]),
    g("GRPCContainerProbeTLS", &[a(37)]),
    g("H2CContainerProbe", &[a(37)]),
    g("HostnameOverride", &[a(34), b(35), ga_locked(37)]),
    g("HPAConfigurableTolerance", &[a(33), b(35), ga_locked(37)]),
    g("HPAGeneration", &[b(37)]),
    g("HPAOptimizedSelectorStore", &[b(37)]),
    g("HPAScaleToZero", &[a(16), b(37)]),
    g("HugepageAwareEviction", &[b(37)]),
    g("ImageMaximumGCAge", &[a(29), b(30), ga_locked(35)]),
    g("ImageVolume", &[a(31), b_off(33), b(35), ga_locked(36)]),
    g("ImageVolumeWithDigest", &[a(35)]),
    g("InformerResourceVersion", &[a(30), ga(35)]),
    g("InOrderInformers", &[b(33), ga_locked(36)]),
    g("InOrderInformersBatchProcess", &[b(35)]),
    g("InPlacePodLevelResourcesVerticalScaling", &[a(35), b(36)]),
    g("InPlacePodVerticalScaling", &[a(27), b(33), ga_locked(35)]),
    g("InPlacePodVerticalScalingExclusiveCPUs", &[a(32)]),
    g("InPlacePodVerticalScalingExclusiveMemory", &[a(34)]),
    g("InPlacePodVerticalScalingInitContainers", &[b(36), ga_locked(37)]),
    g("InPlacePodVerticalScalingMemoryBackedVolumes", &[a(37)]),
    g("InPlacePodVerticalScalingSchedulerPreemption", &[a(37)]),
    g("InterPodAffinityHostnameFastPath", &[a(37)]),
    g("JobManagedBy", &[a(30), b(32), ga_locked(35)]),
    g("KMSv1", &[ga(0), deprecated_on(28), deprecated(29)]),
    g("KubeletAllocatedPodsEndpoint", &[a(37)]),
    g("KubeletCgroupDriverFromCRI", &[a(28), b(31), ga_locked(34)]),
    g("KubeletCrashLoopBackOffMax", &[a(32), b(35)]),
    g("KubeletEnsureSecretPulledImages", &[a(33), b(35)]),
    g("KubeletFineGrainedAuthz", &[a(32), b(33), ga_locked(36)]),
    g("KubeletInUserNamespace", &[a(22), b(37)]),
    g("KubeletPodResourcesDynamicResources", &[a(27), b(34), ga_locked(36)]),
    g("KubeletPodResourcesGet", &[a(27), b(34), ga_locked(36)]),
    g("KubeletPodResourcesListUseActivePods", &[ga_off(0), deprecated_on(34)]),
    g("KubeletPSI", &[a(33), b(34), ga_locked(36)]),
    g("KubeletRegistrationGetOnExistsOnly", &[ga(0), deprecated(32)]),
    g("KubeletSeparateDiskGC", &[a(29), b(31)]),
    g("KubeletServiceAccountTokenForCredentialProviders", &[a(33), b(34)]),
    g("KubeletTracing", &[a(25), b(27), ga_locked(34)]),
    g("KubeProxyIPVS", &[ga(0), deprecated_on(37)]),
    g("KubeProxyNFTablesLocalhostNodePorts", &[a(37)]),
    g("ListFromCacheSnapshot", &[a(33), b(34)]),
    g("LocalStorageCapacityIsolationFSQuotaMonitoring", &[a(15), b_off(31)]),
    g("LoggingAlphaOptions", &[a(24)]),
    g("LoggingBetaOptions", &[b(24)]),
    g("ManifestBasedAdmissionControlConfig", &[a(36), b(37)]),
    g("MatchLabelKeysInPodAffinity", &[a(29), b(31), ga_locked(33)]),
    g("MatchLabelKeysInPodTopologySpread", &[a(25), b(27)]),
    g("MatchLabelKeysInPodTopologySpreadSelectorMerge", &[b(34)]),
    g("MaxUnavailableStatefulSet", &[a(24), b_off(35), b(37)]),
    g("MemoryQoS", &[a(22), b(37)]),
    g("MultiCIDRServiceAllocator", &[a(27), b_off(31), ga(33), ga_locked(34)]),
    g("MutableCSINodeAllocatableCount", &[a(33), b_off(34), b(35), ga_locked(36)]),
    g("MutablePodResourcesForSuspendedJobs", &[a(35), b(36)]),
    g("MutablePVNodeAffinity", &[a(35)]),
    g("MutableSchedulingDirectivesForSuspendedJobs", &[a(35), b(36)]),
    g("MutatingAdmissionPolicy", &[a(32), b_off(34), ga(36)]),
    g("NativeHistograms", &[a(36), b(37)]),
    g("NFTablesNetlink", &[b(37)]),
    g("NFTablesProxyMode", &[a(29), b(31), ga_locked(33)]),
    g("NodeControllerLeaseCircuitBreaker", &[b(37)]),
    g("NodeDeclaredFeatures", &[a(35), b(36), ga_locked(37)]),
    g("NodeInclusionPolicyInPodTopologySpread", &[a(25), b(26), ga_locked(33)]),
    g("NodeLifecycleConditions", &[a(37)]),
    g("NodeLogQuery", &[a(27), b_off(30), ga_locked(36)]),
    g("NodeSwap", &[a(22), b_off(28), b(30), ga_locked(34)]),
    g("NominatedNodeNameForExpectation", &[a(34), b(35)]),
    g("OpenAPIEnums", &[a(23), b(24)]),
    g("OpportunisticBatching", &[b(35)]),
    g("PersistentVolumeClaimUnusedSinceTime", &[a(36), b(37)]),
    g("PLEGOnDemandRelist", &[b(36), ga_locked(37)]),
    g("PodAndContainerStatsFromCRI", &[a(23), b_off(37)]),
    g("PodCertificateRequest", &[a(34), b_off(35), ga(37)]),
    g("PodDeletionCost", &[a(21), b(22)]),
    g("PodGroupPreemptionPolicy", &[a(37)]),
    g("PodLevelResourceManagers", &[a(36), b_off(37)]),
    g("PodLevelResources", &[a(32), b(34)]),
    g("PodLevelResourcesFixDefaulting", &[b(37)]),
    g("PodLevelResourcesFixKubeletQOSClass", &[b(37)]),
    g("PodLogsQuerySplitStreams", &[a(32)]),
    g("PodObservedGenerationTracking", &[a(33), b(34), ga_locked(35)]),
    g("PodReadyToStartContainersCondition", &[a(28), b(29), ga_locked(37)]),
    g("PodsAPI", &[a(36), b(37)]),
    g("PodSchedulingReadiness", &[a(26), b(27), ga_locked(30)]),
    g("PodTopologyLabelsAdmission", &[a(33), b(35)]),
    g("PortForwardWebsockets", &[a(30), b(31)]),
    g("PreferSameTrafficDistribution", &[a(33), b(34), ga_locked(35)]),
    g("ProcMountType", &[a(12), b_off(31), b(33), ga_locked(36)]),
    g("QOSReserved", &[a(11)]),
    g("RecoverVolumeExpansionFailure", &[a(23), b(32), ga_locked(34)]),
    g("RecursiveReadOnlyMounts", &[a(30), b(31), ga_locked(33)]),
    g("ReduceDefaultCrashLoopBackOffDecay", &[a(33)]),
    g("RelaxedEnvironmentVariableValidation", &[a(30), b(32), ga_locked(34)]),
    g("RelaxedServiceNameValidation", &[a(34), b(36), ga_locked(37)]),
    g("ReloadKubeletClientCAFile", &[b(36)]),
    g("ReloadKubeletServerCertificateFile", &[b(31)]),
    g("RemoteRequestHeaderUID", &[a(32), b(33)]),
    g("ResourceHealthStatus", &[a(31), b(36)]),
    g("ResourceHealthStatusMessage", &[b(36)]),
    g("RestartAllContainersOnContainerExits", &[a(35), b(36)]),
    g("RotateKubeletServerCertificate", &[a(7), b(12)]),
    g("RuntimeClassInImageCriApi", &[a(29)]),
    g("SchedulerAsyncAPICalls", &[b_off(34)]),
    g("SchedulerAsyncPreemption", &[a(32), b(33)]),
    g("SchedulerPopFromBackoffQ", &[b(33)]),
    g("SchedulerPreQueueingHints", &[a(37)]),
    g("SELinuxChangePolicy", &[a(32), b(33), ga_locked(36)]),
    g("SELinuxMount", &[a(30), b_off(33), ga(37)]),
    g("SELinuxMountReadWriteOncePod", &[a(25), b_off(27), b(28), ga_locked(36)]),
    g("SeparateCacheWatchRPC", &[b(28), deprecated(33), deprecated_locked(36)]),
    g("SeparateTaintEvictionController", &[b(29), ga_locked(34)]),
    g("ServiceAccountNodeAudienceRestriction", &[b_off(32), b(33)]),
    g("ServiceAccountTokenJTI", &[a(29), b(30), ga_locked(32)]),
    g("ServiceAccountTokenNodeBinding", &[a(29), b(31), ga_locked(33)]),
    g("ServiceAccountTokenNodeBindingValidation", &[a(29), b(30), ga_locked(32)]),
    g("ServiceAccountTokenPodNodeInfo", &[a(29), b(30), ga_locked(32)]),
    g("ServiceCIDRStatusFieldWiping", &[ga_off(0), deprecated_on(36)]),
    g("ShardedListAndWatch", &[a(36)]),
    g("SizeBasedListCostEstimate", &[b(34)]),
    g("StaleControllerConsistencyDaemonSet", &[b(36)]),
    g("StaleControllerConsistencyHPA", &[b(37)]),
    g("StaleControllerConsistencyJob", &[b(36)]),
    g("StaleControllerConsistencyReplicaSet", &[b(36)]),
    g("StaleControllerConsistencyStatefulSet", &[b(36)]),
    g("StatefulSetRecreateStrategy", &[a(37)]),
    g("StatefulSetSemanticRevisionComparison", &[b(0)]),
    g("StorageCapacityScoring", &[a(33), b(37)]),
    g("StorageNamespaceIndex", &[b(30), deprecated_on(33)]),
    g("StorageVersionAPI", &[a(20)]),
    g("StorageVersionHash", &[a(14), b(15)]),
    g("StorageVersionMigrator", &[a(30), b_off(35), ga(37)]),
    g("StrictIPCIDRValidation", &[a(33), b(36)]),
    g("StructuredAuthenticationConfigurationEgressSelector", &[b(34)]),
    g("StructuredAuthenticationConfigurationJWKSMetrics", &[b(35)]),
    g("SupplementalGroupsPolicy", &[a(31), b(33), ga_locked(35)]),
    g("SystemdWatchdog", &[b(32), ga_locked(35)]),
    g("TaintTolerationComparisonOperators", &[a(35)]),
    g("TokenRequestServiceAccountUIDValidation", &[b(34)]),
    g("TopologyAwareWorkloadScheduling", &[a(36)]),
    g("TopologyManagerPolicyAlphaOptions", &[a(26)]),
    g("TopologyManagerPolicyBetaOptions", &[b_off(26), b(28)]),
    g("TopologyManagerPolicyOptions", &[a(26), b(28), ga_locked(32)]),
    g("TranslateStreamCloseWebsocketRequests", &[a(29), b(30)]),
    g("UnauthenticatedHTTP2DOSMitigation", &[b_off(25), b(29)]),
    g("UnknownVersionInteroperabilityProxy", &[a(28), b(36)]),
    g("UnlockWhileProcessingFIFO", &[b(36)]),
    g("UserNamespacesHostNetworkSupport", &[a(35)]),
    g("UserNamespacesSupport", &[a(25), b_off(30), b(33), ga_locked(36)]),
    g("VolumeAttributesClass", &[a(29), b_off(31), ga(34), ga_locked(36)]),
    g("VolumeBindMountOptions", &[a(37)]),
    g("VolumeLimitScaling", &[a(35), b(37)]),
    g("WatchCacheInitializationPostStartHook", &[b_off(31), b(36), ga_locked(37)]),
    g("WatchList", &[a(27), b(32), b_off(33), b(34)]),
    g("WatchListClient", &[b_off(30), b(35)]),
    g("WatchListCompression", &[b(37)]),
    g("WebhookRoundTripLoadBalancing", &[b(37)]),
    g("WindowsCPUAndMemoryAffinity", &[a(32)]),
    g("WindowsGracefulNodeShutdown", &[a(32), b(34)]),
    g("WindowsHostNetwork", &[a(26), deprecated(33)]),
    g("WinDSR", &[a(14), b(33), ga_locked(34)]),
    g("WinOverlay", &[a(14), b(20), ga_locked(34)]),
    g("WorkloadWithJob", &[a(36)]),
];
