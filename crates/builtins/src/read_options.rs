//! How `read` treats images and PDFs (the `media` feature): a host's setting, so it sits
//! beside the services the leaves are built from rather than inside `read`.

use std::ffi::OsString;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use tackle_output_store::MAX_INLINE_MEDIA_BYTES;

/// The largest image a model is sent: its width and height in pixels and its encoded size.
///
/// An image within the bound is sent as it is (when its format is one models take); a larger
/// one is scaled down keeping its aspect ratio and re-encoded until it fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageBound {
    max_width: NonZeroU32,
    max_height: NonZeroU32,
    max_bytes: usize,
}

/// The smallest encoded-size bound: below it even a thumbnail may not fit.
pub const MIN_IMAGE_BYTES: usize = 16 * 1024;

impl ImageBound {
    /// At most `max_width` × `max_height` pixels and `max_bytes` encoded. `max_bytes` is kept
    /// between 16 KiB and the 5 MiB an output carries inline (the output store refuses more).
    pub fn new(max_width: NonZeroU32, max_height: NonZeroU32, max_bytes: usize) -> Self {
        Self {
            max_width,
            max_height,
            max_bytes: max_bytes.clamp(MIN_IMAGE_BYTES, MAX_INLINE_MEDIA_BYTES),
        }
    }

    /// The widest image sent, in pixels.
    pub fn max_width(&self) -> u32 {
        self.max_width.get()
    }

    /// The tallest image sent, in pixels.
    pub fn max_height(&self) -> u32 {
        self.max_height.get()
    }

    /// The largest encoded image sent, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }
}

impl Default for ImageBound {
    /// 2000 × 2000 pixels and 5 MiB, which the common providers accept.
    fn default() -> Self {
        const SIDE: NonZeroU32 = NonZeroU32::MIN.saturating_add(1999);
        Self::new(SIDE, SIDE, MAX_INLINE_MEDIA_BYTES)
    }
}

/// How long decoding one image, PDF or notebook may take by default
/// ([`ReadOptions::with_decode_timeout`]): a page of a real PDF takes milliseconds to a second.
pub const DECODE_TIMEOUT: Duration = Duration::from_secs(30);

/// The program `read` runs to decode images, PDFs and notebooks out of the host's process: a
/// program that calls [`media_worker_main`](crate::read::media_worker_main) with these
/// arguments (the `tackle` binary: itself, with a hidden subcommand).
///
/// With a worker, a hostile file that gets past the decoders' limits (an abort, a stack
/// overflow, memory or time without end) ends that worker, never the host: it runs with a
/// limited address space, processor time and stack, and is killed at the deadline or when the
/// call is cancelled. Without one ([`LocationServices::with_media_worker`] never called),
/// decoding runs on a thread of the host with a large stack, under the same limits inside the
/// decoders; a decoder that aborts or overflows that stack still ends the host, and a decode
/// past its deadline returns the timeout to the model but runs on until it ends.
///
/// [`LocationServices::with_media_worker`]: crate::LocationServices::with_media_worker
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaWorker {
    program: PathBuf,
    args: Vec<OsString>,
}

impl MediaWorker {
    /// Runs `program` (an absolute path: it is never looked up in `PATH`) with `args`.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> Self {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// The program run.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// Its arguments.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }
}

/// How `read` treats images and PDFs, set by the host from its configuration and what the
/// model takes ([`LocationServices::with_read`](crate::LocationServices::with_read)). The default: images within
/// [`ImageBound::default`], sent to the model; PDFs as their text only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    image_bound: ImageBound,
    image_input: bool,
    pdf_attachment: bool,
    decode_timeout: Duration,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            image_bound: ImageBound::default(),
            image_input: true,
            pdf_attachment: false,
            decode_timeout: DECODE_TIMEOUT,
        }
    }
}

impl ReadOptions {
    /// The default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends images within `bound`.
    #[must_use]
    pub fn with_image_bound(mut self, bound: ImageBound) -> Self {
        self.image_bound = bound;
        self
    }

    /// For a host or model without image input: an image (a notebook's image outputs too)
    /// becomes a text note with its format and size, so no request carries an image the
    /// provider would refuse.
    #[must_use]
    pub fn without_image_input(mut self) -> Self {
        self.image_input = false;
        self
    }

    /// Attaches a PDF (up to 5 MiB) after its text, for a model that reads PDFs itself.
    #[must_use]
    pub fn with_pdf_attachment(mut self) -> Self {
        self.pdf_attachment = true;
        self
    }

    /// Gives decoding one file at most `timeout` (default [`DECODE_TIMEOUT`]); past it the
    /// worker is killed and the model reads that the file took too long.
    #[must_use]
    pub fn with_decode_timeout(mut self, timeout: Duration) -> Self {
        self.decode_timeout = timeout;
        self
    }

    /// How long decoding one file may take.
    pub fn decode_timeout(&self) -> Duration {
        self.decode_timeout
    }

    /// The bound images are sent within.
    pub fn image_bound(&self) -> ImageBound {
        self.image_bound
    }

    /// True when images are sent to the model (false: a text note instead).
    pub fn image_input(&self) -> bool {
        self.image_input
    }

    /// True when a PDF is attached after its text.
    pub fn pdf_attachment(&self) -> bool {
        self.pdf_attachment
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_bound_stays_within_what_the_store_carries() {
        let side = NonZeroU32::MIN;
        assert_eq!(
            ImageBound::new(side, side, usize::MAX).max_bytes(),
            MAX_INLINE_MEDIA_BYTES
        );
        assert_eq!(ImageBound::new(side, side, 1).max_bytes(), MIN_IMAGE_BYTES);
    }
}
