//! The graph's string table: apiVersion, kind and namespace have few
//! distinct values and many uses, so nodes hold them as 4-byte [`Sym`]s.

use std::collections::HashMap;

/// An interned string (apiVersion, kind or namespace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Sym(u32);

/// The empty string: the namespace of cluster-scoped objects.
pub(super) const EMPTY: Sym = Sym(0);

/// The graph's string table: few distinct values, many uses.
#[derive(Debug)]
pub(super) struct Interner {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, Sym>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut interner = Interner { names: Vec::new(), ids: HashMap::new() };
        interner.id("");
        interner
    }
}

impl Interner {
    pub(super) fn id(&mut self, s: &str) -> Sym {
        if let Some(id) = self.ids.get(s) {
            return *id;
        }
        let id = Sym(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        self.names.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    pub(super) fn name(&self, id: Sym) -> &str {
        self.names.get(id.0 as usize).map_or("", |s| s)
    }
}
