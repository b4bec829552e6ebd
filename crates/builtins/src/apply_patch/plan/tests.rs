use super::*;
use crate::apply_patch::parse::{Patch, parse};

fn target(name: &str) -> Target {
    Target {
        resource: name.to_owned(),
        path: PathBuf::from("/root").join(name),
        external: None,
    }
}

fn run(patch: &str, files: &[(&str, Disk)]) -> Result<Vec<FileChange>, String> {
    let patch: Patch = parse(patch).unwrap();
    let resolved: Vec<Resolved<'_>> = patch
        .hunks
        .iter()
        .map(|hunk| Resolved {
            hunk,
            target: target(hunk.path()),
            move_to: match &hunk.kind {
                HunkKind::Update { move_to, .. } => move_to.as_deref().map(target),
                _ => None,
            },
        })
        .collect();
    let disk = files
        .iter()
        .map(|(name, state)| (target(name).path, state.clone()))
        .collect();
    plan(&resolved, disk, None)
}

fn file(text: &str) -> Disk {
    Disk::File(text.as_bytes().to_vec())
}

fn summary(changes: &[FileChange]) -> Vec<(String, Option<String>, Option<String>)> {
    let text = |b: &Option<Vec<u8>>| b.as_ref().map(|b| String::from_utf8(b.clone()).unwrap());
    changes
        .iter()
        .map(|c| (c.target.resource.clone(), text(&c.before), text(&c.after)))
        .collect()
}

#[test]
fn later_hunks_see_earlier_ones() {
    let changes = run(
        "*** Begin Patch\n*** Add File: a\n+one\n*** Update File: a\n@@\n-one\n+two\n*** End Patch",
        &[("a", Disk::Missing)],
    )
    .unwrap();
    assert_eq!(
        summary(&changes),
        [("a".into(), None, Some("two\n".into()))]
    );
}

#[test]
fn move_updates_and_removes_the_source() {
    let changes = run(
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch",
        &[("a", file("x\n")), ("b", Disk::Missing)],
    )
    .unwrap();
    assert_eq!(
        summary(&changes),
        [
            ("a".into(), Some("x\n".into()), None),
            ("b".into(), None, Some("y\n".into()))
        ]
    );
    assert_eq!(changes[1].moved_from, Some(target("a")));
}

#[test]
fn pure_rename_and_move_onto_itself() {
    let changes = run(
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch",
        &[("a", file("x\n")), ("b", Disk::Missing)],
    )
    .unwrap();
    assert_eq!(summary(&changes).len(), 2);
    let changes = run(
        "*** Begin Patch\n*** Update File: a\n*** Move to: a\n@@\n-x\n+y\n*** End Patch",
        &[("a", file("x\n"))],
    )
    .unwrap();
    assert_eq!(
        summary(&changes),
        [("a".into(), Some("x\n".into()), Some("y\n".into()))]
    );
}

#[test]
fn refusals() {
    let cases: [(&str, &[(&str, Disk)]); 7] = [
        ("*** Add File: a\n+x", &[("a", file("old\n"))]),
        ("*** Delete File: a", &[("a", Disk::Missing)]),
        ("*** Delete File: a", &[("a", Disk::Directory)]),
        ("*** Update File: a\n@@\n-x\n+y", &[("a", Disk::Missing)]),
        (
            "*** Update File: a\n*** Move to: b\n@@\n-x\n+y",
            &[("a", file("x\n")), ("b", file("z\n"))],
        ),
        (
            "*** Update File: a\n@@\n-x\n+y",
            &[("a", Disk::File(b"x\xff\n".to_vec()))],
        ),
        ("*** Update File: a\n@@\n-x\n+y", &[("a", Disk::Other)]),
    ];
    let messages: Vec<String> = cases
        .iter()
        .map(|(body, files)| {
            run(&format!("*** Begin Patch\n{body}\n*** End Patch"), files).unwrap_err()
        })
        .collect();
    insta::assert_snapshot!(messages.join("\n"), @r"
    Unable to apply patch at a: the file already exists. Add File never replaces a file; use Update File to change it
    Unable to apply patch at a: the file does not exist
    Unable to apply patch at a: it is a directory; Delete File removes files only
    Unable to apply patch at a: the file to update does not exist
    Unable to apply patch at a: the move destination b already exists; Move to never replaces a file
    Unable to apply patch at a: the file is not valid UTF-8 (first invalid byte at offset 1); apply_patch edits UTF-8 text only
    Unable to apply patch at a: it is not a regular file
    ");
}

#[test]
fn delete_then_add_and_add_of_identical_content() {
    let changes = run(
        "*** Begin Patch\n*** Delete File: a\n*** Add File: a\n+new\n*** Add File: b\n+same\n*** End Patch",
        &[("a", file("old\n")), ("b", file("same\n"))],
    )
    .unwrap();
    assert_eq!(
        summary(&changes),
        [
            ("a".into(), Some("old\n".into()), Some("new\n".into())),
            ("b".into(), Some("same\n".into()), Some("same\n".into()))
        ]
    );
    assert_eq!((changes[1].applied, changes[1].already_applied), (0, 1));
    assert!(!changes[1].writes());
}

#[test]
fn delete_of_a_non_utf8_file_is_fine() {
    let changes = run(
        "*** Begin Patch\n*** Delete File: a\n*** End Patch",
        &[("a", Disk::File(vec![0xff]))],
    )
    .unwrap();
    assert_eq!(changes[0].after, None);
}
