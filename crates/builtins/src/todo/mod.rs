//! `todowrite`: the session's todo list, replaced as a whole (reference TD1–TD3).
//!
//! Beyond the reference, `status` and `priority` are validated: a bad value is an input error
//! naming the allowed values. The list lives in a [`TodoStore`] that the host owns and can read
//! and subscribe to; a call replaces its session's list only after permission was granted, so
//! a denied or failed call leaves the stored list unchanged. A store made with
//! [`TodoStore::in_data_dir`] also keeps each session's list in a file (`file.rs`), so it
//! survives the process; deleting a session ([`TodoStore::delete_session`]) removes both.

mod file;

use crate::limits::{MAX_ITEMS, MAX_TEXT_CHARS};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Content, Context, Execute, Tool, ToolError};
use tokio::sync::watch;

use crate::authorize::prefixed_denial;
use crate::blocking::blocking;
use crate::error::Error;
pub use file::TODO_DIRECTORY;
use file::TodoFiles;

/// The model-facing description of `todowrite`.
const DESCRIPTION: &str = "\
Create and manage a structured task list for the current session. Use it to track progress on \
multi-step work, to break complex tasks into steps, and to show the user what you are doing.

Each call replaces the whole list, so always send every todo, not only the changed ones. A todo \
has:
- content: a brief description of the task
- status: pending, in_progress, completed or cancelled
- priority: high, medium or low

Keep exactly one task in_progress at a time, mark tasks completed as soon as they are done, and \
cancel tasks that are no longer relevant. Skip the list for a single, trivial task.";

/// How far a todo has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (one at a time).
    InProgress,
    /// Done.
    Completed,
    /// No longer needed.
    Cancelled,
}

/// How urgent a todo is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoPriority {
    /// Do first.
    High,
    /// Normal.
    Medium,
    /// When time allows.
    Low,
}

/// One item of a session's todo list.
// The legacy `id` and Claude Code's `activeForm` are accepted and dropped, so prompts written
// for other tool versions keep working; any other unknown field is an input error.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-ignored" = ["id", "activeForm"]))]
pub struct Todo {
    /// Brief description of the task.
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub content: String,
    /// Current status of the task: pending, in_progress, completed, cancelled.
    pub status: TodoStatus,
    /// Priority level of the task: high, medium, low.
    pub priority: TodoPriority,
}

/// The complete, updated todo list (input and output of `todowrite`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoList {
    /// The updated todo list.
    #[schemars(length(max = MAX_ITEMS))]
    pub todos: Vec<Todo>,
}

/// The todo lists of every session of a host, by session id. Clones share the lists.
///
/// Hosts read a list with [`get`](Self::get) and follow it with [`subscribe`](Self::subscribe);
/// every replacement (even by an identical list) notifies the subscribers of that session.
/// [`new`](Self::new) keeps the lists in memory; [`in_data_dir`](Self::in_data_dir) also in
/// one file per session, read back the first time a session's list is asked for.
#[derive(Clone, Default)]
pub struct TodoStore {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    sessions: Mutex<Sessions>,
    files: Option<TodoFiles>,
    /// Held across a file write and the memory update after it, so the file and the memory
    /// end with the same list when two calls of a session race; `sessions` is never held
    /// across a write.
    writing: Mutex<()>,
}

/// Each session's list, as the sender of its watch channel.
type Sessions = HashMap<String, watch::Sender<Arc<[Todo]>>>;

impl fmt::Debug for TodoStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TodoStore")
            .field("sessions", &self.lock().len())
            .field("directory", &self.directory())
            .finish()
    }
}

impl TodoStore {
    /// An empty store, in memory only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that also keeps each session's list in `<data_dir>/todos` (one file per
    /// session, replaced atomically, the directory private to the user), so a later process
    /// with the same data directory finds it. Nothing is created before the first list.
    pub fn in_data_dir(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            shared: Arc::new(Shared {
                files: Some(TodoFiles::new(data_dir.into())),
                ..Shared::default()
            }),
        }
    }

    /// The directory the lists are kept in, if they are kept in files.
    pub fn directory(&self) -> Option<PathBuf> {
        self.shared.files.as_ref().map(TodoFiles::directory)
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        // A poisoned map is still a consistent map: every write is a single insert or send.
        self.shared
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `session_id`'s list from its file (a small file: the read is short). A file that cannot
    /// be read is no list; the next replacement rewrites it.
    fn stored(&self, session_id: &str) -> Arc<[Todo]> {
        let stored = self
            .shared
            .files
            .as_ref()
            .and_then(|files| files.load(session_id).ok().flatten());
        Arc::from(stored.unwrap_or_default())
    }

    /// The current list of `session_id` (empty when it has none).
    pub fn get(&self, session_id: &str) -> Arc<[Todo]> {
        match self.lock().get(session_id) {
            Some(sender) => Arc::clone(&sender.borrow()),
            None => self.stored(session_id),
        }
    }

    /// A receiver that sees the current list of `session_id` and every later replacement.
    pub fn subscribe(&self, session_id: &str) -> watch::Receiver<Arc<[Todo]>> {
        self.lock()
            .entry(session_id.to_owned())
            .or_insert_with(|| watch::channel(self.stored(session_id)).0)
            .subscribe()
    }

    /// Replaces the list of `session_id` with `todos` (in its file first, when the store keeps
    /// files) and notifies its subscribers. When the file cannot be written, nothing changes.
    pub fn replace(&self, session_id: &str, todos: Vec<Todo>) -> Result<(), Error> {
        let _writing = self
            .shared
            .writing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(files) = &self.shared.files {
            files.save(session_id, &todos)?;
        }
        let todos: Arc<[Todo]> = Arc::from(todos);
        let mut sessions = self.lock();
        match sessions.get(session_id) {
            Some(sender) => {
                sender.send_replace(todos);
            }
            None => {
                sessions.insert(session_id.to_owned(), watch::channel(todos).0);
            }
        }
        Ok(())
    }

    /// Removes the list of `session_id`, and its file: when the host deletes the session. Its
    /// subscribers see an empty list, then the channel closes.
    pub fn delete_session(&self, session_id: &str) -> Result<(), Error> {
        let _writing = self
            .shared
            .writing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(files) = &self.shared.files {
            files.remove(session_id)?;
        }
        if let Some(sender) = self.lock().remove(session_id) {
            sender.send_replace(Arc::from(Vec::new()));
        }
        Ok(())
    }

    /// The ids of the sessions with a list (or a subscriber) in this process, sorted.
    pub fn sessions(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }
}

struct TodoWrite {
    permission: Permission,
    store: TodoStore,
}

impl Execute for TodoWrite {
    type Input = TodoList;
    type Output = TodoList;

    async fn execute(&self, input: TodoList, ctx: &Context) -> Result<TodoList, ToolError> {
        let request =
            Request::new(ctx, "todowrite", vec!["*".to_owned()]).with_save(vec!["*".to_owned()]);
        self.permission
            .assert(request)
            .await
            .map_err(|err| prefixed_denial("Unable to update todos", err))?;
        let (store, session, todos) = (
            self.store.clone(),
            ctx.session_id.clone(),
            input.todos.clone(),
        );
        // Saving writes and syncs a file: off the executor.
        blocking(move || store.replace(&session, todos))
            .await?
            .map_err(|err| ToolError::failure(format!("Unable to update todos: {err}")))?;
        Ok(input)
    }
}

/// The model text (TD3): the todos as pretty-printed JSON.
fn model_text(list: &TodoList) -> Vec<Content> {
    // Serializing plain strings and unit enums cannot fail; an empty text would only hide
    // nothing, but keep the structured fallback honest anyway.
    let text = serde_json::to_string_pretty(&list.todos).unwrap_or_else(|_| "[]".to_owned());
    vec![Content::text(text)]
}

/// The `todowrite` tool over `store`, asserting through `permission`.
pub(crate) fn todowrite_tool(permission: Permission, store: TodoStore) -> Tool {
    Tool::typed(DESCRIPTION, TodoWrite { permission, store })
        .model_output(model_text)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn todo(content: &str, status: TodoStatus) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
            priority: TodoPriority::Medium,
        }
    }

    #[test]
    fn replace_notifies_subscribers_and_keeps_sessions_apart() {
        let store = TodoStore::new();
        let mut rx = store.subscribe("a");
        assert!(rx.borrow_and_update().is_empty());
        store
            .replace("a", vec![todo("one", TodoStatus::Pending)])
            .unwrap();
        assert!(rx.has_changed().unwrap());
        assert_eq!(rx.borrow_and_update()[0].content, "one");
        store
            .replace("b", vec![todo("two", TodoStatus::Completed)])
            .unwrap();
        assert!(!rx.has_changed().unwrap());
        assert_eq!(store.get("b")[0].status, TodoStatus::Completed);
        assert!(store.get("missing").is_empty());
        assert_eq!(store.sessions(), ["a", "b"]);
        store.replace("a", Vec::new()).unwrap();
        assert!(rx.borrow_and_update().is_empty());
    }

    #[test]
    fn statuses_use_the_reference_spelling() {
        let json = serde_json::to_value(todo("x", TodoStatus::InProgress)).unwrap();
        assert_eq!(json["status"], "in_progress");
        assert_eq!(json["priority"], "medium");
    }
}
