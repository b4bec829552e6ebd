//! What `read` returns: the structured output beside the model text.

use schemars::JsonSchema;
use serde::Serialize;

pub use super::listing::Entry;

/// What `read` returns (the structured output).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ReadOutput {
    /// A page of a text file or a managed output.
    TextPage(TextPageOutput),
    /// A page of a directory listing.
    ListPage(ListPageOutput),
    /// An image, sent to the model (or described to a model that takes no images).
    Image(ImageOutput),
    /// Pages of a PDF's text (and the PDF, when the host asks for it).
    Pdf(PdfOutput),
    /// Cells of a Jupyter notebook.
    Notebook(NotebookOutput),
}

/// A page of text. Its lines are what the model reads (numbered, in the model text); they are
/// not repeated here, so a page that fits the call's budget is never saved a second time.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextPageOutput {
    /// The file's resource, or the managed output's reference.
    pub path: String,
    /// The media type of the text.
    pub mime: String,
    /// The encoding the text was decoded from.
    pub encoding: String,
    /// The number of the first line.
    pub offset: u64,
    /// The character of the first line the page starts from, when not its start.
    #[serde(skip_serializing_if = "is_one")]
    pub column: u64,
    /// Lines on this page.
    pub lines: usize,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// More lines follow.
    pub truncated: bool,
    /// The offset to read next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    /// The page ends inside line `next`: the column to read next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_column: Option<u64>,
    /// Lines shown in part (cut at 2000 characters, or where a page of a managed output ends).
    pub clamped_lines: usize,
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// A page of a directory.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListPageOutput {
    /// The directory's resource.
    pub path: String,
    /// The entries on this page.
    pub entries: Vec<Entry>,
    /// The number of the first entry.
    pub offset: u64,
    /// Entries in the whole directory.
    pub total: u64,
    /// More entries follow.
    pub truncated: bool,
    /// The offset to read next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
}

/// An image read.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageOutput {
    /// The file's resource.
    pub path: String,
    /// What was sent (the file's own format and size when nothing was sent).
    #[serde(flatten)]
    pub sent: ImageSize,
    /// The image is attached; false when the model takes no images and reads a note instead.
    pub attached: bool,
    /// The file as it is, when what was sent differs (resized, turned, re-encoded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<ImageSize>,
    /// Only the first frame of an animation was sent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub first_frame_only: bool,
}

/// An image's format and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageSize {
    /// Its media type.
    pub mime: String,
    /// Its encoded size in bytes.
    pub bytes: u64,
    /// Its width in pixels (upright).
    pub width: u32,
    /// Its height in pixels (upright).
    pub height: u32,
}

/// Pages of a PDF's text.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PdfOutput {
    /// The file's resource.
    pub path: String,
    /// The number of the first page shown.
    pub offset: u64,
    /// Pages shown.
    pub pages: usize,
    /// Pages in the PDF.
    pub total_pages: u64,
    /// More pages follow.
    pub truncated: bool,
    /// The offset to read next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    /// Some page shown has text (false: probably scanned images).
    pub has_text: bool,
    /// The PDF itself is attached after its text.
    pub attached: bool,
}

/// Cells of a Jupyter notebook.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotebookOutput {
    /// The file's resource.
    pub path: String,
    /// The number of the first cell shown.
    pub offset: u64,
    /// Cells shown.
    pub cells: usize,
    /// Cells in the notebook.
    pub total_cells: u64,
    /// More cells follow.
    pub truncated: bool,
    /// The offset to read next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    /// Image outputs attached.
    pub images: usize,
}
