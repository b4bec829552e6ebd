//! The registered name of a server's tool: `<server>_<tool>`, fitted to what every provider
//! accepts (`^[A-Za-z][A-Za-z0-9_-]{0,63}$`).
//!
//! Characters outside `[A-Za-z0-9_-]` become `_`; a name that does not start with a letter gets
//! an `mcp_` prefix. A name over 64 characters, or one another tool already has, is cut and
//! given `_` and eight hex digits of a hash of the server's and the tool's own names, so the
//! same tool gets the same name in every run. The original tool name is kept beside the
//! registered one for the call.

use std::collections::BTreeSet;

/// The longest registered name.
pub const MAX_NAME: usize = 64;

/// `<server>_<tool>` with every character a provider refuses replaced, not yet checked for
/// length or collisions.
pub(crate) fn plain(server: &str, tool: &str) -> String {
    let mut name = String::with_capacity(server.len() + tool.len() + 1);
    for c in server
        .chars()
        .chain(std::iter::once('_'))
        .chain(tool.chars())
    {
        name.push(if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        });
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "mcp_");
    }
    name
}

/// The name `tool` of `server` registers under, given the names already `taken`; `None` when
/// even the hashed name is taken (two tools whose names hash alike).
pub(crate) fn fit(server: &str, tool: &str, taken: &BTreeSet<String>) -> Option<String> {
    let name = plain(server, tool);
    if name.len() <= MAX_NAME && !taken.contains(&name) {
        return Some(name);
    }
    let suffix = format!("_{:08x}", hash(server, tool));
    // Every character is ASCII now, so a byte cut is a character cut.
    let keep = name.len().min(MAX_NAME - suffix.len());
    let hashed = format!("{}{suffix}", &name[..keep]);
    (!taken.contains(&hashed)).then_some(hashed)
}

/// FNV-1a (32 bits) of the server and tool names: stable across runs, platforms and versions,
/// unlike the standard library's hasher.
fn hash(server: &str, tool: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in server.bytes().chain([0]).chain(tool.bytes()) {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_tool_core::validate_name;

    #[test]
    fn plain_names_pass_unchanged() {
        assert_eq!(
            fit("fs", "read_file", &BTreeSet::new()).as_deref(),
            Some("fs_read_file")
        );
    }

    #[test]
    fn dots_slashes_and_spaces_become_underscores() {
        let name = fit("my.server", "a/b.c d", &BTreeSet::new()).unwrap();
        assert_eq!(name, "my_server_a_b_c_d");
        validate_name(&name).unwrap();
    }

    #[test]
    fn a_leading_digit_gets_a_prefix() {
        let name = fit("1srv", "x", &BTreeSet::new()).unwrap();
        assert_eq!(name, "mcp_1srv_x");
    }

    #[test]
    fn a_long_name_is_cut_with_a_stable_hash() {
        let tool = "t".repeat(200);
        let name = fit("srv", &tool, &BTreeSet::new()).unwrap();
        assert_eq!(name.len(), MAX_NAME);
        validate_name(&name).unwrap();
        assert_eq!(name, fit("srv", &tool, &BTreeSet::new()).unwrap());
        assert_ne!(
            name,
            fit("srv", &"t".repeat(199), &BTreeSet::new()).unwrap()
        );
    }

    #[test]
    fn a_collision_gets_a_hash() {
        let taken = BTreeSet::from(["s_a_b".to_owned()]);
        let name = fit("s", "a.b", &taken).unwrap();
        assert!(name.starts_with("s_a_b_") && name.len() == 14, "{name}");
    }
}
