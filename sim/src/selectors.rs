//! Label and field selectors, as list and watch requests carry them.
//!
//! Each stored object keeps its [`Attrs`] (labels and selectable fields)
//! beside its bytes, so selectors never re-parse the object. Label selector
//! syntax is the API server's (`a=b`, `a==b`, `a!=b`, `a in (x,y)`,
//! `a notin (x)`, `a`, `!a`, comma-separated, all must hold); field
//! selectors support `=`, `==` and `!=` on the fields each kind makes
//! selectable, and refuse any other field as the API server does.

use std::collections::BTreeMap;

use serde_json::Value;

/// What selectors read of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attrs {
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// Selectable fields with their values as strings.
    pub fields: Vec<(&'static str, String)>,
}

/// Fields every kind makes selectable.
const COMMON_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

/// The selectable fields of a kind beyond the common ones, as the API
/// server registers them (`GetAttrs`/field label conversion funcs).
fn kind_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod" => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        "Node" => &["spec.unschedulable"],
        "Namespace" => &["status.phase"],
        "Secret" => &["type"],
        "ReplicaSet" => &["status.replicas"],
        "Job" => &["status.successful"],
        // Its name a second time, kept by upstream for compatibility.
        "PersistentVolumeClaim" => &["name"],
        "Event" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
        ],
        _ => &[],
    }
}

impl Attrs {
    /// Reads the attributes of an object.
    pub fn of(object: &Value) -> Attrs {
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))).collect())
            .unwrap_or_default();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let fields = COMMON_FIELDS
            .iter()
            .chain(kind_fields(kind))
            .map(|&path| (path, field_value(object, kind, path)))
            .collect();
        Attrs { labels, fields }
    }

    fn field(&self, path: &str) -> &str {
        self.fields.iter().find(|(p, _)| *p == path).map_or("", |(_, v)| v.as_str())
    }
}

/// The string form of a selectable field, as the API server renders it
/// (missing -> "", booleans and numbers as text).
fn field_value(object: &Value, kind: &str, path: &str) -> String {
    if kind == "Event" && path == "source" {
        // core/v1 events select on source.component, events.k8s.io on
        // reportingController.
        let component = object.pointer("/source/component").or_else(|| object.get("reportingController"));
        return component.and_then(Value::as_str).unwrap_or("").to_owned();
    }
    let pointer = match (kind, path) {
        ("PersistentVolumeClaim", "name") => "/metadata/name".to_owned(),
        // The count of succeeded pods (`JobToSelectableFields`).
        ("Job", "status.successful") => "/status/succeeded".to_owned(),
        _ => format!("/{}", path.replace('.', "/")),
    };
    match object.pointer(&pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ if path == "spec.unschedulable" || path == "spec.hostNetwork" => "false".to_owned(),
        _ if path == "status.replicas" || path == "status.successful" => "0".to_owned(),
        _ => String::new(),
    }
}

/// A selector that could not be parsed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectorError {
    /// Malformed label selector.
    #[error("unable to parse requirement: {0}")]
    Label(String),
    /// Malformed field selector.
    #[error("invalid selector: '{0}'; can't understand '{0}'")]
    Field(String),
    /// A field the kind does not make selectable.
    #[error("field label not supported: {0}")]
    UnsupportedField(String),
}

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelReq {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelReq>);

impl LabelSelector {
    /// Parses the `labelSelector` query parameter.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for term in split_terms(text) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            reqs.push(parse_label_term(term)?);
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|req| match req {
            LabelReq::Equals(k, v) => labels.get(k) == Some(v),
            LabelReq::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelReq::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
            LabelReq::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
            LabelReq::Exists(k) => labels.contains_key(k),
            LabelReq::DoesNotExist(k) => !labels.contains_key(k),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

fn parse_label_term(term: &str) -> Result<LabelReq, SelectorError> {
    let bad = || SelectorError::Label(term.to_owned());
    if let Some(key) = term.strip_prefix('!') {
        return valid_key(key.trim()).map(LabelReq::DoesNotExist).ok_or_else(bad);
    }
    for (op, ctor) in [
        ("!=", LabelReq::NotEquals as fn(String, String) -> LabelReq),
        ("==", LabelReq::Equals),
        ("=", LabelReq::Equals),
    ] {
        if let Some((k, v)) = term.split_once(op) {
            let key = valid_key(k.trim()).ok_or_else(bad)?;
            let value = v.trim();
            if !valid_value(value) {
                return Err(bad());
            }
            return Ok(ctor(key, value.to_owned()));
        }
    }
    let words: Vec<&str> = term.splitn(2, char::is_whitespace).collect();
    if let [key, rest] = words[..] {
        let rest = rest.trim();
        let (negated, list) = if let Some(l) = rest.strip_prefix("notin") {
            (true, l)
        } else if let Some(l) = rest.strip_prefix("in") {
            (false, l)
        } else {
            return Err(bad());
        };
        let inner = list.trim().strip_prefix('(').and_then(|l| l.strip_suffix(')')).ok_or_else(bad)?;
        let values: Vec<String> = inner.split(',').map(|v| v.trim().to_owned()).collect();
        if values.iter().any(|v| !valid_value(v)) {
            return Err(bad());
        }
        let key = valid_key(key).ok_or_else(bad)?;
        return Ok(if negated { LabelReq::NotIn(key, values) } else { LabelReq::In(key, values) });
    }
    valid_key(term).map(LabelReq::Exists).ok_or_else(bad)
}

fn valid_key(key: &str) -> Option<String> {
    let ok = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    ok.then(|| key.to_owned())
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63 && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A parsed field selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses the `fieldSelector` query parameter for objects of `kind`.
    pub fn parse(text: &str, kind: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, true, v)
            } else {
                return Err(SelectorError::Field(term.to_owned()));
            };
            let field = field.trim();
            if !COMMON_FIELDS.contains(&field) && !kind_fields(kind).contains(&field) {
                return Err(SelectorError::UnsupportedField(field.to_owned()));
            }
            reqs.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(FieldSelector(reqs))
    }

    /// Whether the object's fields satisfy every requirement.
    pub fn matches(&self, attrs: &Attrs) -> bool {
        self.0.iter().all(|(field, equal, value)| (attrs.field(field) == value) == *equal)
    }
}

/// A label and a field selector together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    /// The label part.
    pub labels: LabelSelector,
    /// The field part.
    pub fields: FieldSelector,
}

impl Selector {
    /// Whether the object matches both parts.
    pub fn matches(&self, attrs: &Attrs) -> bool {
        self.labels.matches(&attrs.labels) && self.fields.matches(attrs)
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.labels.0.is_empty() && self.fields.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn label_selectors_follow_the_api_server_syntax() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        let cases = [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app=db", false),
            ("app in (db, web)", true),
            ("app notin (db,web)", false),
            ("env notin (prod)", true),
            ("tier", true),
            ("!tier", false),
            ("!env", true),
            ("app=web,tier=front", true),
            ("app=web,tier in (back)", false),
        ];
        for (text, want) in cases {
            let sel = LabelSelector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(sel.matches(&l), want, "{text}");
        }
    }

    #[test]
    fn malformed_label_selectors_are_refused() {
        for text in ["app in web", "a b c", "app=(x", "app in (a b)"] {
            assert!(LabelSelector::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn pod_field_selectors_read_node_name_and_phase() {
        let pod = json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}});
        let attrs = Attrs::of(&pod);
        let cases = [
            ("spec.nodeName=node-1", true),
            ("spec.nodeName=", false),
            ("spec.nodeName!=node-1", false),
            ("status.phase==Running,metadata.namespace=ns", true),
            ("metadata.name=q", false),
        ];
        for (text, want) in cases {
            let sel = FieldSelector::parse(text, "Pod").unwrap();
            assert_eq!(sel.matches(&attrs), want, "{text}");
        }
        let unscheduled = Attrs::of(&json!({"kind": "Pod", "metadata": {"name": "u"}}));
        assert!(FieldSelector::parse("spec.nodeName=", "Pod").unwrap().matches(&unscheduled));
    }

    #[test]
    fn claims_select_on_name_too() {
        let claim = Attrs::of(&json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "data"}}));
        assert!(FieldSelector::parse("name=data", "PersistentVolumeClaim").unwrap().matches(&claim));
        assert!(!FieldSelector::parse("name=logs", "PersistentVolumeClaim").unwrap().matches(&claim));
        assert!(FieldSelector::parse("name=data", "Pod").is_err());
    }

    #[test]
    fn unsupported_fields_are_refused_with_the_api_server_message() {
        let err = FieldSelector::parse("spec.replicas=3", "Deployment").unwrap_err();
        assert_eq!(err.to_string(), "field label not supported: spec.replicas");
        assert!(FieldSelector::parse("nonsense", "Pod").is_err());
    }
}
