//! `skill` (reference SK2–SK5) and skill discovery.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tackle_builtins::skill::{SkillCatalog, SkillProblemKind, SkillSources, render, sample_files};

use super::interactive_support::{
    allowing, builtin, denying, failure, offered, services_at, settle, text,
};

/// The `skill` tool of the Location `root`, when a skill is discovered there.
fn skill_at(
    root: &Path,
    permission: tackle_permission::Permission,
) -> Option<tackle_tool_core::Tool> {
    builtin(&services_at(root, permission), "skill")
}

fn write(path: &Path, content: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

/// A Location with the `effect` skill (and its `reference.md`) in `.tackle/skills`.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let skill = root.join(".tackle/skills/effect");
    write(
        &skill.join("SKILL.md"),
        &skill_md("effect", "Use Effect.", "\n# Effect\n\nUse it well.\n"),
    );
    write(&skill.join("reference.md"), "reference");
    (dir, root)
}

fn catalog(root: &Path) -> SkillCatalog {
    SkillCatalog::discover(root, &SkillSources::default())
}

#[tokio::test]
async fn loads_a_skill_with_its_files() {
    let (_dir, root) = project();
    let (permission, recorder) = allowing();
    let tool = skill_at(&root, permission).unwrap();
    let output = settle(&tool, "skill", json!({"name": "effect"}))
        .await
        .unwrap();
    let directory = root.join(".tackle/skills/effect");
    let expected = render(
        "effect",
        "\n# Effect\n\nUse it well.\n",
        &directory,
        &[directory.join("reference.md")],
    );
    assert_eq!(text(&output), expected);
    assert_eq!(
        output.structured,
        json!({"name": "effect", "directory": directory, "output": expected, "truncated": false})
    );
    assert_eq!(
        recorder.summary(),
        [(
            "skill".to_owned(),
            vec!["effect".to_owned()],
            vec!["effect".to_owned()]
        )]
    );
    let shown = text(&output).replace(&root.display().to_string(), "<root>");
    insta::assert_snapshot!(shown, @r#"
    <skill_content name="effect">
    # Skill: effect

    # Effect

    Use it well.

    Base directory for this skill: file://<root>/.tackle/skills/effect
    Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
    Note: file list is sampled.

    <skill_files>
    <file><root>/.tackle/skills/effect/reference.md</file>
    </skill_files>
    </skill_content>
    "#);
}

#[tokio::test]
async fn missing_and_denied_skills() {
    let (_dir, root) = project();
    let (permission, recorder) = allowing();
    let tool = skill_at(&root, permission).unwrap();
    let missing = failure(settle(&tool, "skill", json!({"name": "missing"})).await);
    assert_eq!(
        missing,
        "Unable to load skill missing: no such skill. Available skills: effect"
    );
    assert!(recorder.asked().is_empty());

    let (denied, recorder) = denying("skill");
    let tool = skill_at(&root, denied).unwrap();
    let message = failure(settle(&tool, "skill", json!({"name": "effect"})).await);
    assert!(
        message.starts_with("Unable to load skill effect: Permission denied: skill"),
        "{message}"
    );
    assert!(recorder.asked().is_empty());
}

#[tokio::test]
async fn a_flat_skill_file_lists_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let skills = root.join(".opencode/skills");
    write(
        &skills.join("public.md"),
        &skill_md("public", "A flat skill.", "Flat body."),
    );
    write(&skills.join("sibling.txt"), "not listed");
    write(
        &skills.join("README.md"),
        "# Not a skill, no front matter\n",
    );
    let catalog = catalog(&root);
    assert_eq!(catalog.skills().len(), 1);
    assert!(catalog.problems().is_empty(), "{:?}", catalog.problems());
    let (permission, _) = allowing();
    let tool = skill_at(&root, permission).unwrap();
    let output = settle(&tool, "skill", json!({"name": "public"}))
        .await
        .unwrap();
    let shown = text(&output);
    assert!(shown.contains("Flat body."));
    assert!(
        shown.ends_with("<skill_files>\n</skill_files>\n</skill_content>"),
        "{shown}"
    );
    assert!(!shown.contains("sibling.txt"));
}

#[test]
fn precedence_and_problems_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let user = root.join("user-config/tackle/skills");
    write(
        &root.join(".claude/skills/review/SKILL.md"),
        &skill_md("review", "From claude.", ""),
    );
    write(
        &root.join(".tackle/skills/review/SKILL.md"),
        &skill_md("review", "From tackle.", ""),
    );
    write(
        &root.join(".opencode/skill/lint/SKILL.md"),
        &skill_md("lint", "Lint it.", ""),
    );
    write(
        &user.join("lint/SKILL.md"),
        &skill_md("lint", "User lint.", ""),
    );
    write(
        &user.join("personal/SKILL.md"),
        &skill_md("personal", "Mine.", ""),
    );
    write(
        &root.join(".tackle/skills/broken/SKILL.md"),
        "# no front matter\n",
    );
    write(
        &root.join(".tackle/skills/bad-name/SKILL.md"),
        &skill_md("Bad Name", "x", ""),
    );
    write(
        &root.join(".tackle/skills/no-desc/SKILL.md"),
        "---\nname: no-desc\n---\n",
    );
    let sources = SkillSources {
        user_dirs: vec![user.clone()],
    };
    let catalog = SkillCatalog::discover(&root, &sources);
    let found: Vec<(&str, &str)> = catalog
        .skills()
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("lint", "Lint it."),
            ("personal", "Mine."),
            ("review", "From tackle.")
        ]
    );
    let problems: Vec<String> = catalog
        .problems()
        .iter()
        .map(|p| p.to_string().replace(&root.display().to_string(), "<root>"))
        .collect();
    insta::assert_snapshot!(problems.join("\n"), @r#"
    <root>/.tackle/skills/bad-name/SKILL.md: invalid name "Bad Name": use 1-64 lowercase letters, digits and single hyphens (e.g. `git-release`)
    <root>/.tackle/skills/broken/SKILL.md: no front matter: the file must start with a `---` line
    <root>/.tackle/skills/no-desc/SKILL.md: the front matter has no `description`
    <root>/.claude/skills/review/SKILL.md: shadowed by the skill of the same name in <root>/.tackle/skills/review/SKILL.md
    <root>/user-config/tackle/skills/lint/SKILL.md: shadowed by the skill of the same name in <root>/.opencode/skill/lint/SKILL.md
    "#);
    assert!(matches!(
        catalog.problems()[3].kind,
        SkillProblemKind::Shadowed { .. }
    ));
}

#[cfg(unix)]
#[test]
fn symlinked_skill_directories_are_found_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let shared = root.join("shared-skills");
    write(
        &shared.join("deploy/SKILL.md"),
        &skill_md("deploy", "Deploy.", ""),
    );
    fs::create_dir_all(root.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&shared, root.join(".claude/skills")).unwrap();
    // A cycle: a link back to the top must not loop.
    std::os::unix::fs::symlink(&shared, shared.join("deploy/loop")).unwrap();
    let catalog = catalog(&root);
    assert_eq!(catalog.skills().len(), 1);
    assert_eq!(catalog.skills()[0].name, "deploy");
    assert!(catalog.problems().is_empty(), "{:?}", catalog.problems());
}

#[test]
fn the_description_lists_the_skills() {
    let (_dir, root) = project();
    write(
        &root.join(".tackle/skills/git-release/SKILL.md"),
        &skill_md(
            "git-release",
            "Cut a release\n  with tags, changelog and publish.",
            "",
        ),
    );
    let (permission, _) = allowing();
    let tool = skill_at(&root, permission).unwrap();
    let definition = tool.definition("skill").unwrap();
    insta::assert_snapshot!(definition.description, @r"
    Load a specialized skill: instructions, workflows and bundled resources for a specific kind of task. When a task matches one of the skills below, load it with its name before starting, and follow its instructions. The result contains the skill's content, its base directory (relative paths in the skill are relative to it) and a sample of its files.

    Available skills:
    - effect: Use Effect.
    - git-release: Cut a release with tags, changelog and publish.
    ");
    insta::assert_json_snapshot!(definition.input_schema, @r#"
    {
      "type": "object",
      "properties": {
        "name": {
          "type": "string",
          "description": "The name of the skill, from the list of available skills.",
          "maxLength": 4096
        }
      },
      "required": [
        "name"
      ],
      "description": "Which skill to load.",
      "additionalProperties": false
    }
    "#);
}

#[test]
fn no_skills_no_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (permission, _) = allowing();
    assert!(skill_at(dir.path(), permission.clone()).is_none());
    let names = offered(&services_at(dir.path(), permission.clone()));
    assert!(!names.contains(&"skill".to_owned()));
    let (_project, root) = project();
    let names = offered(&services_at(&root, permission));
    assert!(names.contains(&"skill".to_owned()), "{names:?}");
}

#[test]
fn file_samples_are_sorted_capped_and_skip_skill_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    write(&root.join("SKILL.md"), "x");
    write(&root.join(".hidden"), "x");
    write(&root.join("nested/SKILL.md"), "x");
    for index in 0..12 {
        write(&root.join(format!("scripts/s{index:02}.sh")), "x");
    }
    let files = sample_files(&root);
    assert_eq!(files.len(), 10);
    assert_eq!(files[0], root.join(".hidden"));
    assert_eq!(files[1], root.join("scripts/s00.sh"));
    assert_eq!(files[9], root.join("scripts/s08.sh"));
    assert!(files.iter().all(|f| f.file_name().unwrap() != "SKILL.md"));
}

#[test]
fn other_agents_places_and_the_users_home_are_searched_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let config = home.join(".config");
    // One skill of each place, and a name in several places to show which wins.
    let places = [
        (root.join(".kilo/skills"), "kilo"),
        (root.join(".kilocode/skills"), "kilocode"),
        (root.join(".agents/skills"), "agents"),
        (config.join("tackle/skills"), "user-tackle"),
        (config.join("opencode/skills"), "user-opencode"),
        (config.join("kilo/skills"), "user-kilo"),
        (home.join(".kilocode/skills"), "home-kilocode"),
        (home.join(".claude/skills"), "home-claude"),
        (home.join(".agents/skills"), "home-agents"),
    ];
    for (place, name) in &places {
        write(
            &place.join(name).join("SKILL.md"),
            &skill_md(name, "Own.", ""),
        );
        write(
            &place.join("shared/SKILL.md"),
            &skill_md("shared", &format!("From {name}."), ""),
        );
    }
    let sources = SkillSources::for_user(Some(&home), Some(&config));
    let catalog = SkillCatalog::discover(&root, &sources);
    let mut names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
    names.retain(|name| *name != "shared");
    let mut expected: Vec<&str> = places.iter().map(|(_, name)| *name).collect();
    expected.sort_unstable();
    assert_eq!(names, expected);
    // The project's places come before the user's; among them, Kilo's before `.agents`.
    assert_eq!(catalog.get("shared").unwrap().description, "From kilo.");
    let shadowed: Vec<String> = catalog
        .problems()
        .iter()
        .map(|p| p.path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert_eq!(
        shadowed,
        [
            ".kilocode/skills/shared/SKILL.md",
            ".agents/skills/shared/SKILL.md",
            "home/.config/tackle/skills/shared/SKILL.md",
            "home/.config/opencode/skills/shared/SKILL.md",
            "home/.config/kilo/skills/shared/SKILL.md",
            "home/.kilocode/skills/shared/SKILL.md",
            "home/.claude/skills/shared/SKILL.md",
            "home/.agents/skills/shared/SKILL.md",
        ]
    );
}

#[test]
fn a_location_that_is_the_home_directory_finds_each_skill_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = fs::canonicalize(dir.path()).unwrap();
    write(
        &home.join(".claude/skills/mine/SKILL.md"),
        &skill_md("mine", "Mine.", ""),
    );
    let catalog = SkillCatalog::discover(&home, &SkillSources::for_user(Some(&home), None));
    assert_eq!(catalog.skills().len(), 1);
    assert!(catalog.problems().is_empty(), "{:?}", catalog.problems());
}
