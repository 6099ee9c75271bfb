//! An Event's type, `Normal` or `Warning`: what the controller cores decide
//! and the runtime's event recorder writes, so both name it the same way.

/// `Normal` or `Warning`, as `core/v1` Event `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Routine.
    Normal,
    /// Something needs attention.
    Warning,
}

impl EventType {
    /// The spelling the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_as_the_api_spells_it() {
        assert_eq!(EventType::Normal.to_string(), "Normal");
        assert_eq!(EventType::Warning.as_str(), "Warning");
    }
}
