//! The [`Host`]: one Location's configuration, services and registry, and its sessions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tackle_builtins::bash::JobStore;
use tackle_builtins::question::QuestionService;
use tackle_builtins::read::MediaWorker;
use tackle_builtins::todo::TodoStore;
use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_mcp_client::{Options as McpOptions, ServerStatus, Servers};
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
use crate::plugin::{Plugin, PluginStatus, Plugins};
use crate::{mcp, resolve};

mod session_mcp;

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
    jobs: Option<JobStore>,
    media_worker: Option<MediaWorker>,
    only: Option<String>,
    plugins: Vec<Plugins>,
    own_plugins: Vec<Arc<dyn Plugin>>,
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

    /// Boots `plugins` (booted once for the process with [`Plugins::boot`]) for this Location,
    /// after the builtins and in their order, and uses their application tools. Give the same
    /// value to every host of the process.
    pub fn plugins(mut self, plugins: &Plugins) -> Self {
        self.plugins.push(plugins.clone());
        self
    }

    /// Adds `plugin`, booted at `build` for the process (into this host's application tools,
    /// held by the host) and then for the Location, after the plugins given so far. For a
    /// process with one host; with several, boot a [`Plugins`] once and give it to each.
    pub fn plugin(mut self, plugin: Arc<dyn Plugin>) -> Self {
        self.own_plugins.push(plugin);
        self
    }

    /// Keeps `bash`'s background jobs in `jobs` (default: a store of this host's own; a
    /// host whose process ends with the call passes [`JobStore::refusing`]).
    pub fn jobs(mut self, jobs: JobStore) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Decodes the images, PDFs and notebooks `read` opens in `worker`, a process of its own,
    /// so a hostile file cannot take this process down (default: in-process, under the
    /// decoders' limits only; see [`MediaWorker`]).
    pub fn media_worker(mut self, worker: MediaWorker) -> Self {
        self.media_worker = Some(worker);
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
        let mut secrets = tackle_builtins::bash::scrubbed_values(&bash);
        // MCP servers start from the same scrubbed environment; what their configuration puts
        // in their hands (`{env:NAME}` values, headers) is redacted like bash's credentials. A
        // bad server entry fails the build only when servers are connected (not a one-shot).
        let server_env = mcp::ServerEnv::new(scrub_options(&bash, &env));
        let mcp_servers = mcp::servers(&config, &env, &location, &server_env);
        if let Ok(resolved) = &mcp_servers {
            secrets.extend(resolved.secrets.iter().cloned());
        }
        let store = OutputStore::new(store_config.with_paging(paging).with_redactions(secrets));
        // The audit log redacts what the store redacts.
        let audit = AuditLog::from_config(&config, &data_dir, &store);
        let asker = self
            .asker
            .unwrap_or_else(|| Arc::new(AnswerAll(Reply::Reject { message: None })));
        let saved = SavedApprovals::for_project(&data_dir, &location)?;
        let protected = protected(&env, &data_dir, &location, &config);
        // Each configured agent's rules apply after the global ones to that agent's requests.
        let mut agents = Agents::new();
        for (name, rules) in &config.agents {
            agents.define(name.clone(), rules.clone());
        }
        let mut permission = Permission::builder(config.rules.clone(), saved, asker)
            .protected(protected)
            .agents(agents);
        if let Some(audit) = &audit {
            permission = permission.observer(Arc::new(audit.clone()));
        }
        let permission = permission.build();
        let mut services = LocationServices::new(
            Location::new(&location).map_err(HostError::Builtins)?,
            permission.clone(),
            store.clone(),
            self.files.unwrap_or_default(),
        )
        .with_skills(resolve::skill_sources(&config, &env))
        .with_bash(bash)
        .with_search(resolve::search_settings(&config))
        .with_web(resolve::web_services(&config, &env))
        .with_read(resolve::read_options(&config));
        if let Some(questions) = self.questions {
            services = services.with_questions(questions);
        }
        // Todo lists outlive the process in the data directory (`--session` finds them again).
        let todos = self
            .todos
            .unwrap_or_else(|| TodoStore::in_data_dir(&data_dir));
        services = services.with_todos(todos);
        if let Some(jobs) = self.jobs {
            services = services.with_jobs(jobs);
        }
        if let Some(worker) = self.media_worker {
            services = services.with_media_worker(worker);
        }
        let (tools, one_builtin) = match self.only.as_deref() {
            Some(name) => match tackle_builtins::builtin_tool(&services, name) {
                Some(tool) => (vec![(name.to_owned(), tool)], true),
                None => (tackle_builtins::builtin_tools(&services), false),
            },
            None => (tackle_builtins::builtin_tools(&services), false),
        };
        let mut plugins = self.plugins;
        let mut application = self.application.unwrap_or_default();
        if let Some(first) = plugins.first() {
            application = first.application().clone();
        }
        if !self.own_plugins.is_empty() {
            plugins.push(Plugins::boot(&application, self.own_plugins));
        }
        // A one-shot call of a builtin needs no server; any other host connects them all.
        let servers = if one_builtin {
            Vec::new()
        } else {
            mcp_servers?.servers
        };
        let reserved: Vec<String> = tools.iter().map(|(name, _)| name.clone()).collect();
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
        let mut plugin_statuses: Vec<PluginStatus> = plugins
            .iter()
            .flat_map(|set| set.statuses().iter().cloned())
            .collect();
        let all: Vec<Arc<dyn Plugin>> = plugins
            .iter()
            .flat_map(|set| set.plugins().iter().cloned())
            .collect();
        let (statuses, plugin_guards) = crate::plugin::boot_location(&all, &registry, &services);
        plugin_statuses.extend(statuses);
        // Each server registers its tools in the Location layer, one batch per connection.
        let gate = Arc::new(mcp::PermissionGate {
            permission: permission.clone(),
        });
        // A host inside a server tackle started starts no local server (its own could be
        // this same configuration again).
        let depth = tackle_mcp_client::nesting::depth(
            env.get_os(tackle_mcp_client::nesting::DEPTH_VARIABLE)
                .as_deref(),
        );
        let options = McpOptions::new(gate)
            .reserving(reserved)
            .with_store(store.clone())
            .at_depth(depth);
        let mcp = Servers::start(servers, &registry.tools(), options.clone());
        let session_servers = mcp::SessionServers {
            base: server_env,
            env,
            location: location.clone(),
            options,
        };
        Ok(Host {
            location,
            data_dir,
            config,
            registry,
            permission,
            services,
            store,
            sessions: Mutex::default(),
            plugin_statuses,
            _plugin_tools: plugin_guards,
            _plugins: plugins,
            audit,
            _builtins: builtins,
            mcp,
            session_servers,
            session_mcp: Mutex::default(),
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
    plugin_statuses: Vec<PluginStatus>,
    /// The plugins' Location tools: they go with the host.
    _plugin_tools: Vec<Registration>,
    /// Keeps the plugins' application tools registered while the host lives.
    _plugins: Vec<Plugins>,
    audit: Option<AuditLog>,
    _builtins: Registration,
    /// The MCP servers' connections, each holding its batch of tools; dropped with the host.
    mcp: Servers,
    /// How a session's own servers are resolved and started.
    session_servers: mcp::SessionServers,
    /// Each session's own servers, stopped when it is deleted.
    session_mcp: Mutex<BTreeMap<String, Vec<Arc<Servers>>>>,
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
            jobs: None,
            media_worker: None,
            only: None,
            plugins: Vec::new(),
            own_plugins: Vec::new(),
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

    /// How each plugin's boot ended: the application phase of every plugin, then the
    /// Location phase, each in boot order. A failed plugin is here with its error; the others
    /// stayed booted.
    pub fn plugins(&self) -> &[PluginStatus] {
        &self.plugin_statuses
    }

    /// Each configured MCP server's status (connected or failed, the last error, its tools),
    /// in name order.
    pub fn mcp_status(&self) -> Vec<ServerStatus> {
        self.mcp.status()
    }

    /// Waits until every configured MCP server was tried once (its tools registered, or its
    /// failure recorded). Servers connect in the background from [`HostBuilder::build`] on;
    /// a host that needs their tools in its first catalog waits here.
    pub async fn mcp_ready(&self) {
        self.mcp.ready().await;
    }

    /// Waits like [`mcp_ready`](Self::mcp_ready), at most `bound`; the servers whose first
    /// attempt is still under way then, by name (their tools register when they connect).
    pub async fn mcp_ready_within(&self, bound: std::time::Duration) -> Vec<String> {
        self.mcp.ready_within(bound).await
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
    /// session" approvals, its todo list, its managed outputs and its background jobs (killed,
    /// whole process trees; the termination finishes on the jobs' own threads). Every part is
    /// removed even when an earlier one fails; the first failure is returned.
    pub fn delete_session(&self, id: &str) -> Result<(), HostError> {
        let removed = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        let servers = self
            .session_mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        // The layer goes at once, whoever else holds a guard of it; then ours are dropped, and
        // the session's servers stopped.
        self.registry.close_session(id);
        drop(removed);
        drop(servers);
        self.permission.delete_session(id);
        self.services.jobs().delete_session(id);
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

/// `bash`'s options with the host's environment as base, without the variables the `bash`
/// section adds for commands: what a server's environment is scrubbed with.
fn scrub_options(
    bash: &tackle_builtins::bash::BashOptions,
    env: &Environment,
) -> tackle_builtins::bash::BashOptions {
    let mut scrub = bash.clone();
    scrub.env = Some(env.vars().map(|(k, v)| (k.clone(), v.clone())).collect());
    scrub
}

/// How long a host that lists tools at start-up (`tackle tools`, `tackle serve`'s first
/// catalog) waits for its MCP servers' first attempts; a slower server's tools come later.
pub const MCP_STARTUP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

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

/// Which writes always ask for the host of `location` (canonical) under `env`: the user's
/// configuration and data directories, the host's data directory `data_dir` and the audit log
/// `config` names, besides the configuration names ([`Protected`]).
pub fn protected(
    env: &Environment,
    data_dir: &Path,
    location: &Path,
    config: &Config,
) -> Protected {
    // The data directory holds the saved approvals and the trust records: a tool writing there
    // could grant as much as a rule, so it is protected like the configuration; so is the audit
    // log wherever it lies (a tool must not rewrite the record of its calls). Edit resources
    // inside the Location are relative: the protection reads them against the Location, so a
    // Location at `$HOME` reaches none of these unasked.
    let protected = Protected::from_env(|key| env.get_os(key))
        .and_dir(data_dir)
        .in_location(location);
    match crate::audit::configured_path(config, data_dir) {
        Some(log) => protected.and_file(log),
        None => protected,
    }
}

/// The platform data directory for `tackle` under `env`.
pub fn default_data_dir(env: &Environment) -> Result<PathBuf, HostError> {
    StoreConfig::default_location_from(|key| env.get_os(key))
        .and_then(|config| config.directory.parent().map(Path::to_path_buf))
        .ok_or(HostError::NoDataDir)
}
