//! A streaming scan of one JSON-RPC message too large to parse: it finds the message's `id`,
//! whether it is a request, a result or an error, the result's `isError`, and streams the
//! decoded `text` of each `result.content` part to a sink. It holds only the container stack
//! and a few short tokens; it does not validate the JSON (what it cannot read is skipped).

use std::io;

/// The longest `id` token kept (a longer one is treated as missing).
const MAX_ID: usize = 256;
/// The longest key compared (the keys looked for are short).
const MAX_KEY: usize = 16;

/// Where a container or value lies in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The message object.
    Root,
    /// The object of `result`.
    Result,
    /// The array of `result.content`.
    Content,
    /// One element of `result.content`.
    Part,
    /// The `id` value.
    Id,
    /// `result.isError`.
    IsError,
    /// The `text` of a content part.
    Text,
    /// Anything else.
    Other,
}

#[derive(Debug)]
struct Frame {
    role: Role,
    object: bool,
    /// In an object: the next string is a key.
    expect_key: bool,
    /// The last key read, when it was short enough to matter.
    key: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// `\u` and the digits so far.
    Unicode(u8, u16),
}

#[derive(Debug)]
enum Lex {
    Between,
    String {
        role: Role,
        key: bool,
        escape: Escape,
    },
    Atom {
        role: Role,
    },
}

/// What the scan found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The raw `id` token (a number, or a string with its quotes and escapes).
    pub(crate) id: Option<Vec<u8>>,
    /// The message has a `method` (a request or notification, not an answer).
    pub(crate) method: bool,
    /// The message has an `error` (an error answer).
    pub(crate) error: bool,
    /// `result.isError` is `true`.
    pub(crate) is_error: bool,
    /// How many text parts were streamed.
    pub(crate) texts: usize,
}

/// The scan's state between chunks.
#[derive(Debug)]
pub(crate) struct Scan {
    stack: Vec<Frame>,
    lex: Lex,
    token: Vec<u8>,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    found: Found,
}

/// Where decoded text goes.
pub(crate) trait Sink {
    fn text(&mut self, bytes: &[u8]) -> io::Result<()>;
}

impl Scan {
    pub(crate) fn new() -> Self {
        Self {
            stack: Vec::new(),
            lex: Lex::Between,
            token: Vec::new(),
            high: None,
            found: Found::default(),
        }
    }

    /// The role of a value starting now, from its container and key.
    fn value_role(&self) -> Role {
        let Some(frame) = self.stack.last() else {
            return Role::Root;
        };
        match (frame.role, frame.object, frame.key.as_slice()) {
            (Role::Root, true, b"id") => Role::Id,
            (Role::Root, true, b"result") => Role::Result,
            (Role::Result, true, b"content") => Role::Content,
            (Role::Result, true, b"isError") => Role::IsError,
            (Role::Content, false, _) => Role::Part,
            (Role::Part, true, b"text") => Role::Text,
            _ => Role::Other,
        }
    }

    fn key_done(&mut self) {
        if let Some(frame) = self.stack.last_mut() {
            frame.expect_key = false;
            if frame.role == Role::Root {
                match frame.key.as_slice() {
                    b"method" => self.found.method = true,
                    b"error" => self.found.error = true,
                    _ => {}
                }
            }
        }
    }

    fn atom_done(&mut self, role: Role) {
        match role {
            Role::Id if self.token.len() <= MAX_ID => self.found.id = Some(self.token.clone()),
            Role::IsError => self.found.is_error = self.token == b"true",
            _ => {}
        }
        self.token.clear();
    }

    /// Reads `chunk`, streaming text to `sink`.
    pub(crate) fn feed(&mut self, chunk: &[u8], sink: &mut impl Sink) -> io::Result<()> {
        let mut i = 0;
        while i < chunk.len() {
            match &self.lex {
                Lex::String { role, key, escape } => {
                    let (role, key, escape) = (*role, *key, *escape);
                    if escape == Escape::None {
                        // The fast path: everything up to the next quote or backslash.
                        let rest = &chunk[i..];
                        let run = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                        if run > 0 {
                            self.string_bytes(role, key, &rest[..run], sink)?;
                            i += run;
                            continue;
                        }
                    }
                    let b = chunk[i];
                    i += 1;
                    self.string_byte(role, key, escape, b, sink)?;
                }
                Lex::Atom { role } => {
                    let role = *role;
                    let b = chunk[i];
                    if b.is_ascii_whitespace() || matches!(b, b',' | b']' | b'}' | b':') {
                        self.atom_done(role);
                        self.lex = Lex::Between;
                        continue;
                    }
                    if self.token.len() <= MAX_ID {
                        self.token.push(b);
                    }
                    i += 1;
                }
                Lex::Between => {
                    let b = chunk[i];
                    i += 1;
                    self.structural(b, sink)?;
                }
            }
        }
        Ok(())
    }

    /// Unescaped bytes inside a string.
    fn string_bytes(
        &mut self,
        role: Role,
        key: bool,
        bytes: &[u8],
        sink: &mut impl Sink,
    ) -> io::Result<()> {
        if key {
            if let Some(frame) = self.stack.last_mut()
                && frame.key.len() <= MAX_KEY
            {
                if frame.key.len() + bytes.len() > MAX_KEY {
                    // Too long to be a key looked for; never matches.
                    frame.key.clear();
                    frame.key.push(0);
                    frame.key.resize(MAX_KEY + 1, 0);
                } else {
                    frame.key.extend_from_slice(bytes);
                }
            }
            return Ok(());
        }
        match role {
            Role::Id => {
                let room = (MAX_ID + 1).saturating_sub(self.token.len());
                self.token
                    .extend_from_slice(&bytes[..bytes.len().min(room)]);
                Ok(())
            }
            Role::Text => {
                self.flush_high(sink)?;
                sink.text(bytes)
            }
            _ => Ok(()),
        }
    }

    fn set_escape(&mut self, next: Escape) {
        if let Lex::String { escape, .. } = &mut self.lex {
            *escape = next;
        }
    }

    /// One byte inside a string that is a quote, a backslash or part of an escape.
    fn string_byte(
        &mut self,
        role: Role,
        key: bool,
        escape: Escape,
        b: u8,
        sink: &mut impl Sink,
    ) -> io::Result<()> {
        if role == Role::Id && !key {
            // The id is kept as written, escapes and all.
            if self.token.len() <= MAX_ID {
                self.token.push(b);
            }
        }
        match escape {
            Escape::None if b == b'"' => {
                self.lex = Lex::Between;
                if key {
                    self.key_done();
                } else if role == Role::Id {
                    self.atom_done(role);
                } else if role == Role::Text {
                    self.flush_high(sink)?;
                }
                Ok(())
            }
            Escape::None => {
                // Only a backslash reaches here outside an escape.
                self.set_escape(Escape::Backslash);
                Ok(())
            }
            Escape::Backslash => {
                self.set_escape(Escape::None);
                if b == b'u' {
                    self.set_escape(Escape::Unicode(0, 0));
                    return Ok(());
                }
                if key {
                    return self.string_bytes(role, key, &[unescape(b)], sink);
                }
                if role != Role::Text {
                    return Ok(());
                }
                self.flush_high(sink)?;
                sink.text(&[unescape(b)])
            }
            Escape::Unicode(n, value) => {
                let Some(digit) = char::from(b).to_digit(16) else {
                    self.set_escape(Escape::None);
                    return self.text_char(role, '\u{fffd}', sink);
                };
                let value = value * 16 + digit as u16;
                if n < 3 {
                    self.set_escape(Escape::Unicode(n + 1, value));
                    return Ok(());
                }
                self.set_escape(Escape::None);
                if role != Role::Text {
                    return Ok(());
                }
                match value {
                    0xD800..=0xDBFF => {
                        self.flush_high(sink)?;
                        self.high = Some(value);
                        Ok(())
                    }
                    0xDC00..=0xDFFF => {
                        let c = self.high.take().map_or('\u{fffd}', |high| {
                            let code = 0x10000
                                + ((u32::from(high) - 0xD800) << 10)
                                + (u32::from(value) - 0xDC00);
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        });
                        self.text_char(role, c, sink)
                    }
                    other => {
                        self.flush_high(sink)?;
                        let c = char::from_u32(u32::from(other)).unwrap_or('\u{fffd}');
                        self.text_char(role, c, sink)
                    }
                }
            }
        }
    }

    fn text_char(&mut self, role: Role, c: char, sink: &mut impl Sink) -> io::Result<()> {
        if role != Role::Text {
            return Ok(());
        }
        let mut buf = [0; 4];
        sink.text(c.encode_utf8(&mut buf).as_bytes())
    }

    /// A high surrogate not followed by its low half is a replacement character.
    fn flush_high(&mut self, sink: &mut impl Sink) -> io::Result<()> {
        if self.high.take().is_some() {
            sink.text("\u{fffd}".as_bytes())?;
        }
        Ok(())
    }

    /// A byte outside strings and atoms.
    fn structural(&mut self, b: u8, sink: &mut impl Sink) -> io::Result<()> {
        match b {
            b'{' | b'[' => {
                let role = self.value_role();
                self.stack.push(Frame {
                    role,
                    object: b == b'{',
                    expect_key: b == b'{',
                    key: Vec::new(),
                });
            }
            b'}' | b']' => {
                self.stack.pop();
            }
            b',' => {
                if let Some(frame) = self.stack.last_mut() {
                    frame.expect_key = frame.object;
                }
            }
            b'"' => {
                let key = self.stack.last().is_some_and(|f| f.object && f.expect_key);
                let role = if key { Role::Other } else { self.value_role() };
                if key && let Some(frame) = self.stack.last_mut() {
                    frame.key.clear();
                }
                if role == Role::Id {
                    self.token.clear();
                    self.token.push(b'"');
                }
                if role == Role::Text {
                    self.found.texts += 1;
                    if self.found.texts > 1 {
                        // Parts are joined by a newline, as the model reads them.
                        sink.text(b"\n")?;
                    }
                }
                self.lex = Lex::String {
                    role,
                    key,
                    escape: Escape::None,
                };
            }
            b':' => {}
            b if b.is_ascii_whitespace() => {}
            other => {
                let role = self.value_role();
                self.token.clear();
                self.token.push(other);
                self.lex = Lex::Atom { role };
            }
        }
        Ok(())
    }

    /// Ends the message (an atom may run to its end).
    pub(crate) fn finish(mut self) -> Found {
        if let Lex::Atom { role } = self.lex {
            self.atom_done(role);
        }
        self.found
    }
}

/// The byte a one-character escape stands for.
fn unescape(b: u8) -> u8 {
    match b {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'b' => 0x08,
        b'f' => 0x0c,
        other => other,
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
