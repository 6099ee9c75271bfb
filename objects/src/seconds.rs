//! A `metav1.Time` kept as whole seconds since the epoch: 8 bytes where an
//! `Option<Timestamp>` takes 24. The API writes one to the second, so
//! nothing is lost.

use jiff::Timestamp;
use serde::{Deserialize, Deserializer};

/// A time to the second, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(i64);

/// What a [`Seconds`] of no time holds.
const NONE: i64 = i64::MIN;

impl Seconds {
    /// `at`, to the second.
    pub fn new(at: Option<Timestamp>) -> Self {
        Seconds(at.map_or(NONE, |t| t.as_second()))
    }

    /// The time, if there is one.
    pub fn get(self) -> Option<Timestamp> {
        (self.0 != NONE).then(|| Timestamp::from_second(self.0).ok()).flatten()
    }
}

impl Default for Seconds {
    /// No time.
    fn default() -> Self {
        Seconds(NONE)
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<Timestamp>::deserialize(deserializer).map(Seconds::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_an_api_time_and_its_absence() {
        let at: Seconds = serde_json::from_str("\"2026-12-06T10:11:12Z\"").unwrap();
        assert_eq!(at.get(), Some("2026-12-06T10:11:12Z".parse().unwrap()));
        let none: Seconds = serde_json::from_str("null").unwrap();
        assert_eq!(none.get(), None);
        assert_eq!(Seconds::default().get(), None);
    }
}
