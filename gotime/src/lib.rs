//! Go's and client-go's time primitives, written once.
//!
//! kube-controller-manager's behaviour is timed by a handful of Go
//! primitives; kcm-rs's daemon, its runtime, its sans-IO controllers and
//! kube-sim all need the same ones, with the same semantics. This crate is
//! a leaf: it reads no clock and does no I/O (time is always an argument),
//! so the sans-IO controllers may use it too.
//!
//! # Layout
//! - [`duration`]: Go's duration syntax (`time.ParseDuration`,
//!   `time.Duration.String()`), as kube-controller-manager's flags and
//!   kube-sim's annotations are written;
//! - [`token_bucket`]: `golang.org/x/time/rate`'s token bucket, as
//!   client-go's `flowcontrol` and workqueue use it (reserve into debt, or
//!   take only what is there);
//! - [`jitter`]: a small seedable random source and client-go's
//!   `wait.Jitter`.

pub mod duration;
pub mod jitter;
pub mod token_bucket;

pub use duration::{GoDuration, format_go_duration, parse_go_duration};
pub use jitter::Jitter;
pub use token_bucket::{Moment, TokenBucket};
