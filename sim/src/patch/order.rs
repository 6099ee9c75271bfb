//! The order of a list after a strategic merge, as upstream's
//! `strategicpatch` leaves it: the elements the patch (or
//! `$setElementOrder`) names in its order, interleaved with the server's
//! other elements, and how list elements are identified.

use serde_json::Value;

/// Orders a merged list the way the API server does. Items named in
/// `order` (the patch list or `$setElementOrder`) take its relative order;
/// the other items keep their order from the server. The two runs are then
/// interleaved: a server item goes first only if both it and the next
/// ordered item were in `original` and it came earlier there. So an item
/// new to the list lands before the server items that follow it.
///
/// Example: original `[a, b]`, patch adds `c` → `[c, a, b]`; patch changes
/// `b` → `[a, b]`; `$setElementOrder` `[b, a]` → `[b, a]`.
pub(super) fn arrange(merged: Vec<Value>, order: &[Value], original: &[Value], key: Option<&str>) -> Vec<Value> {
    let index_in = |list: &[Value], item: &Value| {
        let id = identity(item, key);
        list.iter().position(|o| same_identity(identity(o, key), id))
    };
    let (mut ordered, server): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|item| index_in(order, item).is_some());
    ordered.sort_by_key(|item| index_in(order, item));

    let mut out = Vec::with_capacity(ordered.len() + server.len());
    let mut ordered = ordered.into_iter().peekable();
    let mut server = server.into_iter().peekable();
    loop {
        let take_server = match (server.peek(), ordered.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(s), Some(o)) => match (index_in(original, s), index_in(original, o)) {
                (Some(si), Some(oi)) => si < oi,
                _ => false,
            },
        };
        let next = if take_server { server.next() } else { ordered.next() };
        out.extend(next);
    }
    out
}

/// What identifies a list element: its merge key value, or the element
/// itself for primitives.
pub(super) fn identity<'a>(item: &'a Value, key: Option<&str>) -> Option<&'a Value> {
    match key {
        Some(key) => item.get(key),
        None => Some(item),
    }
}

/// Whether two identities match; an element without one matches nothing.
pub(super) fn same_identity(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_value(a, b),
        _ => false,
    }
}

/// JSON equality where numbers compare by value (`80` equals `80.0`), as Go
/// compares the `float64`s it decodes.
pub(super) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}
