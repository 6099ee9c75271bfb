//! Typed views of the JSON values validation reasons about the way Go
//! does: parsed label selectors (`labels.Selector`) and
//! `intstr.IntOrString`.

use serde_json::Value;

use super::access::{list, map, str_of, text};
use super::render::go_quote;
use super::syntax::{label_value, percent_messages, qualified_name};

/// A parsed label selector (upstream `labels.Selector`).
pub(super) enum Selector {
    /// A nil selector: matches nothing, and is not "empty".
    Nothing,
    /// All requirements must hold; none means everything.
    Requirements(Vec<Requirement>),
}

/// One `key op values` requirement.
pub(super) struct Requirement {
    /// Label key.
    key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist` (`matchLabels` are `In`).
    operator: String,
    /// Values for `In` / `NotIn`.
    values: Vec<String>,
}

impl Selector {
    /// `LabelSelectorAsSelector`; `None` when it fails to convert.
    pub(super) fn parse(raw: &Value) -> Option<Selector> {
        if raw.is_null() {
            return Some(Selector::Nothing);
        }
        let mut requirements = Vec::new();
        for (key, value) in map(raw, "matchLabels") {
            let value = value.as_str()?;
            if !qualified_name(key).is_empty() || !label_value(value).is_empty() {
                return None;
            }
            requirements.push(Requirement {
                key: key.clone(),
                operator: "In".to_owned(),
                values: vec![value.to_owned()],
            });
        }
        for expression in list(raw, "matchExpressions") {
            let key = text(expression, "key");
            let operator = text(expression, "operator");
            let values: Vec<String> = list(expression, "values").iter().map(|v| str_of(v).to_owned()).collect();
            let arity_ok = match operator {
                "In" | "NotIn" => !values.is_empty(),
                "Exists" | "DoesNotExist" => values.is_empty(),
                _ => false,
            };
            if !arity_ok || !qualified_name(key).is_empty() || values.iter().any(|v| !label_value(v).is_empty()) {
                return None;
            }
            requirements.push(Requirement { key: key.to_owned(), operator: operator.to_owned(), values });
        }
        Some(Selector::Requirements(requirements))
    }

    /// Whether this selects everything (upstream `Empty()`).
    pub(super) fn is_everything(&self) -> bool {
        matches!(self, Selector::Requirements(r) if r.is_empty())
    }

    /// Whether the label set (a JSON object, or null) is selected.
    pub(super) fn matches(&self, labels: &Value) -> bool {
        let Selector::Requirements(requirements) = self else {
            return false;
        };
        requirements.iter().all(|r| {
            let value = labels.get(&r.key).and_then(Value::as_str);
            let listed = value.is_some_and(|v| r.values.iter().any(|x| x == v));
            match r.operator.as_str() {
                "In" => listed,
                "NotIn" => !listed,
                "Exists" => value.is_some(),
                _ => value.is_none(),
            }
        })
    }
}

// === int or string ===

/// An `intstr.IntOrString` as the internal Go type holds it (absent is 0).
pub(super) enum IntOrString {
    /// `Type: 0`.
    Int(i64),
    /// `Type: 1`.
    Str(String),
}

impl IntOrString {
    /// Reads a JSON value; anything else than a string is an integer.
    pub(super) fn of(value: &Value) -> IntOrString {
        match value {
            Value::String(s) => IntOrString::Str(s.clone()),
            other => IntOrString::Int(other.as_i64().unwrap_or(0)),
        }
    }

    /// The percentage, when this is a valid percent string.
    pub(super) fn percent(&self) -> Option<i64> {
        match self {
            IntOrString::Str(s) if percent_messages(s).is_empty() => Some(s[..s.len() - 1].parse().unwrap_or(0)),
            _ => None,
        }
    }

    /// Upstream `getIntOrPercentValue`: the percentage, else the integer
    /// (a non-numeric string counts as 0).
    pub(super) fn value(&self) -> i64 {
        match (self.percent(), self) {
            (Some(p), _) => p,
            (None, IntOrString::Int(n)) => *n,
            (None, IntOrString::Str(s)) => s.parse().unwrap_or(0),
        }
    }

    /// The Go `%#v` rendering.
    pub(super) fn go(&self) -> String {
        match self {
            IntOrString::Int(n) => format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}"),
            IntOrString::Str(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}", go_quote(s)),
        }
    }
}
