//! The services a Location's leaves are built from.
//!
//! Every builtin is built the same way, `tool(&LocationServices) -> Option<Tool>` (`None`: it
//! cannot work with these services and is not offered), capturing what it needs from here;
//! [`crate::builtin_tools`] is the one catalog. This module sits at the bottom of the crate
//! (it uses only the Location, file mutation and the leaves' configuration types), so no leaf
//! imports upward from the crate root.

use std::fmt;
use std::sync::Arc;

use tackle_output_store::OutputStore;
use tackle_permission::Permission;

use crate::location::Location;
use crate::mutation::FileMutation;
use crate::question::QuestionService;
use crate::skill::SkillSources;
use crate::todo::TodoStore;

/// What the leaves of one Location capture when they are built (reference A7).
///
/// Built with [`new`](Self::new) and the `with_*` methods; a host reads what it shares with
/// the leaves (the todo store, say) through the accessors.
#[derive(Clone)]
#[non_exhaustive]
pub struct LocationServices {
    /// The working directory paths resolve against.
    pub location: Location,
    /// Asked before anything is read or changed.
    pub permission: Permission,
    /// Serves `tool-output://` references to `read`.
    pub store: OutputStore,
    /// Every file change goes through it (share one per process, so every Location serializes
    /// writes together).
    pub files: FileMutation,
    /// How the user is asked; `None` (headless) leaves `question` out of the catalog instead
    /// of letting it hang.
    pub(crate) questions: Option<Arc<dyn QuestionService>>,
    pub(crate) todos: TodoStore,
    pub(crate) skills: SkillSources,
    #[cfg(feature = "bash")]
    pub(crate) bash: crate::bash::BashOptions,
    #[cfg(feature = "bash")]
    pub(crate) jobs: crate::bash::JobStore,
    #[cfg(feature = "search")]
    pub(crate) search: crate::search::SearchSettings,
    #[cfg(feature = "web")]
    pub(crate) web: crate::web::WebServices,
    #[cfg(feature = "media")]
    pub(crate) read: crate::read_options::ReadOptions,
    #[cfg(feature = "media")]
    pub(crate) media_worker: Option<Arc<crate::read_options::MediaWorker>>,
}

impl fmt::Debug for LocationServices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocationServices")
            .field("location", &self.location)
            .field("store", &self.store)
            .field("can_ask", &self.can_ask())
            .field("todos", &self.todos)
            .field("skills", &self.skills)
            .finish_non_exhaustive()
    }
}

impl LocationServices {
    /// The services of the Location `location` for a headless host: no question service, an
    /// empty todo store, no user skill directories, and every leaf's default configuration.
    pub fn new(
        location: Location,
        permission: Permission,
        store: OutputStore,
        files: FileMutation,
    ) -> Self {
        Self {
            location,
            permission,
            store,
            files,
            questions: None,
            todos: TodoStore::default(),
            skills: SkillSources::default(),
            #[cfg(feature = "bash")]
            bash: crate::bash::BashOptions::default(),
            #[cfg(feature = "bash")]
            jobs: crate::bash::JobStore::new(),
            #[cfg(feature = "search")]
            search: crate::search::SearchSettings::default(),
            #[cfg(feature = "web")]
            web: crate::web::WebServices::default(),
            #[cfg(feature = "media")]
            read: crate::read_options::ReadOptions::default(),
            #[cfg(feature = "media")]
            media_worker: None,
        }
    }

    /// Asks the user through `questions` (and so offers `question`).
    #[must_use]
    pub fn with_questions(mut self, questions: Arc<dyn QuestionService>) -> Self {
        self.questions = Some(questions);
        self
    }

    /// Keeps the sessions' todo lists in `todos` (keep a clone to read or watch them).
    #[must_use]
    pub fn with_todos(mut self, todos: TodoStore) -> Self {
        self.todos = todos;
        self
    }

    /// Looks for skills in `skills` besides the Location's own skill directories.
    #[must_use]
    pub fn with_skills(mut self, skills: SkillSources) -> Self {
        self.skills = skills;
        self
    }

    /// Runs commands as `bash` configures them (shell, environment, capture limit).
    #[cfg(feature = "bash")]
    #[must_use]
    pub fn with_bash(mut self, bash: crate::bash::BashOptions) -> Self {
        self.bash = bash;
        self
    }

    /// Keeps `bash`'s background jobs in `jobs` (keep a clone to delete a session's jobs
    /// with it; [`JobStore::refusing`](crate::bash::JobStore::refusing) for a host whose
    /// process ends with the call).
    #[cfg(feature = "bash")]
    #[must_use]
    pub fn with_jobs(mut self, jobs: crate::bash::JobStore) -> Self {
        self.jobs = jobs;
        self
    }

    /// The sessions' background jobs.
    #[cfg(feature = "bash")]
    pub fn jobs(&self) -> &crate::bash::JobStore {
        &self.jobs
    }

    /// Searches with `search`'s settings (its time budget).
    #[cfg(feature = "search")]
    #[must_use]
    pub fn with_search(mut self, search: crate::search::SearchSettings) -> Self {
        self.search = search;
        self
    }

    /// Fetches and searches the web as `web` allows.
    #[cfg(feature = "web")]
    #[must_use]
    pub fn with_web(mut self, web: crate::web::WebServices) -> Self {
        self.web = web;
        self
    }

    /// Reads images and PDFs as `read` sets: the image bound, whether the model takes images,
    /// whether PDFs are attached.
    #[cfg(feature = "media")]
    #[must_use]
    pub fn with_read(mut self, read: crate::read_options::ReadOptions) -> Self {
        self.read = read;
        self
    }

    /// Decodes images, PDFs and notebooks in `worker`, a process of its own, so a hostile file
    /// cannot take the host down (see [`MediaWorker`](crate::read::MediaWorker) for what holds
    /// without one).
    #[cfg(feature = "media")]
    #[must_use]
    pub fn with_media_worker(mut self, worker: crate::read_options::MediaWorker) -> Self {
        self.media_worker = Some(Arc::new(worker));
        self
    }

    /// True when the host can ask the user, i.e. `question` is offered.
    pub fn can_ask(&self) -> bool {
        self.questions.is_some()
    }

    /// The sessions' todo lists.
    pub fn todos(&self) -> &TodoStore {
        &self.todos
    }
}
