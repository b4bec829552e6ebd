//! The host side of the binary: the Location, its services and its registry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Asker, Permission, Protected, Reply};
use tackle_registry::{ApplicationTools, Materialization, Registration, ToolRegistry};

use crate::error::CliError;
use crate::question::TerminalQuestions;

/// The Location directory: `dir`, or the current directory; it must be an existing directory.
pub(crate) fn location(dir: Option<&Path>) -> Result<PathBuf, CliError> {
    let dir = dir.unwrap_or_else(|| Path::new("."));
    let canonical = std::fs::canonicalize(dir).map_err(|source| CliError::Location {
        path: dir.to_owned(),
        source,
    })?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(CliError::NotADirectory(dir.to_owned()))
    }
}

/// How a command wants its host built.
#[derive(Debug, Default)]
pub(crate) struct HostOptions {
    pub(crate) dir: Option<PathBuf>,
    pub(crate) data_dir: Option<PathBuf>,
    pub(crate) config: Option<PathBuf>,
    pub(crate) yes: bool,
}

/// One Location's registry with the builtins registered, and the rules that filter its catalog.
#[derive(Debug)]
pub(crate) struct Host {
    registry: ToolRegistry,
    permission: Permission,
    _builtins: Registration,
}

impl Host {
    /// The host of `options`' Location with every builtin, or with the builtin `only` alone.
    pub(crate) fn new(options: &HostOptions, only: Option<&str>) -> Result<Self, CliError> {
        let directory = location(options.dir.as_deref())?;
        let data_dir = data_dir(options.data_dir.as_deref())?;
        // `read` pages managed outputs here, so the store's markers name it.
        let config = StoreConfig::in_data_dir(&data_dir);
        let paging = tackle_builtins::read::paging_hint(&config.budget());
        let store = OutputStore::new(config.with_paging(paging));
        let permission = permission(
            &directory,
            &data_dir,
            options.config.as_deref(),
            options.yes,
        )?;
        let mut services = LocationServices::new(
            Location::new(&directory).map_err(CliError::Builtins)?,
            permission.clone(),
            store.clone(),
            FileMutation::default(),
        );
        if let Some(terminal) = TerminalQuestions::detect() {
            services = services.with_questions(Arc::new(terminal));
        }
        // One call needs one tool: the others are not built at all.
        let tools = match only {
            Some(name) => tackle_builtins::builtin_tool(&services, name)
                .map(|tool| vec![(name.to_owned(), tool)])
                .unwrap_or_default(),
            None => tackle_builtins::builtin_tools(&services),
        };
        // The process has one application layer; the binary registers nothing in it.
        let registry = ToolRegistry::new(&ApplicationTools::new(), store);
        let builtins = registry
            .tools()
            .register(tools)
            .map_err(CliError::Registration)?;
        Ok(Self {
            registry,
            permission,
            _builtins: builtins,
        })
    }

    /// The catalog for one turn: every tool the configured rules do not wholly disable.
    pub(crate) fn materialize(&self) -> Materialization {
        self.registry.materialize(self.permission.rules())
    }
}

/// Where managed outputs and saved approvals live: `--data-dir`, else the platform data
/// directory for `tackle`.
pub(crate) fn data_dir(explicit: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(dir) = explicit {
        return Ok(dir.to_owned());
    }
    StoreConfig::default_location()
        .and_then(|config| config.directory.parent().map(Path::to_path_buf))
        .ok_or(CliError::NoDataDir)
}

/// The permission service for `location`: the default rules, then the configured ones (only
/// tightening, unless the project's file is trusted), with approvals saved per project under
/// the data directory. `--yes` answers every ask "once";
/// otherwise an ask goes to the terminal, and without a terminal it is declined.
pub(crate) fn permission(
    location: &Path,
    data_dir: &Path,
    config: Option<&Path>,
    yes: bool,
) -> Result<Permission, CliError> {
    let rules = crate::config::load(location, config, data_dir)?.rules;
    let saved = crate::config::saved_approvals(data_dir, location)?;
    let asker: Arc<dyn Asker> = if yes {
        Arc::new(AnswerAll(Reply::Once))
    } else {
        match crate::asker::TerminalAsker::detect() {
            Some(terminal) => Arc::new(terminal),
            None => Arc::new(crate::asker::Headless),
        }
    };
    // The data directory holds the saved approvals and the trust records: a tool writing there
    // could grant as much as a rule, so it is protected like the configuration.
    let protected = Protected::from_env(|key| std::env::var_os(key)).and_dir(data_dir);
    Ok(Permission::new(rules, saved, asker).with_protected(protected))
}
