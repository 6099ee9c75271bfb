//! One column definition (`TableColumnDefinition`) and what every table's
//! columns share: NAME, AGE and the container columns' descriptions.

use serde_json::{Value, json};

/// One `TableColumnDefinition`.
pub(super) struct Column {
    /// Header text; kubectl upper-cases it.
    pub(super) name: &'static str,
    /// OpenAPI type: string, integer, date...
    pub(super) ty: &'static str,
    /// OpenAPI format; "name" marks the column holding the object's name.
    pub(super) format: &'static str,
    /// What the column shows.
    pub(super) description: &'static str,
    /// 0 for default output, 1 for columns only `-o wide` shows.
    pub(super) priority: u8,
}

impl Column {
    /// A default-output string column.
    pub(super) const fn text(name: &'static str, description: &'static str) -> Self {
        Self { name, ty: "string", format: "", description, priority: 0 }
    }

    /// A default-output integer column.
    pub(super) const fn int(name: &'static str, description: &'static str) -> Self {
        Self { ty: "integer", ..Self::text(name, description) }
    }

    /// A default-output boolean column.
    pub(super) const fn boolean(name: &'static str, description: &'static str) -> Self {
        Self { ty: "boolean", ..Self::text(name, description) }
    }

    /// A string column only `-o wide` shows.
    pub(super) const fn wide(name: &'static str, description: &'static str) -> Self {
        Self { priority: 1, ..Self::text(name, description) }
    }

    /// The definition as the API sends it (every field always present).
    pub(super) fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.ty,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// ObjectMeta's documentation of `name`.
pub(super) const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, \
     although some resources may allow a client to request the generation of an appropriate name \
     automatically. Name is primarily intended for creation idempotence and configuration \
     definition. Cannot be updated. More info: \
     https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// ObjectMeta's documentation of `creationTimestamp`.
pub(super) const CREATED_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was \
     created. It is not guaranteed to be set in happens-before order across separate operations. \
     Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\n\
     Populated by the system. Read-only. Null for lists. More info: \
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// Description shared by every CONTAINERS column.
pub(super) const CONTAINERS_DOC: &str = "Names of each container in the template.";
/// Description shared by every IMAGES column.
pub(super) const IMAGES_DOC: &str = "Images referenced by each container in the template.";

/// The NAME column every table starts with (events put it last).
pub(super) const NAME: Column = Column { format: "name", ..Column::text("Name", NAME_DOC) };
/// The AGE column of built-in types.
pub(super) const AGE: Column = Column::text("Age", CREATED_DOC);
