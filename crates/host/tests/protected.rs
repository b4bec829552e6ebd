//! Writes that always ask, through a real host: the user's directories and the audit log stay
//! out of reach of a tool whose action is allowed, wherever the Location is.

use std::path::Path;

use serde_json::json;
use tackle_host::Host;
use tackle_tool_core::Call;

/// The user directories a Location at `$HOME` reaches by relative paths.
const PROTECTED: [&str; 4] = [
    ".local/share/tackle/permission/x.json",
    ".local/share/tackle/trust.json",
    ".config/opencode/skills/a/SKILL.md",
    ".config/kilo/skills/a/SKILL.md",
];

/// A host of `location` with `HOME` at `home`, its data directory the default one under it,
/// and only `edit` allowed (no asker: an ask is declined).
fn host_at_home(home: &Path, location: &Path) -> Host {
    Host::builder(location)
        .env(tackle_host::Environment::from_vars([(
            "HOME",
            home.display().to_string(),
        )]))
        .set("permission", json!({"*": "deny", "edit": "allow"}))
        .build()
        .unwrap()
}

async fn write_is_declined(host: &Host, path: &str) {
    let call = Call::new("c", "write", json!({"path": path, "content": "{}"}));
    let settled = host.session("s").settle(&call).await;
    assert!(
        matches!(settled, Err(tackle_registry::SettleError::Halt(_))),
        "{path}: {settled:?}"
    );
}

#[tokio::test]
async fn a_location_at_home_cannot_write_the_user_directories_unasked() {
    let home = tempfile::tempdir().unwrap();
    let host = host_at_home(home.path(), home.path());
    for path in PROTECTED {
        write_is_declined(&host, path).await;
        assert!(!home.path().join(path).exists(), "{path} was written");
    }
    // An ordinary file in the same Location is written.
    let call = Call::new("c", "write", json!({"path": "notes.md", "content": "x"}));
    let settled = host.session("s").settle(&call).await.unwrap();
    assert!(!settled.is_error(), "{:?}", settled.result());
}

#[tokio::test]
async fn a_symlinked_home_and_location_reach_the_same_protection() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = root.path().join("home");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let host = host_at_home(&link, &link);
    for path in PROTECTED {
        write_is_declined(&host, path).await;
        assert!(!real.join(path).exists(), "{path} was written");
    }
}

#[tokio::test]
async fn a_location_inside_a_user_directory_asks_for_every_write() {
    let home = tempfile::tempdir().unwrap();
    let inside = home.path().join(".config/opencode");
    std::fs::create_dir_all(&inside).unwrap();
    let host = host_at_home(home.path(), &inside);
    for path in ["skills/a/SKILL.md", "notes.md", "agent/x.md"] {
        write_is_declined(&host, path).await;
        assert!(!inside.join(path).exists(), "{path} was written");
    }
}
