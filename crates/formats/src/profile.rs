//! Model-aware catalogs: which of the tools that do the same job a model is offered.

use tackle_registry::Materialization;

/// The file-editing tools a model is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditTools {
    /// `apply_patch` instead of `edit` and `write` (the patch format OpenAI's GPT models write).
    Patch,
    /// `edit` and `write` instead of `apply_patch`.
    Replace,
    /// All three.
    Both,
}

/// A catalog profile: what a model is offered out of a snapshot.
///
/// [`for_model`](Self::for_model) chooses the editing tools a model was trained on; a host
/// builds its own with [`new`](Self::new) and [`hiding`](Self::hiding). A profile never takes
/// away the only way to edit: when the snapshot lacks the preferred tools (a denied action,
/// a feature left out), the others stay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogProfile {
    edit: EditTools,
    hidden: Vec<String>,
}

impl Default for CatalogProfile {
    fn default() -> Self {
        Self::new(EditTools::Replace)
    }
}

impl CatalogProfile {
    /// A profile offering `edit`'s tools and hiding nothing else.
    pub fn new(edit: EditTools) -> Self {
        Self {
            edit,
            hidden: Vec::new(),
        }
    }

    /// The profile for the model `id` (`gpt-5`, `openai/gpt-5.1-codex`, `claude-sonnet-4-5`):
    /// `apply_patch` for OpenAI's GPT models from GPT-5 on (an id with `gpt-`, without `gpt-4`
    /// or `oss`), `edit` and `write` for every other model.
    pub fn for_model(id: &str) -> Self {
        let id = id.to_ascii_lowercase();
        let patch = id.contains("gpt-") && !id.contains("gpt-4") && !id.contains("oss");
        Self::new(if patch {
            EditTools::Patch
        } else {
            EditTools::Replace
        })
    }

    /// This profile also hiding the tool `name`.
    #[must_use]
    pub fn hiding(mut self, name: impl Into<String>) -> Self {
        self.hidden.push(name.into());
        self
    }

    /// The editing tools this profile prefers.
    pub fn edit_tools(&self) -> EditTools {
        self.edit
    }

    /// `snapshot` as this profile offers it; a call of a tool it leaves out is `Unknown tool`.
    pub fn apply(&self, snapshot: &Materialization) -> Materialization {
        let replace_offered = snapshot.contains("edit") || snapshot.contains("write");
        let patch_offered = snapshot.contains("apply_patch");
        let hide_replace = self.edit == EditTools::Patch && patch_offered;
        let hide_patch = self.edit == EditTools::Replace && replace_offered;
        snapshot.filtered(|name, _| {
            let edits = match name {
                "edit" | "write" => !hide_replace,
                "apply_patch" => !hide_patch,
                _ => true,
            };
            edits && !self.hidden.iter().any(|hidden| hidden == name)
        })
    }
}
