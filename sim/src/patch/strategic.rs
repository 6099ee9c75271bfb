//! Kubernetes strategic merge patch as the API server applies it to
//! built-in types: recursive map merge, `null` deletion, merged or replaced
//! lists, and the `$patch`, `$retainKeys`, `$setElementOrder` and
//! `$deleteFromPrimitiveList` directives, with upstream's list order.

use serde_json::{Map, Value};

use super::error::{PatchError, Result};
use super::json::parse_object;
use super::meta::{Field, Ty};
use super::order::{arrange, identity, same_identity, same_value};

/// `$patch`: `replace` or `delete` a map, or as a list element `delete` one
/// element / `replace` the whole list.
const DIRECTIVE: &str = "$patch";
/// `$retainKeys`: the keys of the map to keep; others are cleared.
const RETAIN_KEYS: &str = "$retainKeys";
/// `$setElementOrder/<list>`: the order of a merged list.
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
/// `$deleteFromPrimitiveList/<list>`: values to remove from a merged list
/// of primitives.
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// Applies a strategic merge patch body to an object of the type `root`.
pub(super) fn apply_strategic(root: Ty, original: &Value, body: &[u8]) -> Result<Value> {
    let patch = parse_object(body, "strategic merge patch")?;
    let Value::Object(original) = original.clone() else {
        return Err(PatchError::Failed("the stored object is not a JSON object".to_owned()));
    };
    // `$patch: delete` at the top level leaves an empty object, as upstream.
    let merged = merge_map(Some(original), patch, root)?.unwrap_or_default();
    Ok(Value::Object(merged))
}

/// Merges a patch map into an original map (absent when the field is new).
/// `None` means the map is deleted (`$patch: delete`).
///
/// The server-side rules: a `null` value deletes the key (and is dropped
/// when the key is absent), `$retainKeys` clears unlisted keys first,
/// `$setElementOrder` lists are merged and ordered before the other keys,
/// and `$deleteFromPrimitiveList` removals happen last.
fn merge_map(
    original: Option<Map<String, Value>>,
    mut patch: Map<String, Value>,
    ty: Ty,
) -> Result<Option<Map<String, Value>>> {
    if let Some(directive) = patch.remove(DIRECTIVE) {
        return match directive.as_str() {
            // The patch is the new value; merging it into nothing drops its
            // nulls and resolves any directives nested in it.
            Some("replace") => merge_map(None, patch, ty),
            Some("delete") => Ok(None),
            _ => Err(PatchError::Malformed(format!(
                "unknown {DIRECTIVE} directive {directive} (expected \"replace\" or \"delete\")"
            ))),
        };
    }
    let mut out = original.unwrap_or_default();

    if let Some(keys) = patch.remove(RETAIN_KEYS) {
        retain_keys(&mut out, &patch, &keys)?;
    }

    let mut orders = Vec::new();
    let mut deletions = Vec::new();
    let mut fields = Vec::new();
    for (key, value) in patch {
        if let Some(rest) = key.strip_prefix(SET_ELEMENT_ORDER) {
            orders.push((directive_target(rest, SET_ELEMENT_ORDER)?, value));
        } else if let Some(rest) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            deletions.push((directive_target(rest, DELETE_FROM_PRIMITIVE_LIST)?, value));
        } else {
            fields.push((key, value));
        }
    }

    for (name, order) in orders {
        let patch_list = fields.iter().position(|(key, _)| *key == name).map(|i| fields.remove(i).1);
        set_element_order(&mut out, &name, order, patch_list, ty.field(&name))?;
    }

    for (key, value) in fields {
        let field = ty.field(&key);
        if value.is_null() {
            remove_key(&mut out, &key);
            continue;
        }
        let merged = match out.get_mut(&key) {
            Some(slot) => merge_value(Some(std::mem::take(slot)), value, field)?,
            None => merge_value(None, value, field)?,
        };
        match merged {
            Some(v) => {
                out.insert(key, v);
            }
            None => remove_key(&mut out, &key),
        }
    }

    for (name, values) in deletions {
        let Value::Array(values) = values else {
            return Err(PatchError::Malformed(format!("{DELETE_FROM_PRIMITIVE_LIST}/{name} must be a list")));
        };
        if let Some(Value::Array(list)) = out.get_mut(&name) {
            list.retain(|item| !values.iter().any(|v| same_value(v, item)));
        }
    }
    Ok(Some(out))
}

/// The list a `$setElementOrder/<list>` or `$deleteFromPrimitiveList/<list>`
/// key names (`rest` is what follows the prefix).
fn directive_target(rest: &str, prefix: &str) -> Result<String> {
    match rest.strip_prefix('/') {
        Some(name) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(PatchError::Malformed(format!("{prefix} must be followed by /<field name>"))),
    }
}

/// Removes `key` from `map` without disturbing the order of the others.
fn remove_key(map: &mut Map<String, Value>, key: &str) {
    map.retain(|k, _| k != key);
}

/// Applies `$retainKeys`: every key the patch sets must be listed, and keys
/// of the original that are not listed are cleared.
fn retain_keys(out: &mut Map<String, Value>, patch: &Map<String, Value>, keys: &Value) -> Result<()> {
    let keys: Vec<&str> = keys
        .as_array()
        .and_then(|list| list.iter().map(Value::as_str).collect())
        .ok_or_else(|| PatchError::Malformed(format!("{RETAIN_KEYS} must be a list of strings")))?;
    let unlisted = patch.iter().find(|(k, v)| {
        !v.is_null()
            && !k.starts_with(SET_ELEMENT_ORDER)
            && !k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            && !keys.contains(&k.as_str())
    });
    if let Some((key, _)) = unlisted {
        return Err(PatchError::Malformed(format!("the patch sets {key:?}, which is not in its {RETAIN_KEYS} list")));
    }
    out.retain(|k, _| keys.contains(&k.as_str()));
    Ok(())
}

/// Merges a patch value into the value of one field (absent when new).
/// `None` means the field is removed.
fn merge_value(original: Option<Value>, patch: Value, field: Field) -> Result<Option<Value>> {
    Ok(match (original, patch) {
        (_, Value::Null) => None,
        (Some(Value::Object(original)), Value::Object(patch)) if !field.replace => {
            merge_map(Some(original), patch, field.ty)?.map(Value::Object)
        }
        (Some(Value::Array(original)), Value::Array(patch)) if field.merge => {
            Some(Value::Array(merge_list(original, patch, field)?))
        }
        // Anything else replaces the original: new fields, changed types,
        // `replace` maps, lists without a merge strategy and scalars. The
        // patch value is cleaned of nulls and directives on the way.
        (_, Value::Object(patch)) => merge_map(None, patch, field.ty)?.map(Value::Object),
        (_, Value::Array(patch)) if field.merge => Some(Value::Array(merge_list(Vec::new(), patch, field)?)),
        (_, Value::Array(patch)) => Some(Value::Array(clean_list(patch, field.ty.items())?)),
        (_, scalar) => Some(scalar),
    })
}

/// A replacement list: elements carrying a `$patch` directive are dropped
/// and object elements are cleaned of nulls and directives.
fn clean_list(list: Vec<Value>, items: Ty) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        match item {
            Value::Object(map) if map.contains_key(DIRECTIVE) => {}
            Value::Object(map) => out.extend(merge_map(None, map, items)?.map(Value::Object)),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// What a merged list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elements {
    /// Nothing on either side.
    Empty,
    /// Strings, numbers, booleans (and nulls).
    Primitives,
    /// Objects, matched by the merge key.
    Objects,
}

/// Classifies the elements of the original and patch lists, which must
/// agree.
fn elements(original: &[Value], patch: &[Value]) -> Result<Elements> {
    let mut kind = Elements::Empty;
    for item in original.iter().chain(patch) {
        let this = match item {
            Value::Array(_) => {
                return Err(PatchError::Failed("lists of lists cannot be merged".to_owned()));
            }
            Value::Object(_) => Elements::Objects,
            _ => Elements::Primitives,
        };
        if kind != Elements::Empty && kind != this {
            return Err(PatchError::Malformed("list elements are not all of the same type".to_owned()));
        }
        kind = this;
    }
    Ok(kind)
}

/// Merges a patch list into an original list of a field with strategy
/// `merge`. Primitives are unioned; objects are matched by the merge key
/// and merged, with `$patch: delete` elements removing matches and a
/// `$patch: replace` element replacing the whole list. The result is
/// ordered as [`arrange`] describes, with the patch's order.
fn merge_list(original: Vec<Value>, patch: Vec<Value>, field: Field) -> Result<Vec<Value>> {
    match elements(&original, &patch)? {
        Elements::Empty => Ok(original),
        Elements::Primitives => {
            let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
            for item in original.iter().chain(&patch) {
                if !merged.iter().any(|m| same_value(m, item)) {
                    merged.push(item.clone());
                }
            }
            Ok(arrange(merged, &patch, &original, None))
        }
        Elements::Objects => merge_object_list(original, patch, field),
    }
}

/// The object case of [`merge_list`].
fn merge_object_list(original: Vec<Value>, patch: Vec<Value>, field: Field) -> Result<Vec<Value>> {
    let key = field.merge_key;
    if key.is_empty() {
        return Err(PatchError::Malformed("cannot merge a list of objects that has no merge key".to_owned()));
    }
    let items = field.ty.items();
    let mut survivors = original.clone();
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for element in patch {
        let Value::Object(map) = element else {
            continue;
        };
        match map.get(DIRECTIVE).map(|d| d.as_str()) {
            None => plain.push(map),
            Some(Some("delete")) => {
                let id = merge_key_of(&map, key)?;
                survivors.retain(|o| !o.get(key).is_some_and(|v| same_value(v, id)));
            }
            Some(Some("replace")) => replace = true,
            Some(_) => {
                return Err(PatchError::Malformed(format!(
                    "unknown {DIRECTIVE} directive in a list element (expected \"delete\" or \
                     \"replace\")"
                )));
            }
        }
    }
    if replace {
        let replacement: Vec<Value> = plain.into_iter().map(Value::Object).collect();
        return clean_list(replacement, items);
    }

    let mut order = Vec::with_capacity(plain.len());
    for element in plain {
        let id = merge_key_of(&element, key)?.clone();
        order.push(Value::Object(element.clone()));
        let position = survivors.iter().position(|o| o.get(key).is_some_and(|v| same_value(v, &id)));
        match position {
            Some(i) => {
                let Value::Object(current) = std::mem::take(&mut survivors[i]) else {
                    return Err(PatchError::Malformed(format!("list element with {key} {id} is not an object")));
                };
                match merge_map(Some(current), element, items)? {
                    Some(m) => survivors[i] = Value::Object(m),
                    None => {
                        survivors.remove(i);
                    }
                }
            }
            None => survivors.extend(merge_map(None, element, items)?.map(Value::Object)),
        }
    }
    Ok(arrange(survivors, &order, &original, Some(key)))
}

/// The merge key value of a patch list element.
fn merge_key_of<'a>(element: &'a Map<String, Value>, key: &str) -> Result<&'a Value> {
    element.get(key).ok_or_else(|| {
        PatchError::Malformed(format!("a list element has no merge key {key:?}: {}", Value::Object(element.clone())))
    })
}

/// Applies `$setElementOrder/<name>`: merges the patch's list (if any) into
/// the original's and orders the result by `order`.
fn set_element_order(
    out: &mut Map<String, Value>,
    name: &str,
    order: Value,
    patch_list: Option<Value>,
    field: Field,
) -> Result<()> {
    let bad = |what: &str| PatchError::Malformed(format!("{SET_ELEMENT_ORDER}/{name}: {what} must be a list"));
    let Value::Array(order) = order else {
        return Err(bad("the order"));
    };
    let original = match out.get(name) {
        None => None,
        Some(Value::Array(list)) => Some(list.clone()),
        Some(_) => return Err(bad("the original field")),
    };
    let patch_list = match patch_list {
        None => None,
        Some(Value::Array(list)) => Some(list),
        Some(_) => return Err(bad("the patched field")),
    };
    let key = (!field.merge_key.is_empty()).then_some(field.merge_key);
    if let Some(list) = &patch_list {
        check_order(list, &order, key, name)?;
    }
    let merged = match (original.clone(), patch_list) {
        (None, None) => return Ok(()),
        (Some(original), None) => original,
        (original, Some(patch)) => {
            let field_value = merge_value(original.map(Value::Array), Value::Array(patch), field)?;
            match field_value {
                Some(Value::Array(list)) => list,
                _ => Vec::new(),
            }
        }
    };
    let arranged = arrange(merged, &order, original.as_deref().unwrap_or_default(), key);
    out.insert(name.to_owned(), Value::Array(arranged));
    Ok(())
}

/// Checks that the elements a patch list sets appear in its
/// `$setElementOrder` list, in the same relative order.
fn check_order(patch: &[Value], order: &[Value], key: Option<&str>, name: &str) -> Result<()> {
    let mut position = 0;
    for item in patch {
        if item.get(DIRECTIVE).is_some() {
            continue;
        }
        let id = identity(item, key);
        match order[position..].iter().position(|o| same_identity(identity(o, key), id)) {
            Some(found) => position += found + 1,
            None => {
                return Err(PatchError::Malformed(format!(
                    "the order of the patch list {name} does not match its \
                     {SET_ELEMENT_ORDER}/{name} list"
                )));
            }
        }
    }
    Ok(())
}
