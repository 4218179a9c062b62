//! The explored state's identity: its hash, with cas uniques renamed.
//!
//! stateright keeps a state by its 64-bit hash only, so the hash *is* the state's
//! identity: two states that hash alike are explored once. Hashing a state as it is would
//! keep apart worlds that differ only in which cas unique each item got (the store hands
//! them out in the order the commands arrived, so two interleavings that end with the same
//! items give them different numbers). A client's code compares uniques only for equality
//! (it hands one back in a `cas` command), and so does the store unless a delayed
//! `flush_all` remembers one: so the hash names each unique by its first appearance
//! (servers in order, items in key order, then each client's recorded replies) instead of
//! its number. When a store orders uniques ([`crate::store::Store::orders_cas`]), the
//! state is hashed with the numbers.
//!
//! What this assumes, and a structure could break: that uniques are not turned into data
//! (a structure that stores a unique's digits in a value, or returns one as its result,
//! and later compares it with a unique from `gets`). Results are hashed with their numbers,
//! so the second only merges less; the first would merge states that differ.
//!
//! Every struct is destructured, so a field added later cannot be left out unnoticed.

use super::state::{Delivered, PollInput, Recorded, World};
use crate::command::{Reply, Value};
use crate::sim::{ClientState, ServerState};
use crate::store::CasNames;
use std::hash::{Hash, Hasher};

/// The explored state's hash (see the module's text). Only the explored world, whose
/// clients record their poll inputs, is hashed: the simulator's runner never hashes its
/// world.
impl<Op: Hash, Ret: Hash> Hash for World<Op, Ret, Recorded> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let World {
            servers,
            now,
            clients,
            history,
            seq,
            tail,
            tail_start,
            faults_used,
            last_fault,
            halt,
        } = self;
        let renamed = !servers.iter().any(|s| s.store.orders_cas());
        let mut names = CasNames::default();
        h.write_u8(renamed as u8);
        h.write_usize(servers.len());
        for ServerState { store, down_until } in servers {
            if renamed {
                store.hash_renamed(h, &mut names);
            } else {
                store.hash(h);
            }
            down_until.hash(h);
        }
        now.hash(h);
        h.write_usize(clients.len());
        for client in clients {
            let ClientState {
                phase,
                op_index,
                paused_until,
                offset_ms,
                ready_since,
                hist_index,
                rec: Recorded { alt, polls },
            } = client;
            phase.hash(h);
            op_index.hash(h);
            paused_until.hash(h);
            offset_ms.hash(h);
            alt.hash(h);
            ready_since.hash(h);
            hist_index.hash(h);
            h.write_usize(polls.len());
            for PollInput { clock, reply } in polls {
                clock.hash(h);
                match reply {
                    Some(Delivered::Reply(Reply::Values(values))) if renamed => {
                        h.write_u8(0);
                        h.write_usize(values.len());
                        for Value {
                            key,
                            flags,
                            data,
                            cas,
                        } in values
                        {
                            key.hash(h);
                            flags.hash(h);
                            data.hash(h);
                            cas.map(|c| names.name(c)).hash(h);
                        }
                    }
                    other => {
                        h.write_u8(1);
                        other.hash(h);
                    }
                }
            }
        }
        history.hash(h);
        seq.hash(h);
        tail.hash(h);
        tail_start.hash(h);
        faults_used.hash(h);
        last_fault.hash(h);
        halt.hash(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Command, StoreVerb};
    use crate::explore::state::{Phase, State};
    use crate::sim::Tail;
    use crate::store::{Store, StoreConfig};
    use std::hash::DefaultHasher;

    fn hash_of(s: &State<u8, u8>) -> u64 {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }

    fn state(stores: Vec<Store>) -> State<u8, u8> {
        World {
            servers: stores
                .into_iter()
                .map(|store| ServerState {
                    store,
                    down_until: None,
                })
                .collect(),
            now: 0,
            clients: Vec::new(),
            history: Default::default(),
            seq: 0,
            tail: Tail::Marks,
            tail_start: 0,
            faults_used: Vec::new(),
            last_fault: None,
            halt: None,
        }
    }

    fn set(store: &mut Store, key: &str, data: &str) {
        store.apply(
            0,
            &Command::Store {
                verb: StoreVerb::Set,
                key: key.as_bytes().to_vec(),
                flags: 0,
                exptime: 0,
                data: data.as_bytes().to_vec(),
                noreply: false,
            },
        );
    }

    #[test]
    fn stores_that_differ_only_in_their_uniques_hash_alike() {
        let mut a = Store::new(StoreConfig::default(), 0);
        set(&mut a, "x", "1");
        set(&mut a, "y", "2");
        let mut b = Store::new(StoreConfig::default(), 0);
        set(&mut b, "y", "2");
        set(&mut b, "x", "1");
        assert_ne!(a, b, "the uniques differ");
        assert_eq!(hash_of(&state(vec![a.clone()])), hash_of(&state(vec![b])));
        // Different data still hashes apart.
        let mut c = a.clone();
        set(&mut c, "x", "3");
        assert_ne!(hash_of(&state(vec![a])), hash_of(&state(vec![c])));
    }

    #[test]
    fn which_items_share_a_unique_with_a_client_is_kept() {
        // Two clients' replies naming x's unique and y's: swapping them is a different
        // state (the next cas of each client succeeds on a different key).
        let mut store = Store::new(StoreConfig::default(), 0);
        set(&mut store, "x", "1");
        set(&mut store, "y", "1");
        let gets = |key: &str, store: &mut Store| match store.apply(
            0,
            &Command::Get {
                with_cas: true,
                keys: vec![key.as_bytes().to_vec()],
            },
        ) {
            Reply::Values(v) => v,
            other => panic!("{other:?}"),
        };
        let vx = gets("x", &mut store);
        let vy = gets("y", &mut store);
        let with_reply = |values: Vec<Value>| {
            let mut s = state(vec![store.clone()]);
            s.clients.push(ClientState {
                phase: Phase::Calling,
                op_index: 0,
                paused_until: 0,
                offset_ms: 0,
                ready_since: None,
                hist_index: 0,
                rec: Recorded {
                    alt: 0,
                    polls: vec![PollInput {
                        clock: None,
                        reply: Some(Delivered::Reply(Reply::Values(values))),
                    }],
                },
            });
            s
        };
        let mut vx_as_y = vx.clone();
        vx_as_y[0].cas = vy[0].cas;
        assert_ne!(hash_of(&with_reply(vx)), hash_of(&with_reply(vx_as_y)));
    }
}
