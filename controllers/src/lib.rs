//! The decision logic of kcm-rs's controllers.
//!
//! Each controller's core is a pure function from a snapshot of cached state
//! (plus `now` and the controller's own remembered state) to a plan of
//! intended API writes. Nothing here performs I/O, reads a clock or spawns a
//! task; the runtime in the `kcm-rs` crate executes the plans. No controller
//! core has landed yet: this crate is the place they will live.
