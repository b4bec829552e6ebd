//! Every setting's built-in default, for showing the effective configuration.

use std::time::Duration;

use tackle_builtins::bash::BashOptions;
use tackle_builtins::read::ReadOptions;
use tackle_builtins::search::DEFAULT_BUDGET;
use tackle_builtins::web::FetchSettings;
use tackle_output_store::StoreConfig;

use super::file::{
    BashConfig, ConfigFile, OutputConfig, ReadConfig, SearchConfig, SkillsConfig, WebfetchConfig,
};

/// Seconds in a day (`output.retention_days`).
pub(crate) const DAY: u64 = 24 * 60 * 60;

/// `settings` with every default filled in (`tackle config` shows it).
pub(crate) fn effective(settings: &ConfigFile) -> ConfigFile {
    let store = StoreConfig::in_data_dir("");
    let bash = BashOptions::default();
    let web = FetchSettings::default();
    let given = settings.clone();
    let output = given.output.unwrap_or_default();
    let bash_given = given.bash.unwrap_or_default();
    let fetch = given.webfetch.unwrap_or_default();
    ConfigFile {
        output: Some(OutputConfig {
            max_lines: output.max_lines.or(Some(store.max_lines)),
            max_bytes: output.max_bytes.or(Some(store.max_bytes)),
            retention_days: output
                .retention_days
                .or(Some(store.retention.as_secs() / DAY)),
            max_file_bytes: output.max_file_bytes.or(Some(store.spill_cap)),
            quota_bytes: output.quota_bytes.or(Some(store.quota)),
        }),
        read: Some(read(&given.read.clone().unwrap_or_default())),
        bash: Some(BashConfig {
            shell: bash_given.shell.or_else(|| Some(bash.resolved_shell())),
            default_timeout_ms: bash_given
                .default_timeout_ms
                .or(Some(bash.default_timeout_ms)),
            max_timeout_ms: bash_given.max_timeout_ms.or(Some(bash.max_timeout_ms)),
            env_allow: bash_given.env_allow.or(Some(Vec::new())),
            env: bash_given.env.or(Some(Default::default())),
        }),
        webfetch: Some(WebfetchConfig {
            allow: fetch.allow.or(Some(Vec::new())),
            timeout_seconds: fetch.timeout_seconds.or(Some(web.default_timeout_seconds)),
            max_bytes: fetch.max_bytes.or(Some(web.max_response_bytes)),
        }),
        websearch: Some(given.websearch.unwrap_or_default()),
        search: Some(SearchConfig {
            budget_ms: given
                .search
                .and_then(|s| s.budget_ms)
                .or(Some(millis(DEFAULT_BUDGET))),
        }),
        skills: Some(SkillsConfig {
            paths: given.skills.and_then(|s| s.paths).or(Some(Vec::new())),
        }),
        mcp: given.mcp,
        ..ConfigFile::default()
    }
}

/// The built-in value of every setting, as JSON objects by section (what an untrusted file's
/// limit is compared with when no layer before it set one).
pub(crate) fn values() -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(effective(&ConfigFile::default())) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

fn read(given: &ReadConfig) -> ReadConfig {
    let read = ReadOptions::default();
    let bound = read.image_bound();
    ReadConfig {
        image_max_width: given.image_max_width.or(Some(bound.max_width())),
        image_max_height: given.image_max_height.or(Some(bound.max_height())),
        image_max_bytes: given.image_max_bytes.or(Some(bound.max_bytes())),
        image_input: given.image_input.or(Some(read.image_input())),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
