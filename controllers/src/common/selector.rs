//! Label selectors as upstream evaluates them (`metav1.LabelSelectorAsSelector`
//! followed by `Matches`): `matchLabels` and `matchExpressions` are ANDed,
//! an empty selector matches everything, a missing one matches nothing.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kcm_objects::SelectorSpec;

/// Why a selector cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The operator is none of `In`, `NotIn`, `Exists`, `DoesNotExist`.
    #[error("{0:?} is not a valid label selector operator")]
    UnknownOperator(String),
    /// `In`/`NotIn` need at least one value.
    #[error("values: must be specified when `operator` is 'In' or 'NotIn' (key {0:?})")]
    MissingValues(String),
    /// `Exists`/`DoesNotExist` take no values.
    #[error("values: may not be specified when `operator` is 'Exists' or 'DoesNotExist' (key {0:?})")]
    UnexpectedValues(String),
}

/// A selector with no requirements (upstream compares a controller's
/// selector with an empty `LabelSelector` and refuses to select all pods).
pub fn is_empty_selector(s: &LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(|m| m.is_empty()) && s.match_expressions.as_ref().is_none_or(|m| m.is_empty())
}

/// A validated selector, ready to match label sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// `None` matches nothing (upstream `labels.Nothing()`).
    requirements: Option<Vec<Requirement>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Selector {
    /// Converts an API selector; `None` becomes the selector matching nothing.
    pub fn new(selector: Option<&LabelSelector>) -> Result<Self, Error> {
        let Some(sel) = selector else {
            return Ok(Self { requirements: None });
        };
        let labels = sel.match_labels.iter().flatten().map(|(k, v)| (k.as_str(), v.as_str()));
        Self::of_parts(labels, sel.match_expressions.as_deref())
    }

    /// Converts a cached selector.
    pub fn of_spec(spec: &SelectorSpec) -> Result<Self, Error> {
        Self::of_parts(spec.match_labels.iter(), spec.match_expressions.as_deref())
    }

    /// From `matchLabels` and `matchExpressions`.
    fn of_parts<'a>(
        match_labels: impl Iterator<Item = (&'a str, &'a str)>,
        match_expressions: Option<&[LabelSelectorRequirement]>,
    ) -> Result<Self, Error> {
        let mut reqs: Vec<Requirement> =
            match_labels.map(|(k, v)| Requirement::In(k.to_owned(), vec![v.to_owned()])).collect();
        for e in match_expressions.into_iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let key = e.key.clone();
            let req = match e.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => return Err(Error::MissingValues(key)),
                "Exists" | "DoesNotExist" if !values.is_empty() => return Err(Error::UnexpectedValues(key)),
                "In" => Requirement::In(key, values),
                "NotIn" => Requirement::NotIn(key, values),
                "Exists" => Requirement::Exists(key),
                "DoesNotExist" => Requirement::DoesNotExist(key),
                other => return Err(Error::UnknownOperator(other.to_owned())),
            };
            reqs.push(req);
        }
        Ok(Self { requirements: Some(reqs) })
    }

    /// True for a selector with no requirements (it matches every label set).
    pub fn is_everything(&self) -> bool {
        self.requirements.as_ref().is_some_and(Vec::is_empty)
    }

    /// Whether `labels` (absent = no labels) satisfy every requirement.
    pub fn matches(&self, labels: &(impl LabelSet + ?Sized)) -> bool {
        let Some(reqs) = &self.requirements else { return false };
        let get = |k: &str| labels.label(k);
        reqs.iter().all(|r| match r {
            Requirement::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// Whether `labels` hold every pair of `subset` (upstream
/// `labels.Set(subset).AsSelectorPreValidated().Matches(labels)`; an empty
/// subset matches anything).
pub fn contains_all(labels: &(impl LabelSet + ?Sized), subset: Option<&BTreeMap<String, String>>) -> bool {
    subset.into_iter().flatten().all(|(k, v)| labels.label(k) == Some(v.as_str()))
}

/// A set of labels a selector can be matched against: an API object's
/// `metadata.labels` (absent = none) or a cached projection's.
pub trait LabelSet {
    /// The value of label `key`, if set.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelSet for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl LabelSet for Option<BTreeMap<String, String>> {
    fn label(&self, key: &str) -> Option<&str> {
        self.as_ref()?.label(key)
    }
}

impl LabelSet for kcm_objects::Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn table() {
        let sel = |ml: &[(&str, &str)], me: Vec<LabelSelectorRequirement>| LabelSelector {
            match_labels: (!ml.is_empty()).then(|| labels(ml)),
            match_expressions: (!me.is_empty()).then_some(me),
        };
        type Case<'a> = (&'a str, Option<LabelSelector>, &'a [(&'a str, &'a str)], bool);
        let cases: Vec<Case> = vec![
            ("nil matches nothing", None, &[("a", "b")], false),
            ("empty matches everything", Some(sel(&[], vec![])), &[], true),
            ("matchLabels equal", Some(sel(&[("app", "x")], vec![])), &[("app", "x"), ("o", "1")], true),
            ("matchLabels differ", Some(sel(&[("app", "x")], vec![])), &[("app", "y")], false),
            ("In", Some(sel(&[], vec![expr("t", "In", &["a", "b"])])), &[("t", "b")], true),
            ("In absent", Some(sel(&[], vec![expr("t", "In", &["a"])])), &[], false),
            ("NotIn absent", Some(sel(&[], vec![expr("t", "NotIn", &["a"])])), &[], true),
            ("NotIn hit", Some(sel(&[], vec![expr("t", "NotIn", &["a"])])), &[("t", "a")], false),
            ("Exists", Some(sel(&[], vec![expr("t", "Exists", &[])])), &[("t", "")], true),
            ("DoesNotExist", Some(sel(&[], vec![expr("t", "DoesNotExist", &[])])), &[("t", "")], false),
            ("ANDed", Some(sel(&[("app", "x")], vec![expr("t", "Exists", &[])])), &[("app", "x")], false),
        ];
        for (name, s, l, want) in cases {
            let got = Selector::new(s.as_ref()).unwrap().matches(&labels(l));
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn invalid_selectors_are_errors() {
        let s = |e| LabelSelector { match_expressions: Some(vec![e]), ..Default::default() };
        assert_eq!(Selector::new(Some(&s(expr("k", "Near", &[])))), Err(Error::UnknownOperator("Near".into())));
        assert_eq!(Selector::new(Some(&s(expr("k", "In", &[])))), Err(Error::MissingValues("k".into())));
        assert_eq!(Selector::new(Some(&s(expr("k", "Exists", &["v"])))), Err(Error::UnexpectedValues("k".into())));
    }

    #[test]
    fn contains_all_is_subset() {
        let l = labels(&[("a", "1"), ("b", "2")]);
        assert!(contains_all(&l, Some(&labels(&[("a", "1")]))));
        assert!(contains_all(&l, None));
        assert!(!contains_all(&l, Some(&labels(&[("a", "2")]))));
        assert!(!contains_all(&None::<BTreeMap<String, String>>, Some(&labels(&[("a", "1")]))));
    }
}
