//! The [`Host`]: one Location's configuration, services and registry, and its sessions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tackle_builtins::question::QuestionService;
use tackle_builtins::todo::TodoStore;
use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{Agents, AnswerAll, Asker, Permission, Protected, Reply, SavedApprovals};
use tackle_registry::{
    ApplicationTools, Materialization, Registration, SettleError, Settlement, ToolRegistry,
};
use tackle_tool_core::{Call, Context, Tool};

use crate::audit::AuditLog;
use crate::config::{Config, Sources};
use crate::env::Environment;
use crate::error::HostError;
use crate::resolve;

/// How a [`Host`] is built: [`Host::builder`], then `build`.
#[must_use]
pub struct HostBuilder {
    location: PathBuf,
    data_dir: Option<PathBuf>,
    config_file: Option<PathBuf>,
    flags: Vec<(String, Value)>,
    env: Option<Environment>,
    asker: Option<Arc<dyn Asker>>,
    questions: Option<Arc<dyn QuestionService>>,
    application: Option<ApplicationTools>,
    files: Option<FileMutation>,
    todos: Option<TodoStore>,
    only: Option<String>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("location", &self.location)
            .field("data_dir", &self.data_dir)
            .field("config_file", &self.config_file)
            .field("only", &self.only)
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// Keeps managed outputs, saved approvals and trust records in `dir` (default: the
    /// platform data directory, `$XDG_DATA_HOME/tackle` or `~/.local/share/tackle`).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Reads `file` after the project's files (`--config`); it must exist.
    pub fn config_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.config_file = Some(file.into());
        self
    }

    /// Sets `key` (a dotted path, `output.max_lines`) to `value`, above every file and the
    /// environment (what a flag sets).
    pub fn set(mut self, key: impl Into<String>, value: Value) -> Self {
        self.flags.push((key.into(), value));
        self
    }

    /// Reads `env` instead of the process environment: the user's configuration directory,
    /// `TACKLE_*`, websearch keys, what commands inherit.
    pub fn env(mut self, env: Environment) -> Self {
        self.env = Some(env);
        self
    }

    /// Asks the user through `asker` (default: every ask is declined).
    pub fn asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.asker = Some(asker);
        self
    }

    /// Offers `question`, asked through `questions`.
    pub fn questions(mut self, questions: Arc<dyn QuestionService>) -> Self {
        self.questions = Some(questions);
        self
    }

    /// The process's application tools (default: an empty set).
    pub fn application_tools(mut self, tools: &ApplicationTools) -> Self {
        self.application = Some(tools.clone());
        self
    }

    /// Serializes file changes through `files` (share one per process).
    pub fn file_mutation(mut self, files: FileMutation) -> Self {
        self.files = Some(files);
        self
    }

    /// Keeps the sessions' todo lists in `todos`.
    pub fn todos(mut self, todos: TodoStore) -> Self {
        self.todos = Some(todos);
        self
    }

    /// Builds only the builtin `name` (a one-shot call): the other builtins are not built at
    /// all. A name that is not a builtin's exact name builds every builtin, so the registry can
    /// settle it case-insensitively (`Read` settles `read`).
    pub fn only(mut self, name: impl Into<String>) -> Self {
        self.only = Some(name.into());
        self
    }

    /// Loads the configuration and builds the services and the registry. Nothing is written.
    pub fn build(self) -> Result<Host, HostError> {
        let env = self.env.unwrap_or_else(Environment::from_process);
        let location = location(&self.location)?;
        let data_dir = match self.data_dir {
            Some(dir) => dir,
            None => default_data_dir(&env)?,
        };
        let config = Config::load(&Sources {
            location: location.clone(),
            data_dir: Some(data_dir.clone()),
            file: self.config_file,
            env: env.clone(),
            flags: self.flags,
        })?;
        let bash = resolve::bash_options(&config, &env);
        // `read` pages managed outputs, so the store's markers name it; the credentials bash
        // withholds from commands are redacted from every result, whichever tool shows them.
        let store_config = resolve::store_config(&config, &data_dir)?;
        let paging = tackle_builtins::read::paging_hint(&store_config.budget());
        let secrets = tackle_builtins::bash::scrubbed_values(&bash);
        let store = OutputStore::new(store_config.with_paging(paging).with_redactions(secrets));
        // The audit log redacts what the store redacts.
        let audit = AuditLog::from_config(&config, &data_dir, &store);
        let asker = self
            .asker
            .unwrap_or_else(|| Arc::new(AnswerAll(Reply::Reject { message: None })));
        let saved = SavedApprovals::for_project(&data_dir, &location)?;
        // The data directory holds the saved approvals and the trust records: a tool writing
        // there could grant as much as a rule, so it is protected like the configuration.
        let protected = Protected::from_env(|key| env.get_os(key)).and_dir(&data_dir);
        // Each configured agent's rules apply after the global ones to that agent's requests.
        let mut agents = Agents::new();
        for (name, rules) in &config.agents {
            agents.define(name.clone(), rules.clone());
        }
        let mut permission = Permission::new(config.rules.clone(), saved, asker)
            .with_protected(protected)
            .with_agents(agents);
        if let Some(audit) = &audit {
            permission = permission.with_observer(Arc::new(audit.clone()));
        }
        let mut services = LocationServices::new(
            Location::new(&location).map_err(HostError::Builtins)?,
            permission.clone(),
            store.clone(),
            self.files.unwrap_or_default(),
        )
        .with_skills(resolve::skill_sources(&config, &env))
        .with_bash(bash)
        .with_search(resolve::search_settings(&config))
        .with_web(resolve::web_services(&config, &env));
        if let Some(questions) = self.questions {
            services = services.with_questions(questions);
        }
        // Todo lists outlive the process in the data directory (`--session` finds them again).
        let todos = self
            .todos
            .unwrap_or_else(|| TodoStore::in_data_dir(&data_dir));
        services = services.with_todos(todos);
        let tools = match self.only.as_deref() {
            Some(name) => match tackle_builtins::builtin_tool(&services, name) {
                Some(tool) => vec![(name.to_owned(), tool)],
                None => tackle_builtins::builtin_tools(&services),
            },
            None => tackle_builtins::builtin_tools(&services),
        };
        let application = self.application.unwrap_or_default();
        let registry = match &audit {
            Some(audit) => {
                ToolRegistry::with_observer(&application, store.clone(), Arc::new(audit.clone()))
            }
            None => ToolRegistry::new(&application, store.clone()),
        };
        let builtins = registry
            .tools()
            .register(tools)
            .map_err(HostError::Registration)?;
        Ok(Host {
            location,
            data_dir,
            config,
            registry,
            permission,
            services,
            store,
            sessions: Mutex::default(),
            audit,
            _builtins: builtins,
        })
    }
}

/// One Location's tools, ready to settle calls: the configuration, the services the builtins
/// were built from, and the registry holding them.
#[derive(Debug)]
pub struct Host {
    location: PathBuf,
    data_dir: PathBuf,
    config: Config,
    registry: ToolRegistry,
    permission: Permission,
    services: LocationServices,
    store: OutputStore,
    /// What each session registered, held until the session is deleted.
    sessions: Mutex<BTreeMap<String, Vec<Registration>>>,
    audit: Option<AuditLog>,
    _builtins: Registration,
}

impl Host {
    /// A builder for the host of the Location `location` (an existing directory).
    pub fn builder(location: impl Into<PathBuf>) -> HostBuilder {
        HostBuilder {
            location: location.into(),
            data_dir: None,
            config_file: None,
            flags: Vec::new(),
            env: None,
            asker: None,
            questions: None,
            application: None,
            files: None,
            todos: None,
            only: None,
        }
    }

    /// The Location (canonical).
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The merged configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The permission service every builtin asks.
    pub fn permission(&self) -> &Permission {
        &self.permission
    }

    /// The services the builtins were built from (the todo store, say).
    pub fn services(&self) -> &LocationServices {
        &self.services
    }

    /// The output store.
    pub fn store(&self) -> &OutputStore {
        &self.store
    }

    /// The audit log, when the configuration turns it on (`audit.path`).
    pub fn audit(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }

    /// The Location's registry (register Location tools through `registry().tools()`).
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The catalog for one turn outside any session: every tool the rules do not wholly
    /// disable.
    pub fn materialize(&self) -> Materialization {
        self.registry.materialize(self.permission.rules())
    }

    /// A new session with a fresh id.
    pub fn create_session(&self) -> Session<'_> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = format!(
            "ses_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.session(id)
    }

    /// The session `id` (created by its first use).
    pub fn session(&self, id: impl Into<String>) -> Session<'_> {
        Session {
            host: self,
            id: id.into(),
            agent: String::new(),
        }
    }

    /// Deletes the session `id` and everything that was its own, together: the tools
    /// registered for it, its pending permission asks (they end as cancelled) and its "this
    /// session" approvals, its todo list and its managed outputs. Every part is removed even
    /// when an earlier one fails; the first failure is returned.
    pub fn delete_session(&self, id: &str) -> Result<(), HostError> {
        let removed = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        // The layer goes at once, whoever else holds a guard of it; then ours are dropped.
        self.registry.close_session(id);
        drop(removed);
        self.permission.delete_session(id);
        let todos = self
            .services
            .todos()
            .delete_session(id)
            .map_err(HostError::Builtins);
        let outputs = self.store.remove_session(id).map_err(HostError::Store);
        todos.and(outputs.map(drop))
    }
}

/// One session of a [`Host`]: its calls share the session id, its tools are its own.
#[derive(Debug, Clone)]
pub struct Session<'a> {
    host: &'a Host,
    id: String,
    agent: String,
}

impl Session<'_> {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Makes this session's calls on behalf of the agent `agent` (the context's agent, which
    /// permission sees).
    #[must_use]
    pub fn with_agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = agent.into();
        self
    }

    /// Registers `tools` for this session only; they stay until the session is deleted.
    pub fn register(&self, tools: Vec<(String, Tool)>) -> Result<(), HostError> {
        let registration = self
            .host
            .registry
            .session_tools(&self.id)
            .register(tools)
            .map_err(HostError::Registration)?;
        self.host
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(self.id.clone())
            .or_default()
            .push(registration);
        Ok(())
    }

    /// This session's catalog for one turn.
    pub fn materialize(&self) -> Materialization {
        self.host
            .registry
            .materialize_session(&self.id, &self.host.permission.visibility(&self.agent))
    }

    /// Settles `call` against a fresh catalog of this session.
    pub async fn settle(&self, call: &Call) -> Result<Settlement, SettleError> {
        self.materialize().settle(call, &self.context(call)).await
    }

    /// The context of `call` in this session.
    pub fn context(&self, call: &Call) -> Context {
        let mut ctx = Context::new(self.id.clone()).for_call(call.id.clone());
        ctx.agent.clone_from(&self.agent);
        ctx
    }
}

/// The Location directory: `dir`, canonical; it must be an existing directory.
pub fn location(dir: &Path) -> Result<PathBuf, HostError> {
    let canonical = std::fs::canonicalize(dir).map_err(|source| HostError::Location {
        path: dir.to_owned(),
        source,
    })?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(HostError::NotADirectory(dir.to_owned()))
    }
}

/// The platform data directory for `tackle` under `env`.
pub fn default_data_dir(env: &Environment) -> Result<PathBuf, HostError> {
    StoreConfig::default_location_from(|key| env.get_os(key))
        .and_then(|config| config.directory.parent().map(Path::to_path_buf))
        .ok_or(HostError::NoDataDir)
}
