//! Opaque references to managed outputs.
//!
//! A reference is `tool-output://<id>`; the id is 27 lowercase base32 characters: one layout
//! character (`f` for a full copy, `c` for a capped file with a header), six characters derived
//! from the session id (a scope tag, not a secret) and twenty random characters (100 bits from
//! the operating system). The managed file is `tool_<id>` in the managed directory; the path
//! never leaves the store.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::StoreError;

/// The scheme every reference starts with.
pub const SCHEME: &str = "tool-output://";
/// The prefix of every managed file name.
pub(crate) const FILE_PREFIX: &str = "tool_";

const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
const TAG_LEN: usize = 6;
const RANDOM_LEN: usize = 20;
const ID_LEN: usize = 1 + TAG_LEN + RANDOM_LEN;

/// How a managed file is laid out, carried by the first character of its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// The file holds exactly the output.
    Full,
    /// The output exceeded the spill cap: a header line, then its head and its tail.
    Capped,
}

/// An opaque reference to a managed output, shown to models and hosts as `tool-output://<id>`.
///
/// The `read` tool accepts it as a path; [`crate::OutputStore::read_page`] serves it back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OutputRef(String);

impl OutputRef {
    /// Parses `tool-output://<id>`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let id = text.strip_prefix(SCHEME)?;
        is_id(id).then(|| Self(id.to_owned()))
    }

    /// The id: the part after `tool-output://`.
    pub fn id(&self) -> &str {
        &self.0
    }

    /// True when the output was stored for `session_id`. The tag is 30 bits of a hash of the
    /// session id: a scope check for hosts, not an access control (the random part is that).
    pub fn belongs_to(&self, session_id: &str) -> bool {
        self.0.get(1..=TAG_LEN) == Some(session_tag(session_id).as_str())
    }

    /// `Ok` when the output was stored for `session_id`; otherwise the very error a missing
    /// output gives ([`StoreError::NotFound`]), so a caller of another session learns nothing
    /// about whether the reference exists. What a reader serving a session's caller checks
    /// before reading.
    pub fn check_session(&self, session_id: &str) -> Result<(), StoreError> {
        if self.belongs_to(session_id) {
            Ok(())
        } else {
            Err(StoreError::NotFound {
                reference: self.to_string(),
            })
        }
    }

    /// A new random reference for `session_id`.
    pub(crate) fn generate(session_id: &str, layout: Layout) -> Result<Self, StoreError> {
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).map_err(StoreError::Random)?;
        let mut bits = u128::from_le_bytes(random);
        let mut id = String::with_capacity(ID_LEN);
        id.push(match layout {
            Layout::Full => 'f',
            Layout::Capped => 'c',
        });
        id.push_str(&session_tag(session_id));
        for _ in 0..RANDOM_LEN {
            id.push(char::from(ALPHABET[(bits & 31) as usize]));
            bits >>= 5;
        }
        Ok(Self(id))
    }

    /// The reference of a managed file name, if the name is one the store creates.
    pub(crate) fn from_file_name(name: &str) -> Option<Self> {
        let id = name.strip_prefix(FILE_PREFIX)?;
        is_id(id).then(|| Self(id.to_owned()))
    }

    pub(crate) fn file_name(&self) -> String {
        format!("{FILE_PREFIX}{}", self.0)
    }

    pub(crate) fn layout(&self) -> Layout {
        if self.0.starts_with('c') {
            Layout::Capped
        } else {
            Layout::Full
        }
    }
}

fn is_id(id: &str) -> bool {
    id.len() == ID_LEN
        && matches!(id.as_bytes()[0], b'f' | b'c')
        && id.bytes().all(|b| ALPHABET.contains(&b))
}

/// Six base32 characters of a 64-bit FNV-1a hash of the session id (stable across builds,
/// unlike `std`'s hasher).
fn session_tag(session_id: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in session_id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..TAG_LEN)
        .map(|i| char::from(ALPHABET[((hash >> (5 * i)) & 31) as usize]))
        .collect()
}

impl fmt::Display for OutputRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.0)
    }
}

impl FromStr for OutputRef {
    type Err = StoreError;

    fn from_str(text: &str) -> Result<Self, StoreError> {
        Self::parse(text).ok_or_else(|| StoreError::InvalidReference {
            input: text.to_owned(),
        })
    }
}

impl TryFrom<String> for OutputRef {
    type Error = StoreError;

    fn try_from(text: String) -> Result<Self, StoreError> {
        text.parse()
    }
}

impl From<OutputRef> for String {
    fn from(reference: OutputRef) -> Self {
        reference.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_references_round_trip() {
        let a = OutputRef::generate("ses_1", Layout::Full).unwrap();
        let b = OutputRef::generate("ses_1", Layout::Capped).unwrap();
        assert_ne!(a.id()[7..], b.id()[7..]);
        assert_eq!(a.id().len(), 27);
        assert_eq!(a.layout(), Layout::Full);
        assert_eq!(b.layout(), Layout::Capped);
        let text = a.to_string();
        assert!(text.starts_with("tool-output://f"));
        assert_eq!(OutputRef::parse(&text), Some(a.clone()));
        assert_eq!(text.parse::<OutputRef>().unwrap(), a);
        assert_eq!(OutputRef::from_file_name(&a.file_name()), Some(a.clone()));
        assert!(a.belongs_to("ses_1") && b.belongs_to("ses_1"));
        assert!(!a.belongs_to("ses_2"));
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, format!("\"{text}\""));
        assert_eq!(serde_json::from_str::<OutputRef>(&json).unwrap(), a);
    }

    #[test]
    fn anything_else_is_rejected() {
        for bad in [
            "",
            "tool-output://",
            "tool-output://faaaaaaaaaaaaaaaaaaaaaaaaa",
            "tool-output://xaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "tool-output://faaaaaaaaaaaaaaaaaaaaaaaaa1",
            "tool-output://fAAAAAAaaaaaaaaaaaaaaaaaaaa",
            "tool-output://faaaaaa/../aaaaaaaaaaaaaaaaa",
            "/tmp/tool_faaaaaaaaaaaaaaaaaaaaaaaaaa",
            "faaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert_eq!(OutputRef::parse(bad), None, "{bad}");
        }
        let err = "nope".parse::<OutputRef>().unwrap_err().to_string();
        assert_eq!(
            err,
            "not a managed output reference: \"nope\" (expected tool-output://<id>)"
        );
        assert!(serde_json::from_str::<OutputRef>("\"nope\"").is_err());
        assert!(OutputRef::parse("tool-output://faaaaaaaaaaaaaaaaaaaaaaaaaa").is_some());
        assert_eq!(OutputRef::from_file_name("keep.txt"), None);
        assert_eq!(OutputRef::from_file_name("tool_x"), None);
    }
}
