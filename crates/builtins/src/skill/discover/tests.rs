//! Front matter parsing, names and the default user directories.

use super::*;

#[test]
fn parses_front_matter_and_body() {
    let skill =
        parse_skill("---\nname: effect\ndescription: Use Effect.\nlicense: MIT\n---\n\n# Body\n")
            .unwrap();
    assert_eq!(skill.name, "effect");
    assert_eq!(skill.description, "Use Effect.");
    assert_eq!(skill.body, "\n# Body\n");
    let crlf = parse_skill("\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nx").unwrap();
    assert_eq!((crlf.name.as_str(), crlf.body.as_str()), ("a", "x"));
}

#[test]
fn reports_what_is_wrong() {
    let cases = [
        ("# Title\n", FrontMatterError::Missing),
        ("---\nname: a\n", FrontMatterError::Unterminated),
        (
            "---\ndescription: d\n---\n",
            FrontMatterError::MissingField("name"),
        ),
        (
            "---\nname: a\n---\n",
            FrontMatterError::MissingField("description"),
        ),
        (
            "---\nname: Bad Name\ndescription: d\n---\n",
            FrontMatterError::InvalidName("Bad Name".into()),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_skill(text).unwrap_err(), expected, "{text:?}");
    }
    assert!(matches!(
        parse_skill("---\nname: [unclosed\ndescription: d\n---\n"),
        Err(FrontMatterError::Yaml(_))
    ));
}

#[test]
fn names_follow_the_agent_skills_rule() {
    for good in ["a", "git-release", "v2", &"x".repeat(64)] {
        assert!(valid_name(good), "{good}");
    }
    for bad in [
        "",
        "-a",
        "a-",
        "a--b",
        "A",
        "a_b",
        "a b",
        "a*",
        &"x".repeat(65),
    ] {
        assert!(!valid_name(bad), "{bad}");
    }
}

#[test]
fn user_dirs_follow_xdg_then_home() {
    let xdg = SkillSources::from_env(|key| match key {
        "XDG_CONFIG_HOME" => Some("/cfg".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    });
    let home = SkillSources::from_env(|key| (key == "HOME").then(|| "/home/u".into()));
    let none = SkillSources::from_env(|_| None);
    if !cfg!(windows) {
        let paths = |dirs: &[&str]| dirs.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            xdg.user_dirs,
            paths(&[
                "/cfg/tackle/skills",
                "/cfg/opencode/skills",
                "/cfg/opencode/skill",
                "/cfg/kilo/skills",
                "/home/u/.kilocode/skills",
                "/home/u/.claude/skills",
                "/home/u/.agents/skills",
            ])
        );
        assert_eq!(
            home.user_dirs[0],
            PathBuf::from("/home/u/.config/tackle/skills")
        );
        assert_eq!(home.user_dirs.len(), 7);
    }
    assert!(none.user_dirs.is_empty());
    let config_only = SkillSources::for_user(None, Some(Path::new("/c")));
    assert_eq!(config_only.user_dirs.len(), USER_CONFIG_SKILL_DIRS.len());
}
