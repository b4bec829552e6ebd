//! An empty oldString: the file is created with newString, as opencode and Kilo do, so a model
//! that creates files this way is not refused. An existing empty file is filled the same way
//! (there is nothing to lose); a file with content is never replaced through an empty oldString,
//! which would silently drop that content: the model is told to use write instead.

use tackle_tool_core::Rendered;

use super::report;
use super::{EditOutput, Failure, Rung};
use crate::diff::{DiffStatus, FileDiff};
use crate::error::Error;
use crate::mutation::{BOM, ContentHash, Transaction};
use crate::text;

/// A file made (or an empty file filled) from newString.
#[derive(Debug)]
pub(super) struct Created {
    /// Whether an empty file was there before.
    existed: bool,
    /// newString without a leading U+FEFF when the file keeps its own BOM.
    text: String,
}

/// Creates the target with `new`, or fills it when it exists and holds no text.
pub(super) fn create(tx: &mut Transaction, new: &str) -> Result<Created, Failure> {
    let Some(bytes) = tx.read()? else {
        return match tx.create(new.as_bytes()) {
            Ok(_) => Ok(Created {
                existed: false,
                text: new.to_owned(),
            }),
            // Someone created it between the read and now: theirs is not overwritten.
            Err(Error::TargetExists { .. }) => Err(Failure::Stale),
            Err(err) => Err(err.into()),
        };
    };
    let empty = text::decode(&bytes).is_ok_and(|decoded| decoded.body.is_empty());
    if !empty {
        return Err(Failure::HasContent);
    }
    // A file that is only a BOM keeps it, and keeps exactly one.
    let bom = !bytes.is_empty();
    let body = if bom {
        new.trim_start_matches('\u{FEFF}')
    } else {
        new
    };
    let prefix: &[u8] = if bom { BOM } else { b"" };
    let out = [prefix, body.as_bytes()].concat();
    tx.write_if_unchanged(ContentHash::of(&bytes), &out)?;
    Ok(Created {
        existed: true,
        text: body.to_owned(),
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
        };
        output.compact_if_over(max_structured_bytes);
        Rendered::text(output, text)
    }
}
