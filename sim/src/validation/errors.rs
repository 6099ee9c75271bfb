//! The causes of a 422 Invalid as upstream's `field.Error`s build them:
//! [`Cause`], its reasons and messages, and the [`Errors`] a rule appends
//! to.

use std::collections::BTreeSet;

use super::render::go_quote;

/// Reason of a value that does not pass a rule.
pub const FIELD_VALUE_INVALID: &str = "FieldValueInvalid";
/// Reason of a missing value.
pub const FIELD_VALUE_REQUIRED: &str = "FieldValueRequired";
/// Reason of a value outside an enumeration.
pub const FIELD_VALUE_NOT_SUPPORTED: &str = "FieldValueNotSupported";
/// Reason of a value not allowed in the circumstances.
pub const FIELD_VALUE_FORBIDDEN: &str = "FieldValueForbidden";
/// Reason of a value that must be unique and is not.
pub const FIELD_VALUE_DUPLICATE: &str = "FieldValueDuplicate";
/// Reason of a value that is too long.
pub const FIELD_VALUE_TOO_LONG: &str = "FieldValueTooLong";
/// Reason of a list with too many items.
pub const FIELD_VALUE_TOO_MANY: &str = "FieldValueTooMany";

/// Upstream `IsNegativeErrorMsg`.
pub(super) const NEGATIVE: &str = "must be greater than or equal to 0";
/// Upstream `FieldImmutableErrorMsg`.
pub(super) const IMMUTABLE: &str = "field is immutable";
/// One validation failure: a `StatusCause` of the 422 Invalid status.
///
/// The status message upstream is `<Kind> "<name>" is invalid: ` followed by
/// `<field>: <message>` for each cause, joined with `, ` (in brackets when
/// there are several).
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(alias = "StatusCause")]
#[doc(alias = "field.Error")]
pub struct Cause {
    /// The cause type, one of the `FIELD_VALUE_*` constants.
    pub reason: &'static str,
    /// The message without the field (upstream `ErrorBody`), e.g.
    /// `Invalid value: -1: must be greater than or equal to 0`.
    pub message: String,
    /// The field path, e.g. `spec.template.spec.containers[0].name`.
    pub field: String,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The causes found so far, built like upstream's `field.Error`s.
#[derive(Default)]
pub(super) struct Errors(Vec<Cause>);

impl Errors {
    /// Appends a cause.
    pub(super) fn push(&mut self, reason: &'static str, field: &str, message: String) {
        self.0.push(Cause { reason, message, field: field.to_owned() });
    }

    /// `field.Invalid`; `shown` is the Go rendering of the bad value.
    pub(super) fn invalid(&mut self, field: &str, shown: String, detail: &str) {
        self.push(FIELD_VALUE_INVALID, field, with_detail(format!("Invalid value: {shown}"), detail));
    }

    /// `field.Required`.
    pub(super) fn required(&mut self, field: &str, detail: &str) {
        self.push(FIELD_VALUE_REQUIRED, field, with_detail("Required value".to_owned(), detail));
    }

    /// `field.Duplicate`.
    pub(super) fn duplicate(&mut self, field: &str, shown: String) {
        self.duplicate_because(field, shown, "");
    }

    /// `field.Duplicate` with a detail.
    pub(super) fn duplicate_because(&mut self, field: &str, shown: String, detail: &str) {
        self.push(FIELD_VALUE_DUPLICATE, field, with_detail(format!("Duplicate value: {shown}"), detail));
    }

    /// `field.NotSupported`.
    pub(super) fn not_supported(&mut self, field: &str, shown: String, allowed: &[&str]) {
        let quoted: Vec<String> = allowed.iter().map(|a| go_quote(a)).collect();
        let detail = format!("supported values: {}", quoted.join(", "));
        self.push(FIELD_VALUE_NOT_SUPPORTED, field, format!("Unsupported value: {shown}: {detail}"));
    }

    /// `field.Forbidden`.
    pub(super) fn forbidden(&mut self, field: &str, detail: &str) {
        self.push(FIELD_VALUE_FORBIDDEN, field, with_detail("Forbidden".to_owned(), detail));
    }

    /// `field.TooLong`.
    pub(super) fn too_long(&mut self, field: &str, max: usize) {
        self.push(FIELD_VALUE_TOO_LONG, field, format!("Too long: may not be more than {max} bytes"));
    }

    /// `field.TooMany`.
    pub(super) fn too_many(&mut self, field: &str, actual: usize, max: usize) {
        let items = if max == 1 { "item" } else { "items" };
        self.push(FIELD_VALUE_TOO_MANY, field, format!("Too many: {actual}: must have at most {max} {items}"));
    }

    /// Whether no cause was found.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends the causes `other` found.
    pub(super) fn extend(&mut self, other: Errors) {
        self.0.extend(other.0);
    }

    /// The causes without repeats (upstream `ToAggregate` drops duplicates).
    pub(super) fn finish(self) -> Vec<Cause> {
        let mut seen = BTreeSet::new();
        self.0.into_iter().filter(|c| seen.insert((c.field.clone(), c.message.clone()))).collect()
    }
}

/// `body: detail`, or `body` when there is no detail.
fn with_detail(body: String, detail: &str) -> String {
    if detail.is_empty() { body } else { format!("{body}: {detail}") }
}

/// `ValidateNonnegativeField`.
pub(super) fn nonnegative(errs: &mut Errors, value: Option<i64>, path: &str) {
    if let Some(value) = value.filter(|v| *v < 0) {
        errs.invalid(path, value.to_string(), NEGATIVE);
    }
}

/// `field.Invalid` with `field.OmitValueType`: no value in the message.
pub(super) fn invalid_omitted(errs: &mut Errors, field: &str, detail: &str) {
    errs.push(FIELD_VALUE_INVALID, field, format!("Invalid value: {detail}"));
}
