//! What `question`, `skill`, `todowrite`, `webfetch` and `websearch` need from the host, and
//! how they join the catalog.
//!
//! A tool that could only fail is not offered: `question` needs a [`QuestionService`] (a
//! headless host has none), `skill` needs at least one discovered skill, `websearch` a
//! configured provider. `todowrite` and `webfetch` are always offered (webfetch only with the
//! `web` cargo feature).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use tackle_permission::Permission;
use tackle_tool_core::Tool;

use crate::question::{QuestionService, question_tool};
use crate::skill::{SkillCatalog, SkillSources, skill_tool};
use crate::todo::{TodoStore, todowrite_tool};

/// The host's services for the interactive and web tools.
#[derive(Clone, Default)]
pub struct InteractiveServices {
    /// How the user is asked; `None` for a host that cannot ask anyone (headless), which
    /// leaves `question` out of the catalog instead of letting it hang.
    pub questions: Option<Arc<dyn QuestionService>>,
    /// The sessions' todo lists; keep a clone to read or subscribe to them.
    pub todos: TodoStore,
    /// Where skills are looked for besides the Location's own skill directories.
    pub skills: SkillSources,
    /// webfetch's network policy and websearch's providers.
    #[cfg(feature = "web")]
    pub web: crate::web::WebServices,
}

impl fmt::Debug for InteractiveServices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("InteractiveServices");
        out.field(
            "questions",
            &self.questions.as_ref().map(|_| "QuestionService"),
        )
        .field("todos", &self.todos)
        .field("skills", &self.skills);
        #[cfg(feature = "web")]
        out.field("web", &self.web);
        out.finish()
    }
}

impl InteractiveServices {
    /// Services for a host that cannot ask (no question service), with an empty todo store,
    /// no user skill directories and the default web policy.
    pub fn headless() -> Self {
        Self::default()
    }

    /// True when the host can ask the user, i.e. `question` is offered.
    pub fn can_ask(&self) -> bool {
        self.questions.is_some()
    }
}

/// The interactive and web tools for the Location at `location_dir`, by name, in catalog
/// order (question, skill, todowrite, webfetch, websearch), leaving out the ones that cannot
/// work with `services`. Skills are discovered here; hosts that want to report unusable skill
/// files call [`SkillCatalog::discover`] with the same arguments.
pub fn interactive_tools(
    permission: &Permission,
    location_dir: &Path,
    services: &InteractiveServices,
) -> Vec<(String, Tool)> {
    let mut tools = Vec::new();
    if let Some(questions) = &services.questions {
        tools.push((
            "question".to_owned(),
            question_tool(permission.clone(), Arc::clone(questions)),
        ));
    }
    let catalog = SkillCatalog::discover(location_dir, &services.skills);
    if let Some(skill) = skill_tool(permission.clone(), catalog) {
        tools.push(("skill".to_owned(), skill));
    }
    tools.push((
        "todowrite".to_owned(),
        todowrite_tool(permission.clone(), services.todos.clone()),
    ));
    #[cfg(feature = "web")]
    tools.extend(crate::web::web_tools(permission, &services.web));
    tools
}
