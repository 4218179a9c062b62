//! Bytes as text for the byte-stream tests' messages (`memcached_pipelining`,
//! `memcached_streams`), included by each with `#[path]`.

/// Bytes as text, long runs of one byte shortened (`a×20000`), so a diff stays readable.
pub fn show(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|&&b| b == bytes[i]).count();
        if run > 16 {
            out.push_str(&format!("{}×{run}", bytes[i].escape_ascii()));
        } else {
            for &b in &bytes[i..i + run] {
                out.push_str(&b.escape_ascii().to_string());
            }
        }
        i += run;
    }
    out
}
