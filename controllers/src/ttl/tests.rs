//! Upstream's `TestPatchNode`, `TestUpdateNodeIfNeeded` and
//! `TestDesiredTTL`, row by row.

use serde_json::{Value, json};

use super::*;

// === utils ===

/// A node named `name` with these annotations.
fn node(annotations: Value) -> Node {
    serde_json::from_value(json!({"metadata": {"name": "name", "annotations": annotations}})).expect("a node")
}

/// The patch a sync sends, as upstream's test compares it: its JSON text,
/// `{}` when nothing changes.
fn patch(node: &Node, ttl: u32) -> String {
    sync(node, ttl).map_or_else(|| "{}".to_owned(), |p| p.to_string())
}

fn expected(ttl: &str) -> String {
    format!("{{\"metadata\":{{\"annotations\":{{\"node.alpha.kubernetes.io/ttl\":\"{ttl}\"}}}}}}")
}

fn boundaries(node_count: usize, desired_ttl_seconds: u32, step: usize) -> Boundaries {
    Boundaries { node_count, step, desired_ttl_seconds }
}

// === tests ===

#[test]
fn patch_node() {
    let cases = [
        (json!(null), 0, expected("0")),
        (json!(null), 10, expected("10")),
        (json!({}), 10, expected("10")),
        (json!({"node.alpha.kubernetes.io/ttl": "0"}), 10, expected("10")),
        (json!({"node.alpha.kubernetes.io/ttl": "0", "a": "b"}), 10, expected("10")),
        (json!({"node.alpha.kubernetes.io/ttl": "10", "a": "b"}), 10, "{}".to_owned()),
    ];
    for (i, (annotations, ttl, want)) in cases.into_iter().enumerate() {
        assert_eq!(patch(&node(annotations), ttl), want, "case {i}");
    }
}

#[test]
fn update_node_if_needed() {
    let cases = [
        (json!(null), 0, Some(expected("0"))),
        (json!(null), 15, Some(expected("15"))),
        (json!(null), 30, Some(expected("30"))),
        (json!({"node.alpha.kubernetes.io/ttl": "0"}), 60, Some(expected("60"))),
        (json!({"node.alpha.kubernetes.io/ttl": "60"}), 60, None),
        (json!({"node.alpha.kubernetes.io/ttl": "60"}), 30, Some(expected("30"))),
    ];
    for (i, (annotations, ttl, want)) in cases.into_iter().enumerate() {
        assert_eq!(sync(&node(annotations), ttl).map(|p| p.to_string()), want, "case {i}");
    }
}

#[test]
fn an_annotation_that_is_no_integer_is_patched() {
    let garbled = node(json!({"node.alpha.kubernetes.io/ttl": "soon"}));
    assert_eq!(current_ttl(&garbled), Some(Err("soon")));
    assert_eq!(patch(&garbled, 0), expected("0"));
}

#[test]
fn desired_ttl() {
    // (added, node count, desired TTL, step) before the event, TTL after.
    let cases = [
        (true, 0, 0, 0, 0),
        (true, 99, 0, 0, 0),
        (true, 100, 0, 0, 15),
        (false, 101, 15, 1, 15),
        (false, 91, 15, 1, 15),
        (true, 91, 15, 1, 15),
        (false, 90, 15, 1, 0),
        (false, 1800, 300, 4, 60),
        (false, 10000, 300, 4, 300),
    ];
    for (i, (added, count, desired, step, want)) in cases.into_iter().enumerate() {
        let mut state = boundaries(count, desired, step);
        if added {
            state.node_added();
        } else {
            state.node_deleted();
        }
        assert_eq!(state.desired_ttl_seconds(), want, "case {i}");
    }
}

#[test]
fn a_growing_then_shrinking_cluster_walks_the_steps_with_hysteresis() {
    let mut state = Boundaries::default();
    let mut seen = Vec::new();
    for _ in 0..2001 {
        state.node_added();
        if seen.last() != Some(&state.desired_ttl_seconds()) {
            seen.push(state.desired_ttl_seconds());
        }
    }
    assert_eq!(seen, [0, 15, 30, 60, 300]);
    for _ in 0..(2001 - 1799) {
        state.node_deleted();
    }
    assert_eq!(state.desired_ttl_seconds(), 60, "1799 nodes: below 1800, one step down");
    for _ in 0..(1799 - 95) {
        state.node_deleted();
    }
    assert_eq!(state.desired_ttl_seconds(), 15, "95 nodes: still above the 15 s step's minimum of 90");
}
