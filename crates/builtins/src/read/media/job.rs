//! One decode: what is asked ([`Job`]), what comes back ([`Decoded`]) and the decoding itself
//! ([`decode`]), the same in the worker process and in-process. Both types cross the worker's
//! pipe as JSON; bytes travel as base64.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use super::image::{self, Prepared};
use super::notebook::{self, NotebookPage};
use super::pdf::{self, PdfPages, PdfText};
use super::{ImageBound, ReadOptions, Span};
use crate::read::ImageSize;

/// What to make of the file's bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Job {
    /// A PDF's text, for these pages.
    Pdf(PdfPages),
    /// An image within the bound, or only its header when the model takes no images.
    Image(Settings),
    /// A page of a notebook's cells, named `resource` in its messages.
    Notebook {
        resource: String,
        settings: Settings,
        offset: u64,
        limit: u64,
        budget_lines: usize,
        budget_bytes: usize,
    },
}

/// The part of [`ReadOptions`] decoding needs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Settings {
    max_width: u32,
    max_height: u32,
    max_bytes: usize,
    image_input: bool,
}

impl Settings {
    pub(crate) fn of(options: &ReadOptions) -> Self {
        let bound = options.image_bound();
        Self {
            max_width: bound.max_width(),
            max_height: bound.max_height(),
            max_bytes: bound.max_bytes(),
            image_input: options.image_input(),
        }
    }

    fn options(self) -> ReadOptions {
        let side = |n: u32| NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        let bound = ImageBound::new(side(self.max_width), side(self.max_height), self.max_bytes);
        let options = ReadOptions::new().with_image_bound(bound);
        if self.image_input {
            options
        } else {
            options.without_image_input()
        }
    }
}

impl Job {
    /// The job for media of type `mime` read with `options` over `span`.
    pub(crate) fn new(options: &ReadOptions, resource: &str, mime: &str, span: Span) -> Self {
        match mime {
            "application/pdf" => Self::Pdf(PdfPages::of(span)),
            super::NOTEBOOK_MIME => Self::Notebook {
                resource: resource.to_owned(),
                settings: Settings::of(options),
                offset: span.offset,
                limit: span.limit,
                budget_lines: span.budget.max_lines,
                budget_bytes: span.budget.max_bytes,
            },
            _ => Self::Image(Settings::of(options)),
        }
    }
}

/// What a decode produced (its failures included: they are the model's to read).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Decoded {
    Pdf(PdfText),
    Image(Result<Prepared, String>),
    Described(Result<ImageSize, String>),
    /// The page, or the whole message of why there is none.
    Notebook(Result<NotebookPage, String>),
}

/// Decodes `data` as `job` asks. Runs where a hostile file can do no harm beyond it: in the
/// worker, or on a thread of its own under the decoders' limits.
pub(crate) fn decode(job: Job, data: &[u8]) -> Decoded {
    match job {
        Job::Pdf(pages) => Decoded::Pdf(pdf::extract(data, pages)),
        Job::Image(settings) if settings.image_input => {
            Decoded::Image(image::prepare(data, &settings.options().image_bound()))
        }
        Job::Image(_) => Decoded::Described(image::describe(data)),
        Job::Notebook {
            resource,
            settings,
            offset,
            limit,
            budget_lines,
            budget_bytes,
        } => {
            let span = Span {
                offset,
                limit,
                budget: tackle_tool_core::Budget::new(budget_lines, budget_bytes),
            };
            Decoded::Notebook(notebook::page(&settings.options(), &resource, data, span))
        }
    }
}

/// Bytes as base64 in JSON.
pub(crate) mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}
