//! What to delete and how (upstream `namespaced_resources_deleter.go`
//! discovery and `deleteCollection`): the resource types of a namespace,
//! which discovered ones are content, and whether one `deletecollection`
//! empties a type.

use std::fmt;

/// A namespaced resource type to empty: group, version and plural.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[doc(alias = "GroupVersionResource")]
pub struct Gvr {
    /// API group; empty for the core group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl Gvr {
    /// `resource.group` as upstream's remaining-content messages spell it
    /// (`pods.` for the core group).
    pub fn group_resource(&self) -> String {
        format!("{}.{}", self.resource, self.group)
    }

    /// Whether this is core `pods`, the only type with a graceful
    /// termination estimate.
    pub fn is_pods(&self) -> bool {
        self.group.is_empty() && self.resource == "pods"
    }
}

impl fmt::Display for Gvr {
    /// Go's `GroupVersionResource.String()`: `apps/v1, Resource=deployments`,
    /// `/v1, Resource=pods` for the core group.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Resource={}", self.group, self.version, self.resource)
    }
}

/// Splits a discovery `groupVersion` (`v1`, `apps/v1`) into group and
/// version, as Go's `schema.ParseGroupVersion`.
///
/// # Errors
/// `unexpected GroupVersion string: <s>` for more than one `/`.
pub fn parse_group_version(gv: &str) -> Result<(String, String), String> {
    if gv.is_empty() || gv == "/" {
        return Ok((String::new(), String::new()));
    }
    match gv.split('/').collect::<Vec<_>>().as_slice() {
        [version] => Ok((String::new(), (*version).to_owned())),
        [group, version] => Ok(((*group).to_owned(), (*version).to_owned())),
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// Whether a discovered resource is content this controller deletes: a
/// namespaced top-level resource (not a subresource) with the `delete` verb.
pub fn deletable(name: &str, namespaced: bool, verbs: &[String]) -> bool {
    namespaced && !name.contains('/') && verbs.iter().any(|v| v == "delete")
}

/// Whether the type can be emptied with one `deletecollection` (upstream
/// marks types lacking `list` or `deletecollection` unsupported).
pub fn supports_delete_collection(verbs: &[String]) -> bool {
    ["list", "deletecollection"].iter().all(|needed| verbs.iter().any(|v| v == needed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::testing::strings;

    #[test]
    fn group_versions_parse_as_go_does() {
        type Parsed = Result<(&'static str, &'static str), &'static str>;
        let cases: &[(&str, Parsed)] = &[
            ("v1", Ok(("", "v1"))),
            ("apps/v1", Ok(("apps", "v1"))),
            ("a/b/c", Err("unexpected GroupVersion string: a/b/c")),
        ];
        for (input, want) in cases {
            let got = parse_group_version(input);
            let want = want.map(|(g, v)| (g.to_owned(), v.to_owned())).map_err(str::to_owned);
            assert_eq!(got, want, "{input}");
        }
    }

    #[test]
    fn only_namespaced_top_level_deletable_types_are_content() {
        let verbs = strings(&["get", "list", "delete", "deletecollection"]);
        assert!(deletable("pods", true, &verbs));
        assert!(!deletable("pods/status", true, &verbs));
        assert!(!deletable("nodes", false, &verbs));
        assert!(!deletable("bindings", true, &strings(&["create"])));
        assert!(supports_delete_collection(&verbs));
        assert!(!supports_delete_collection(&strings(&["list", "delete"])));
    }
}
