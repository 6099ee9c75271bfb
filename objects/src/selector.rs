//! [`SelectorSpec`]: a label selector as the cache keeps a ReplicaSet's
//! and a Deployment's, its `matchLabels` a shared [`Labels`] map (a
//! ReplicaSet's are its own labels but for the extra ones it carries).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::meta::Labels;

/// `spec.selector`: `matchLabels` shared, `matchExpressions` as
/// k8s-openapi decodes them (few objects have any).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelectorSpec {
    /// `matchLabels`.
    pub match_labels: Labels,
    /// `matchExpressions`.
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

impl SelectorSpec {
    /// Keeps `selector`.
    pub fn new(selector: &LabelSelector) -> Self {
        let LabelSelector { match_expressions, match_labels } = selector;
        SelectorSpec {
            match_labels: match_labels.as_ref().map(Labels::from).unwrap_or_default(),
            match_expressions: match_expressions.clone(),
        }
    }

    /// The API's form. Empty `matchLabels` are absent, which selects the
    /// same.
    pub fn to_label_selector(&self) -> LabelSelector {
        LabelSelector {
            match_expressions: self.match_expressions.clone(),
            match_labels: (!self.match_labels.is_empty()).then(|| self.match_labels.to_map()),
        }
    }

    /// Whether it has no requirement at all (a controller refuses to
    /// select every pod with it).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.as_ref().is_none_or(Vec::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_back_what_it_keeps() {
        let selector: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"app": "web", "pod-template-hash": "7c5d"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}],
        }))
        .expect("a selector");
        let kept = SelectorSpec::new(&selector);
        assert_eq!(kept.to_label_selector(), selector);
        assert!(!kept.is_empty());
        assert_eq!(kept.match_labels.get("app"), Some("web"));
        assert!(SelectorSpec::new(&LabelSelector::default()).is_empty());
        assert_eq!(SelectorSpec::default().to_label_selector(), LabelSelector::default());
    }
}
