//! A reader for the part of EDN that Jepsen histories use: nil, booleans, integers,
//! strings, keywords, symbols, vectors, lists, sets, maps, comments, `#_` discards and
//! tagged values (the tag is dropped). Floats are rejected.
//!
//! Hand-written rather than a crate: the EDN crates report errors without the line, and
//! the histories need only this subset; every error here names the line, what was
//! expected and what was found.

use super::{excerpt, LineError, Value};

/// How deeply values may nest (collections in collections, tags and `#_` discards in
/// front of a value): a deeper value is an error naming its line, never a stack overflow.
pub const MAX_DEPTH: usize = 128;

/// A cursor over EDN text that counts lines.
pub struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    line: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`, whose first line is `line`.
    pub fn new(text: &'a str, line: usize) -> Self {
        Reader {
            s: text.as_bytes(),
            text,
            pos: 0,
            line,
            depth: 0,
        }
    }

    /// The current line.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Skips whitespace, commas and comments; whether anything is left.
    pub fn skip_space(&mut self) -> bool {
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' | b',' => self.pos += 1,
                b';' => {
                    while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => return true,
            }
        }
        false
    }

    /// The next byte after whitespace, without consuming it.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_space().then(|| self.s[self.pos])
    }

    /// Consumes one byte.
    pub fn bump(&mut self) {
        self.pos += 1;
    }

    fn rest(&self) -> String {
        let end = self.text[self.pos..]
            .find('\n')
            .map_or(self.text.len(), |i| self.pos + i);
        excerpt(&self.text[self.pos..end])
    }

    fn err(&self, expected: &str) -> LineError {
        let found = if self.pos >= self.s.len() {
            "the end of the file".to_string()
        } else {
            self.rest()
        };
        LineError::new(self.line, expected, found)
    }

    /// Reads one value, nested at most [`MAX_DEPTH`] deep.
    pub fn value(&mut self) -> Result<Value, LineError> {
        if self.depth >= MAX_DEPTH {
            return Err(LineError::new(
                self.line,
                format!("values nested at most {MAX_DEPTH} deep"),
                "deeper nesting",
            ));
        }
        self.depth += 1;
        let v = self.value_at_depth();
        self.depth -= 1;
        v
    }

    fn value_at_depth(&mut self) -> Result<Value, LineError> {
        if !self.skip_space() {
            return Err(self.err("an EDN value"));
        }
        match self.s[self.pos] {
            b'{' => {
                self.pos += 1;
                let items = self.seq(b'}')?;
                if items.len() % 2 != 0 {
                    return Err(LineError::new(
                        self.line,
                        "a map with a value for every key",
                        format!("{} forms", items.len()),
                    ));
                }
                let mut it = items.into_iter();
                let mut entries = Vec::new();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Value::Map(entries))
            }
            b'[' => {
                self.pos += 1;
                Ok(Value::List(self.seq(b']')?))
            }
            b'(' => {
                self.pos += 1;
                Ok(Value::List(self.seq(b')')?))
            }
            b'#' => {
                self.pos += 1;
                match self.s.get(self.pos) {
                    Some(b'{') => {
                        self.pos += 1;
                        Ok(Value::List(self.seq(b'}')?))
                    }
                    Some(b'_') => {
                        self.pos += 1;
                        self.value()?;
                        self.value()
                    }
                    _ => {
                        // A tagged value: drop the tag, keep the value.
                        let tag = self.token();
                        if tag.is_empty() {
                            return Err(self.err("a tag, a set or #_ after #"));
                        }
                        self.value()
                    }
                }
            }
            b'"' => self.string(),
            b':' => {
                self.pos += 1;
                let t = self.token();
                if t.is_empty() {
                    return Err(self.err("a keyword name after :"));
                }
                Ok(Value::Keyword(t.to_string()))
            }
            b'}' | b']' | b')' => Err(self.err("an EDN value")),
            _ => {
                let t = self.token();
                if t.is_empty() {
                    return Err(self.err("an EDN value"));
                }
                match t {
                    "nil" => Ok(Value::Nil),
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    _ => {
                        let first = t.as_bytes()[0];
                        let numeric = first.is_ascii_digit()
                            || ((first == b'-' || first == b'+')
                                && t.len() > 1
                                && t.as_bytes()[1].is_ascii_digit());
                        if numeric {
                            let digits = t.strip_suffix('N').unwrap_or(t);
                            digits.parse::<i64>().map(Value::Int).map_err(|_| {
                                let sign = digits.strip_prefix(['-', '+']).unwrap_or(digits);
                                let what = if sign.bytes().all(|b| b.is_ascii_digit()) {
                                    super::INTEGER_64
                                } else {
                                    "an integer (floats and ratios are not supported)"
                                };
                                LineError::new(self.line, what, t)
                            })
                        } else {
                            Ok(Value::Symbol(t.to_string()))
                        }
                    }
                }
            }
        }
    }

    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'(' | b')'
                | b'"' | b';' => break,
                _ => self.pos += 1,
            }
        }
        &self.text[start..self.pos]
    }

    fn seq(&mut self, close: u8) -> Result<Vec<Value>, LineError> {
        let mut items = Vec::new();
        loop {
            if !self.skip_space() {
                return Err(self.err(&format!("{} to close", close as char)));
            }
            if self.s[self.pos] == close {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.value()?);
        }
    }

    fn string(&mut self) -> Result<Value, LineError> {
        let start_line = self.line;
        self.pos += 1;
        let mut out = String::new();
        let mut chunk = self.pos;
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'"' => {
                    out.push_str(&self.text[chunk..self.pos]);
                    self.pos += 1;
                    return Ok(Value::Str(out));
                }
                b'\\' => {
                    out.push_str(&self.text[chunk..self.pos]);
                    let c = self.s.get(self.pos + 1).copied();
                    out.push(match c {
                        Some(b'n') => '\n',
                        Some(b't') => '\t',
                        Some(b'r') => '\r',
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        _ => return Err(self.err("an escape \\n \\t \\r \\\" or \\\\")),
                    });
                    self.pos += 2;
                    chunk = self.pos;
                }
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
        Err(LineError::new(
            start_line,
            "a closing \" for the string",
            "the end of the file",
        ))
    }
}

/// Parses exactly one value from `text` (nothing but space after it).
pub fn parse_one(text: &str, line: usize) -> Result<Value, LineError> {
    let mut r = Reader::new(text, line);
    let v = r.value()?;
    if r.skip_space() {
        return Err(r.err("nothing after the value"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_jepsen_values() {
        let v = parse_one(
            r#"{:process 0, :type :ok, :f :cas, :value [1 -2] :k "a\"b" :s #{1} #_ 5 :n nil}"#,
            1,
        )
        .unwrap();
        assert_eq!(v.get("process"), Some(&Value::Int(0)));
        assert_eq!(v.get("type"), Some(&Value::Keyword("ok".into())));
        assert_eq!(
            v.get("value"),
            Some(&Value::List(vec![Value::Int(1), Value::Int(-2)]))
        );
        assert_eq!(v.get("k"), Some(&Value::Str("a\"b".into())));
        assert_eq!(v.get("n"), Some(&Value::Nil));
        assert_eq!(
            parse_one("#jepsen.history.Op{:f :read}", 1)
                .unwrap()
                .get("f"),
            Some(&Value::Keyword("read".into()))
        );
    }

    #[test]
    fn errors_name_line_and_what() {
        let e = parse_one("{:a\n 1.5}", 1).unwrap_err();
        assert_eq!(
            e,
            LineError::new(2, "an integer (floats and ratios are not supported)", "1.5")
        );
        let e = parse_one("[1 2", 7).unwrap_err();
        assert_eq!(e.line, 7);
        assert_eq!(e.found, "the end of the file");
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_one(&ok, 1).is_ok());
        for deep in [
            format!("\n{}", "[".repeat(1_000_000)),
            format!("\n{}1", "#_ ".repeat(1_000_000)),
            format!("\n{}1", "#t ".repeat(1_000_000)),
            format!("\n{}", "{:a ".repeat(1_000_000)),
        ] {
            let e = parse_one(&deep, 1).unwrap_err();
            assert_eq!(
                e,
                LineError::new(2, "values nested at most 128 deep", "deeper nesting")
            );
        }
    }
}
