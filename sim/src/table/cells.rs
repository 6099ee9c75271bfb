//! What every printer's row is made of: the [`Row`] of cells (and
//! conditions), and the NAME and AGE cells most tables start and end with.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{text, time};
use super::format::since;

/// One row before the object is attached.
pub(super) struct Row {
    /// One cell per column, in column order.
    pub(super) cells: Vec<Value>,
    /// `TableRowCondition`s; only finished pods have any.
    pub(super) conditions: Vec<Value>,
}

impl From<Vec<Value>> for Row {
    fn from(cells: Vec<Value>) -> Self {
        Self { cells, conditions: Vec::new() }
    }
}

/// The object's name cell.
pub(super) fn name(obj: &Value) -> Value {
    Value::from(text(obj, &["metadata", "name"]))
}

/// The object's AGE cell: time since creation, `<unknown>` without one.
pub(super) fn age(obj: &Value, now: Timestamp) -> Value {
    Value::from(since(now, time(obj, &["metadata", "creationTimestamp"])))
}
