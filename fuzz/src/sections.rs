//! The input format of the targets that take several values: readable, so seeds are
//! hand-written and a reproducer can be read as it is.
//!
//! An input is a list of sections. A line `=== <header>` starts a section; its body is
//! everything up to the newline before the next header line (or the end). Bytes before the
//! first header form a section with an empty header.
//!
//! ```text
//! === file a.txt
//! one
//! two
//! === patch
//! *** Begin Patch
//! ```

/// One section: its header (after `=== `) and its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    pub header: &'a str,
    pub body: &'a [u8],
}

impl Section<'_> {
    /// The header's words after the first: `=== page 3 10` has the arguments `3` and `10`.
    pub fn args(&self) -> impl Iterator<Item = &str> {
        self.header.split_whitespace().skip(1)
    }

    /// The `index`th argument as a number, or `default`.
    pub fn number(&self, index: usize, default: u64) -> u64 {
        self.args()
            .nth(index)
            .and_then(|word| word.parse().ok())
            .unwrap_or(default)
    }

    /// The header's first word.
    pub fn name(&self) -> &str {
        self.header.split_whitespace().next().unwrap_or("")
    }
}

const MARK: &[u8] = b"=== ";

/// Splits `data` into sections. A header that is not UTF-8 makes the whole input `None`.
pub fn split(data: &[u8]) -> Option<Vec<Section<'_>>> {
    // Where each header line starts: at the input's start or after a newline.
    let starts: Vec<usize> = (0..data.len())
        .filter(|&i| (i == 0 || data[i - 1] == b'\n') && data[i..].starts_with(MARK))
        .collect();
    let mut sections = Vec::new();
    let first = starts.first().copied().unwrap_or(data.len());
    if first > 0 || starts.is_empty() {
        let body = &data[..first];
        sections.push(Section {
            header: "",
            body: body
                .strip_suffix(b"\n")
                .filter(|_| !starts.is_empty())
                .unwrap_or(body),
        });
    }
    for (n, &start) in starts.iter().enumerate() {
        let line = &data[start + MARK.len()..];
        let end = line.iter().position(|&b| b == b'\n');
        let header = std::str::from_utf8(&line[..end.unwrap_or(line.len())]).ok()?;
        let body_start = end.map_or(data.len(), |e| start + MARK.len() + e + 1);
        let body_end = starts.get(n + 1).map_or(data.len(), |&next| next - 1);
        sections.push(Section {
            header,
            body: data
                .get(body_start..body_end.max(body_start))
                .unwrap_or(&[]),
        });
    }
    Some(sections)
}

/// The first section named `name`.
pub fn get<'a>(sections: &[Section<'a>], name: &str) -> Option<Section<'a>> {
    sections.iter().copied().find(|s| s.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_headers_and_bodies() {
        let data = b"=== file a.txt\none\ntwo\n=== patch\nP\n";
        let sections = split(data).unwrap();
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].header, "file a.txt");
        assert_eq!(sections[0].body, b"one\ntwo");
        assert_eq!(sections[1].header, "patch");
        assert_eq!(sections[1].body, b"P\n");
    }

    #[test]
    fn text_before_the_first_header_is_unnamed() {
        let sections = split(b"raw\n=== x 1 2\n").unwrap();
        assert_eq!(sections[0].header, "");
        assert_eq!(sections[0].body, b"raw");
        assert_eq!(sections[1].number(1, 0), 2);
        assert_eq!(sections[1].body, b"");
    }
}
