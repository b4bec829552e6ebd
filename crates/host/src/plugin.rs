//! In-process extensions: a [`Plugin`] registers canonical tools through the registration views,
//! once for the process (the application layer) and once per Location (its Location layer).
//!
//! A plugin never holds a guard: the [`PluginContext`] keeps what it registered and the owner
//! keeps the context's guards — [`Plugins`] for the application phase, the [`Host`](crate::Host)
//! for its Location — so a plugin's Location tools go when the host is dropped, and calls on
//! an older snapshot are then stale. A plugin that fails or panics while booting keeps nothing
//! registered, is reported by name ([`PluginStatus`], and a `tracing` warning) and leaves the
//! others booted.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use tackle_builtins::LocationServices;
use tackle_registry::{ApplicationTools, Materialization, Registration, ToolRegistry, Tools};
use tackle_tool_core::{ShowAll, Tool};

use crate::error::HostError;

/// What a plugin's boot returns on failure: any error, reported with the plugin's name.
pub type BootError = Box<dyn std::error::Error + Send + Sync>;

/// An in-process extension that registers tools.
///
/// `boot` runs once per process with [`Scope::Application`] (tools every Location sees), then
/// once per Location with [`Scope::Location`] (tools of that Location, with its services). A
/// plugin with nothing for one scope returns `Ok(())` for it.
pub trait Plugin: Send + Sync {
    /// The plugin's name, as reports and warnings say it.
    fn name(&self) -> &str;

    /// Registers the plugin's tools for `ctx.scope()` through [`PluginContext::register`].
    fn boot(&self, ctx: &PluginContext<'_>) -> Result<(), BootError>;
}

/// Which layer a boot registers into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The process's application layer, seen by every Location (booted once per process).
    Application,
    /// One Location's layer (booted once per Location).
    Location,
}

/// How one plugin's boot in one scope ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PluginStatus {
    /// The plugin's name.
    pub name: String,
    /// The scope it booted in.
    pub scope: Scope,
    /// The tools it registered (none when it failed).
    pub tools: Vec<String>,
    /// Why it failed (its error, or its panic's message); `None`: booted.
    pub error: Option<String>,
}

impl PluginStatus {
    /// True when the boot succeeded.
    pub fn booted(&self) -> bool {
        self.error.is_none()
    }
}

/// Where a boot's tools go.
enum Target<'a> {
    Application(&'a ApplicationTools),
    Location {
        tools: Tools,
        services: &'a LocationServices,
    },
}

/// What a plugin's boot is given: its scope, the Location's services in a Location boot, and
/// the one way to register tools.
pub struct PluginContext<'a> {
    target: Target<'a>,
    /// Names a plugin may not take: the builtins' and those earlier plugins registered.
    taken: &'a RefCell<BTreeSet<String>>,
    /// The Location's tools before any plugin booted (builtins, application tools).
    existing: Option<&'a Materialization>,
    registered: RefCell<(Vec<Registration>, Vec<String>)>,
}

impl fmt::Debug for PluginContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginContext")
            .field("scope", &self.scope())
            .finish_non_exhaustive()
    }
}

impl<'a> PluginContext<'a> {
    fn new(
        target: Target<'a>,
        taken: &'a RefCell<BTreeSet<String>>,
        existing: Option<&'a Materialization>,
    ) -> Self {
        Self {
            target,
            taken,
            existing,
            registered: RefCell::default(),
        }
    }

    /// The layer this boot registers into.
    pub fn scope(&self) -> Scope {
        match self.target {
            Target::Application(_) => Scope::Application,
            Target::Location { .. } => Scope::Location,
        }
    }

    /// The Location's services in a Location boot (its directory, its permission service, its
    /// output store, file mutation), so a tool can ask permission and touch files the way the
    /// builtins do; `None` in the application boot.
    pub fn services(&self) -> Option<&LocationServices> {
        match &self.target {
            Target::Application(_) => None,
            Target::Location { services, .. } => Some(services),
        }
    }

    /// Registers `batch` in this boot's layer, all or nothing. A name that is not a valid tool
    /// name, or that a builtin or an earlier registration already has, fails the whole batch:
    /// a plugin never shadows another tool silently.
    pub fn register(&self, batch: Vec<(String, Tool)>) -> Result<(), HostError> {
        {
            let taken = self.taken.borrow();
            let mut seen = BTreeSet::new();
            for (name, _) in &batch {
                let existing = self.existing.is_some_and(|tools| tools.contains(name));
                if existing || taken.contains(name) || !seen.insert(name.as_str()) {
                    return Err(HostError::NameTaken(name.clone()));
                }
            }
        }
        let names: Vec<String> = batch.iter().map(|(name, _)| name.clone()).collect();
        let guard = match &self.target {
            Target::Application(app) => app.register(batch),
            Target::Location { tools, .. } => tools.register(batch),
        }
        .map_err(HostError::Registration)?;
        self.taken.borrow_mut().extend(names.iter().cloned());
        let mut registered = self.registered.borrow_mut();
        registered.0.push(guard);
        registered.1.extend(names);
        Ok(())
    }
}

/// Boots each of `plugins`, in order, through a context on `target()`; returns their
/// statuses and the guards of those that booted. A failed plugin's registrations are dropped
/// and its names freed; `taken` ends holding every name the booted plugins registered.
fn boot_all<'a>(
    plugins: &[Arc<dyn Plugin>],
    target: impl Fn() -> Target<'a>,
    taken: &'a RefCell<BTreeSet<String>>,
    existing: Option<&'a Materialization>,
) -> (Vec<PluginStatus>, Vec<Registration>) {
    let mut statuses = Vec::with_capacity(plugins.len());
    let mut guards = Vec::new();
    for plugin in plugins {
        let ctx = PluginContext::new(target(), taken, existing);
        let scope = ctx.scope();
        let before = taken.borrow().clone();
        // A panicking plugin must not take the host (or the other plugins) down with it.
        let outcome = match catch_unwind(AssertUnwindSafe(|| plugin.boot(&ctx))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(err.to_string()),
            Err(panic) => Err(format!("panicked: {}", panic_message(panic.as_ref()))),
        };
        let (registered, names) = ctx.registered.into_inner();
        let name = plugin.name().to_owned();
        match outcome {
            Ok(()) => {
                guards.extend(registered);
                statuses.push(PluginStatus {
                    name,
                    scope,
                    tools: names,
                    error: None,
                });
            }
            Err(error) => {
                tracing::warn!(plugin = %name, ?scope, %error, "plugin failed to boot");
                drop(registered);
                *taken.borrow_mut() = before;
                statuses.push(PluginStatus {
                    name,
                    scope,
                    tools: Vec::new(),
                    error: Some(error),
                });
            }
        }
    }
    (statuses, guards)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text
    } else {
        "(no message)"
    }
}

/// The process's plugins, booted once into its application layer: build one per process and
/// hand it to every host ([`HostBuilder::plugins`](crate::HostBuilder::plugins)), which boots
/// each plugin for its Location in the same order.
///
/// Cheap to clone; the plugins' application tools stay registered while a clone lives.
#[derive(Clone)]
pub struct Plugins {
    inner: Arc<Booted>,
}

struct Booted {
    plugins: Vec<Arc<dyn Plugin>>,
    application: ApplicationTools,
    statuses: Vec<PluginStatus>,
    _guards: Vec<Registration>,
}

impl fmt::Debug for Plugins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugins")
            .field("statuses", &self.inner.statuses)
            .finish_non_exhaustive()
    }
}

impl Plugins {
    /// Boots every plugin's application phase, in order, into `application` (the process's
    /// application tools; the hosts given this value use them).
    pub fn boot(
        application: &ApplicationTools,
        plugins: impl IntoIterator<Item = Arc<dyn Plugin>>,
    ) -> Self {
        let plugins: Vec<Arc<dyn Plugin>> = plugins.into_iter().collect();
        let taken = RefCell::new(
            tackle_builtins::builtin_names()
                .map(str::to_owned)
                .collect(),
        );
        let (statuses, guards) =
            boot_all(&plugins, || Target::Application(application), &taken, None);
        Self {
            inner: Arc::new(Booted {
                plugins,
                application: application.clone(),
                statuses,
                _guards: guards,
            }),
        }
    }

    /// The application tools the plugins registered into.
    pub fn application(&self) -> &ApplicationTools {
        &self.inner.application
    }

    /// How each plugin's application phase ended, in boot order.
    pub fn statuses(&self) -> &[PluginStatus] {
        &self.inner.statuses
    }

    /// The plugins, in boot order.
    pub(crate) fn plugins(&self) -> &[Arc<dyn Plugin>] {
        &self.inner.plugins
    }
}

/// Boots `plugins` for one Location: `registry` is its registry (builtins registered),
/// `services` its services.
pub(crate) fn boot_location(
    plugins: &[Arc<dyn Plugin>],
    registry: &ToolRegistry,
    services: &LocationServices,
) -> (Vec<PluginStatus>, Vec<Registration>) {
    let taken = RefCell::new(
        tackle_builtins::builtin_names()
            .map(str::to_owned)
            .collect(),
    );
    let existing = registry.materialize(&ShowAll);
    let tools = registry.tools();
    boot_all(
        plugins,
        || Target::Location {
            tools: tools.clone(),
            services,
        },
        &taken,
        Some(&existing),
    )
}
