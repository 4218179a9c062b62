//! kvsim over TCP: a client backend for real memcached servers, consistent hashing across
//! several of them, and `kvsim serve`.
