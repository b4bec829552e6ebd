//! The environment a host reads, injected: the process's for a binary, a map for tests and
//! embedders that must not depend on it.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// Environment variables, as a host was given them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: BTreeMap<OsString, OsString>,
}

impl Environment {
    /// The current process's environment, read once.
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars_os().collect(),
        }
    }

    /// An environment with exactly `vars`.
    pub fn from_vars<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The value of `key`.
    pub fn get_os(&self, key: &str) -> Option<OsString> {
        self.vars.get(OsStr::new(key)).cloned()
    }

    /// The value of `key` when it is valid UTF-8.
    pub fn get(&self, key: &str) -> Option<String> {
        self.vars
            .get(OsStr::new(key))
            .and_then(|v| v.to_str())
            .map(str::to_owned)
    }

    /// Every variable, in name order.
    pub fn vars(&self) -> impl Iterator<Item = (&OsString, &OsString)> {
        self.vars.iter()
    }

    /// The user's configuration directory: `$XDG_CONFIG_HOME`, else `$HOME/.config` (absolute
    /// paths only).
    pub fn config_dir(&self) -> Option<PathBuf> {
        let absolute = |key: &str| {
            self.get_os(key)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        absolute("XDG_CONFIG_HOME").or_else(|| absolute("HOME").map(|home| home.join(".config")))
    }
}
