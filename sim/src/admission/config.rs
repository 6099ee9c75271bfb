//! Which admission plugins kube-sim implements and which of them run:
//! the plugins by their kube-apiserver names, and the configuration the
//! API layer is built with (`--disable-admission-plugins`).

use std::str::FromStr;

/// An admission plugin kube-sim implements, by its kube-apiserver name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Plugin {
    /// `NamespaceLifecycle`.
    NamespaceLifecycle,
    /// `ServiceAccount`.
    ServiceAccount,
    /// `StorageObjectInUseProtection`.
    StorageObjectInUseProtection,
    /// `TaintNodesByCondition`.
    TaintNodesByCondition,
}

impl Plugin {
    /// Every plugin kube-sim implements.
    pub const ALL: [Plugin; 4] = [
        Plugin::NamespaceLifecycle,
        Plugin::ServiceAccount,
        Plugin::StorageObjectInUseProtection,
        Plugin::TaintNodesByCondition,
    ];

    /// The name kube-apiserver's flags use.
    pub fn name(self) -> &'static str {
        match self {
            Plugin::NamespaceLifecycle => "NamespaceLifecycle",
            Plugin::ServiceAccount => "ServiceAccount",
            Plugin::StorageObjectInUseProtection => "StorageObjectInUseProtection",
            Plugin::TaintNodesByCondition => "TaintNodesByCondition",
        }
    }
}

impl FromStr for Plugin {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Plugin::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Plugin::ALL.iter().map(|p| p.name()).collect();
            format!("admission plugin {name:?} is not one kube-sim implements ({})", known.join(", "))
        })
    }
}

/// Which admission plugins run: all of them, as kube-apiserver enables
/// them by default, unless disabled.
#[derive(Debug, Clone, Default)]
pub struct AdmissionConfig {
    disabled: Vec<Plugin>,
}

impl AdmissionConfig {
    /// The same configuration with `plugin` off
    /// (`--disable-admission-plugins`).
    pub fn disable(mut self, plugin: Plugin) -> Self {
        if !self.disabled.contains(&plugin) {
            self.disabled.push(plugin);
        }
        self
    }

    /// Whether `plugin` runs.
    pub fn enabled(&self, plugin: Plugin) -> bool {
        !self.disabled.contains(&plugin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_are_named_and_disabled_as_kube_apiserver_names_them() {
        assert_eq!("ServiceAccount".parse::<Plugin>(), Ok(Plugin::ServiceAccount));
        assert!("PodSecurity".parse::<Plugin>().unwrap_err().contains("NamespaceLifecycle, ServiceAccount"));
        let config = AdmissionConfig::default();
        assert!(Plugin::ALL.iter().all(|p| config.enabled(*p)), "every plugin is on by default");
        let config = config.disable(Plugin::ServiceAccount);
        assert!(!config.enabled(Plugin::ServiceAccount));
        assert!(config.enabled(Plugin::NamespaceLifecycle));
    }
}
