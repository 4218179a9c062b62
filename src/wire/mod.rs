//! memcached's text protocol (1.6.18), both directions, on the shared
//! [`Command`](crate::command::Command) / [`Reply`](crate::command::Reply) types.
//!
//! - Server side: [`RequestParser`] turns request bytes into [`Request`]s, with every quirk
//!   of memcached 1.6.18's parser (see `wire/request.rs`); replies are written with
//!   [`Reply::encode`](crate::command::Reply::encode).
//! - Client side: [`encode_command`] writes a command, [`ReplyParser`] reads replies.
//!
//! Why a codec of our own and not the `memcache` crate: its text mode turns `NOT_STORED`
//! into `Ok(())`, so a client cannot tell whether an `add` won, and every add-based
//! structure (locks, queues that claim slots with `add`) would be checked against a lie.
//! A checker needs every reply exactly as the server sent it, errors included.

pub(crate) mod cnum;
pub(crate) mod conn;
pub(crate) mod encode;
pub(crate) mod reply;
pub(crate) mod request;
pub(crate) mod tokenize;

pub use cnum::{is_c_space, safe_strtol, safe_strtoul, safe_strtoull};
pub use conn::{Connection, Output, Service, STREAM_BYTES};
pub use encode::{command_bytes, encode_command};
pub use reply::ReplyParser;
pub use request::{
    item_fits, Counted, Request, RequestParser, StatsGroup, DEFAULT_ITEM_SIZE_MAX, LINE_LIMIT,
    VERSION,
};

/// Bytes from a server that are not a memcached reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A line that is not a reply (or not the one the position calls for).
    #[error("unexpected reply line: expected {expected}, found {found:?}")]
    UnexpectedLine {
        /// What a correct server sends here.
        expected: &'static str,
        /// The line, rendered.
        found: String,
    },
    /// A `VALUE` data block not followed by `\r\n`.
    #[error("bad value block: expected \\r\\n after the data, found {found:?}")]
    BadDataTerminator {
        /// The two bytes found instead, rendered.
        found: String,
    },
    /// A reply line longer than any memcached sends.
    #[error("reply line too long: expected at most {max} bytes before \\r\\n")]
    LineTooLong {
        /// The limit.
        max: usize,
    },
}
