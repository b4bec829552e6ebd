use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use super::changelog::{self, Commit};
use super::order;
use super::version::{Version, bump_manifest};
use super::{Options, git, git_output};

#[test]
fn bumps_follow_semver_and_never_go_back() {
    let current = Version::parse("0.4.2").unwrap();
    assert_eq!(current.bump("patch").unwrap().to_string(), "0.4.3");
    assert_eq!(current.bump("minor").unwrap().to_string(), "0.5.0");
    assert_eq!(current.bump("major").unwrap().to_string(), "1.0.0");
    assert_eq!(current.bump("0.10.0").unwrap().to_string(), "0.10.0");
    assert!(current.bump("0.4.2").is_err());
    assert!(current.bump("0.3.9").is_err());
    assert!(current.bump("1.0").is_err());
    assert!(current.bump("1.0.0-rc.1").is_err());
}

#[test]
fn the_manifest_bump_touches_the_workspace_version_and_the_member_requirements_only() {
    let manifest = "[workspace.package]\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
                    [workspace.dependencies]\n# ours\n\
                    tackle-a = { path = \"crates/a\", version = \"0.1.0\" }\n\
                    other = { version = \"0.1.0\" }\n\n[profile.dev]\ndebug = 0\n";
    let bumped = bump_manifest(
        manifest,
        &Version::parse("0.1.0").unwrap(),
        &Version::parse("0.2.0").unwrap(),
    )
    .unwrap();
    assert_eq!(
        bumped,
        manifest
            .replacen("version = \"0.1.0\"", "version = \"0.2.0\"", 1)
            .replace(
                "crates/a\", version = \"0.1.0\"",
                "crates/a\", version = \"0.2.0\""
            )
    );
    assert!(bumped.contains("other = { version = \"0.1.0\" }"));
}

#[test]
fn the_order_puts_every_crate_after_what_it_needs_and_names_a_cycle() {
    let needs = |edges: &[(&str, &[&str])]| -> BTreeMap<String, BTreeSet<String>> {
        edges
            .iter()
            .map(|(name, first)| {
                let first = first.iter().map(|s| (*s).to_owned()).collect();
                ((*name).to_owned(), first)
            })
            .collect()
    };
    let order = order::order(needs(&[
        ("builtins", &["core", "store", "permission", "registry"]),
        ("registry", &["core", "store"]),
        ("store", &["core"]),
        ("permission", &["core"]),
        ("core", &[]),
    ]))
    .unwrap();
    assert_eq!(
        order,
        ["core", "permission", "store", "registry", "builtins"]
    );
    let cycle = order::order(needs(&[("a", &["b"]), ("b", &["a"]), ("c", &[])])).unwrap_err();
    assert!(cycle.contains("a, b"), "{cycle}");
}

#[test]
fn the_section_groups_commits_by_the_crates_they_touch() {
    let groups = vec![
        (
            "tackle-tool-core".to_owned(),
            "crates/tool-core/".to_owned(),
        ),
        ("tackle".to_owned(), "crates/cli/".to_owned()),
    ];
    let commit = |hash: &str, subject: &str, files: &[&str]| Commit {
        hash: hash.to_owned(),
        subject: subject.to_owned(),
        files: files.iter().map(|f| (*f).to_owned()).collect(),
    };
    let commits = [
        commit("aaa1111", "cli: a flag", &["crates/cli/src/main.rs"]),
        commit(
            "bbb2222",
            "core and cli together",
            &["crates/tool-core/src/lib.rs", "crates/cli/src/main.rs"],
        ),
        commit("ccc3333", "docs: a page", &["docs/x.md", "README.md"]),
    ];
    let section = changelog::section(
        "0.2.0",
        "2026-12-03",
        Some("The binary is 1.0 MiB."),
        "Hand-written note.",
        &groups,
        &commits,
    );
    insta::assert_snapshot!(section, @r"
    ## [0.2.0] - 2026-12-03

    Hand-written note.

    The binary is 1.0 MiB.

    ### tackle-tool-core

    - core and cli together (bbb2222)

    ### tackle

    - cli: a flag (aaa1111)
    - core and cli together (bbb2222)

    ### Workspace

    - docs: a page (ccc3333)
    ");
}

#[test]
fn civil_dates() {
    assert_eq!(changelog::civil_date(0), "1970-01-01");
    assert_eq!(changelog::civil_date(11_016), "2000-02-29");
    assert_eq!(changelog::civil_date(20_790), "2026-12-03");
}

/// A one-crate workspace in `dir` whose package carries a file of `bytes` bytes.
fn tiny_crate(dir: &Path, bytes: usize) {
    let manifest = "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
                    license = \"MIT\"\ndescription = \"tiny\"\n";
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "//! Tiny.\n").unwrap();
    std::fs::create_dir_all(dir.join("tests/fixtures")).unwrap();
    std::fs::write(dir.join("tests/fixtures/big.bin"), vec![b'x'; bytes]).unwrap();
}

#[test]
fn a_packaged_file_over_the_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let budget = usize::try_from(super::PACKAGED_FILE_BUDGET).unwrap();
    tiny_crate(dir.path(), budget);
    super::check_package_budget(dir.path(), &["tiny".to_owned()]).unwrap();
    tiny_crate(dir.path(), budget + 1);
    let refused = super::check_package_budget(dir.path(), &["tiny".to_owned()]).unwrap_err();
    assert!(refused.contains("tests/fixtures/big.bin"), "{refused}");
}

/// The whole release, on a scratch clone of this repository's `HEAD`: everything but CI, the
/// `dist` build and `cargo publish --dry-run`. CI and the dist build would each rebuild the
/// workspace from nothing in the clone's target directory (many minutes), and the publish dry
/// run asks crates.io whether the versions are taken, which is not a property of this tree.
/// `cargo package` runs with `--no-verify` for the same reason as CI: verifying compiles every
/// package; what is checked here is what gets packaged, in which order, with which versions.
#[test]
fn a_release_on_a_scratch_clone_writes_the_changelog_packages_every_library_crate_in_order_and_tags()
 {
    let scratch = tempfile::tempdir().unwrap();
    let clone = scratch.path().join("repo");
    let root = crate::workspace_root();
    let status = Command::new("git")
        .args(["clone", "--quiet", "--no-local"])
        .arg(&root)
        .arg(&clone)
        .status()
        .unwrap();
    assert!(status.success());
    for (key, value) in [
        ("user.name", "Release Test"),
        ("user.email", "release@example.invalid"),
        ("commit.gpgsign", "false"),
        ("tag.gpgsign", "false"),
    ] {
        git(&clone, &["config", key, value]).unwrap();
    }
    // The previous release is two commits back: only the two after it are in the section.
    git(
        &clone,
        &["tag", "--annotate", "v0.0.1", "-m", "base", "HEAD~2"],
    )
    .unwrap();
    let expected_subjects = git_output(
        &clone,
        &["log", "--no-merges", "--format=%s", "v0.0.1..HEAD"],
    )
    .unwrap();
    let excluded_subject = git_output(&clone, &["log", "-1", "--format=%s", "v0.0.1"]).unwrap();

    let metadata = crate::tidy::metadata(&clone).unwrap();
    let current = super::workspace_version(&metadata).unwrap();
    let next = current.bump("minor").unwrap().to_string();
    let options = Options {
        bump: "minor".to_owned(),
        ci: false,
        dist: false,
        verify: false,
        publish_dry_run: false,
        target_dir: Some(scratch.path().join("target")),
        date: Some("2026-12-03".to_owned()),
    };
    let released = super::run(&clone, &options).unwrap();
    assert_eq!(released.version, next);

    // The changelog: the new section under Unreleased, with the commits since the last tag.
    let changelog = std::fs::read_to_string(clone.join("CHANGELOG.md")).unwrap();
    let heading = format!("## [Unreleased]\n\n## [{next}] - 2026-12-03\n");
    assert!(changelog.contains(&heading), "{changelog}");
    for subject in expected_subjects.lines() {
        assert!(
            released.section.contains(subject),
            "{subject} missing from\n{changelog}"
        );
    }
    if !expected_subjects.contains(excluded_subject.trim()) {
        assert!(!released.section.contains(excluded_subject.trim()));
    }

    // The release commit and its annotated tag; nothing left uncommitted.
    let tag = format!("v{next}");
    assert_eq!(released.tag, tag);
    assert_eq!(
        git_output(&clone, &["cat-file", "-t", &tag])
            .unwrap()
            .trim(),
        "tag"
    );
    let tagged = git_output(&clone, &["rev-parse", &format!("{tag}^{{commit}}")]).unwrap();
    assert_eq!(tagged, git_output(&clone, &["rev-parse", "HEAD"]).unwrap());
    let subject = git_output(&clone, &["log", "-1", "--format=%s"]).unwrap();
    assert_eq!(subject.trim(), format!("release {next}"));
    assert_eq!(git_output(&clone, &["status", "--porcelain"]).unwrap(), "");
    let message = git_output(&clone, &["tag", "-l", "--format=%(contents)", &tag]).unwrap();
    assert!(message.contains(&format!("## [{next}]")), "{message}");

    // Every library crate packaged, each after the workspace crates it needs.
    let metadata = crate::tidy::metadata(&clone).unwrap();
    let libraries: BTreeSet<String> = metadata
        .workspace_packages()
        .into_iter()
        .filter(|p| p.targets.iter().any(|t| t.is_lib()))
        // An example crate to copy (examples/plugin) says `publish = false`.
        .filter(|p| {
            p.publish
                .as_ref()
                .is_none_or(|registries| !registries.is_empty())
        })
        .map(|p| p.name.to_string())
        .collect();
    assert_eq!(
        released.order.iter().cloned().collect::<BTreeSet<_>>(),
        libraries,
        "every publishable library crate and nothing else is published"
    );
    for package in metadata.workspace_packages() {
        let Some(at) = released
            .order
            .iter()
            .position(|n| *n == package.name.as_str())
        else {
            continue;
        };
        for dep in &package.dependencies {
            if let Some(dep_at) = released.order.iter().position(|n| *n == dep.name) {
                assert!(dep_at < at, "{} packaged before {}", package.name, dep.name);
            }
        }
    }
    assert_eq!(released.packages.len(), released.order.len());
    for (name, file) in released.order.iter().zip(&released.packages) {
        assert_eq!(
            file.file_name().unwrap().to_str().unwrap(),
            format!("{name}-{next}.crate")
        );
        // The packaged manifest asks for the workspace crates at the new version.
        let manifest = Command::new("tar")
            .arg("-xzOf")
            .arg(file)
            .arg(format!("{name}-{next}/Cargo.toml"))
            .output()
            .unwrap();
        assert!(manifest.status.success());
        let manifest = String::from_utf8(manifest.stdout).unwrap();
        assert!(
            manifest.contains(&format!("version = \"{next}\"")),
            "{manifest}"
        );
        if name != "tackle-tool-core" {
            let requirement = format!("[dependencies.tackle-tool-core]\nversion = \"{next}\"");
            assert!(manifest.contains(&requirement), "{manifest}");
        }
    }
}

#[test]
fn a_dirty_tree_is_refused_before_anything_changes() {
    let scratch = tempfile::tempdir().unwrap();
    let clone = scratch.path().join("repo");
    let status = Command::new("git")
        .args(["clone", "--quiet", "--no-local"])
        .arg(crate::workspace_root())
        .arg(&clone)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(clone.join("stray.txt"), "not committed\n").unwrap();
    let head = git_output(&clone, &["rev-parse", "HEAD"]).unwrap();
    let options = Options {
        bump: "patch".to_owned(),
        ci: true,
        dist: false,
        verify: false,
        publish_dry_run: false,
        target_dir: Some(scratch.path().join("target")),
        date: None,
    };
    let refused = super::run(&clone, &options).unwrap_err();
    assert!(
        refused.contains("not clean") && refused.contains("stray.txt"),
        "{refused}"
    );
    assert_eq!(git_output(&clone, &["rev-parse", "HEAD"]).unwrap(), head);
    assert!(git_output(&clone, &["tag"]).unwrap().is_empty());
    let manifest = std::fs::read_to_string(clone.join("Cargo.toml")).unwrap();
    let committed = git_output(&clone, &["show", "HEAD:Cargo.toml"]).unwrap();
    assert_eq!(manifest, committed);
}
