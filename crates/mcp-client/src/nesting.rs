//! How deep in tackle-started servers a process runs, so that a configuration whose server is
//! `tackle serve` (which reads the same configuration) cannot start itself without end.
//!
//! Every local server is started with [`DEPTH_VARIABLE`] set to the starter's depth plus one,
//! written after the configured environment so a configuration cannot lower it. A process at
//! [`MAX_DEPTH`] starts no local server (the server is reported failed with the reason), and
//! `tackle serve` refuses to start beyond it.

use std::ffi::OsStr;

/// The variable carrying the depth: unset in a process no tackle server started.
pub const DEPTH_VARIABLE: &str = "TACKLE_MCP_DEPTH";

/// The deepest a tackle that serves may run: a server tackle started (depth 1) serves, but
/// starts no local server of its own.
pub const MAX_DEPTH: u32 = 1;

/// The depth an environment's value of [`DEPTH_VARIABLE`] says; a value that is not a number
/// counts as beyond every limit, so a garbled marker never turns the guard off.
pub fn depth(value: Option<&OsStr>) -> u32 {
    match value {
        None => 0,
        Some(value) => value
            .to_str()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(u32::MAX),
    }
}

/// Why a process at `depth` may not go on: `None` while it is within [`MAX_DEPTH`].
pub fn beyond_limit(depth: u32) -> Option<String> {
    (depth > MAX_DEPTH).then(|| {
        format!(
            "{DEPTH_VARIABLE}={depth} says tackle servers are nested deeper than {MAX_DEPTH} here: \
             a configured MCP server that runs `tackle serve` would start itself without end"
        )
    })
}

/// Why a process at `depth` starts no local server (`None` when it may).
pub(crate) fn too_deep(depth: u32) -> Option<String> {
    (depth >= MAX_DEPTH).then(|| {
        format!(
            "not started: this tackle is itself an MCP server started by tackle \
             ({DEPTH_VARIABLE}={depth}), and a local server it started could be tackle again, \
             without end; remote servers are still connected"
        )
    })
}

/// The value a server started at `depth` is given.
pub(crate) fn child_depth(depth: u32) -> String {
    depth.saturating_add(1).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_depth_is_read_and_a_garbled_one_is_beyond_every_limit() {
        assert_eq!(depth(None), 0);
        assert_eq!(depth(Some(OsStr::new("1"))), 1);
        assert_eq!(depth(Some(OsStr::new(" 2\n"))), 2);
        assert_eq!(depth(Some(OsStr::new("0x1"))), u32::MAX);
        assert_eq!(depth(Some(OsStr::new(""))), u32::MAX);
        assert_eq!(depth(Some(OsStr::new("-1"))), u32::MAX);
    }

    #[test]
    fn a_top_tackle_starts_servers_and_its_servers_serve_but_start_none() {
        assert_eq!(too_deep(0), None);
        assert_eq!(beyond_limit(0), None);
        assert!(too_deep(1).is_some());
        assert_eq!(beyond_limit(1), None);
        assert!(beyond_limit(2).is_some());
        assert!(beyond_limit(u32::MAX).is_some());
        assert_eq!(child_depth(0), "1");
        assert_eq!(child_depth(u32::MAX), u32::MAX.to_string());
    }
}
