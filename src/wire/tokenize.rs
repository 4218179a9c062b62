//! memcached 1.6.18's command-line tokenizer (`tokenize_command`, `proto_text.c`).
//!
//! It splits on the space byte only (a TAB is part of a token), collapses runs of spaces,
//! and stops after 23 words: the rest of the line is left for a second pass, which only the
//! retrieval commands make (so a multi-get can name any number of keys, while any other
//! command with more than 23 words fails its arity check).

/// The most tokens one pass yields, the terminal one included (`MAX_TOKENS`).
pub const MAX_TOKENS: usize = 24;

/// One pass of the tokenizer over a line (already cut at its first NUL).
#[derive(Debug, PartialEq, Eq)]
pub struct Tokens<'a> {
    /// The words, at most `MAX_TOKENS - 1`.
    pub words: Vec<&'a [u8]>,
    /// What the pass left unread (only when it stopped at 23 words), else `None`.
    pub rest: Option<&'a [u8]>,
}

impl Tokens<'_> {
    /// memcached's `ntokens`: the words plus the terminal token.
    pub fn ntokens(&self) -> usize {
        self.words.len() + 1
    }

    /// The last word (`tokens[ntokens - 2]`), if any.
    pub fn last(&self) -> Option<&[u8]> {
        self.words.last().copied()
    }
}

/// Splits `line` as `tokenize_command(line, tokens, MAX_TOKENS)` does.
pub fn tokenize(line: &[u8]) -> Tokens<'_> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i] == b' ' {
            if start != i {
                words.push(&line[start..i]);
                if words.len() == MAX_TOKENS - 1 {
                    let rest = &line[i + 1..];
                    return Tokens {
                        words,
                        rest: (!rest.is_empty()).then_some(rest),
                    };
                }
            }
            start = i + 1;
        }
        i += 1;
    }
    if start != i {
        words.push(&line[start..i]);
    }
    Tokens { words, rest: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_only_and_collapsed() {
        let t = tokenize(b"  get\ta  b ");
        assert_eq!(t.words, vec![&b"get\ta"[..], b"b"]);
        assert_eq!(t.ntokens(), 3);
        assert_eq!(t.rest, None);
        assert_eq!(tokenize(b"").ntokens(), 1);
    }

    #[test]
    fn stops_after_twenty_three_words() {
        let line: Vec<u8> = (0..30)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes();
        let t = tokenize(&line);
        assert_eq!(t.words.len(), 23);
        assert_eq!(t.ntokens(), MAX_TOKENS);
        assert_eq!(t.rest, Some(&b"w23 w24 w25 w26 w27 w28 w29"[..]));
        // Exactly 23 words, with or without a trailing space: nothing left over.
        let line23: Vec<u8> = (0..23)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes();
        assert_eq!(tokenize(&line23).rest, None);
        let mut with_space = line23.clone();
        with_space.push(b' ');
        assert_eq!(tokenize(&with_space).rest, None);
        assert_eq!(tokenize(&with_space).ntokens(), MAX_TOKENS);
    }
}
