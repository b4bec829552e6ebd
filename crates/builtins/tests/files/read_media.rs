//! read's images, PDFs and notebooks (the `media` feature), on real files made here.

use std::io::Cursor;
use std::num::NonZeroU32;

use base64::Engine as _;
use image::codecs::gif::GifEncoder;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::webp::WebPEncoder;
use image::{DynamicImage, Frame, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};
use serde_json::{Value, json};
use tackle_builtins::read::{ImageBound, ReadOptions};
use tackle_tool_core::{OutputContent, ToolOutput};

use super::support::{Fixture, text_of};

/// A screenshot-like picture: flat colours, sharp edges.
fn flat(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        if (x / 50 + y / 50) % 2 == 0 {
            Rgb([20, 90, 200])
        } else {
            Rgb([250, 250, 250])
        }
    })
}

/// A photo-like picture: smooth gradients with fine noise (which PNG compresses badly).
fn photo(width: u32, height: u32) -> RgbImage {
    let mut seed = 0x2545_f491_u32;
    RgbImage::from_fn(width, height, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = (seed % 24) as u8;
        Rgb([
            ((x * 255 / width) as u8).saturating_add(noise),
            ((y * 255 / height) as u8).saturating_add(noise),
            (((x + y) * 127 / (width + height)) as u8).saturating_add(noise),
        ])
    })
}

/// A screenshot-like PNG of `width` × `height` pixels.
pub(super) fn png(width: u32, height: u32) -> Vec<u8> {
    encoded(
        &DynamicImage::ImageRgb8(flat(width, height)),
        ImageFormat::Png,
    )
}

fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

fn jpeg(image: &RgbImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(image)
        .unwrap();
    out
}

/// The attached file of an image read: its media type and decoded size.
fn attached(output: &ToolOutput) -> (String, u32, u32) {
    let [
        OutputContent::Text { .. },
        OutputContent::File { uri, mime, .. },
    ] = output.content.as_slice()
    else {
        panic!("expected a text and a file: {:?}", output.content);
    };
    let data = uri.split_once(";base64,").unwrap().1;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    (mime.clone(), image.width(), image.height())
}

fn first_text(output: &ToolOutput) -> &str {
    output.content[0].as_text().unwrap()
}

#[tokio::test]
async fn an_image_within_the_bound_is_sent_as_it_is() {
    let fx = Fixture::new();
    let png = encoded(&DynamicImage::ImageRgb8(flat(64, 48)), ImageFormat::Png);
    fx.put("small.png", &png);
    fx.put("small.bin", &png);
    for name in ["small.png", "small.bin"] {
        let output = fx.call("read", json!({"path": name})).await.unwrap();
        assert_eq!(first_text(&output), "Image read successfully");
        assert_eq!(attached(&output), ("image/png".to_owned(), 64, 48));
        assert_eq!(
            output.structured,
            json!({"type": "image", "path": name, "mime": "image/png", "bytes": png.len(),
                   "width": 64, "height": 48, "attached": true})
        );
    }
    let webp = {
        let mut out = Vec::new();
        WebPEncoder::new_lossless(&mut out)
            .encode(
                flat(40, 30).as_raw(),
                40,
                30,
                image::ExtendedColorType::Rgb8,
            )
            .unwrap();
        out
    };
    fx.put("small.webp", &webp);
    let output = fx
        .call("read", json!({"path": "small.webp"}))
        .await
        .unwrap();
    assert_eq!(first_text(&output), "Image read successfully");
    assert_eq!(attached(&output), ("image/webp".to_owned(), 40, 30));
}

#[tokio::test]
async fn a_large_screenshot_is_resized_and_stays_png() {
    let fx = Fixture::new();
    fx.put(
        "wide.png",
        encoded(&DynamicImage::ImageRgb8(flat(2400, 800)), ImageFormat::Png),
    );
    let output = fx.call("read", json!({"path": "wide.png"})).await.unwrap();
    assert_eq!(attached(&output), ("image/png".to_owned(), 2000, 667));
    insta::assert_snapshot!(first_text(&output));
}

#[tokio::test]
async fn a_large_photo_is_resized_as_jpeg() {
    let fx = Fixture::new();
    fx.put("photo.jpg", jpeg(&photo(2200, 1760), 90));
    let output = fx.call("read", json!({"path": "photo.jpg"})).await.unwrap();
    assert_eq!(attached(&output), ("image/jpeg".to_owned(), 2000, 1600));
    let text = first_text(&output);
    assert!(
        text.starts_with(
            "Image read successfully; resized to fit 2000x2000 px and 5.0 MiB. Original: \
             2200x1760 px, JPEG, "
        ),
        "{text}"
    );
    assert_eq!(output.structured["original"]["width"], 2200);
    assert_eq!(output.structured["width"], 2000);
    // A photo saved as PNG is sent as the much smaller JPEG once it must be re-encoded.
    fx.put(
        "photo.png",
        encoded(&DynamicImage::ImageRgb8(photo(2100, 500)), ImageFormat::Png),
    );
    let output = fx.call("read", json!({"path": "photo.png"})).await.unwrap();
    assert_eq!(attached(&output).0, "image/jpeg");
}

#[tokio::test]
async fn an_image_over_the_byte_bound_is_made_smaller() {
    let mut fx = Fixture::new();
    let side = NonZeroU32::new(4000).unwrap();
    fx.services = fx
        .services
        .clone()
        .with_read(ReadOptions::new().with_image_bound(ImageBound::new(side, side, 64 * 1024)));
    let png = encoded(&DynamicImage::ImageRgb8(photo(600, 400)), ImageFormat::Png);
    assert!(png.len() > 64 * 1024);
    fx.put("noisy.png", &png);
    let output = fx.call("read", json!({"path": "noisy.png"})).await.unwrap();
    let bytes = output.structured["bytes"].as_u64().unwrap();
    assert!(bytes <= 64 * 1024, "{bytes}");
    let (mime, width, height) = attached(&output);
    assert_eq!(mime, "image/jpeg");
    assert_eq!(width * 2, height * 3, "the aspect ratio is kept");
}

#[tokio::test]
async fn an_undecodable_image_is_an_error_the_model_reads() {
    let fx = Fixture::new();
    let png = encoded(&DynamicImage::ImageRgb8(flat(200, 200)), ImageFormat::Png);
    fx.put("truncated.png", &png[..png.len() / 2]);
    insta::assert_snapshot!(fx.failure("read", json!({"path": "truncated.png"})).await);
    // Cut inside its header.
    fx.put("header.png", &png[..20]);
    insta::assert_snapshot!(fx.failure("read", json!({"path": "header.png"})).await);
}

/// A PNG whose header claims `width` × `height` RGB pixels, with one empty data chunk.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for byte in bytes {
            crc ^= u32::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
        out
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    png.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    png.extend(chunk(b"IEND", &[]));
    png
}

#[tokio::test]
async fn an_image_claiming_a_huge_size_is_refused_before_it_is_decoded() {
    let fx = Fixture::new();
    // 100000 x 100000 RGB is 30 GB decoded, from a file of 70 bytes.
    fx.put("bomb.png", png_claiming(100_000, 100_000));
    insta::assert_snapshot!(fx.failure("read", json!({"path": "bomb.png"})).await);
}

/// The EXIF block of a JPEG whose orientation tag says "turn 90° clockwise to view" (6).
fn exif_rotate_90() -> Vec<u8> {
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend_from_slice(&[0, 1]); // one entry
    tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]); // Orientation = 6
    tiff.extend_from_slice(&[0, 0, 0, 0]); // no next IFD
    let mut body = b"Exif\0\0".to_vec();
    body.extend_from_slice(&tiff);
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
    segment.extend_from_slice(&body);
    segment
}

#[tokio::test]
async fn exif_orientation_is_applied() {
    let fx = Fixture::new();
    let plain = jpeg(&flat(300, 100), 90);
    let mut turned = plain[..2].to_vec();
    turned.extend_from_slice(&exif_rotate_90());
    turned.extend_from_slice(&plain[2..]);
    fx.put("turned.jpg", &turned);
    let output = fx
        .call("read", json!({"path": "turned.jpg"}))
        .await
        .unwrap();
    assert_eq!(attached(&output), ("image/jpeg".to_owned(), 100, 300));
    insta::assert_snapshot!(first_text(&output));
}

#[tokio::test]
async fn an_animated_gif_sends_its_first_frame() {
    let fx = Fixture::new();
    let mut gif = Vec::new();
    {
        let frames = [Rgba([255, 0, 0, 255]), Rgba([0, 0, 255, 255])]
            .map(|colour| Frame::new(RgbaImage::from_pixel(30, 20, colour)));
        GifEncoder::new(&mut gif).encode_frames(frames).unwrap();
    }
    fx.put("spin.gif", &gif);
    let output = fx.call("read", json!({"path": "spin.gif"})).await.unwrap();
    assert_eq!(attached(&output), ("image/png".to_owned(), 30, 20));
    assert_eq!(output.structured["firstFrameOnly"], true);
    insta::assert_snapshot!(first_text(&output));
}

#[tokio::test]
async fn formats_models_do_not_take_are_converted() {
    let fx = Fixture::new();
    let image = DynamicImage::ImageRgb8(flat(50, 40));
    fx.put("old.bmp", encoded(&image, ImageFormat::Bmp));
    fx.put("scan.tiff", encoded(&image, ImageFormat::Tiff));
    for name in ["old.bmp", "scan.tiff"] {
        let output = fx.call("read", json!({"path": name})).await.unwrap();
        assert_eq!(
            attached(&output),
            ("image/png".to_owned(), 50, 40),
            "{name}"
        );
    }
    let output = fx.call("read", json!({"path": "old.bmp"})).await.unwrap();
    insta::assert_snapshot!(first_text(&output));
}

#[tokio::test]
async fn svg_is_text() {
    let fx = Fixture::new();
    fx.put(
        "logo.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>\n",
    );
    let output = fx.call("read", json!({"path": "logo.svg"})).await.unwrap();
    assert_eq!(output.structured["type"], "text-page");
    assert!(text_of(&output).contains("1: <svg"));
}

#[tokio::test]
async fn a_model_without_image_input_reads_a_note() {
    let mut fx = Fixture::new();
    fx.services = fx
        .services
        .clone()
        .with_read(ReadOptions::new().without_image_input());
    fx.put("photo.jpg", jpeg(&photo(640, 480), 80));
    let output = fx.call("read", json!({"path": "photo.jpg"})).await.unwrap();
    let text = text_of(&output);
    assert!(
        text.starts_with(
            "Image not shown: images cannot be sent to this model. photo.jpg is a JPEG image \
             of 640x480 px ("
        ),
        "{text}"
    );
    assert_eq!(output.structured["attached"], false);
}

#[tokio::test]
async fn images_over_the_ingest_limit_are_refused() {
    let fx = Fixture::new();
    let mut big = encoded(&DynamicImage::ImageRgb8(flat(8, 8)), ImageFormat::Png);
    big.resize(21 * 1024 * 1024, 0);
    fx.put("huge.png", &big);
    insta::assert_snapshot!(fx.failure("read", json!({"path": "huge.png"})).await, @"Media exceeds 20971520 byte ingestion limit: huge.png");
    // A notebook too large to render is still text: its JSON, paged.
    let mut notebook = serde_json::to_vec_pretty(&notebook()).unwrap();
    notebook.truncate(notebook.len() - 1);
    notebook.extend_from_slice(b", \"padding\": \"");
    notebook.resize(21 * 1024 * 1024, b'x');
    notebook.extend_from_slice(b"\"}\n");
    fx.put("huge.ipynb", &notebook);
    let output = fx
        .call("read", json!({"path": "huge.ipynb", "limit": 3}))
        .await
        .unwrap();
    assert_eq!(output.structured["type"], "text-page");
    assert!(
        text_of(&output).contains("\"nbformat\": 4"),
        "{}",
        text_of(&output)
    );
}

#[tokio::test]
async fn a_notebook_with_a_byte_order_mark_is_read() {
    let fx = Fixture::new();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(serde_json::to_vec(&notebook()).unwrap());
    fx.put("bom.ipynb", &bytes);
    let output = fx
        .call("read", json!({"path": "bom.ipynb", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(output.structured["type"], "notebook");
}

/// A PDF of `pages` (each a list of lines; an empty list is a page without text) written by
/// a PDF library, optionally encrypted with the user password `password`.
pub(super) fn pdf(pages: &[&[&str]], password: Option<&str>) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids: Vec<Object> = Vec::new();
    for lines in pages {
        let mut operations = Vec::new();
        if !lines.is_empty() {
            operations.push(Operation::new("BT", vec![]));
            operations.push(Operation::new("Tf", vec!["F1".into(), 12.into()]));
            operations.push(Operation::new("TL", vec![16.into()]));
            operations.push(Operation::new("Td", vec![72.into(), 720.into()]));
            for line in *lines {
                operations.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
                operations.push(Operation::new("T*", vec![]));
            }
            operations.push(Operation::new("ET", vec![]));
        } else {
            // A drawn rectangle: what a scanned page has instead of text, near enough.
            operations.push(Operation::new(
                "re",
                vec![72.into(), 72.into(), 400.into(), 600.into()],
            ));
            operations.push(Operation::new("f", vec![]));
        }
        let content = Content { operations };
        let stream = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => stream,
        });
        kids.push(page.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    if let Some(password) = password {
        let id = Object::string_literal(b"0123456789abcdef".to_vec());
        doc.trailer.set("ID", vec![id.clone(), id]);
        let state = lopdf::EncryptionState::try_from(lopdf::EncryptionVersion::V2 {
            document: &doc,
            owner_password: "owner",
            user_password: password,
            key_length: 128,
            permissions: lopdf::Permissions::all(),
        })
        .unwrap();
        doc.encrypt(&state).unwrap();
    }
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[tokio::test]
async fn a_pdf_is_read_as_text_by_pages() {
    let fx = Fixture::new();
    fx.put(
        "report.pdf",
        pdf(
            &[
                &["Quarterly report", "Revenue grew by 12 percent."],
                &["Second page", "Costs were flat."],
                &["Third page"],
            ],
            None,
        ),
    );
    let output = fx
        .call("read", json!({"path": "report.pdf"}))
        .await
        .unwrap();
    insta::assert_snapshot!(text_of(&output));
    let output = fx
        .call(
            "read",
            json!({"path": "report.pdf", "offset": 2, "limit": 1}),
        )
        .await
        .unwrap();
    insta::assert_snapshot!(text_of(&output));
    assert_eq!(
        output.structured,
        json!({"type": "pdf", "path": "report.pdf", "offset": 2, "pages": 1, "totalPages": 3,
               "truncated": true, "next": 3, "hasText": true, "attached": false})
    );
    insta::assert_snapshot!(
        fx.failure("read", json!({"path": "report.pdf", "offset": 4}))
            .await
    );
}

#[tokio::test]
async fn a_pdf_is_attached_when_the_host_asks() {
    let mut fx = Fixture::new();
    fx.services = fx
        .services
        .clone()
        .with_read(ReadOptions::new().with_pdf_attachment());
    let bytes = pdf(&[&["Attached"]], None);
    fx.put("doc.pdf", &bytes);
    let output = fx.call("read", json!({"path": "doc.pdf"})).await.unwrap();
    assert!(first_text(&output).contains("Attached"));
    assert!(
        matches!(&output.content[1], OutputContent::File { mime, .. } if mime == "application/pdf")
    );
    assert_eq!(output.structured["attached"], true);
}

#[tokio::test]
async fn image_only_encrypted_and_broken_pdfs_say_so() {
    let fx = Fixture::new();
    fx.put("scan.pdf", pdf(&[&[], &[]], None));
    insta::assert_snapshot!(fx.text("read", json!({"path": "scan.pdf"})).await);
    fx.put("locked.pdf", pdf(&[&["Secret"]], Some("hunter2")));
    insta::assert_snapshot!(fx.failure("read", json!({"path": "locked.pdf"})).await);
    fx.put(
        "broken.pdf",
        b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\nthis is not a PDF body\n",
    );
    insta::assert_snapshot!(fx.failure("read", json!({"path": "broken.pdf"})).await);
}

pub(super) fn notebook() -> Value {
    let png = encoded(&DynamicImage::ImageRgb8(flat(120, 80)), ImageFormat::Png);
    let png = base64::engine::general_purpose::STANDARD.encode(png);
    json!({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {},
             "source": ["# Analysis\n", "Loads the data."]},
            {"cell_type": "code", "id": "load", "metadata": {}, "execution_count": 1,
             "source": ["import pandas as pd\n", "print(\"rows: 3\")\n", "df = pd.DataFrame()\n", "df"],
             "outputs": [
                 {"output_type": "stream", "name": "stdout", "text": ["rows: 3\n"]},
                 {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                  "data": {"text/plain": ["Empty DataFrame\n", "Columns: []"],
                           "text/html": "<table></table>"}}
             ]},
            {"cell_type": "code", "id": "plot", "metadata": {}, "execution_count": 2,
             "source": "plot(df)",
             "outputs": [
                 {"output_type": "display_data", "metadata": {},
                  "data": {"image/png": png, "text/plain": "<Figure size 120x80>"}}
             ]},
            {"cell_type": "code", "id": "fail", "metadata": {}, "execution_count": 3,
             "source": "1 / 0",
             "outputs": [
                 {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                  "traceback": ["\u{1b}[0;31mZeroDivisionError\u{1b}[0m: division by zero"]}
             ]},
            {"cell_type": "raw", "metadata": {}, "source": ""}
        ]
    })
}

#[tokio::test]
async fn a_notebook_shows_numbered_cells_with_outputs() {
    let fx = Fixture::new();
    fx.put(
        "analysis.ipynb",
        serde_json::to_vec_pretty(&notebook()).unwrap(),
    );
    let output = fx
        .call("read", json!({"path": "analysis.ipynb"}))
        .await
        .unwrap();
    assert_eq!(output.content.len(), 2, "the text and the plot");
    assert_eq!(attached(&output), ("image/png".to_owned(), 120, 80));
    insta::assert_snapshot!(first_text(&output));
    let output = fx
        .call(
            "read",
            json!({"path": "analysis.ipynb", "offset": 4, "limit": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        output.structured,
        json!({"type": "notebook", "path": "analysis.ipynb", "offset": 4, "cells": 1,
               "totalCells": 5, "truncated": true, "next": 5, "images": 0})
    );
}

#[tokio::test]
async fn a_notebook_without_image_input_names_its_images() {
    let mut fx = Fixture::new();
    fx.services = fx
        .services
        .clone()
        .with_read(ReadOptions::new().without_image_input());
    fx.put("analysis.ipynb", serde_json::to_vec(&notebook()).unwrap());
    let text = fx
        .text(
            "read",
            json!({"path": "analysis.ipynb", "offset": 3, "limit": 1}),
        )
        .await;
    assert!(
        text.contains("Output [image/png]: a 120x80 px PNG image, not shown: images cannot be sent to this model"),
        "{text}"
    );
}

#[tokio::test]
async fn a_malformed_notebook_names_the_problem() {
    let fx = Fixture::new();
    fx.put(
        "bad.ipynb",
        r#"{"cells": [{"cell_type": "code", "source": "x"}, {"cell_type": "code", "source": 7}]}"#,
    );
    insta::assert_snapshot!(fx.failure("read", json!({"path": "bad.ipynb"})).await);
    fx.put("cut.ipynb", r#"{"cells": [{"cell_type": "#);
    insta::assert_snapshot!(fx.failure("read", json!({"path": "cut.ipynb"})).await);
}
