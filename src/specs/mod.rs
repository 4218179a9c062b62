//! The sequential specifications kvsim ships, one per file. Each implements
//! [`SequentialSpec`](crate::spec::SequentialSpec) and
//! [`FromRaw`](crate::formats::FromRaw) (so `kvsim check-history` can read its operations
//! from history files); add your own the same way.
//!
//! | name | spec | operations (`f` in history files) |
//! |---|---|---|
//! | `register` | [`register::RegisterSpec`] | read, write |
//! | `cas-register` | [`cas_register::CasRegisterSpec`] | read, write, cas `[old new]` |
//! | `kv` | [`kv::KvSpec`] | get, put, append (with `key`); partitioned by key |
//! | `counter` | [`counter::CounterSpec`] | read, add `n`, incr/decr `n` (returning the new value) |
//! | `queue` | [`queue::QueueSpec`] | enqueue `v`, dequeue (nil when empty) |
//! | `mutex` | [`mutex::MutexSpec`] | acquire, try-acquire, release (owner: the process) |
//! | `set` | [`set::SetSpec`] | add `v`, remove `v`, contains `v`, read (all members) |
//! | `list-append` | [`list_append::ListAppendSpec`] | append/read with `key`, or txn `[[:append k v] [:r k nil]]` |
//! | `multi-register` | [`multi_register::MultiRegisterSpec`] | txn `[[:read :x nil] [:write :y 2]]` (Knossos's multi-register) |

pub mod cas_register;
pub mod counter;
pub mod kv;
pub mod list_append;
pub mod multi_register;
pub mod mutex;
pub mod queue;
pub mod register;
pub mod set;

/// The spec names `kvsim check-history --spec` accepts.
pub const NAMES: [&str; 9] = [
    "register",
    "cas-register",
    "kv",
    "counter",
    "queue",
    "mutex",
    "set",
    "list-append",
    "multi-register",
];
