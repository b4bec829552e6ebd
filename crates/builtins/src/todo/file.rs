//! One file per session in `<data>/todos`, so a session's list outlives its process.
//!
//! The file is `{"version":1,"session":<id>,"todos":[...]}`, replaced atomically (a temp file
//! in the same directory, synced, renamed over it: [`Directory::write_file`]) and opened with
//! no symbolic link followed at any step, so a list is never half written and never written
//! through a link planted in the data directory.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Todo;
use crate::beneath::Directory;
use crate::error::Error;

/// The directory under the data directory that holds the lists.
pub const TODO_DIRECTORY: &str = "todos";

/// An encoded session id longer than this is named by its hash (file names stop at 255 bytes).
const MAX_ENCODED: usize = 200;

#[derive(Serialize, Deserialize)]
struct Stored {
    version: u32,
    session: String,
    todos: Vec<Todo>,
}

/// Where the lists live: `<data>/todos`.
#[derive(Debug, Clone)]
pub(crate) struct TodoFiles {
    data_dir: PathBuf,
}

impl TodoFiles {
    pub(crate) fn new(data_dir: PathBuf) -> Self {
        Self { data_dir }
    }

    pub(crate) fn directory(&self) -> PathBuf {
        self.data_dir.join(TODO_DIRECTORY)
    }

    /// The directory, if it exists: the data directory is made canonical (it may sit below a
    /// link, such as a symlinked home), the `todos` directory below it is never a link.
    fn existing(&self) -> io::Result<Option<Directory>> {
        let opened = std::fs::canonicalize(&self.data_dir)
            .and_then(|data| Directory::open(&data.join(TODO_DIRECTORY)));
        match opened {
            Ok(dir) => Ok(Some(dir)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The stored list of `session_id`; `None` when it has none.
    pub(crate) fn load(&self, session_id: &str) -> Result<Option<Vec<Todo>>, Error> {
        let name = file_name(session_id);
        let path = self.directory().join(&name);
        let read = |err| Error::io("read", &path, err);
        let Some(dir) = self.existing().map_err(read)? else {
            return Ok(None);
        };
        let file = match dir.open_file(OsStr::new(&name)) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(read(err)),
        };
        let stored: Stored = serde_json::from_reader(io::BufReader::new(file))
            .map_err(|err| read(io::Error::new(io::ErrorKind::InvalidData, err)))?;
        // A hashed name can, however unlikely, be another session's.
        Ok((stored.session == session_id).then_some(stored.todos))
    }

    /// Replaces the stored list of `session_id` with `todos`.
    pub(crate) fn save(&self, session_id: &str, todos: &[Todo]) -> Result<(), Error> {
        let directory = self.directory();
        let write = |err| Error::io("write", &directory, err);
        std::fs::create_dir_all(&self.data_dir).map_err(write)?;
        let data = std::fs::canonicalize(&self.data_dir).map_err(write)?;
        let (dir, created) = Directory::create_all(&data.join(TODO_DIRECTORY)).map_err(write)?;
        if !created.is_empty() {
            // The lists are the user's work notes: readable by the user alone.
            set_private(&data.join(TODO_DIRECTORY)).map_err(write)?;
        }
        let stored = Stored {
            version: 1,
            session: session_id.to_owned(),
            todos: todos.to_vec(),
        };
        let bytes = serde_json::to_vec_pretty(&stored)
            .map_err(|err| write(io::Error::new(io::ErrorKind::InvalidData, err)))?;
        let name = file_name(session_id);
        dir.write_file(OsStr::new(&name), &[&bytes], Some(0o600), true, true, None)
            .map_err(|err| Error::io("write", directory.join(&name), err))
    }

    /// Removes the stored list of `session_id`; nothing stored is fine.
    pub(crate) fn remove(&self, session_id: &str) -> Result<(), Error> {
        let name = file_name(session_id);
        let path = self.directory().join(&name);
        let remove = |err| Error::io("remove", &path, err);
        let Some(dir) = self.existing().map_err(remove)? else {
            return Ok(());
        };
        match dir.remove_file(OsStr::new(&name)) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => Err(remove(err)),
            _ => Ok(()),
        }
    }
}

fn set_private(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

/// `<session id>.json` with every byte but `A-Z a-z 0-9 _ -` written `%XX` (so distinct ids
/// get distinct names, and no id names a path), or `~<FNV-1a 64 of the id>.json` when that
/// would be too long.
fn file_name(session_id: &str) -> String {
    let mut encoded = String::with_capacity(session_id.len());
    for byte in session_id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    if encoded.is_empty() || encoded.len() > MAX_ENCODED {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in session_id.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        return format!("~{hash:016x}.json");
    }
    format!("{encoded}.json")
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn names_are_distinct_and_never_paths() {
        assert_eq!(file_name("ses_01-A"), "ses_01-A.json");
        assert_eq!(file_name("../x"), "%2E%2E%2Fx.json");
        assert_ne!(file_name("a/b"), file_name("a%2Fb"));
        assert_eq!(file_name("a%2Fb"), "a%252Fb.json");
        assert!(file_name("").starts_with('~'));
        let long = file_name(&"é".repeat(200));
        assert!(long.starts_with('~') && long.len() == 22, "{long}");
    }
}
