//! Shared values: strings (and lists) that repeat across cached objects are
//! held once for the whole process.
//!
//! A cluster's pods repeat a handful of values many times over: their
//! namespace, node name, label keys and values, owner kinds and names,
//! toleration lists. An [`Atom`] is such a string, decoded through a
//! process-wide [`Pool`], so that equal atoms share one allocation; a pod
//! pays a pointer for each. The pool forgets values nothing holds any more
//! in batches: when it has doubled in size since it last did (from 4,096
//! entries), it drops every entry only the pool still holds, so a pool
//! never holds more than about twice what is in use.
//!
//! An atom is one pointer (an [`ArcStr`]: count, length and text in one
//! block), not the two of an `Arc<str>`: a cached pod holds a dozen or
//! more, five conditions of two each among them.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use arcstr::ArcStr;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// Entries a pool holds before its first sweep of unused values.
const FIRST_SWEEP: usize = 4_096;

/// A reference-counted value a [`Pool`] hands out.
pub trait Shared: Clone + Hash + Eq {
    /// Whether anything but the pool holds this value.
    fn held_elsewhere(&self) -> bool;
}

impl<T: ?Sized + Hash + Eq> Shared for Arc<T> {
    fn held_elsewhere(&self) -> bool {
        Arc::strong_count(self) > 1
    }
}

impl Shared for ArcStr {
    fn held_elsewhere(&self) -> bool {
        // A literal (no count) is never dropped anyway.
        ArcStr::strong_count(self).is_none_or(|n| n > 1)
    }
}

/// A process-wide set of shared values of one type `T`, each held as a
/// `P` (an `Arc<T>` unless said otherwise).
pub struct Pool<T: ?Sized, P = Arc<T>> {
    inner: Mutex<PoolInner<P>>,
    value: std::marker::PhantomData<fn(&T)>,
}

/// The values, and the size at which the next sweep runs.
struct PoolInner<P> {
    values: HashSet<P>,
    sweep_at: usize,
}

impl<T: ?Sized + Hash + Eq, P: Shared + Borrow<T>> Pool<T, P> {
    /// An empty pool.
    pub fn new() -> Self {
        let inner = PoolInner { values: HashSet::new(), sweep_at: FIRST_SWEEP };
        Pool { inner: Mutex::new(inner), value: std::marker::PhantomData }
    }

    /// The shared copy of `value`, made on first use.
    pub fn intern(&self, value: &T) -> P
    where
        for<'a> P: From<&'a T>,
    {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = inner.values.get(value) {
            return shared.clone();
        }
        if inner.values.len() >= inner.sweep_at {
            inner.values.retain(P::held_elsewhere);
            inner.sweep_at = (inner.values.len() * 2).max(FIRST_SWEEP);
        }
        let shared = P::from(value);
        inner.values.insert(shared.clone());
        shared
    }

    /// Values held, in use or not yet swept.
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).values.len()
    }

    /// Whether the pool holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: ?Sized + Hash + Eq, P: Shared + Borrow<T>> Default for Pool<T, P> {
    fn default() -> Self {
        Self::new()
    }
}

/// A shared list behind one pointer: the slice's length is kept with its
/// items, not beside the pointer as in an `Arc<[T]>`. For lists a [`Pool`]
/// hands out, which a cached object holds many of and reads rarely.
/// Compares and hashes as its slice. The empty list allocates nothing.
pub struct SharedList<T>(Option<Arc<Box<[T]>>>);

impl<T> SharedList<T> {
    /// Whether `a` and `b` are the same copy (two empty lists are).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        match (&a.0, &b.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}

impl<T> Default for SharedList<T> {
    /// The empty list.
    fn default() -> Self {
        SharedList(None)
    }
}

impl<T> Clone for SharedList<T> {
    fn clone(&self) -> Self {
        SharedList(self.0.clone())
    }
}

impl<T> Deref for SharedList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.0.as_deref().map_or(&[], |items| items)
    }
}

impl<T> Borrow<[T]> for SharedList<T> {
    fn borrow(&self) -> &[T] {
        self
    }
}

impl<T: PartialEq> PartialEq for SharedList<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for SharedList<T> {}

impl<T: Hash> Hash for SharedList<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl<T: fmt::Debug> fmt::Debug for SharedList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Clone> From<&[T]> for SharedList<T> {
    fn from(items: &[T]) -> Self {
        SharedList((!items.is_empty()).then(|| Arc::new(items.into())))
    }
}

impl<T> From<Vec<T>> for SharedList<T> {
    fn from(items: Vec<T>) -> Self {
        SharedList((!items.is_empty()).then(|| Arc::new(items.into_boxed_slice())))
    }
}

impl<T: Hash + Eq> Shared for SharedList<T> {
    fn held_elsewhere(&self) -> bool {
        self.0.as_ref().is_none_or(|items| Arc::strong_count(items) > 1)
    }
}

/// The pool of every [`Atom`].
static STRINGS: LazyLock<Pool<str, ArcStr>> = LazyLock::new(Pool::new);

/// A shared immutable string: equal atoms made anywhere in the process
/// share one allocation. Compares, hashes and orders as its text.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Atom(ArcStr);

impl Atom {
    /// The shared atom for `text`.
    pub fn new(text: &str) -> Self {
        Atom(STRINGS.intern(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Atom {
    /// The empty string.
    fn default() -> Self {
        Atom::new("")
    }
}

impl Deref for Atom {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Atom {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Atom {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Atom {
    fn from(text: &str) -> Self {
        Atom::new(text)
    }
}

impl PartialEq<str> for Atom {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Atom {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl fmt::Debug for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Atom {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(AtomVisitor)
    }
}

/// Interns a string without an intermediate `String` when the decoder
/// can lend it.
struct AtomVisitor;

impl Visitor<'_> for AtomVisitor {
    type Value = Atom;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Atom, E> {
        Ok(Atom::new(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_atoms_share_one_allocation() {
        let a = Atom::new("kube-system");
        let b: Atom = serde_json::from_str("\"kube-system\"").unwrap();
        assert!(ArcStr::ptr_eq(&a.0, &b.0));
        assert_eq!(a, "kube-system");
    }

    #[test]
    fn a_pool_forgets_values_nobody_holds_once_it_has_doubled() {
        let pool: Pool<str> = Pool::new();
        let kept = pool.intern("kept");
        for i in 1..FIRST_SWEEP {
            pool.intern(&format!("gone-{i}"));
        }
        assert_eq!(pool.len(), FIRST_SWEEP);
        pool.intern("trigger");
        assert_eq!(pool.len(), 2, "only 'kept' and the new value remain");
        assert!(Arc::ptr_eq(&kept, &pool.intern("kept")));
    }

    #[test]
    fn a_pool_of_shared_lists_finds_a_list_by_its_items() {
        let pool: Pool<[u32], SharedList<u32>> = Pool::new();
        let a = pool.intern(&[1, 2, 3]);
        let b = pool.intern(&Vec::from([1, 2, 3]));
        assert!(SharedList::ptr_eq(&a, &b), "equal items: one copy");
        assert!(!SharedList::ptr_eq(&a, &pool.intern(&[1, 2])));
        assert_eq!(&*a, &[1, 2, 3]);
        assert!(pool.intern(&[]).is_empty());
        assert_eq!(SharedList::<u32>::default(), SharedList::from(Vec::new()));
    }
}
