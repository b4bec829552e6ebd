//! An empty oldString: the file is created with newString, as opencode and Kilo do, so a model
//! that creates files this way is not refused. An existing empty file is filled the same way
//! (there is nothing to lose); a file with content is never replaced through an empty oldString,
//! which would silently drop that content: the model is told to use write instead.

use tackle_tool_core::Rendered;

use super::report;
use super::{EditOutput, Failure, Rung};
use crate::diff::{DiffStatus, FileDiff};
use crate::error::Error;
use std::path::Path;

use crate::mutation::{ContentHash, Transaction};
use crate::text::encoding::{self, Encoding};
use crate::text::{self, FileText};

/// A file made (or an empty file filled) from newString.
#[derive(Debug)]
pub(super) struct Created {
    /// Whether an empty file was there before.
    existed: bool,
    /// newString without a leading U+FEFF when the file keeps its own BOM.
    text: String,
    /// The encoding of the filled file (an empty file keeps its own).
    encoding: Encoding,
}

/// Creates the target (`resource`) with `new`, or fills it when it exists and holds no text.
pub(super) fn create(tx: &mut Transaction, resource: &str, new: &str) -> Result<Created, Failure> {
    let Some(bytes) = tx.read()? else {
        return match tx.create(new.as_bytes()) {
            Ok(_) => Ok(Created {
                existed: false,
                text: new.to_owned(),
                encoding: Encoding::Utf8 { bom: 0 },
            }),
            // Someone created it between the read and now: theirs is not overwritten.
            Err(Error::TargetExists { .. }) => Err(Failure::Stale),
            Err(err) => Err(err.into()),
        };
    };
    let encoding = match text::read_text(&bytes, Path::new(resource)) {
        Ok(FileText { encoding, body }) if body.is_empty() => encoding,
        _ => return Err(Failure::HasContent),
    };
    // A file that is only a BOM keeps it, and keeps exactly one.
    let body = if encoding.bom().is_empty() {
        new
    } else {
        new.trim_start_matches('\u{FEFF}')
    };
    let out = encoding::encode(body, encoding).map_err(Failure::Unencodable)?;
    tx.write_if_unchanged(ContentHash::of(&bytes), &out)?;
    Ok(Created {
        existed: true,
        text: body.to_owned(),
        encoding,
    })
}

impl Created {
    /// The result: write's wording for a new file, edit's for a filled one.
    pub(super) fn into_output(
        self,
        resource: &str,
        max_structured_bytes: usize,
    ) -> Rendered<EditOutput> {
        let (status, text) = if self.existed {
            let mut text = format!("Edited file successfully: {resource}\nReplacements: 1\n");
            text.push_str(&report::preview("", &self.text));
            (DiffStatus::Modified, text)
        } else {
            (
                DiffStatus::Added,
                format!("Created file successfully: {resource}"),
            )
        };
        let mut output = EditOutput {
            files: vec![FileDiff::new(resource, status, "", &self.text)],
            replacements: 1,
            matched_with: Rung::Exact,
            line_numbers_stripped: false,
            encoding: self.encoding.label().map(str::to_owned),
        };
        output.compact_if_over(max_structured_bytes);
        Rendered::text(output, text)
    }
}
