//! Fixtures shared by the Namespace controller's table tests.

use jiff::Timestamp;

use super::Gvr;

pub fn gvr(group: &str, resource: &str) -> Gvr {
    Gvr { group: group.into(), version: "v1".into(), resource: resource.into() }
}

pub fn ts(s: &str) -> Timestamp {
    s.parse().expect("timestamp")
}

pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}
