//! A tackle host as a library: one configuration in, a ready Location registry out.
//!
//! [`Host::builder`] takes a Location (and optionally a data directory, a `--config` file,
//! flags, an environment, an [`Asker`](tackle_permission::Asker), a question service,
//! application tools) and builds what every host builds by hand otherwise: the merged
//! [`Config`], the output store (limits from `output`), the permission service (the rules of
//! every layer, a project's only tightening until trusted, approvals saved per project, the
//! data directory protected), the builtins' services (`bash`, `search`, `webfetch`,
//! `websearch`, skill directories from the configuration), and a [`ToolRegistry`] with the
//! builtins registered. [`Host::materialize`] snapshots the catalog with the rules as filter;
//! [`Session::settle`] settles a call in a session, with the session's agent in the context.
//! [`Plugin`]s (in-process extensions) register their tools through the same views, booted
//! once for the process and once per Location ([`plugin`]).
//!
//! With `audit.path` configured, every settled call and permission decision is also a record
//! in an append-only JSON Lines [audit log](audit), written off the call's path.
//!
//! Layering: this crate sits below the `tackle` binary and above builtins, registry,
//! permission and output-store; it owns the wiring (which builtin gets which setting), the
//! configuration files and the trust records, and no tool behaviour.
//!
//! Invariants:
//! - Building a host writes nothing; a bad configuration is a [`ConfigError`] naming the file
//!   (or variable, or flag), the key path and the problem.
//! - A project's configuration never widens what tools may do until the user trusts it: its
//!   allows are ignored and so are the settings in [`config::TRUSTED_KEYS`] and every limit
//!   looser than the one it would override.
//! - A one-shot host ([`HostBuilder::only`]) builds only the tool it runs.
//!
//! [`ToolRegistry`]: tackle_registry::ToolRegistry
#![deny(missing_docs)]

pub mod audit;
pub mod config;
mod env;
mod error;
mod host;
mod mcp;
pub mod plugin;
mod resolve;
pub mod trust;

pub use config::{Config, Origin, Sources};
pub use env::Environment;
pub use error::{ConfigError, HostError};
pub use host::{
    Host, HostBuilder, MCP_STARTUP_WAIT, Session, default_data_dir, location, protected,
};
pub use plugin::{BootError, Plugin, PluginContext, PluginStatus, Plugins, Scope};
pub use tackle_mcp_client::nesting as mcp_nesting;
pub use tackle_mcp_client::{ServerStatus as McpServerStatus, State as McpState};
pub use trust::{Trust, TrustStore};
