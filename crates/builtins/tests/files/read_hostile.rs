//! Hostile media never takes the host down: PDFs built to overflow the stack, exhaust memory or
//! run for minutes are refused quickly, in-process and in the worker; a worker that hangs, dies
//! or lies is a message the model reads.

use std::io::Write as _;
use std::time::{Duration, Instant};

use lopdf::{Dictionary, Document, Object, ObjectId, Stream, dictionary};
use serde_json::json;
use tackle_builtins::read::{MediaWorker, ReadOptions};
use tackle_tool_core::{Call, Halt, ToolError};

use super::read_media::{notebook, pdf, png};
use super::support::{Fixture, context};

/// Generous for a loaded two-core machine; the refusals take milliseconds.
const PROMPTLY: Duration = Duration::from_secs(10);

/// tackle-builtins' own media worker.
fn worker() -> MediaWorker {
    MediaWorker::new(env!("CARGO_BIN_EXE_tackle-media-worker"), [] as [&str; 0])
}

/// A fixture decoding in-process (`false`) or in the worker (`true`).
fn fixture(in_worker: bool) -> Fixture {
    let mut fx = Fixture::new();
    if in_worker {
        fx.services = fx.services.clone().with_media_worker(worker());
    }
    fx
}

/// A worker that is another program (`/bin/sh -c script`), with decoding given `timeout`.
fn fixture_with(script: &str, timeout: Duration) -> Fixture {
    let mut fx = Fixture::new();
    fx.services = fx
        .services
        .clone()
        .with_media_worker(MediaWorker::new("/bin/sh", ["-c", script]))
        .with_read(ReadOptions::new().with_decode_timeout(timeout));
    fx
}

/// A one-page PDF whose page draws `contents` (streams, each listed as often as given) with
/// `resources`; `build` adds the objects they refer to.
fn page_pdf(build: impl FnOnce(&mut Document) -> (Vec<ObjectId>, Dictionary)) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let (contents, resources) = build(&mut doc);
    let contents: Vec<Object> = contents.into_iter().map(Object::from).collect();
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
        "Resources" => resources,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// A form XObject with `content`, drawing `draws` (name → form) through its own resources.
fn form(content: &[u8], draws: &[(&str, ObjectId)]) -> Stream {
    let mut xobjects = Dictionary::new();
    for (name, id) in draws {
        xobjects.set(*name, *id);
    }
    Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 10.into(), 10.into()],
            "Resources" => dictionary! { "XObject" => xobjects },
        },
        content.to_vec(),
    )
}

/// The page draws the form `first` once.
fn drawing(doc: &mut Document, first: ObjectId) -> (Vec<ObjectId>, Dictionary) {
    let content = doc.add_object(Stream::new(dictionary! {}, b"/Fm Do".to_vec()));
    let resources = dictionary! { "XObject" => dictionary! { "Fm" => first } };
    (vec![content], resources)
}

/// A form that draws itself.
fn self_drawing() -> Vec<u8> {
    page_pdf(|doc| {
        let id = doc.new_object_id();
        doc.objects
            .insert(id, Object::Stream(form(b"/Fm Do", &[("Fm", id)])));
        drawing(doc, id)
    })
}

/// Two forms that draw each other.
fn drawing_each_other() -> Vec<u8> {
    page_pdf(|doc| {
        let (a, b) = (doc.new_object_id(), doc.new_object_id());
        doc.objects
            .insert(a, Object::Stream(form(b"/B Do", &[("B", b)])));
        doc.objects
            .insert(b, Object::Stream(form(b"/A Do", &[("A", a)])));
        drawing(doc, a)
    })
}

/// `levels` forms, each drawing the next `times` times; the last draws a line.
fn nested(levels: usize, times: usize) -> Vec<u8> {
    page_pdf(|doc| {
        let ids: Vec<ObjectId> = (0..levels).map(|_| doc.new_object_id()).collect();
        for (level, id) in ids.iter().enumerate() {
            let stream = match ids.get(level + 1) {
                Some(next) => form(&b"/N Do ".repeat(times), &[("N", *next)]),
                None => form(b"0 0 m 10 10 l S", &[]),
            };
            doc.objects.insert(*id, Object::Stream(stream));
        }
        drawing(doc, ids[0])
    })
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// A zlib stream of `mib` MiB of zeros, made without compressing them: one flushed deflate
/// block of a MiB of zeros repeated (a full flush leaves no reference across blocks).
fn zlib_zeros(mib: u32) -> Vec<u8> {
    let mut compress = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = Vec::with_capacity(64 * 1024);
    compress
        .compress_vec(&[0u8; 1 << 20], &mut block, flate2::FlushCompress::Full)
        .unwrap();
    let mut out = vec![0x78, 0xDA];
    for _ in 0..mib {
        out.extend_from_slice(&block);
    }
    // A final empty fixed block, then the Adler-32 of the zeros: a = 1, b = length mod 65521.
    out.extend_from_slice(&[0x03, 0x00]);
    let b = (u64::from(mib) << 20) % 65521;
    out.extend_from_slice(&(((b as u32) << 16) | 1).to_be_bytes());
    out
}

/// One 4 MiB content stream (blanks, kilobytes compressed) listed 2,000 times: 8 GiB to
/// decompress.
fn listed_over_and_over() -> Vec<u8> {
    page_pdf(|doc| {
        let stream = Stream::new(
            dictionary! { "Filter" => "FlateDecode" },
            zlib(&[b' '; 4 * 1024 * 1024]),
        );
        let id = doc.add_object(stream);
        (vec![id; 2000], Dictionary::new())
    })
}

/// A content stream of `mib` MiB of zeros, compressed once or (`twice`) twice.
fn bomb(mib: u32, twice: bool) -> Vec<u8> {
    page_pdf(|doc| {
        let once = zlib_zeros(mib);
        let stream = if twice {
            let filters = vec![Object::from("FlateDecode"), Object::from("FlateDecode")];
            Stream::new(dictionary! { "Filter" => filters }, zlib(&once))
        } else {
            Stream::new(dictionary! { "Filter" => "FlateDecode" }, once)
        };
        (vec![doc.add_object(stream)], Dictionary::new())
    })
}

/// The failure of reading `name` (holding `bytes`) with `fx`, checked to come promptly.
async fn refused(fx: &Fixture, name: &str, bytes: &[u8]) -> String {
    fx.put(name, bytes);
    let started = Instant::now();
    let message = fx.failure("read", json!({"path": name})).await;
    assert!(
        started.elapsed() < PROMPTLY,
        "{name} took {:?}",
        started.elapsed()
    );
    message
}

/// The failure of reading `name` in-process and in the worker, checked to be the same.
async fn refused_everywhere(name: &str, bytes: &[u8]) -> String {
    let here = refused(&fixture(false), name, bytes).await;
    let there = refused(&fixture(true), name, bytes).await;
    assert_eq!(here, there, "in-process and in the worker");
    here
}

#[tokio::test]
async fn a_pdf_that_draws_itself_is_refused() {
    let message = refused_everywhere("self.pdf", &self_drawing()).await;
    insta::assert_snapshot!(message, @"PDF could not be read: self.pdf (a form on page 1 draws itself)");
    let message = refused_everywhere("pair.pdf", &drawing_each_other()).await;
    insta::assert_snapshot!(message, @"PDF could not be read: pair.pdf (a form on page 1 draws itself)");
}

#[tokio::test]
async fn forms_nested_too_deep_are_refused() {
    let message = refused_everywhere("deep.pdf", &nested(20, 1)).await;
    insta::assert_snapshot!(message, @"PDF could not be read: deep.pdf (the forms on page 1 nest more than 12 deep)");
}

#[tokio::test]
async fn a_billion_laughs_pdf_is_refused() {
    let laughs = nested(9, 10);
    assert!(laughs.len() < 4096, "{} bytes", laughs.len());
    let message = refused_everywhere("laughs.pdf", &laughs).await;
    insta::assert_snapshot!(message, @"PDF could not be read: laughs.pdf (page 1 would take more than 2000000 drawing operations)");
}

#[tokio::test]
async fn a_stream_listed_thousands_of_times_is_refused() {
    let listed = listed_over_and_over();
    assert!(listed.len() < 64 * 1024, "{} bytes", listed.len());
    let message = refused_everywhere("listed.pdf", &listed).await;
    insta::assert_snapshot!(message, @"PDF could not be read: listed.pdf (page 1 would decompress to more than 64.0 MiB)");
}

#[tokio::test]
async fn decompression_bombs_are_refused() {
    // 4 GiB behind two inflations, and 1 GiB behind one.
    let twice = bomb(4096, true);
    let once = bomb(1024, false);
    assert!(twice.len() < 64 * 1024, "{} bytes", twice.len());
    let message = refused_everywhere("twice.pdf", &twice).await;
    insta::assert_snapshot!(message, @"PDF could not be read: twice.pdf (page 1 would decompress to more than 64.0 MiB)");
    let message = refused_everywhere("once.pdf", &once).await;
    insta::assert_snapshot!(message, @"PDF could not be read: once.pdf (page 1 would decompress to more than 64.0 MiB)");
}

/// A page whose font's ToUnicode map inflates to `mib` MiB of zeros.
fn font_bomb(mib: u32) -> Vec<u8> {
    page_pdf(|doc| {
        let map = doc.add_object(Stream::new(
            dictionary! { "Filter" => "FlateDecode" },
            zlib_zeros(mib),
        ));
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
            "ToUnicode" => map,
        });
        let content = doc.add_object(Stream::new(
            dictionary! {},
            b"BT /F1 12 Tf 72 720 Td (a) Tj ET".to_vec(),
        ));
        let resources = dictionary! { "Font" => dictionary! { "F1" => font } };
        (vec![content], resources)
    })
}

#[tokio::test]
async fn a_font_that_inflates_past_the_cap_is_refused() {
    let message = refused_everywhere("font.pdf", &font_bomb(1024)).await;
    insta::assert_snapshot!(message, @"PDF could not be read: font.pdf (the fonts and colour spaces of page 1 would decompress to more than 128.0 MiB)");
}

#[tokio::test]
async fn a_refused_page_after_readable_ones_ends_the_page_before_it() {
    // Page 1 reads; page 2 draws itself: page 1 is shown and the next read names page 2.
    let mut doc = Document::load_mem(&pdf(&[&["Readable"]], None)).unwrap();
    let hostile = Document::load_mem(&self_drawing()).unwrap();
    let max = doc.max_id;
    let mut renumbered = hostile;
    renumbered.renumber_objects_with(max + 1);
    let hostile_page = *renumbered.get_pages().values().next().unwrap();
    let pages_id = doc
        .catalog()
        .unwrap()
        .get(b"Pages")
        .unwrap()
        .as_reference()
        .unwrap();
    for (id, object) in renumbered.objects {
        doc.objects.insert(id, object);
    }
    doc.get_object_mut(hostile_page)
        .unwrap()
        .as_dict_mut()
        .unwrap()
        .set("Parent", pages_id);
    let pages = doc.get_object_mut(pages_id).unwrap().as_dict_mut().unwrap();
    pages
        .get_mut(b"Kids")
        .unwrap()
        .as_array_mut()
        .unwrap()
        .push(hostile_page.into());
    pages.set("Count", 2);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let fx = fixture(true);
    fx.put("mixed.pdf", &bytes);
    let text = fx.text("read", json!({"path": "mixed.pdf"})).await;
    assert!(
        text.contains("Readable") && text.contains("Use offset=2 to continue"),
        "{text}"
    );
    let message = fx
        .failure("read", json!({"path": "mixed.pdf", "offset": 2}))
        .await;
    insta::assert_snapshot!(message, @"PDF could not be read: mixed.pdf (a form on page 2 draws itself)");
}

#[tokio::test]
async fn the_worker_reads_what_the_process_reads() {
    let report = pdf(
        &[
            &["Quarterly report", "Revenue grew by 12 percent."],
            &["Second page", "Costs were flat."],
            &["Third page"],
        ],
        None,
    );
    let files = [
        ("report.pdf", report),
        ("large.png", png(2400, 1200)),
        ("small.png", png(64, 48)),
        ("analysis.ipynb", serde_json::to_vec(&notebook()).unwrap()),
    ];
    let here = fixture(false);
    let there = fixture(true);
    for (name, bytes) in &files {
        here.put(name, bytes);
        there.put(name, bytes);
        let expected = here.call("read", json!({"path": name})).await.unwrap();
        let actual = there.call("read", json!({"path": name})).await.unwrap();
        assert_eq!(actual.content, expected.content, "{name}");
        assert_eq!(actual.structured, expected.structured, "{name}");
    }
}

#[tokio::test]
async fn a_worker_past_the_deadline_is_killed_and_reported() {
    let fx = fixture_with("exec sleep 30", Duration::from_millis(300));
    fx.put("slow.pdf", pdf(&[&["Slow"]], None));
    let started = Instant::now();
    let message = fx.failure("read", json!({"path": "slow.pdf"})).await;
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    insta::assert_snapshot!(message, @"PDF could not be read: slow.pdf (reading it took longer than the 0.3 s read allows)");
}

#[tokio::test]
async fn a_cancelled_read_kills_its_worker() {
    let fx = fixture_with("exec sleep 30", Duration::from_secs(60));
    fx.put("slow.png", png(8, 8));
    let ctx = context();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let call = Call::new("call_1", "read", json!({"path": "slow.png"}));
    let result = fx.tool("read").run_unbounded(&call, &ctx).await;
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Cancelled))),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_worker_that_dies_or_lies_is_reported() {
    let cases = [
        ("kill -SEGV $$", "crashed.pdf"),
        ("kill -KILL $$", "killed.png"),
        ("cat >/dev/null; echo nonsense", "garbage.ipynb"),
        ("cat >/dev/null; exit 7", "failed.pdf"),
        // A reply without end is cut at the cap, never read whole.
        ("cat >/dev/null; exec cat /dev/zero", "endless.png"),
    ];
    let mut messages = Vec::new();
    for (script, name) in cases {
        let fx = fixture_with(script, Duration::from_secs(30));
        let bytes = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("pdf") => pdf(&[&["Text"]], None),
            Some("png") => png(8, 8),
            _ => serde_json::to_vec(&notebook()).unwrap(),
        };
        messages.push(refused(&fx, name, &bytes).await);
    }
    insta::assert_snapshot!(messages.join("\n"));
}

#[tokio::test]
async fn a_worker_that_cannot_start_is_reported() {
    let mut fx = Fixture::new();
    fx.services = fx
        .services
        .clone()
        .with_media_worker(MediaWorker::new(fx.path("no-such-worker"), [] as [&str; 0]));
    let message = refused(&fx, "a.png", &png(8, 8)).await;
    assert!(
        message
            .starts_with("Image could not be decoded: a.png (the decoder could not be started: "),
        "{message}"
    );
    // Never looked up in `PATH`.
    fx.services = fx
        .services
        .clone()
        .with_media_worker(MediaWorker::new("sh", ["-c", "exit 0"]));
    let message = refused(&fx, "b.png", &png(8, 8)).await;
    insta::assert_snapshot!(message, @"Image could not be decoded: b.png (the decoder could not be started: its path sh is not absolute)");
}
