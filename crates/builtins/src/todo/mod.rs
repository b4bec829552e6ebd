//! `todowrite`: the session's todo list, replaced as a whole (reference TD1–TD3).
//!
//! Beyond the reference, `status` and `priority` are validated: a bad value is an input error
//! naming the allowed values. The list lives in a [`TodoStore`] that the host owns and can read
//! and subscribe to; a call replaces its session's list only after permission was granted, so
//! a denied or failed call leaves the stored list unchanged.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Content, Context, Execute, Tool, ToolError};
use tokio::sync::watch;

use crate::authorize::prefixed_denial;

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
    pub todos: Vec<Todo>,
}

/// The todo lists of every session of a host, by session id. Clones share the lists.
///
/// Hosts read a list with [`get`](Self::get) and follow it with [`subscribe`](Self::subscribe);
/// every replacement (even by an identical list) notifies the subscribers of that session.
#[derive(Clone, Default)]
pub struct TodoStore {
    sessions: Arc<Mutex<Sessions>>,
}

/// Each session's list, as the sender of its watch channel.
type Sessions = HashMap<String, watch::Sender<Arc<[Todo]>>>;

impl fmt::Debug for TodoStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TodoStore")
            .field("sessions", &self.lock().len())
            .finish()
    }
}

impl TodoStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        // A poisoned map is still a consistent map: every write is a single insert or send.
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current list of `session_id` (empty when it has none).
    pub fn get(&self, session_id: &str) -> Arc<[Todo]> {
        self.lock()
            .get(session_id)
            .map(|sender| Arc::clone(&sender.borrow()))
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    /// A receiver that sees the current list of `session_id` and every later replacement.
    pub fn subscribe(&self, session_id: &str) -> watch::Receiver<Arc<[Todo]>> {
        self.lock()
            .entry(session_id.to_owned())
            .or_insert_with(|| watch::channel(Arc::from(Vec::new())).0)
            .subscribe()
    }

    /// Replaces the list of `session_id` with `todos` and notifies its subscribers.
    pub fn replace(&self, session_id: &str, todos: Vec<Todo>) {
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
    }

    /// The ids of the sessions that have a list (or a subscriber), sorted.
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
        self.store.replace(&ctx.session_id, input.todos.clone());
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
        store.replace("a", vec![todo("one", TodoStatus::Pending)]);
        assert!(rx.has_changed().unwrap());
        assert_eq!(rx.borrow_and_update()[0].content, "one");
        store.replace("b", vec![todo("two", TodoStatus::Completed)]);
        assert!(!rx.has_changed().unwrap());
        assert_eq!(store.get("b")[0].status, TodoStatus::Completed);
        assert!(store.get("missing").is_empty());
        assert_eq!(store.sessions(), ["a", "b"]);
        store.replace("a", Vec::new());
        assert!(rx.borrow_and_update().is_empty());
    }

    #[test]
    fn statuses_use_the_reference_spelling() {
        let json = serde_json::to_value(todo("x", TodoStatus::InProgress)).unwrap();
        assert_eq!(json["status"], "in_progress");
        assert_eq!(json["priority"], "medium");
    }
}
