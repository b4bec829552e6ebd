//! The image half of `cargo xtask bench read`: `read` of a 6000×4000 JPEG photo, which it
//! decodes, resizes to its default 2000×2000 bound and re-encodes, against ImageMagick's
//! `convert -resize 2000x2000` (or `magick`) doing the same to the same file, in the same run.
//!
//! Target: tackle at most 1.0x ImageMagick's median time; peak memory (RSS high-water mark of a
//! process doing just that read) reported beside ImageMagick's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use image::codecs::jpeg::JpegEncoder;
use image::{Rgb, RgbImage};
use serde_json::json;
use tackle_tool_core::{Call, Context};

use super::common::{self, median, ms, verdict};

const WIDTH: u32 = 6000;
const HEIGHT: u32 = 4000;
const ITERATIONS: usize = 5;
const TARGET_RATIO: f64 = 1.0;
const FILE: &str = "photo-6000x4000.jpg";

pub(crate) fn run(dir: &Path) {
    let file = dir.join(FILE);
    ensure_photo(&file);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let data = tempfile::tempdir().unwrap();
    let tool = common::builtin("read", dir, data.path());
    let ctx = Context::new("bench");
    let call = Call::new("bench", "read", json!({"path": FILE}));

    let first = runtime.block_on(tool.run_unbounded(&call, &ctx)).unwrap();
    assert_eq!(first.structured["width"], 2000, "{}", first.structured);
    assert_eq!(first.structured["height"], 1333, "{}", first.structured);

    let peer = imagemagick();
    let out = tempfile::tempdir().unwrap();
    let resized = out.path().join("resized.jpg");
    let mut tackle_times = Vec::new();
    let mut peer_times = Vec::new();
    for _ in 0..ITERATIONS {
        let start = Instant::now();
        runtime.block_on(tool.run_unbounded(&call, &ctx)).unwrap();
        tackle_times.push(start.elapsed());
        if let Some(peer) = &peer {
            let start = Instant::now();
            let status = peer.command(&file, &resized).status().unwrap();
            assert!(status.success(), "{} failed", peer.name);
            peer_times.push(start.elapsed());
        }
    }
    let tackle = median(&mut tackle_times);
    let peak = super::child_peak_kib("--child-image", dir);
    println!(
        "read of a {WIDTH}x{HEIGHT} JPEG, resized to 2000x1333 ({ITERATIONS} iterations, median)"
    );
    println!(
        "  tackle read : {:>8.1} ms   peak RSS {peak:>7} KiB",
        ms(tackle)
    );
    let Some(peer) = peer else {
        println!(
            "  ImageMagick : not found (a `convert` that is not ImageMagick does not count). \
             Put `magick` (the portable AppImage from https://imagemagick.org) in {0} or on \
             the PATH, or unpack Debian's packages without installing them: `apt-get download \
             imagemagick-6.q16 libmagickcore-6.q16-6 libmagickwand-6.q16-6` and `dpkg -x` each \
             into {0}/imagemagick/root, with a `{0}/imagemagick/convert` script that sets \
             LD_LIBRARY_PATH and MAGICK_CONFIGURE_PATH/MAGICK_CODER_MODULE_PATH and runs \
             root/usr/bin/convert-im6.q16. Nothing is installed by the bench.",
            common::peers_dir().display()
        );
        return;
    };
    let peer_time = median(&mut peer_times);
    let ratio = tackle.as_secs_f64() / peer_time.as_secs_f64();
    match peer.peak_kib(&file, &resized) {
        Some(kib) => println!(
            "  {:<11} : {:>8.1} ms   peak RSS {kib:>7} KiB",
            peer.name,
            ms(peer_time)
        ),
        None => println!("  {:<11} : {:>8.1} ms", peer.name, ms(peer_time)),
    }
    println!(
        "  ratio       : {ratio:.2}x (target <= {TARGET_RATIO}x): {}",
        verdict(ratio <= TARGET_RATIO)
    );
}

/// In a fresh process: one read of the photo, then the process's RSS high-water mark in KiB.
pub(crate) fn child_read(dir: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let tool = common::builtin("read", dir, data.path());
    let call = Call::new("bench", "read", json!({"path": FILE}));
    runtime
        .block_on(tool.run_unbounded(&call, &Context::new("bench")))
        .unwrap();
    super::print_peak_kib();
}

/// A photo-like JPEG (gradients and fine noise, quality 90), generated once and reused.
fn ensure_photo(path: &Path) {
    if path.is_file() {
        return;
    }
    eprintln!("generating {}...", path.display());
    let mut seed = 0x9e37_79b9_u32;
    let image = RgbImage::from_fn(WIDTH, HEIGHT, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = (seed % 16) as u8;
        Rgb([
            ((x * 200 / WIDTH) as u8).saturating_add(noise),
            ((y * 200 / HEIGHT) as u8).saturating_add(noise),
            (((x + y) * 100 / (WIDTH + HEIGHT)) as u8).saturating_add(noise),
        ])
    });
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&image)
        .unwrap();
    std::fs::write(path, out).unwrap();
}

/// ImageMagick, found as `magick` or `convert` in the peers directory or on the PATH (a
/// program of that name that is not ImageMagick does not count).
struct Peer {
    name: &'static str,
    program: PathBuf,
}

impl Peer {
    fn command(&self, input: &Path, output: &Path) -> Command {
        let mut command = Command::new(&self.program);
        command
            .arg(input)
            .args(["-resize", "2000x2000", "-quality", "80"])
            .arg(output)
            .stdout(Stdio::null());
        command
    }

    /// The peer's peak RSS in KiB through GNU time, when it is installed.
    fn peak_kib(&self, input: &Path, output: &Path) -> Option<u64> {
        let inner = self.command(input, output);
        let out = Command::new("/usr/bin/time")
            .args(["-f", "%M"])
            .arg(inner.get_program())
            .args(inner.get_args())
            .stdout(Stdio::null())
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
}

fn imagemagick() -> Option<Peer> {
    let peers = common::peers_dir();
    let candidates = [
        ("magick", peers.join("magick")),
        ("convert", peers.join("imagemagick/convert")),
    ];
    let found = candidates.into_iter().filter(|(_, path)| path.is_file());
    let on_path = ["magick", "convert"]
        .into_iter()
        .filter_map(|name| common::on_path(name).map(|path| (name, path)));
    found.chain(on_path).find_map(|(name, program)| {
        let version = Command::new(&program).arg("-version").output().ok()?;
        String::from_utf8_lossy(&version.stdout)
            .contains("ImageMagick")
            .then_some(Peer { name, program })
    })
}
