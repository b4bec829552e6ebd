//! Where the store keeps managed outputs and how large a preview may be.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tackle_tool_core::{Budget, MAX_BYTES, MAX_LINES};

use crate::StoreError;

/// How long a managed output is kept.
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The largest inline media item (decoded bytes) an output may carry.
pub const MAX_INLINE_MEDIA_BYTES: usize = 5 * 1024 * 1024;
/// The default cap on one spill file: larger outputs keep their head and tail.
pub const DEFAULT_SPILL_CAP: u64 = 64 * 1024 * 1024;
/// The default size quota of the managed directory.
pub const DEFAULT_QUOTA: u64 = 1024 * 1024 * 1024;
/// The managed directory's name under the data directory.
pub const MANAGED_DIRECTORY: &str = "tool-output";
/// The smallest `max_bytes` the store accepts: room for a marker that names the reference.
pub const MIN_BYTES: usize = 128;
/// The smallest `spill_cap` the store accepts.
pub const MIN_SPILL_CAP: u64 = 4096;

/// Where managed outputs live and the limits the store applies.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreConfig {
    /// The managed directory itself (normally `<data>/tool-output`). It is created, mode 0700,
    /// on the first spill; it must not be a symbolic link.
    pub directory: PathBuf,
    /// Lines of model text kept inline; a preview never has more, marker included.
    pub max_lines: usize,
    /// Bytes of model text kept inline; a preview never has more, marker included.
    pub max_bytes: usize,
    /// Managed outputs older than this are removed by [`crate::OutputStore::cleanup`].
    pub retention: Duration,
    /// The largest spill file; a larger output keeps its head and tail and records the gap.
    pub spill_cap: u64,
    /// The managed directory's size quota; the oldest outputs are evicted beyond it.
    pub quota: u64,
    /// How the model pages through a managed output, when the host offers a tool for it; the
    /// markers name it. `None`: markers name only the reference.
    pub paging: Option<PagingHint>,
    /// Secret values (the host's credentials) redacted from every result before it is measured,
    /// shown or saved; values under [`crate::MIN_SECRET_BYTES`] bytes are ignored.
    pub redact: Vec<String>,
}

/// The tool a host offers for paging through managed outputs: it accepts a `tool-output://`
/// reference as its path, with a 1-based line offset and a limit. The store names it in its
/// markers, so a host decides what the model is told to call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagingHint {
    pub(crate) tool: String,
    pub(crate) page_lines: usize,
}

impl PagingHint {
    /// The tool registered as `tool`, which returns at most `page_lines` lines per call.
    pub fn new(tool: impl Into<String>, page_lines: usize) -> Self {
        Self {
            tool: tool.into(),
            page_lines,
        }
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Lines per page.
    pub fn page_lines(&self) -> usize {
        self.page_lines
    }
}

impl StoreConfig {
    /// `<data_dir>/tool-output` with the default limits.
    pub fn in_data_dir(data_dir: impl AsRef<Path>) -> Self {
        Self {
            directory: data_dir.as_ref().join(MANAGED_DIRECTORY),
            max_lines: MAX_LINES,
            max_bytes: MAX_BYTES,
            retention: RETENTION,
            spill_cap: DEFAULT_SPILL_CAP,
            quota: DEFAULT_QUOTA,
            paging: None,
            redact: Vec::new(),
        }
    }

    /// The same configuration, redacting `secrets` from every result (see
    /// [`redact`](Self::redact)).
    #[must_use]
    pub fn with_redactions(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        self.redact.extend(secrets);
        self
    }

    /// The same configuration, with markers that name `paging`.
    #[must_use]
    pub fn with_paging(mut self, paging: PagingHint) -> Self {
        self.paging = Some(paging);
        self
    }

    /// The output limits each call is settled with (see [`Budget`]).
    pub fn budget(&self) -> Budget {
        Budget::new(self.max_lines, self.max_bytes)
    }

    /// The default configuration in the platform data directory for `tackle`: on Linux
    /// `$XDG_DATA_HOME/tackle` (when absolute) or `~/.local/share/tackle`; on macOS
    /// `~/Library/Application Support/tackle`; on Windows `%APPDATA%\tackle`. `None` when the
    /// environment names no home directory.
    pub fn default_location() -> Option<Self> {
        Self::default_location_from(|key| std::env::var_os(key))
    }

    /// [`default_location`](Self::default_location) with the environment read through `var`
    /// (a host that injects its environment, and tests, pass their own lookup).
    pub fn default_location_from(var: impl Fn(&str) -> Option<OsString>) -> Option<Self> {
        data_dir_from(var).map(Self::in_data_dir)
    }

    /// Checks that the limits can hold a preview that names its reference.
    pub fn validate(&self) -> Result<(), StoreError> {
        let problem = if self.max_lines == 0 {
            "max_lines must be at least 1"
        } else if self.max_bytes < MIN_BYTES {
            "max_bytes must be at least 128"
        } else if self.spill_cap < MIN_SPILL_CAP {
            "spill_cap must be at least 4096"
        } else {
            return Ok(());
        };
        Err(StoreError::InvalidLimits {
            problem,
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
            spill_cap: self.spill_cap,
        })
    }

    /// The byte limit for a structured value: [`tackle_tool_core::MAX_STRUCTURED_BYTES`], or `max_bytes` when
    /// that is smaller (with no text parts the model reads the structured value); see
    /// [`Budget::max_structured_bytes`].
    pub fn max_structured_bytes(&self) -> usize {
        self.budget().max_structured_bytes()
    }
}

/// The `tackle` data directory for the platform, reading the environment through `var` (a
/// parameter so tests never touch the process environment).
pub(crate) fn data_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |key: &str| var(key).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        absolute("APPDATA")?
    } else if cfg!(target_os = "macos") {
        absolute("HOME")?
            .join("Library")
            .join("Application Support")
    } else {
        match absolute("XDG_DATA_HOME") {
            Some(dir) => dir,
            None => absolute("HOME")?.join(".local").join("share"),
        }
    };
    Some(base.join("tackle"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn defaults_match_the_reference() {
        let config = StoreConfig::in_data_dir("/data");
        assert_eq!(config.directory, Path::new("/data/tool-output"));
        assert_eq!((config.max_lines, config.max_bytes), (2000, 51200));
        assert_eq!(config.retention, Duration::from_secs(604_800));
        assert_eq!(config.spill_cap, 64 << 20);
        assert_eq!(config.quota, 1 << 30);
        assert_eq!(MAX_INLINE_MEDIA_BYTES, 5 << 20);
        assert_eq!(config.max_structured_bytes(), 16384);
        config.validate().unwrap();
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn xdg_data_home_wins_when_absolute() {
        let dir = data_dir_from(env(&[("XDG_DATA_HOME", "/xdg"), ("HOME", "/home/u")]));
        assert_eq!(dir, Some(PathBuf::from("/xdg/tackle")));
        let dir = data_dir_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/home/u")]));
        assert_eq!(dir, Some(PathBuf::from("/home/u/.local/share/tackle")));
        assert_eq!(data_dir_from(env(&[])), None);
        assert_eq!(data_dir_from(env(&[("HOME", "relative")])), None);
    }

    #[test]
    fn limits_too_small_are_rejected() {
        let mut config = StoreConfig::in_data_dir("/d");
        config.max_lines = 0;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("max_lines must be at least 1"), "{err}");
        config.max_lines = 1;
        config.max_bytes = 127;
        assert!(config.validate().is_err());
        config.max_bytes = 128;
        config.validate().unwrap();
        assert_eq!(config.max_structured_bytes(), 128);
        config.spill_cap = 4095;
        assert!(config.validate().is_err());
    }
}
