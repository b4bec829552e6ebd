//! What running a tool may change.

/// What running a tool may change, as the tool declares it.
///
/// A host runs calls of tools that change nothing side by side and the others one at a time
/// (the registry's `settle_batch`), and tells clients what a tool does (MCP's annotations).
/// A tool that declares nothing is [`Mutating`](Self::Mutating): assuming a tool is harmless
/// when it is not would let two writers race.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolClass {
    /// Reads the Location (files, skills) and changes nothing.
    ReadOnly,
    /// Reads the world outside the Location (the web) and changes nothing here.
    OpenWorld,
    /// May change files, processes or state, or talks to the user: runs alone.
    #[default]
    Mutating,
}

impl ToolClass {
    /// True when calls of the tool may run at the same time as other such calls.
    pub const fn is_read_only(self) -> bool {
        matches!(self, Self::ReadOnly | Self::OpenWorld)
    }
}
