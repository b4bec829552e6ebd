//! The merged settings as the services' own types: what a key sets is decided here, once.

use std::ffi::OsString;
use std::time::Duration;

use std::num::NonZeroU32;

use tackle_builtins::bash::BashOptions;
use tackle_builtins::read::{ImageBound, ReadOptions};
use tackle_builtins::search::SearchSettings;
use tackle_builtins::skill::SkillSources;
use tackle_builtins::web::{FetchSettings, WebAccess, WebSearchConfig, WebServices};
use tackle_output_store::StoreConfig;

use crate::config::Config;
use crate::env::Environment;
use crate::error::ConfigError;

use crate::config::DAY;

/// The output store's configuration under `data_dir`.
pub(crate) fn store_config(
    config: &Config,
    data_dir: &std::path::Path,
) -> Result<StoreConfig, ConfigError> {
    let mut store = StoreConfig::in_data_dir(data_dir);
    if let Some(output) = &config.settings.output {
        if let Some(lines) = output.max_lines {
            store.max_lines = lines;
        }
        if let Some(bytes) = output.max_bytes {
            store.max_bytes = bytes;
        }
        if let Some(days) = output.retention_days {
            store.retention = Duration::from_secs(days.saturating_mul(DAY));
        }
        if let Some(cap) = output.max_file_bytes {
            store.spill_cap = cap;
        }
        if let Some(quota) = output.quota_bytes {
            store.quota = quota;
        }
    }
    store.validate().map_err(|err| {
        let origin = config.origin("output");
        ConfigError::new(&origin.to_string(), "output", err.to_string())
    })?;
    Ok(store)
}

/// How `read` sends images: the bound, and whether the model takes them at all.
pub(crate) fn read_options(config: &Config) -> ReadOptions {
    let mut options = ReadOptions::default();
    let Some(read) = &config.settings.read else {
        return options;
    };
    let bound = options.image_bound();
    // Zero was refused when the layer was parsed; the default stands in regardless.
    let side = |given: Option<u32>, default: u32| {
        given
            .and_then(NonZeroU32::new)
            .or(NonZeroU32::new(default))
            .unwrap_or(NonZeroU32::MIN)
    };
    options = options.with_image_bound(ImageBound::new(
        side(read.image_max_width, bound.max_width()),
        side(read.image_max_height, bound.max_height()),
        read.image_max_bytes.unwrap_or(bound.max_bytes()),
    ));
    if read.image_input == Some(false) {
        options = options.without_image_input();
    }
    options
}

/// How `bash` runs commands; `env` is the environment commands start from.
pub(crate) fn bash_options(config: &Config, env: &Environment) -> BashOptions {
    let mut options = BashOptions::default();
    let bash = config.settings.bash.as_ref();
    // Commands start from the host's environment (the one given to the builder, which may not
    // be the process's), so the credentials scrubbed and redacted are the ones the host holds.
    let extra = bash.and_then(|bash| bash.env.as_ref());
    let overridden = |name: &OsString| {
        extra.is_some_and(|extra| extra.keys().any(|key| OsString::from(key) == *name))
    };
    let mut vars: Vec<(OsString, OsString)> = env
        .vars()
        .filter(|(name, _)| !overridden(name))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    vars.extend(
        extra
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.into(), v.into())),
    );
    options.env = Some(vars);
    let Some(bash) = bash else {
        return options;
    };
    if let Some(shell) = &bash.shell {
        options.shell = Some(shell.clone());
    }
    if let Some(ms) = bash.default_timeout_ms {
        options.default_timeout_ms = ms;
    }
    if let Some(ms) = bash.max_timeout_ms {
        options.max_timeout_ms = ms;
    }
    if let Some(allow) = &bash.env_allow {
        options.env_allow.clone_from(allow);
    }
    options
}

/// `glob`'s and `grep`'s settings.
pub(crate) fn search_settings(config: &Config) -> SearchSettings {
    let mut settings = SearchSettings::default();
    if let Some(ms) = config.settings.search.as_ref().and_then(|s| s.budget_ms) {
        settings.budget = Duration::from_millis(ms);
    }
    settings
}

/// webfetch's reach and limits, and websearch's providers (from the environment, as their
/// documentation says: `EXA_API_KEY`, `PARALLEL_API_KEY`, or the configured variable).
pub(crate) fn web_services(config: &Config, env: &Environment) -> WebServices {
    let mut web = WebServices::default();
    let fetch = config.settings.webfetch.clone().unwrap_or_default();
    // Checked when the layer was parsed.
    web.access = WebAccess::from_entries(fetch.allow.iter().flatten()).unwrap_or_default();
    let defaults = FetchSettings::default();
    web.fetch = FetchSettings::new(
        fetch
            .timeout_seconds
            .unwrap_or(defaults.default_timeout_seconds),
        fetch.max_bytes.unwrap_or(defaults.max_response_bytes),
    );
    let search = config.settings.websearch.clone().unwrap_or_default();
    web.search = WebSearchConfig::from_env(|key| {
        if key == "TACKLE_WEBSEARCH_PROVIDER" {
            return search.provider.map(|p| p.name().to_owned());
        }
        if let (Some(provider), Some(variable)) = (search.provider, &search.api_key_env)
            && key == provider.key_variable()
        {
            return env.get(variable);
        }
        env.get(key)
    });
    web
}

/// The skill directories: the configured ones, then the user's usual ones.
pub(crate) fn skill_sources(config: &Config, env: &Environment) -> SkillSources {
    let mut sources = SkillSources::from_env(|key| env.get_os(key));
    if let Some(paths) = config
        .settings
        .skills
        .as_ref()
        .and_then(|s| s.paths.clone())
    {
        let mut dirs = paths;
        dirs.append(&mut sources.user_dirs);
        sources.user_dirs = dirs;
    }
    sources
}
