//! Sizing structured values without allocating, and the small object that replaces one that
//! is too large.

use std::fmt::{self, Write as _};
use std::io;

use serde_json::{Map, Value, json};

use crate::reference::OutputRef;
use crate::{PagingHint, StoreError};

/// Whether the compact JSON of `value` is at most `limit` bytes. A cheap upper bound decides
/// almost every small value without serializing; otherwise the value is serialized into a
/// counting sink that stops as soon as the limit is passed.
pub(crate) fn fits(value: &Value, limit: usize) -> Result<bool, StoreError> {
    if upper_bound(value, limit).is_some() {
        return Ok(true);
    }
    Ok(compact_len(value, limit)?.is_some())
}

/// The exact compact JSON size, or `None` once it exceeds `limit`.
pub(crate) fn compact_len(value: &Value, limit: usize) -> Result<Option<usize>, StoreError> {
    let mut counter = Counter { bytes: 0, limit };
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => Ok(Some(counter.bytes)),
        // The counter is the only writer that can fail: it does so past the limit.
        Err(err) if err.is_io() => Ok(None),
        Err(err) => Err(StoreError::Encode(err)),
    }
}

struct Counter {
    bytes: usize,
    limit: usize,
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len();
        if self.bytes > self.limit {
            return Err(io::Error::other("over the limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct FmtLen(usize);

impl fmt::Write for FmtLen {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// An upper bound of the compact JSON size, or `None` when it exceeds `budget`.
fn upper_bound(value: &Value, budget: usize) -> Option<usize> {
    let size = match value {
        Value::Null | Value::Bool(_) => 5,
        // Counted, not assumed: with serde_json's `arbitrary_precision` (enabled by any crate
        // in a build) numbers have no fixed maximum length.
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(n), _) => decimal_digits(n),
            (None, Some(n)) => 1 + decimal_digits(n.unsigned_abs()),
            _ => {
                let mut len = FmtLen(0);
                let _ = write!(len, "{number}");
                len.0
            }
        },
        // Every byte escapes to at most six (`\u001f`).
        Value::String(s) => 2 + 6 * s.len(),
        Value::Array(items) => {
            let mut size = 2;
            for item in items {
                size += 1 + upper_bound(item, budget.checked_sub(size)?)?;
            }
            size
        }
        Value::Object(map) => {
            let mut size = 2;
            for (key, item) in map {
                size += 4 + 6 * key.len();
                size += upper_bound(item, budget.checked_sub(size)?)?;
            }
            size
        }
    };
    (size <= budget).then_some(size)
}

fn decimal_digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// The object that stands in for a structured value of `bytes` bytes saved at `reference`,
/// kept within `limit` bytes. It names the host's paging tool when there is one (the hint is
/// dropped when it would not fit).
pub(crate) fn replacement(
    reference: &OutputRef,
    bytes: usize,
    limit: usize,
    paging: Option<&PagingHint>,
) -> Value {
    let mut object = Map::new();
    object.insert("truncated".to_owned(), Value::Bool(true));
    object.insert("bytes".to_owned(), json!(bytes));
    object.insert("reference".to_owned(), Value::String(reference.to_string()));
    let Some(paging) = paging else {
        return Value::Object(object);
    };
    let mut with_hint = object.clone();
    with_hint.insert(
        "hint".to_owned(),
        Value::String(format!(
            "the structured output was too large; the {} tool accepts the reference as path, \
             with offset and limit, and returns it as pretty-printed JSON lines",
            paging.tool
        )),
    );
    let with_hint = Value::Object(with_hint);
    match compact_len(&with_hint, limit) {
        Ok(Some(_)) => with_hint,
        _ => Value::Object(object),
    }
}

/// What replaces a structured value over the limit that could not be saved: its size and
/// why it is gone.
pub(crate) fn unsaved_replacement(bytes: usize, reason: &str) -> Value {
    json!({
        "truncated": true,
        "bytes": bytes,
        "unsaved": format!("the structured output was too large and could not be saved ({reason})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_are_exact_at_the_boundary() {
        let value = json!({"a": "x".repeat(100), "b": [1, 2.5, null, true]});
        let exact = serde_json::to_vec(&value).unwrap().len();
        assert_eq!(compact_len(&value, exact).unwrap(), Some(exact));
        assert_eq!(compact_len(&value, exact - 1).unwrap(), None);
        assert!(fits(&value, exact).unwrap());
        assert!(!fits(&value, exact - 1).unwrap());
    }

    #[test]
    fn the_upper_bound_never_underestimates() {
        let values = [
            json!(null),
            json!(-1.797_693_134_862_315_7e308),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("\u{1}\u{1f}\"\\"),
            json!({"\u{1}k": ["\u{7f}", {"": []}], "e": "é😀"}),
        ];
        for value in values {
            let exact = serde_json::to_vec(&value).unwrap().len();
            let bound = upper_bound(&value, usize::MAX).unwrap();
            assert!(bound >= exact, "{value}: {bound} < {exact}");
        }
    }

    #[test]
    fn the_replacement_fits_its_limit() {
        let reference = OutputRef::parse("tool-output://faaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap();
        let paging = PagingHint::new("read", 1992);
        let small = replacement(&reference, 99_999, 128, Some(&paging));
        assert!(small.get("hint").is_none());
        assert!(serde_json::to_vec(&small).unwrap().len() <= 128);
        let large = replacement(&reference, 99_999, 16 * 1024, Some(&paging));
        assert_eq!(large["truncated"], json!(true));
        assert_eq!(large["bytes"], json!(99_999));
        assert_eq!(large["reference"], json!(reference.to_string()));
        assert!(large["hint"].as_str().unwrap().contains("the read tool"));
        // A host without a paging tool gets the reference alone.
        let bare = replacement(&reference, 99_999, 16 * 1024, None);
        assert!(bare.get("hint").is_none());
        assert_eq!(bare["reference"], json!(reference.to_string()));
    }
}
