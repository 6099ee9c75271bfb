//! The feature gates kube-controller-manager 1.37 registers, as data: each
//! gate's versioned spec ([`GATES`]), and the spec in force at 1.37
//! ([`Gate::at_target`]: the last entry at or below 1.37, as component-base's
//! `featureSpecAtEmulationVersion` picks it). Parsing `--feature-gates` and
//! deciding what kcm-rs honours is `feature_gates.rs`'s.
//!
//! # Where the table was read from
//!
//! Written from upstream's files, in our own form, one line per gate:
//! - kube-controller-manager's own gates: `pkg/features/kube_features.go`
//!   of kubernetes/kubernetes as the search tool stores it, a 1.36
//!   development version (its newest entries are 1.36's); for the
//!   scheduling and DRA gates, the 1.37 development split-out of those
//!   gates the tool also stores (entries up to 1.37);
//! - the generic gates it also registers, from the staging repositories
//!   at their newest stored commits (July 2026, 1.37 development):
//!   kubernetes/apiserver `pkg/features`, kubernetes/client-go `features`,
//!   kubernetes/component-base `logs/api/v1`, `metrics/features`,
//!   `zpages/features`, kubernetes/controller-manager `pkg/features`;
//!   apiextensions' three relisted gates from `kube_features.go`.
//!
//! Where 1.37 is past what is stored, the newest stored spec stands (a gate
//! beta and on in 1.35 is on in 1.37). Gates removed in 1.37 are left out, so
//! that they are unknown: the generic ones by their absence from the 1.37
//! staging files, and APIServerTracing, AnyVolumeDataSource,
//! BtreeWatchCache, ConsistentListFromCache, GangScheduling,
//! OrderedNamespaceDeletion, PreventStaticPodAPIReferences,
//! RelaxedDNSSearchValidation, ResilientWatchCacheInitialization,
//! RetryGenerateName, SidecarContainers, StreamingCollectionEncodingToJSON,
//! StreamingCollectionEncodingToProtobuf and WorkloadAwarePreemption as a
//! third-party 1.37 upgrade checker lists them (its list agrees with
//! upstream's 1.37.0-alpha.1 changelog). Gates whose stored spec only says
//! "remove in 1.37" in a comment, and are in neither list, are kept (locked
//! to their default).

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
    g("AllowUnsafeMalformedObjectDeletion", &[a(32), b(37)]),
    g("APIResponseCompression", &[a(8), b(16)]),
    g("APIServerIdentity", &[a(20), b(26)]),
    g("APIServerWebhookAuthenticationToken", &[a(37)]),
    g("APIServingWithRoutine", &[a(30)]),
    g("AtomicFIFO", &[b(36)]),
    g("AuthorizeNodeWithSelectors", &[a(31), b(32), ga_locked(34)]),
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
    g("ClusterTrustBundle", &[a(27), b_off(33)]),
    g("ClusterTrustBundleProjection", &[a(29), b_off(33)]),
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
    g("CRDObservedGenerationTracking", &[b_off(35)]),
    g("CRDValidationRatcheting", &[a(28), b(30), ga_locked(33)]),
    g("CrossNamespaceVolumeDataSource", &[a(26)]),
    g("CSIMigrationPortworx", &[a(23), b_off(25), b(31), ga_locked(33)]),
    g("CSIServiceAccountTokenSecrets", &[b(35)]),
    g("CSIVolumeHealth", &[a(21)]),
    g("CustomCPUCFSQuotaPeriod", &[a(12)]),
    g("CustomResourceFieldSelectors", &[a(30), b(31), ga_locked(32)]),
    g("DeclarativeValidation", &[b(33), ga_locked(36)]),
    g("DeclarativeValidationBeta", &[b(36)]),
    g("DeclarativeValidationTakeover", &[b_off(33), deprecated(36), deprecated_locked(37)]),
    g("DeploymentReplicaSetTerminatingReplicas", &[a(33), b(35)]),
    g("DetectCacheInconsistency", &[b(34)]),
    g("DisableAllocatorDualWrite", &[a(31), b_off(33), ga(34), ga_locked(35)]),
    g("DisableCPUQuotaWithExclusiveCPUs", &[b(33)]),
    g("DisableNodeKubeProxyVersion", &[a(29), deprecated(31), deprecated_on(33)]),
    g("DRAAdminAccess", &[a(32), b(34), ga_locked(36)]),
    g("DRAConsumableCapacity", &[a(34), b(36)]),
    g("DRADerivedAttributes", &[a(37)]),
    g("DRADeviceBindingConditions", &[a(34), b(36)]),
    g("DRADeviceCompatibilityGroups", &[a(37)]),
    g("DRADeviceTaintRules", &[a(35), b_off(36), ga(37)]),
    g("DRADeviceTaints", &[a(33), b(36), ga(37)]),
    g("DRAExtendedResource", &[a(34), b(36), ga_locked(37)]),
    g("DRAFractionalCapacityRange", &[b(37)]),
    g("DRAListTypeAttributes", &[a(36)]),
    g("DRANodeAllocatableResources", &[a(36)]),
    g("DRAOptionalNodeOperations", &[a(37)]),
    g("DRAPartitionableDevices", &[a(33), b(36)]),
    g("DRAPrioritizedList", &[a(33), b(34), ga(36), ga_locked(37)]),
    g("DRAResourceClaimDeviceStatus", &[a(32), b(33), ga_locked(37)]),
    g("DRASchedulerFilterTimeout", &[b(34)]),
    g("DRAWorkloadResourceClaims", &[a(36), b_off(37)]),
    g("DynamicResourceAllocation", &[a(26), b_off(32), ga(34), ga_locked(35)]),
    g("EnvFiles", &[a(34), b(35)]),
    g("EtcdRangeStream", &[b(37)]),
    g("EventedPLEG", &[a(26)]),
    g("ExcludeAdmissionWebhookVirtualResources", &[b(37)]),
    g("ExecProbeTimeout", &[ga(20), ga_locked(35)]),
    g("ExternalServiceAccountTokenSigner", &[a(32), b(34)]),
    g("GenericWorkload", &[a(35), b_off(37)]),
    g("GitRepoVolumeDriver", &[ga(0), deprecated(33)]),
    g("GracefulNodeShutdown", &[a(20), b(21)]),
    g("GracefulNodeShutdownBasedOnPodPriority", &[a(23), b(24)]),
    g("HonorPVReclaimPolicy", &[a(23), b(31), ga_locked(33)]),
    g("HostnameOverride", &[a(34), b(35)]),
    g("HPAConfigurableTolerance", &[a(33), b(35)]),
    g("HPAScaleToZero", &[a(16)]),
    g("ImageMaximumGCAge", &[a(29), b(30), ga_locked(35)]),
    g("ImageVolume", &[a(31), b_off(33), b(35)]),
    g("ImageVolumeWithDigest", &[a(35)]),
    g("InformerResourceVersion", &[a(30), ga(35)]),
    g("InOrderInformers", &[b(33), ga_locked(36)]),
    g("InOrderInformersBatchProcess", &[b(35)]),
    g("InPlacePodLevelResourcesVerticalScaling", &[a(35), b(36)]),
    g("InPlacePodVerticalScaling", &[a(27), b(33), ga_locked(35)]),
    g("InPlacePodVerticalScalingAllocatedStatus", &[a(32), deprecated(33)]),
    g("InPlacePodVerticalScalingExclusiveCPUs", &[a(32)]),
    g("InPlacePodVerticalScalingExclusiveMemory", &[a(34)]),
    g("InPlacePodVerticalScalingSchedulerPreemption", &[a(37)]),
    g("InterPodAffinityHostnameFastPath", &[a(37)]),
    g("InTreePluginPortworxUnregister", &[a(23)]),
    g("JobBackoffLimitPerIndex", &[a(28), b(29), ga_locked(33)]),
    g("JobManagedBy", &[a(30), b(32), ga_locked(35)]),
    g("JobPodReplacementPolicy", &[a(28), b(29), ga_locked(34)]),
    g("JobSuccessPolicy", &[a(30), b(31), ga_locked(33)]),
    g("KMSv1", &[ga(0), deprecated_on(28), deprecated(29)]),
    g("KubeletCgroupDriverFromCRI", &[a(28), b(31), ga_locked(34)]),
    g("KubeletCrashLoopBackOffMax", &[a(32), b(35)]),
    g("KubeletEnsureSecretPulledImages", &[a(33), b(35)]),
    g("KubeletFineGrainedAuthz", &[a(32), b(33)]),
    g("KubeletInUserNamespace", &[a(22)]),
    g("KubeletPodResourcesDynamicResources", &[a(27), b(34)]),
    g("KubeletPodResourcesGet", &[a(27), b(34)]),
    g("KubeletPodResourcesListUseActivePods", &[ga_off(0), deprecated_on(34)]),
    g("KubeletPSI", &[a(33), b(34)]),
    g("KubeletRegistrationGetOnExistsOnly", &[ga(0), deprecated(32)]),
    g("KubeletSeparateDiskGC", &[a(29), b(31)]),
    g("KubeletServiceAccountTokenForCredentialProviders", &[a(33), b(34)]),
    g("KubeletTracing", &[a(25), b(27), ga_locked(34)]),
    g("ListFromCacheSnapshot", &[a(33), b(34)]),
    g("LocalStorageCapacityIsolationFSQuotaMonitoring", &[a(15), b_off(31)]),
    g("LogarithmicScaleDown", &[a(21), b(22), ga_locked(31)]),
    g("LoggingAlphaOptions", &[a(24)]),
    g("LoggingBetaOptions", &[b(24)]),
    g("ManifestBasedAdmissionControlConfig", &[a(36), b(37)]),
    g("MatchLabelKeysInPodAffinity", &[a(29), b(31), ga_locked(33)]),
    g("MatchLabelKeysInPodTopologySpread", &[a(25), b(27)]),
    g("MatchLabelKeysInPodTopologySpreadSelectorMerge", &[b(34)]),
    g("MaxUnavailableStatefulSet", &[a(24), b(35)]),
    g("MemoryManager", &[a(21), b(22), ga_locked(32)]),
    g("MemoryQoS", &[a(22)]),
    g("MultiCIDRServiceAllocator", &[a(27), b_off(31), ga(33), ga_locked(34)]),
    g("MutableCSINodeAllocatableCount", &[a(33), b_off(34), b(35)]),
    g("MutablePodResourcesForSuspendedJobs", &[a(35)]),
    g("MutablePVNodeAffinity", &[a(35)]),
    g("MutableSchedulingDirectivesForSuspendedJobs", &[a(35)]),
    g("MutatingAdmissionPolicy", &[a(32), b_off(34), ga(36)]),
    g("NativeHistograms", &[a(36), b(37)]),
    g("NFTablesProxyMode", &[a(29), b(31), ga_locked(33)]),
    g("NodeDeclaredFeatures", &[a(35), b(36), ga_locked(37)]),
    g("NodeInclusionPolicyInPodTopologySpread", &[a(25), b(26), ga_locked(33)]),
    g("NodeLogQuery", &[a(27), b_off(30)]),
    g("NodeSwap", &[a(22), b_off(28), b(30), ga_locked(34)]),
    g("NominatedNodeNameForExpectation", &[a(34), b(35)]),
    g("OpenAPIEnums", &[a(23), b(24)]),
    g("OpportunisticBatching", &[b(35)]),
    g("PodAndContainerStatsFromCRI", &[a(23)]),
    g("PodCertificateRequest", &[a(34), b_off(35)]),
    g("PodDeletionCost", &[a(21), b(22)]),
    g("PodGroupPreemptionPolicy", &[a(37)]),
    g("PodLevelResources", &[a(32), b(34)]),
    g("PodLifecycleSleepAction", &[a(29), b(30), ga_locked(34)]),
    g("PodLifecycleSleepActionAllowZero", &[a(32), b(33), ga_locked(34)]),
    g("PodLogsQuerySplitStreams", &[a(32)]),
    g("PodObservedGenerationTracking", &[a(33), b(34), ga_locked(35)]),
    g("PodReadyToStartContainersCondition", &[a(28), b(29)]),
    g("PodSchedulingReadiness", &[a(26), b(27), ga_locked(30)]),
    g("PodTopologyLabelsAdmission", &[a(33), b(35)]),
    g("PortForwardWebsockets", &[a(30), b(31)]),
    g("PreferSameTrafficDistribution", &[a(33), b(34), ga_locked(35)]),
    g("ProcMountType", &[a(12), b_off(31), b(33)]),
    g("QOSReserved", &[a(11)]),
    g("RecoverVolumeExpansionFailure", &[a(23), b(32), ga_locked(34)]),
    g("RecursiveReadOnlyMounts", &[a(30), b(31), ga_locked(33)]),
    g("ReduceDefaultCrashLoopBackOffDecay", &[a(33)]),
    g("RelaxedEnvironmentVariableValidation", &[a(30), b(32), ga_locked(34)]),
    g("RelaxedServiceNameValidation", &[a(34)]),
    g("ReloadKubeletServerCertificateFile", &[b(31)]),
    g("RemoteRequestHeaderUID", &[a(32), b(33)]),
    g("ResourceHealthStatus", &[a(31)]),
    g("RestartAllContainersOnContainerExits", &[a(35)]),
    g("RotateKubeletServerCertificate", &[a(7), b(12)]),
    g("RuntimeClassInImageCriAPI", &[a(29)]),
    g("SchedulerAsyncAPICalls", &[b_off(34)]),
    g("SchedulerAsyncPreemption", &[a(32), b(33)]),
    g("SchedulerPopFromBackoffQ", &[b(33)]),
    g("SchedulerPreQueueingHints", &[a(37)]),
    g("SchedulerQueueingHints", &[b_off(28), b(32), ga_locked(34)]),
    g("SELinuxChangePolicy", &[a(32), b(33)]),
    g("SELinuxMount", &[a(30), b_off(33)]),
    g("SELinuxMountReadWriteOncePod", &[a(25), b_off(27), b(28)]),
    g("SeparateCacheWatchRPC", &[b(28), deprecated(33), deprecated_locked(36)]),
    g("SeparateTaintEvictionController", &[b(29), ga_locked(34)]),
    g("ServiceAccountNodeAudienceRestriction", &[b_off(32), b(33)]),
    g("ServiceAccountTokenJTI", &[a(29), b(30), ga_locked(32)]),
    g("ServiceAccountTokenNodeBinding", &[a(29), b(31), ga_locked(33)]),
    g("ServiceAccountTokenNodeBindingValidation", &[a(29), b(30), ga_locked(32)]),
    g("ServiceAccountTokenPodNodeInfo", &[a(29), b(30), ga_locked(32)]),
    g("ServiceTrafficDistribution", &[a(30), b(31), ga_locked(33)]),
    g("ShardedListAndWatch", &[a(36)]),
    g("SizeBasedListCostEstimate", &[b(34)]),
    g("StatefulSetSemanticRevisionComparison", &[b(0)]),
    g("StorageCapacityScoring", &[a(33), b(37)]),
    g("StorageNamespaceIndex", &[b(30), deprecated_on(33)]),
    g("StorageVersionAPI", &[a(20)]),
    g("StorageVersionHash", &[a(14), b(15)]),
    g("StorageVersionMigrator", &[a(30), b_off(35)]),
    g("StrictIPCIDRValidation", &[a(33)]),
    g("StructuredAuthenticationConfigurationEgressSelector", &[b(34)]),
    g("StructuredAuthenticationConfigurationJWKSMetrics", &[b(35)]),
    g("SupplementalGroupsPolicy", &[a(31), b(33), ga_locked(35)]),
    g("SystemdWatchdog", &[b(32), ga_locked(35)]),
    g("TaintTolerationComparisonOperators", &[a(35)]),
    g("TokenRequestServiceAccountUIDValidation", &[b(34)]),
    g("TopologyAwareHints", &[a(21), b_off(23), b(24), ga_locked(33)]),
    g("TopologyAwareWorkloadScheduling", &[a(36)]),
    g("TopologyManagerPolicyAlphaOptions", &[a(26)]),
    g("TopologyManagerPolicyBetaOptions", &[b_off(26), b(28)]),
    g("TopologyManagerPolicyOptions", &[a(26), b(28), ga(32)]),
    g("TranslateStreamCloseWebsocketRequests", &[a(29), b(30)]),
    g("UnauthenticatedHTTP2DOSMitigation", &[b_off(25), b(29)]),
    g("UnknownVersionInteroperabilityProxy", &[a(28), b(36)]),
    g("UnlockWhileProcessingFIFO", &[b(36)]),
    g("UserNamespacesHostNetworkSupport", &[a(35)]),
    g("UserNamespacesSupport", &[a(25), b_off(30), b(33)]),
    g("VolumeAttributesClass", &[a(29), b_off(31), ga(34), ga_locked(36)]),
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
];
