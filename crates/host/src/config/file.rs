//! The shape of a configuration file: every key, its type and its documentation.
//!
//! One type describes a file (`tackle.json[c]`, an `opencode.json[c]`, `--config FILE`), the
//! environment layer and the flags layer alike: every field is optional, a layer sets what it
//! names. Keys are opencode's where opencode has one (`permission`, `agent`, `mcp`); the rest
//! are tackle's, in opencode's snake_case style. The JSON Schema of this type is
//! `tackle config schema` (and `docs/config.schema.json`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tackle configuration file (`tackle.json` or `tackle.jsonc`). Comments and trailing commas
/// are allowed; unknown keys are errors. The same keys in an `opencode.json` are read, and its
/// other keys ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "tackle configuration")]
pub struct ConfigFile {
    /// The JSON Schema the file follows (editors use it; tackle ignores it).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Permission rules, as opencode writes them: an effect for every action (`"ask"`), or an
    /// object of actions to an effect or to an object of resource patterns to effects
    /// (`{"bash": {"*": "ask", "git status*": "allow"}}`). The last matching rule wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "permission_schema")]
    pub permission: Option<Value>,
    /// Per-agent settings, by agent name; only `permission` is read (rules on top of the
    /// global ones for calls made by that agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<BTreeMap<String, AgentConfig>>,
    /// How much of a tool's output the model reads inline, and how long saved outputs stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputConfig>,
    /// How `read` sends images: the largest image the model gets, or none at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadConfig>,
    /// How `bash` runs commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bash: Option<BashConfig>,
    /// What `webfetch` may reach and how long it waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webfetch: Option<WebfetchConfig>,
    /// Which provider `websearch` uses and where its key is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websearch: Option<WebsearchConfig>,
    /// `glob` and `grep`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchConfig>,
    /// Where `skill` looks for skills besides the project's and the user's usual directories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<SkillsConfig>,
    /// An append-only JSON Lines record of every call and permission decision (off unless a
    /// path is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditConfig>,
    /// MCP servers whose tools are offered as `<server>_<tool>`, by server name (opencode's
    /// shape). Only the user's files, `--config` and trusted projects may set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<BTreeMap<String, McpServerConfig>>,
}

/// One MCP server: a local process (`type: local`, `command`) or a streamable HTTP endpoint
/// (`type: remote`, `url`). Values of `environment` and `headers` may name a variable of
/// tackle's environment as `{env:NAME}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// `local` (a process speaking MCP on stdio) or `remote` (streamable HTTP).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<McpKind>,
    /// The program and its arguments (local servers), run in the Location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Variables added to the process's environment (local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<BTreeMap<String, String>>,
    /// The endpoint (remote servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with every request (remote servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// `false` keeps the server configured but not connected (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Milliseconds connecting and each call may take (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
}

/// How an MCP server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpKind {
    /// A process speaking MCP on its standard input and output.
    Local,
    /// A streamable HTTP endpoint.
    Remote,
}

/// The settings of one agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Rules for this agent's calls, on top of the global `permission` (same shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "permission_schema")]
    pub permission: Option<Value>,
}

/// Output limits and retention of managed outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Lines of a result the model reads inline (default 2000); the rest is saved and paged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_lines: Option<usize>,
    /// Bytes of a result the model reads inline (default 51200, at least 128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 128))]
    pub max_bytes: Option<usize>,
    /// Days a saved output is kept (default 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub retention_days: Option<u64>,
    /// The largest saved output in bytes (default 67108864); a larger one keeps its head and
    /// tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4096))]
    pub max_file_bytes: Option<u64>,
    /// Bytes all saved outputs may take together (default 1073741824); the oldest go first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_bytes: Option<u64>,
}

/// How `read` sends images to the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadConfig {
    /// The widest image sent, in pixels (default 2000); a wider one is scaled down keeping its
    /// aspect ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub image_max_width: Option<u32>,
    /// The tallest image sent, in pixels (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub image_max_height: Option<u32>,
    /// The largest encoded image sent, in bytes (default and at most 5242880, at least 16384);
    /// a larger one is scaled down and re-encoded until it fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(
        min = tackle_builtins::read::MIN_IMAGE_BYTES,
        max = tackle_output_store::MAX_INLINE_MEDIA_BYTES
    ))]
    pub image_max_bytes: Option<usize>,
    /// Whether the model takes images (default true). False: reading an image (or a
    /// notebook's image output) gives a text note of its format and size instead, for a model
    /// or provider that would refuse the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_input: Option<bool>,
}

/// The audit log: one JSON line per settled call and per permission decision, never file
/// contents or secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The log file; relative paths are under the data directory. Setting it turns the log on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The size in bytes past which the file is rotated to `<path>.1` (default 10485760).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4096))]
    pub max_bytes: Option<u64>,
    /// How many rotated files are kept (`<path>.1` the newest; default 5, 0 keeps none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 1000))]
    pub keep: Option<u32>,
    /// Refuse a call whose record cannot be written (default false): with the log a symbolic
    /// link, unwritable, or its directory gone, calls fail with an error instead of running
    /// unrecorded. An untrusted project may turn it on, never off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// How `bash` runs commands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashConfig {
    /// The shell given `-c <command>` (default: `bash` from `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<PathBuf>,
    /// The timeout of a command that gives none, in milliseconds (default 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600_000))]
    pub default_timeout_ms: Option<u64>,
    /// The longest timeout a command gets, in milliseconds (default and at most 600000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600_000))]
    pub max_timeout_ms: Option<u64>,
    /// Environment variables commands see even though they look like credentials: names or
    /// `*` patterns (`GITHUB_TOKEN`, `AWS_*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_allow: Option<Vec<String>>,
    /// Variables added to (or replacing) the environment commands start from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
}

/// What `webfetch` may reach and how long it waits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebfetchConfig {
    /// Hosts (`docs.internal`, `*.corp.example`), addresses (`127.0.0.1`) or networks
    /// (`10.0.0.0/8`) fetched without asking besides the public internet. Other loopback and
    /// private addresses are asked about; link-local, cloud metadata, multicast and reserved
    /// addresses are always refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// The timeout of a fetch that gives none, in seconds (default 30, at most 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 120))]
    pub timeout_seconds: Option<u64>,
    /// Bodies are cut after this many bytes (default 5242880).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_bytes: Option<usize>,
}

/// A websearch provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// Exa (`EXA_API_KEY`).
    Exa,
    /// Parallel (`PARALLEL_API_KEY`).
    Parallel,
}

impl Provider {
    /// Its name, as configured.
    pub fn name(self) -> &'static str {
        match self {
            Self::Exa => "exa",
            Self::Parallel => "parallel",
        }
    }

    /// The environment variable its documentation names for the key.
    pub fn key_variable(self) -> &'static str {
        match self {
            Self::Exa => "EXA_API_KEY",
            Self::Parallel => "PARALLEL_API_KEY",
        }
    }
}

/// Which provider `websearch` uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebsearchConfig {
    /// The provider; without one, a provider whose key variable is set is used
    /// (`EXA_API_KEY`, `PARALLEL_API_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// The environment variable holding the provider's key (default: the provider's own,
    /// `EXA_API_KEY` or `PARALLEL_API_KEY`). The key itself never goes in a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// `glob` and `grep`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// The wall-clock budget of one search in milliseconds (default 20000); when it runs out
    /// the call returns what it found, marked incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub budget_ms: Option<u64>,
}

/// Skill directories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// Directories searched for `<name>/SKILL.md` after the project's own and before the
    /// user's usual ones; relative paths are relative to the file that names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathBuf>>,
}

fn permission_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "An effect for every action, or an object of actions to an effect or to an object of resource patterns to effects.",
        "anyOf": [
            {"$ref": "#/$defs/Effect"},
            {
                "type": "object",
                "additionalProperties": {
                    "anyOf": [
                        {"$ref": "#/$defs/Effect"},
                        {"type": "object", "additionalProperties": {"$ref": "#/$defs/Effect"}}
                    ]
                }
            }
        ]
    })
}

/// The schema of [`ConfigFile`]: `tackle config schema` and `docs/config.schema.json`.
pub fn schema() -> Value {
    let mut schema = schemars::schema_for!(ConfigFile).to_value();
    if let Some(object) = schema.as_object_mut() {
        let defs = object
            .entry("$defs")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(defs) = defs.as_object_mut() {
            defs.insert(
                "Effect".to_owned(),
                serde_json::json!({
                    "description": "allow: without asking; ask: ask the user; deny: refuse.",
                    "type": "string",
                    "enum": ["allow", "ask", "deny"]
                }),
            );
        }
    }
    schema
}

/// The keys read from an `opencode.json[c]`: those opencode itself defines (its other keys, and
/// tackle's own, are ignored there). In `agent.<name>`, only `permission` is read.
pub(crate) const OPENCODE_KEYS: &[&str] = &["$schema", "permission", "agent", "mcp"];
