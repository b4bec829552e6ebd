//! Images: decoded before anything is sent, turned upright, and kept within the host's bound.
//!
//! One undecodable image in a request can make a provider refuse the whole conversation, so
//! nothing is attached that did not decode here first.

use std::io::Cursor;

use fast_image_resize as fr;
use image::codecs::gif::GifDecoder;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::metadata::Orientation;
use image::{AnimationDecoder, DynamicImage, ImageDecoder, ImageFormat, ImageReader};
use serde::{Deserialize, Serialize};
use tackle_tool_core::{Content, Rendered, ToolError};

use super::super::{ImageOutput, ImageSize, ReadOutput};
use super::{ImageBound, size_text};

/// The most memory an image may take decoded (a 100-megapixel RGBA photo fits); past it the
/// image is refused as undecodable rather than risking the host's memory.
const MAX_DECODED_BYTES: u64 = 512 * 1024 * 1024;
/// Sizes tried before giving up: each 3/4 of the one before (32 steps reach a pixel from any
/// size the decoder accepts).
const MAX_ATTEMPTS: usize = 32;
/// JPEG qualities tried at each size, best first.
const JPEG_QUALITIES: [u8; 4] = [80, 70, 55, 40];
/// A PNG is sent as JPEG only when the JPEG is at most a quarter of its size: a photo, not a
/// screenshot or diagram (whose sharp edges JPEG would blur).
const JPEG_MUCH_SMALLER: usize = 4;

/// An image as it will be sent.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Prepared {
    /// The file as it is.
    pub(crate) original: ImageSize,
    /// The media type, bytes and size sent.
    pub(crate) sent: ImageSize,
    #[serde(with = "super::job::base64_bytes")]
    pub(crate) data: Vec<u8>,
    /// What was done to it, for the model (empty: sent as it is).
    pub(crate) changes: Vec<String>,
    /// Only the first frame of an animation is sent.
    pub(crate) first_frame_only: bool,
}

/// Decodes `data` and makes it fit `bound`; the error is why it could not be decoded.
pub(crate) fn prepare(data: &[u8], bound: &ImageBound) -> Result<Prepared, String> {
    let reader = ImageReader::new(Cursor::new(data))
        .with_guessed_format()
        .map_err(|err| err.to_string())?;
    let format = reader
        .format()
        .ok_or_else(|| "not an image format read knows".to_owned())?;
    let mut decoder = reader.into_decoder().map_err(|err| err.to_string())?;
    // The decoder allocates what the header claims: a 70-byte file may claim 30 GB. Its limits
    // are not applied on this path, so the claim is checked here, before any allocation.
    let claimed = decoder.total_bytes();
    if claimed > MAX_DECODED_BYTES {
        let (width, height) = decoder.dimensions();
        return Err(format!(
            "{width}x{height} px would take {} to decode, more than the {} read allows",
            size_text(claimed),
            size_text(MAX_DECODED_BYTES)
        ));
    }
    // A broken EXIF block does not make the pixels unreadable: they are sent as stored.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let image = DynamicImage::from_decoder(decoder).map_err(|err| err.to_string())?;
    let turned = matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    );
    let (width, height) = if turned {
        (image.height(), image.width())
    } else {
        (image.width(), image.height())
    };
    let original = ImageSize {
        mime: format.to_mime_type().to_owned(),
        bytes: data.len() as u64,
        width,
        height,
    };
    let first_frame_only = format == ImageFormat::Gif && has_second_frame(data);
    let accepted = matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
    );
    let fits = width <= bound.max_width()
        && height <= bound.max_height()
        && data.len() <= bound.max_bytes();
    if fits && accepted && !first_frame_only && orientation == Orientation::NoTransforms {
        let sent = original.clone();
        return Ok(Prepared {
            original,
            sent,
            data: data.to_vec(),
            changes: Vec::new(),
            first_frame_only,
        });
    }

    let mut changes = Vec::new();
    if first_frame_only {
        changes.push("only the first frame of this animated GIF is sent".to_owned());
    }
    if orientation != Orientation::NoTransforms {
        changes.push("turned upright as its EXIF orientation says".to_owned());
    }
    if !accepted {
        changes.push(format!(
            "converted from {}, which models do not take",
            format_name(format)
        ));
    }
    let image = eight_bit(image);
    let photo = format == ImageFormat::Jpeg;
    let mut scale = (f64::from(bound.max_width()) / f64::from(width))
        .min(f64::from(bound.max_height()) / f64::from(height))
        .min(1.0);
    for _ in 0..MAX_ATTEMPTS {
        let target = scaled(width, height, scale);
        let mut small = if target == (width, height) {
            image.clone()
        } else {
            // Resized as stored, turned after: turning the smaller image is cheaper.
            let stored = if turned { (target.1, target.0) } else { target };
            resize(&image, stored)?
        };
        small.apply_orientation(orientation);
        if let Some((mime, encoded)) = encode(&small, photo, bound.max_bytes())? {
            if target != (width, height) {
                changes.push(format!(
                    "resized to fit {}x{} px and {}",
                    bound.max_width(),
                    bound.max_height(),
                    size_text(bound.max_bytes() as u64)
                ));
            } else if !fits {
                changes.push(format!(
                    "re-encoded to fit {}",
                    size_text(bound.max_bytes() as u64)
                ));
            }
            let sent = ImageSize {
                mime: mime.to_owned(),
                bytes: encoded.len() as u64,
                width: target.0,
                height: target.1,
            };
            return Ok(Prepared {
                original,
                sent,
                data: encoded,
                changes,
                first_frame_only,
            });
        }
        scale *= 0.75;
    }
    Err(format!(
        "it could not be made smaller than {}",
        size_text(bound.max_bytes() as u64)
    ))
}

/// The format, width and height of `data` from its header alone (for a model that is not
/// sent images).
pub(crate) fn describe(data: &[u8]) -> Result<ImageSize, String> {
    let reader = ImageReader::new(Cursor::new(data))
        .with_guessed_format()
        .map_err(|err| err.to_string())?;
    let format = reader
        .format()
        .ok_or_else(|| "not an image format read knows".to_owned())?;
    let (width, height) = reader.into_dimensions().map_err(|err| err.to_string())?;
    Ok(ImageSize {
        mime: format.to_mime_type().to_owned(),
        bytes: data.len() as u64,
        width,
        height,
    })
}

/// `PNG`, `JPEG`, … for the model.
pub(crate) fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "PNG",
        ImageFormat::Jpeg => "JPEG",
        ImageFormat::Gif => "GIF",
        ImageFormat::WebP => "WebP",
        ImageFormat::Bmp => "BMP",
        ImageFormat::Tiff => "TIFF",
        _ => "an image format",
    }
}

/// The format name of a media type read produced.
pub(crate) fn mime_name(mime: &str) -> &'static str {
    ImageFormat::from_mime_type(mime).map_or("image", format_name)
}

/// `Image could not be decoded: <resource> (<why>)`.
pub(crate) fn undecodable(resource: &str, why: &str) -> ToolError {
    ToolError::failure(format!("Image could not be decoded: {resource} ({why})"))
}

/// The model's note on an image not sent (the model takes no images), from its header.
pub(super) fn render_described(
    resource: &str,
    described: Result<ImageSize, String>,
) -> Result<Rendered<ReadOutput>, ToolError> {
    let size = described.map_err(|why| undecodable(resource, &why))?;
    let text = format!(
        "Image not shown: images cannot be sent to this model. {resource} is a {} image of \
         {}x{} px ({}).",
        mime_name(&size.mime),
        size.width,
        size.height,
        size_text(size.bytes)
    );
    let output = ImageOutput {
        path: resource.to_owned(),
        attached: false,
        original: None,
        first_frame_only: false,
        sent: size,
    };
    Ok(Rendered::text(ReadOutput::Image(output), text))
}

/// The model content and structured output of the image at `resource`, as prepared.
pub(super) fn render(
    resource: &str,
    prepared: Result<Prepared, String>,
) -> Result<Rendered<ReadOutput>, ToolError> {
    let prepared = prepared.map_err(|why| undecodable(resource, &why))?;
    let text = sent_text(&prepared);
    let changed = !prepared.changes.is_empty();
    let content = vec![
        Content::text(text),
        Content::File {
            mime: prepared.sent.mime.clone(),
            data: prepared.data,
            name: Some(resource.to_owned()),
        },
    ];
    let output = ImageOutput {
        path: resource.to_owned(),
        attached: true,
        original: changed.then_some(prepared.original),
        first_frame_only: prepared.first_frame_only,
        sent: prepared.sent,
    };
    Ok(Rendered::new(ReadOutput::Image(output), content))
}

/// "Image read successfully", then what was changed and both sizes when anything was.
pub(crate) fn sent_text(prepared: &Prepared) -> String {
    if prepared.changes.is_empty() {
        return "Image read successfully".to_owned();
    }
    let describe = |size: &ImageSize| {
        format!(
            "{}x{} px, {}, {}",
            size.width,
            size.height,
            mime_name(&size.mime),
            size_text(size.bytes)
        )
    };
    format!(
        "Image read successfully; {}. Original: {}. Sent: {}.",
        prepared.changes.join("; "),
        describe(&prepared.original),
        describe(&prepared.sent)
    )
}

fn has_second_frame(data: &[u8]) -> bool {
    GifDecoder::new(Cursor::new(data))
        .map(|decoder| decoder.into_frames().take(2).filter(Result::is_ok).count() == 2)
        .unwrap_or(false)
}

/// Eight bits per channel: what every format a model takes stores, and half the memory.
fn eight_bit(image: DynamicImage) -> DynamicImage {
    match image {
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_) => image,
        other if other.color().has_alpha() => DynamicImage::ImageRgba8(other.to_rgba8()),
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    }
}

/// `width` × `height` times `scale`, at least one pixel each way.
fn scaled(width: u32, height: u32, scale: f64) -> (u32, u32) {
    let side = |n: u32| ((f64::from(n) * scale).round() as u32).clamp(1, n.max(1));
    (side(width), side(height))
}

fn resize(image: &DynamicImage, (width, height): (u32, u32)) -> Result<DynamicImage, String> {
    let mut resized = DynamicImage::new(width, height, image.color());
    let options =
        fr::ResizeOptions::new().resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Lanczos3));
    fr::Resizer::new()
        .resize(image, &mut resized, &options)
        .map_err(|err| format!("resizing failed: {err}"))?;
    Ok(resized)
}

/// The image encoded within `max_bytes`, or `None` when no encoding fits at this size. A photo
/// stays JPEG; anything else is PNG unless JPEG is much smaller and it has no transparency.
fn encode(
    image: &DynamicImage,
    photo: bool,
    max_bytes: usize,
) -> Result<Option<(&'static str, Vec<u8>)>, String> {
    let opaque = !image.color().has_alpha();
    let jpeg_within = |first: Option<Vec<u8>>| -> Result<Option<(&'static str, Vec<u8>)>, String> {
        if let Some(jpeg) = first.filter(|jpeg| jpeg.len() <= max_bytes) {
            return Ok(Some(("image/jpeg", jpeg)));
        }
        for quality in &JPEG_QUALITIES[1..] {
            let jpeg = encode_jpeg(image, *quality)?;
            if jpeg.len() <= max_bytes {
                return Ok(Some(("image/jpeg", jpeg)));
            }
        }
        Ok(None)
    };
    if photo && opaque {
        return jpeg_within(Some(encode_jpeg(image, JPEG_QUALITIES[0])?));
    }
    let png = encode_png(image)?;
    if opaque {
        let jpeg = encode_jpeg(image, JPEG_QUALITIES[0])?;
        if jpeg.len() * JPEG_MUCH_SMALLER <= png.len() || png.len() > max_bytes {
            return jpeg_within(Some(jpeg));
        }
    }
    Ok((png.len() <= max_bytes).then_some(("image/png", png)))
}

fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let encoder =
        PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive);
    image
        .write_with_encoder(encoder)
        .map_err(|err| format!("PNG encoding failed: {err}"))?;
    Ok(out)
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let encoder = JpegEncoder::new_with_quality(&mut out, quality);
    let result = match image {
        DynamicImage::ImageLuma8(_) | DynamicImage::ImageRgb8(_) => {
            image.write_with_encoder(encoder)
        }
        other => DynamicImage::ImageRgb8(other.to_rgb8()).write_with_encoder(encoder),
    };
    result.map_err(|err| format!("JPEG encoding failed: {err}"))?;
    Ok(out)
}
