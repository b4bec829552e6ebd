//! Catalog visibility: which tools a materialized catalog leaves out.

/// Decides whether a permission action is wholly disabled, so that tools with that action are
/// left out of a catalog. Hiding is not authorization: a call that reaches settlement still runs
/// the tool's own permission checks.
///
/// The permission crate implements this for its rulesets; the registry sees only this trait.
pub trait Visibility {
    /// True when every use of `action` is denied, so its tools should not be offered.
    fn wholly_disabled(&self, action: &str) -> bool;
}

/// A [`Visibility`] that hides nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowAll;

impl Visibility for ShowAll {
    fn wholly_disabled(&self, _action: &str) -> bool {
        false
    }
}

impl<V: Visibility + ?Sized> Visibility for &V {
    fn wholly_disabled(&self, action: &str) -> bool {
        (**self).wholly_disabled(action)
    }
}
