//! `cargo xtask bench read`: `read` with offset 9,000,000 and limit 100 in a 1 GB, 10M-line
//! file, against `sed -n` printing the same lines of the same file, in the same run.
//!
//! Target: tackle at most 1.2x sed's median time, and a peak memory (RSS high-water mark of a
//! process doing just that read) under 16 MiB. The file is generated once under the target
//! directory and reused.
//!
//! With the `media` feature, then: a 6000×4000 JPEG resized to read's image bound against
//! ImageMagick (`read_image`). `cargo xtask bench read lines` or `... read image` runs one half.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[cfg(feature = "media")]
mod read_image;

use common::{median, ms, verdict};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;
use tackle_tool_core::{Call, Context, Tool};

const LINES: u64 = 10_000_000;
const LINE_BYTES: u64 = 100;
const OFFSET: u64 = 9_000_000;
const LIMIT: u64 = 100;
const ITERATIONS: usize = 5;
const TARGET_RATIO: f64 = 1.2;
const TARGET_PEAK_KIB: u64 = 16 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child-read") {
        child_read(Path::new(&args[at + 1]));
        return;
    }
    #[cfg(feature = "media")]
    if let Some(at) = args.iter().position(|a| a == "--child-image") {
        read_image::child_read(Path::new(&args[at + 1]));
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tackle-bench-read");
    std::fs::create_dir_all(&dir).unwrap();
    let only = |half: &str| args.iter().any(|a| a == half);
    if !only("image") {
        lines(&dir);
    }
    #[cfg(feature = "media")]
    if !only("lines") {
        read_image::run(&dir);
    }
}

/// A page deep in a 1 GB file against `sed -n`.
fn lines(dir: &Path) {
    let file = dir.join("lines-1g.txt");
    ensure_file(&file);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (tool, _data) = read_tool(dir);
    let ctx = Context::new("bench");
    let input = json!({"path": "lines-1g.txt", "offset": OFFSET, "limit": LIMIT});
    let call = Call::new("bench", "read", input);
    let sed_range = format!("{},{}p", OFFSET, OFFSET + LIMIT - 1);

    // Same lines from both, once, before timing.
    let ours = runtime.block_on(tool.run_unbounded(&call, &ctx)).unwrap();
    let sed = Command::new("sed")
        .args(["-n", &sed_range])
        .arg(&file)
        .output()
        .unwrap();
    let sed_text = String::from_utf8(sed.stdout).unwrap();
    // The page's lines are in the model text, numbered from the offset.
    let text = ours.content[0].as_text().unwrap();
    let numbered: String = sed_text
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{}: {line}\n", OFFSET as usize + i))
        .collect();
    assert!(
        text.contains(&numbered),
        "tackle and sed must print the same lines"
    );

    let mut tackle_times = Vec::new();
    let mut sed_times = Vec::new();
    for _ in 0..ITERATIONS {
        let start = Instant::now();
        runtime.block_on(tool.run_unbounded(&call, &ctx)).unwrap();
        tackle_times.push(start.elapsed());
        let start = Instant::now();
        let status = Command::new("sed")
            .args(["-n", &sed_range])
            .arg(&file)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        sed_times.push(start.elapsed());
    }
    let tackle = median(&mut tackle_times);
    let sed = median(&mut sed_times);
    let ratio = tackle.as_secs_f64() / sed.as_secs_f64();
    let peak = child_peak_kib("--child-read", dir);
    let sed_peak = sed_peak_kib(&sed_range, &file);

    println!(
        "read offset={OFFSET} limit={LIMIT} in a {} MB, {LINES}-line file ({ITERATIONS} iterations, median)",
        LINES * LINE_BYTES / 1_000_000
    );
    println!(
        "  tackle read : {:>8.1} ms   peak RSS {:>6} KiB",
        ms(tackle),
        peak
    );
    match sed_peak {
        Some(kib) => println!(
            "  sed -n      : {:>8.1} ms   peak RSS {kib:>6} KiB",
            ms(sed)
        ),
        None => println!("  sed -n      : {:>8.1} ms", ms(sed)),
    }
    println!(
        "  ratio       : {ratio:.2}x (target <= {TARGET_RATIO}x): {}",
        verdict(ratio <= TARGET_RATIO)
    );
    println!(
        "  peak memory : {peak} KiB (target < {TARGET_PEAK_KIB} KiB): {}",
        verdict(peak < TARGET_PEAK_KIB)
    );
}

/// The 1 GB file: 10M lines of exactly 100 bytes, each starting with its own number.
fn ensure_file(path: &Path) {
    let size = LINES * LINE_BYTES;
    if std::fs::metadata(path).is_ok_and(|m| m.len() == size) {
        return;
    }
    eprintln!("generating {} ({size} bytes)...", path.display());
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let filler =
        "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididu";
    for n in 1..=LINES {
        // 10 digits + space + 88 bytes + newline = 100 bytes.
        writeln!(out, "{n:010} {filler:<88.88}").unwrap();
    }
    out.flush().unwrap();
    assert_eq!(std::fs::metadata(path).unwrap().len(), size);
}

/// The read tool for `dir` with every permission allowed, and the store's data directory.
fn read_tool(dir: &Path) -> (Tool, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let tool = common::builtin("read", dir, data.path());
    (tool, data)
}

/// In a fresh process: one read, then the process's RSS high-water mark (VmHWM) in KiB.
fn child_read(dir: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tool, _data) = read_tool(dir);
    let call = Call::new(
        "bench",
        "read",
        json!({"path": "lines-1g.txt", "offset": OFFSET, "limit": LIMIT}),
    );
    runtime
        .block_on(tool.run_unbounded(&call, &Context::new("bench")))
        .unwrap();
    print_peak_kib();
}

/// Prints this process's RSS high-water mark (VmHWM) in KiB: a child's last act.
pub(crate) fn print_peak_kib() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    println!("{}", line.split_whitespace().nth(1).unwrap());
}

/// Runs this bench again as `<flag> <dir>` and reads the peak the child prints.
pub(crate) fn child_peak_kib(flag: &str, dir: &Path) -> u64 {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe).arg(flag).arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// sed's peak RSS in KiB through GNU time, when it is installed.
fn sed_peak_kib(range: &str, file: &Path) -> Option<u64> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", "sed", "-n", range])
        .arg(file)
        .stdout(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8(out.stderr)
        .ok()?
        .trim()
        .lines()
        .last()?
        .parse()
        .ok()
}
