//! Tests of spill files: layouts, cut points, privacy, failures.

use super::*;
use std::fs::OpenOptions;
use std::io::Cursor;

fn capped(body: &[u8], cap: u64) -> (CapHeader, Vec<u8>) {
    let mut out = Cursor::new(Vec::new());
    let (lines, file_bytes) = write_capped(&mut out, body, cap).unwrap();
    let out = out.into_inner();
    assert_eq!(out.len() as u64, file_bytes);
    assert!(file_bytes <= cap, "{file_bytes} > {cap}");
    let header_len = CapHeader::len();
    let header = CapHeader::parse(std::str::from_utf8(&out[..header_len]).unwrap()).unwrap();
    assert_eq!(header.total_lines, lines);
    assert_eq!(lines, crate::text::count_lines(body));
    let (head_end, tail_start) = (header.head_end as usize, header.tail_start as usize);
    assert_eq!(&out[header_len..header_len + head_end], &body[..head_end]);
    assert_eq!(&out[header_len + head_end..], &body[tail_start..]);
    (header, out)
}

/// A spill into `dir` as the store makes one: the directory opened, then the output written.
fn write(
    dir: &Path,
    session_id: &str,
    call_id: &str,
    body: &[u8],
    cap: u64,
) -> Result<Written, StoreError> {
    super::write(
        &open_for_saving(dir, call_id)?,
        dir,
        session_id,
        call_id,
        body,
        cap,
    )
}

#[test]
fn headers_have_a_fixed_length_and_round_trip() {
    let header = CapHeader {
        total_bytes: u64::MAX,
        total_lines: 7,
        head_end: 1,
        head_newlines: 2,
        tail_start: 3,
        newlines_before_tail: 4,
        head_partial: true,
        tail_partial: false,
        head_rest: 1,
        tail_lead: 0,
    };
    assert_eq!(header.render().len(), CapHeader::len());
    assert_eq!(CapHeader::parse(&header.render()), Some(header));
    assert_eq!(CapHeader::parse("tackle-spill v1 capped: nonsense\n"), None);
    let insane = CapHeader {
        head_end: 9,
        ..header
    };
    assert_eq!(CapHeader::parse(&insane.render()), None);
}

#[test]
fn capped_files_cut_on_line_boundaries_when_they_can() {
    let body: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let (header, _) = capped(body.as_bytes(), 64 * 1024);
    assert!(!header.head_partial && !header.tail_partial);
    assert_eq!((header.head_rest, header.tail_lead), (0, 0));
    assert_eq!(header.total_bytes, body.len() as u64);
    let head = &body[..header.head_end as usize];
    assert_eq!(head.lines().count() as u64, header.head_newlines);
}

#[test]
fn one_long_line_is_cut_on_code_point_boundaries() {
    let body = "日本😀".repeat(10_000);
    let (header, out) = capped(body.as_bytes(), 8192);
    assert!(header.head_partial && header.tail_partial);
    assert_eq!(header.head_rest, header.tail_start - header.head_end);
    assert!(body.is_char_boundary(header.head_end as usize));
    assert!(body.is_char_boundary(header.tail_start as usize));
    assert!(std::str::from_utf8(&out).is_ok());
}

#[test]
fn partial_ends_record_their_dropped_parts() {
    // Long lines around both cuts: the head ends inside one, the tail starts inside another.
    let body = format!(
        "{}\n{}\n{}",
        "a".repeat(5000),
        "b".repeat(20),
        "c".repeat(5000)
    );
    let (header, _) = capped(body.as_bytes(), 4096);
    assert!(header.head_partial && header.tail_partial);
    let (a, b) = (header.head_end, header.tail_start);
    assert_eq!(header.head_rest, 5000 - a + 1);
    assert_eq!(header.tail_lead, b - (5000 + 1 + 20 + 1));
    assert_eq!((header.head_newlines, header.newlines_before_tail), (0, 2));
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_device_is_an_error_not_a_short_file() {
    // /dev/full fails every write with ENOSPC, like a full managed directory.
    let mut full = OpenOptions::new().write(true).open("/dev/full").unwrap();
    let err = write_full(&mut full, b"data\n").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28), "{err}");
}

#[test]
fn write_removes_the_partial_file_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: creation fails, nothing is left behind.
    let err = write(&dir.path().join("missing"), "s", "call-1", b"x", 4096).unwrap_err();
    assert!(matches!(err, StoreError::Write { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("cannot save the full output of call call-1 to ")
    );
    let written = write(dir.path(), "s", "call-2", b"one\ntwo", 4096).unwrap();
    assert_eq!((written.total_lines, written.file_bytes), (2, 7));
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        [std::ffi::OsString::from(written.reference.file_name())]
    );
}

#[cfg(unix)]
#[test]
fn directories_and_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data").join("tool-output");
    ensure_dir(&dir).unwrap();
    let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let written = write(&dir, "s", "c", b"x", 4096).unwrap();
    let file = dir.join(written.reference.file_name());
    assert_eq!(
        fs::metadata(file).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(matches!(
        ensure_dir(&link),
        Err(StoreError::SymlinkedDirectory { .. })
    ));
    // A managed-looking name that is a link is not opened.
    let reference = OutputRef::generate("s", Layout::Full).unwrap();
    let target = root.path().join("secret");
    fs::write(&target, "secret").unwrap();
    std::os::unix::fs::symlink(&target, real.join(reference.file_name())).unwrap();
    let err = open(&real, &reference).unwrap_err();
    assert!(matches!(err, StoreError::Read { .. }), "{err}");
}

/// The directory is checked once (`ensure_dir`) and then written to; swapped for a link to
/// elsewhere in between, the spill must fail rather than land in the link's target.
#[cfg(unix)]
#[test]
fn a_directory_swapped_for_a_link_after_the_check_is_not_written_through() {
    let root = tempfile::tempdir().unwrap();
    let managed = root.path().join("tool-output");
    ensure_dir(&managed).unwrap();
    let elsewhere = root.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::remove_dir(&managed).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &managed).unwrap();
    let err = write(&managed, "s", "call-1", b"output\n", 4096).unwrap_err();
    assert!(
        matches!(err, StoreError::SymlinkedDirectory { .. }),
        "{err}"
    );
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn large_bodies_are_counted_on_a_second_thread_with_the_same_result() {
    let body: String = (0..1_500_000).map(|i| format!("{i}\n")).collect();
    assert!(body.len() >= PARALLEL_BYTES);
    let mut out = Vec::new();
    assert_eq!(
        write_full(&mut out, body.as_bytes()).unwrap(),
        (1_500_000, body.len() as u64)
    );
    assert_eq!(out, body.as_bytes());
    let (header, _) = capped(body.as_bytes(), 1 << 20);
    assert_eq!(header.total_lines, 1_500_000);
}
