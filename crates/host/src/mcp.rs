//! The configured MCP servers: their settings resolved (`{env:NAME}`, the Location as working
//! directory), and the gate every call of their tools passes (the permission service, the
//! registered name as the action).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tackle_mcp_client::{Gate, GateFuture, GateRequest, ServerConfig, Transport};
use tackle_permission::{Effect, Permission, Request, RuleOrigin};
use tackle_tool_core::{Context, ToolError};

use crate::config::{Config, McpKind};
use crate::env::Environment;
use crate::error::ConfigError;

/// The enabled servers, in name order; a server the configuration cannot describe is a
/// [`ConfigError`] naming its key.
pub(crate) fn servers(
    config: &Config,
    env: &Environment,
    location: &Path,
) -> Result<Vec<(String, ServerConfig)>, ConfigError> {
    let Some(servers) = &config.settings.mcp else {
        return Ok(Vec::new());
    };
    let mut resolved = Vec::new();
    for (name, server) in servers {
        if server.enabled == Some(false) {
            continue;
        }
        let key = format!("mcp.{name}");
        let error = |field: &str, message: &str| {
            let path = if field.is_empty() {
                key.clone()
            } else {
                format!("{key}.{field}")
            };
            ConfigError::new(&config.origin(&path).to_string(), &path, message)
        };
        let transport = match server.kind {
            Some(McpKind::Local) => {
                let command = server.command.clone().unwrap_or_default();
                if command.first().is_none_or(String::is_empty) {
                    return Err(error("command", "a local server needs a command"));
                }
                Transport::Local {
                    command,
                    // The host's environment (injected in tests), as opencode passes its own.
                    base_env: Some(env.vars().map(|(k, v)| (k.clone(), v.clone())).collect()),
                    environment: substituted(server.environment.as_ref(), env),
                    cwd: Some(location.to_owned()),
                }
            }
            Some(McpKind::Remote) => {
                let Some(url) = server.url.clone().filter(|u| !u.is_empty()) else {
                    return Err(error("url", "a remote server needs a url"));
                };
                Transport::Remote {
                    url,
                    headers: substituted(server.headers.as_ref(), env),
                }
            }
            None => return Err(error("type", "expected `local` or `remote`")),
        };
        let timeout = server
            .timeout
            .map_or(tackle_mcp_client::DEFAULT_TIMEOUT, Duration::from_millis);
        resolved.push((name.clone(), ServerConfig { transport, timeout }));
    }
    Ok(resolved)
}

/// `values` with each `{env:NAME}` replaced by that variable (empty when unset, as opencode
/// does).
fn substituted(
    values: Option<&BTreeMap<String, String>>,
    env: &Environment,
) -> BTreeMap<String, String> {
    values
        .into_iter()
        .flatten()
        .map(|(key, value)| (key.clone(), substitute(value, env)))
        .collect()
}

fn substitute(value: &str, env: &Environment) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("{env:") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = &rest[start + 5..start + end];
        out.push_str(&env.get(name).unwrap_or_default());
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
        assert_eq!(substitute("Bearer {env:TOKEN}", &env), "Bearer s3cret");
        assert_eq!(substitute("{env:NOPE}-x", &env), "-x");
        assert_eq!(
            substitute("a {env:TOKEN} {env:TOKEN}", &env),
            "a s3cret s3cret"
        );
        assert_eq!(substitute("{env:TOKEN", &env), "{env:TOKEN");
    }
}
