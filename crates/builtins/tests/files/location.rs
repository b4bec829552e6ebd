//! Path resolution against a Location (reference LM1–LM8).

use std::os::unix::fs::symlink;

use tackle_builtins::{EntryKind, Error, Kind, Location, PathReason};

use super::support::{Fixture, slash};

fn reason(result: Result<tackle_builtins::Resolved, Error>) -> PathReason {
    result.unwrap_err().path_reason().unwrap()
}

#[test]
fn existing_and_prospective_relative_targets() {
    let fx = Fixture::new();
    fx.put("hello.txt", "hi");
    let location = &fx.services.location;
    let hello = location.resolve("hello.txt", Kind::File).unwrap();
    assert_eq!(hello.canonical, fx.real_root().join("hello.txt"));
    assert_eq!(hello.resource, "hello.txt");
    assert_eq!(hello.kind, Some(EntryKind::File));
    assert_eq!(hello.directory, fx.real_root());
    assert!(hello.external.is_none());
    let new = location.resolve("src/new.txt", Kind::File).unwrap();
    assert_eq!(new.canonical, fx.real_root().join("src/new.txt"));
    assert_eq!(new.resource, "src/new.txt");
    assert_eq!(new.kind, None);
    assert_eq!(new.directory, fx.real_root());
    assert_eq!(location.resolve("", Kind::Directory).unwrap().resource, ".");
    assert_eq!(
        location.resolve("./a/../b", Kind::File).unwrap().resource,
        "b"
    );
}

#[test]
fn relative_escapes_are_refused() {
    let fx = Fixture::new();
    let location = &fx.services.location;
    assert_eq!(
        reason(location.resolve("../outside.txt", Kind::File)),
        PathReason::RelativeEscape
    );
    assert_eq!(
        reason(location.resolve("a/../../x", Kind::File)),
        PathReason::RelativeEscape
    );
    assert_eq!(PathReason::RelativeEscape.code(), "relative_escape");
}

#[test]
fn symlinks_leading_outside_are_refused() {
    let fx = Fixture::new();
    symlink(fx.outside.path(), fx.path("link")).unwrap();
    let location = &fx.services.location;
    assert_eq!(
        reason(location.resolve("link/new.txt", Kind::File)),
        PathReason::LocationEscape
    );
    let absolute = fx.path("link/new.txt");
    assert_eq!(
        reason(location.resolve(absolute.to_str().unwrap(), Kind::File)),
        PathReason::LocationEscape
    );
    // A dangling link whose target is outside is refused too: writing to it would create it.
    symlink(fx.outside.path().join("ghost.txt"), fx.path("ghost.txt")).unwrap();
    assert_eq!(
        reason(location.resolve("ghost.txt", Kind::File)),
        PathReason::LocationEscape
    );
}

#[test]
fn in_location_symlinks_resolve_to_their_target() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path("actual")).unwrap();
    symlink(fx.path("actual"), fx.path("linked")).unwrap();
    let resolved = fx
        .services
        .location
        .resolve("linked/new.txt", Kind::File)
        .unwrap();
    assert_eq!(resolved.resource, "actual/new.txt");
    assert_eq!(resolved.canonical, fx.real_root().join("actual/new.txt"));
    // A dangling link inside resolves to the file it would create.
    symlink("actual/made.txt", fx.path("pending")).unwrap();
    let resolved = fx.services.location.resolve("pending", Kind::File).unwrap();
    assert_eq!(resolved.resource, "actual/made.txt");
    assert_eq!(resolved.kind, None);
}

#[test]
fn absolute_paths_inside_and_outside() {
    let fx = Fixture::new();
    fx.put("a.txt", "");
    let location = &fx.services.location;
    let inside = fx.path("a.txt");
    let resolved = location
        .resolve(inside.to_str().unwrap(), Kind::File)
        .unwrap();
    assert_eq!(resolved.resource, "a.txt");
    assert!(resolved.external.is_none());

    let outside = fx.real_outside();
    let target = outside.join("x.txt");
    let resolved = location
        .resolve(target.to_str().unwrap(), Kind::File)
        .unwrap();
    assert_eq!(resolved.resource, slash(&target));
    let external = resolved.external.unwrap();
    assert_eq!(external.directory, outside);
    assert_eq!(external.pattern, format!("{}/*", slash(&outside)));
}

#[test]
fn external_anchors() {
    let fx = Fixture::new();
    let outside = fx.real_outside();
    std::fs::create_dir(outside.join("sub")).unwrap();
    std::fs::write(outside.join("sub/f.txt"), "x").unwrap();
    let location = &fx.services.location;
    let existing = location
        .resolve(outside.join("sub/f.txt").to_str().unwrap(), Kind::File)
        .unwrap();
    assert_eq!(existing.external.unwrap().directory, outside.join("sub"));
    let nested = location
        .resolve(
            outside.join("new/nested/file.txt").to_str().unwrap(),
            Kind::File,
        )
        .unwrap();
    assert_eq!(nested.external.unwrap().directory, outside);
    let directory = location
        .resolve(outside.join("sub").to_str().unwrap(), Kind::Directory)
        .unwrap();
    assert_eq!(directory.external.unwrap().directory, outside.join("sub"));
    let as_file = location
        .resolve(outside.join("sub").to_str().unwrap(), Kind::File)
        .unwrap();
    assert_eq!(as_file.external.unwrap().directory, outside.join("sub"));
}

#[test]
fn path_arguments_are_cleaned_but_not_expanded() {
    let fx = Fixture::new();
    fx.put("src/main.rs", "");
    let location = &fx.services.location;
    assert_eq!(
        location
            .resolve("src/main.rs\n", Kind::File)
            .unwrap()
            .resource,
        "src/main.rs"
    );
    assert_eq!(
        location
            .resolve("src\\main.rs", Kind::File)
            .unwrap()
            .resource,
        "src/main.rs"
    );
    // A file whose name really holds a backslash is taken literally.
    fx.put("odd\\name", "");
    assert_eq!(
        location.resolve("odd\\name", Kind::File).unwrap().resource,
        "odd\\name"
    );
    let tilde = location.resolve("~/notes.md", Kind::File).unwrap();
    assert_eq!(tilde.resource, "~/notes.md");
    assert!(tilde.external.is_none());
    assert_eq!(
        reason(location.resolve("a\0b", Kind::File)),
        PathReason::Invalid
    );
}

#[test]
fn non_directory_ancestors_and_loops() {
    let fx = Fixture::new();
    fx.put("file.txt", "x");
    let location = &fx.services.location;
    assert_eq!(
        reason(location.resolve("file.txt/inner.txt", Kind::File)),
        PathReason::NonDirectoryAncestor
    );
    symlink(fx.path("b"), fx.path("a")).unwrap();
    symlink(fx.path("a"), fx.path("b")).unwrap();
    assert!(location.resolve("a", Kind::File).is_err());
    assert!(location.resolve("a/x", Kind::File).is_err());
}

#[test]
fn a_location_must_be_an_absolute_directory() {
    let fx = Fixture::new();
    fx.put("f", "");
    assert!(matches!(
        Location::new("relative"),
        Err(Error::InvalidLocation { .. })
    ));
    assert!(matches!(
        Location::new(fx.path("f")),
        Err(Error::InvalidLocation { .. })
    ));
    assert!(matches!(
        Location::new(fx.path("missing")),
        Err(Error::InvalidLocation { .. })
    ));
    let location = Location::new(fx.root.path()).unwrap();
    assert_eq!(location.root(), fx.real_root());
}
