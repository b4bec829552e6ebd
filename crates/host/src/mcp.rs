//! The configured MCP servers: their settings resolved (`{env:NAME}`, the Location as working
//! directory, the environment scrubbed as `bash` scrubs a command's), and the gate every call
//! of their tools passes (the permission service, the registered name as the action).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::json;
use tackle_builtins::bash::BashOptions;
use tackle_mcp_client::{Gate, GateFuture, GateRequest, ServerConfig, Transport};
use tackle_permission::{Effect, Permission, Request, RuleOrigin};
use tackle_tool_core::{Context, ToolError};

use crate::config::{Config, McpKind, McpServerConfig};
use crate::env::Environment;
use crate::error::ConfigError;

/// The configured servers, resolved, and the values their configuration put in their hands.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// The enabled servers, in name order.
    pub(crate) servers: Vec<(String, ServerConfig)>,
    /// Values to redact from every result: each `{env:NAME}` value, each header value, and
    /// each environment value that holds a reference or looks like a credential.
    pub(crate) secrets: Vec<String>,
}

/// The enabled servers of `config`; a server the configuration cannot describe is a
/// [`ConfigError`] naming its key. Local servers start from `base`.
pub(crate) fn servers(
    config: &Config,
    env: &Environment,
    location: &Path,
    base: &ServerEnv,
) -> Result<Resolved, ConfigError> {
    let Some(servers) = &config.settings.mcp else {
        return Ok(Resolved::default());
    };
    resolve_all(servers, env, location, base.base(), |path| {
        config.origin(path).to_string()
    })
}

/// Every enabled server of `servers`; an error names the server's key and where it was
/// configured (`origin` of that key).
fn resolve_all(
    servers: &BTreeMap<String, McpServerConfig>,
    env: &Environment,
    location: &Path,
    base: &[(std::ffi::OsString, std::ffi::OsString)],
    origin: impl Fn(&str) -> String,
) -> Result<Resolved, ConfigError> {
    let mut resolved = Resolved::default();
    for (name, server) in servers {
        if server.enabled == Some(false) {
            continue;
        }
        let error = |field: &str, message: &str| {
            let path = if field.is_empty() {
                format!("mcp.{name}")
            } else {
                format!("mcp.{name}.{field}")
            };
            ConfigError::new(&origin(&path), &path, message)
        };
        let server = resolve(server, env, location, base, &mut resolved.secrets, error)?;
        resolved.servers.push((name.clone(), server));
    }
    Ok(resolved)
}

/// The environment local servers start from: the host's, scrubbed as `bash` scrubs a
/// command's; made when a server first needs it (most hosts start none).
#[derive(Debug, Clone)]
pub(crate) struct ServerEnv {
    scrub: BashOptions,
    base: OnceLock<Vec<(std::ffi::OsString, std::ffi::OsString)>>,
}

impl ServerEnv {
    pub(crate) fn new(scrub: BashOptions) -> Self {
        Self {
            scrub,
            base: OnceLock::new(),
        }
    }

    fn base(&self) -> &[(std::ffi::OsString, std::ffi::OsString)] {
        self.base
            .get_or_init(|| tackle_builtins::bash::scrubbed_env(&self.scrub))
    }
}

/// What a session's servers are resolved and started with: the host's environment, scrubbed
/// and whole (for `{env:NAME}`), its Location, and the options of its own servers.
#[derive(Debug, Clone)]
pub(crate) struct SessionServers {
    pub(crate) env: Environment,
    pub(crate) base: ServerEnv,
    pub(crate) location: std::path::PathBuf,
    pub(crate) options: tackle_mcp_client::Options,
}

impl SessionServers {
    /// `servers` resolved as the `mcp` key's are (disabled ones left out); an error names the
    /// session and the server's key.
    pub(crate) fn resolve(
        &self,
        session: &str,
        servers: &BTreeMap<String, McpServerConfig>,
    ) -> Result<Resolved, ConfigError> {
        resolve_all(servers, &self.env, &self.location, self.base.base(), |_| {
            format!("session {session}")
        })
    }
}

/// One server's configuration, its secrets added to `secrets`.
fn resolve(
    server: &McpServerConfig,
    env: &Environment,
    location: &Path,
    base: &[(std::ffi::OsString, std::ffi::OsString)],
    secrets: &mut Vec<String>,
    error: impl Fn(&str, &str) -> ConfigError,
) -> Result<ServerConfig, ConfigError> {
    let transport = match server.kind {
        Some(McpKind::Local) => {
            let command = server.command.clone().unwrap_or_default();
            if command.first().is_none_or(String::is_empty) {
                return Err(error("command", "a local server needs a command"));
            }
            let environment = substituted(server.environment.as_ref(), env, secrets);
            // A configured value that holds a reference carries a secret around it
            // (`Bearer {env:TOKEN}`); a literal one is a secret when it looks like one, as
            // bash judges a variable (redacting every literal would garble ordinary output).
            let mut judged = BashOptions::default();
            judged.env = Some(
                server
                    .environment
                    .iter()
                    .flatten()
                    .filter(|(_, value)| !value.contains("{env:"))
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            );
            secrets.extend(tackle_builtins::bash::scrubbed_values(&judged));
            for (key, value) in server.environment.iter().flatten() {
                if value.contains("{env:")
                    && let Some(resolved) = environment.get(key)
                {
                    secrets.push(resolved.clone());
                }
            }
            Transport::Local {
                command,
                base_env: Some(base.to_vec()),
                environment,
                cwd: Some(location.to_owned()),
            }
        }
        Some(McpKind::Remote) => {
            let Some(url) = server.url.clone().filter(|u| !u.is_empty()) else {
                return Err(error("url", "a remote server needs a url"));
            };
            let headers = substituted(server.headers.as_ref(), env, secrets);
            // Headers are how a remote server is given its credentials: every value is one.
            for value in headers.values() {
                secrets.extend(value.strip_prefix("Bearer ").map(str::to_owned));
                secrets.push(value.clone());
            }
            Transport::Remote { url, headers }
        }
        None => return Err(error("type", "expected `local` or `remote`")),
    };
    let timeout = server
        .timeout
        .map_or(tackle_mcp_client::DEFAULT_TIMEOUT, Duration::from_millis);
    Ok(ServerConfig { transport, timeout })
}

/// `values` with each `{env:NAME}` replaced by that variable (empty when unset, as opencode
/// does); each substituted value is added to `secrets`.
fn substituted(
    values: Option<&BTreeMap<String, String>>,
    env: &Environment,
    secrets: &mut Vec<String>,
) -> BTreeMap<String, String> {
    values
        .into_iter()
        .flatten()
        .map(|(key, value)| (key.clone(), substitute(value, env, secrets)))
        .collect()
}

fn substitute(value: &str, env: &Environment, secrets: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("{env:") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = &rest[start + 5..start + end];
        let resolved = env.get(name).unwrap_or_default();
        out.push_str(&resolved);
        secrets.push(resolved);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Every call of a server's tool asks the permission service for the registered name on `*`
/// ("always" saves `*`), so `"github_*": "deny"` hides a server's tools and
/// `"github_create_issue": "ask"` asks.
pub(crate) struct PermissionGate {
    pub(crate) permission: Permission,
}

impl Gate for PermissionGate {
    fn check<'a>(&'a self, request: GateRequest<'a>, ctx: &'a Context) -> GateFuture<'a> {
        Box::pin(async move {
            let mut ask = Request::new(ctx, request.name, vec!["*".to_owned()])
                .with_save(vec!["*".to_owned()])
                .with_metadata("server", json!(request.server))
                .with_metadata("tool", json!(request.tool))
                .with_metadata("input", request.input.clone());
            if request.destructive && allowed_by_catch_all(&self.permission, ctx, request.name) {
                // A server's destructive tool asks by default: a rule for every action (`"*":
                // "allow"`) does not cover it; a rule naming it, or an "always", does.
                ask = ask.with_always_ask();
            }
            self.permission.assert(ask).await.map_err(ToolError::from)
        })
    }
}

/// True when only a rule for every action (`*`) allows `name`.
fn allowed_by_catch_all(permission: &Permission, ctx: &Context, name: &str) -> bool {
    let explained = permission.explain_in_session(&ctx.session_id, &ctx.agent, name, "*");
    explained.effect == Effect::Allow
        && explained.decided_by.is_some_and(|decider| {
            decider.rule.action == "*"
                && matches!(
                    decider.origin,
                    RuleOrigin::Default { .. } | RuleOrigin::Config { .. }
                )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_references_are_substituted_and_unset_ones_are_empty() {
        let env = Environment::from_vars([("TOKEN", "s3cret")]);
        let mut secrets = Vec::new();
        assert_eq!(
            substitute("Bearer {env:TOKEN}", &env, &mut secrets),
            "Bearer s3cret"
        );
        assert_eq!(substitute("{env:NOPE}-x", &env, &mut secrets), "-x");
        assert_eq!(
            substitute("a {env:TOKEN} {env:TOKEN}", &env, &mut secrets),
            "a s3cret s3cret"
        );
        assert_eq!(substitute("{env:TOKEN", &env, &mut secrets), "{env:TOKEN");
        assert!(secrets.iter().all(|s| s == "s3cret" || s.is_empty()));
    }
}
