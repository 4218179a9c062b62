//! The world's faults: which it can take at a step (the order replay choices index) and
//! what applying one does. The fault is the trace's own ([`Fault`]): what the world
//! applies is what the trace records (a `delay` with its request, once it is known).

use super::{
    Clients, CommandRef, Delivered, Halt, HistoryCell, InFlight, Phase, Rules, Sink, Tail, World,
};
use crate::fault::{Fault, Pending};
use crate::history::Mark;
use crate::scenario::FaultKind;
use crate::sim::trace::Event;
use crate::store::Store;
use std::fmt::Debug;

/// What the fault enumeration needs to know about one client.
#[derive(Clone, Copy, Debug)]
struct FaultClient {
    in_op: bool,
    calling: bool,
    finished: bool,
    crashed: bool,
    paused_until: u64,
}

impl<Op: Clone + Debug, Ret: Clone + Debug, R, H: HistoryCell<Op, Ret>> World<Op, Ret, R, H> {
    /// The faults possible now of the kinds `kinds`, in the world's order (the order
    /// replay choices index; budgets are the driver's).
    pub(crate) fn faults(&self, rules: Rules, kinds: &[FaultKind], out: &mut Vec<Fault<Pending>>) {
        out.clear();
        let now = self.now;
        let cfg = rules.cfg;
        let servers = || {
            self.servers
                .iter()
                .map(|sv| (sv.down_until.is_some(), &sv.store))
        };
        let clients = || {
            self.clients.iter().map(|cl| FaultClient {
                in_op: matches!(
                    cl.phase,
                    Phase::Calling | Phase::Sleeping(_) | Phase::TimingOut(_)
                ),
                calling: cl.phase == Phase::Calling,
                finished: cl.phase.finished(),
                crashed: cl.phase == Phase::Crashed,
                paused_until: cl.paused_until,
            })
        };
        for &kind in kinds {
            match kind {
                FaultKind::Evict => {
                    for (shard, (down, store)) in servers().enumerate() {
                        if down {
                            continue;
                        }
                        for key in store.live_keys(now) {
                            out.push(Fault::Evict { shard, key });
                        }
                    }
                }
                FaultKind::Expire => {
                    // To the next expiry (or a second on).
                    let next = servers()
                        .filter_map(|(_, store)| store.next_expiry_ms(now))
                        .min();
                    let to = next.unwrap_or(now + 1000).max(now + 1);
                    out.push(Fault::AdvanceTime { by_ms: to - now });
                }
                FaultKind::Skew => {
                    for (client, cl) in clients().enumerate() {
                        if !cl.finished {
                            let j = cfg.clock_jump_ms as i64;
                            out.push(Fault::ClockJump { client, by_ms: j });
                            out.push(Fault::ClockJump { client, by_ms: -j });
                        }
                    }
                }
                FaultKind::Restart => {
                    for (shard, (down, _)) in servers().enumerate() {
                        if !down {
                            let persistent = cfg.persistent;
                            out.push(Fault::Restart { shard, persistent });
                        }
                    }
                }
                FaultKind::Crash => {
                    for (client, cl) in clients().enumerate() {
                        if cl.in_op && !cl.crashed {
                            out.push(Fault::Crash { client });
                        }
                    }
                }
                FaultKind::Lose => {
                    for (client, cl) in clients().enumerate() {
                        if cl.calling && cl.paused_until <= now {
                            out.push(Fault::Lose {
                                client,
                                reply: false,
                            });
                            out.push(Fault::Lose {
                                client,
                                reply: true,
                            });
                        }
                    }
                }
                FaultKind::Pause => {
                    for (client, cl) in clients().enumerate() {
                        if cl.in_op && !cl.crashed && cl.paused_until <= now {
                            for &ms in &cfg.pause_ms {
                                out.push(Fault::Pause { client, ms });
                            }
                        }
                    }
                }
                FaultKind::ShardFail => {
                    let n = self.servers.len();
                    if n > 1 && servers().all(|(down, _)| !down) {
                        for shard in 0..n {
                            let ms = cfg.shard_down_ms;
                            out.push(Fault::ShardDown { shard, ms });
                        }
                    }
                }
                FaultKind::Delay => {
                    for (client, cl) in clients().enumerate() {
                        if cl.calling && cl.paused_until <= now {
                            for &ms in &cfg.delay_ms {
                                let command = Pending;
                                out.push(Fault::Delay {
                                    client,
                                    command,
                                    ms,
                                });
                            }
                        }
                    }
                }
                // The store's own: the memory limit evicts, the world chooses nothing.
                FaultKind::Lru => {}
            }
        }
    }

    /// Applies a fault the world enumerated ([`World::faults`]), and tells the sink.
    pub(crate) fn apply_fault(
        &mut self,
        rules: Rules,
        fault: Fault<Pending>,
        clients: &mut impl Clients<Op, Ret, R>,
        sink: &mut impl Sink,
    ) {
        if let Some(k) = fault.kind() {
            if let Some(k) = rules.kinds.iter().position(|kind| *kind == k) {
                self.faults_used[k] += 1;
            }
        }
        let lasts_ms = fault.lasts_ms();
        // A delay holds back the client's pending request, which its driver knows.
        let mut request = None;
        if let Fault::Delay { client, .. } = fault {
            match clients.command(client, &self.clients[client]) {
                Some(command) => request = Some(command.into_command()),
                None => {
                    self.halt = Some(Halt::Nondeterministic { client });
                    return;
                }
            }
        }
        let fault = fault.map_request(|Pending| request.expect("a delay's request"));
        let (client, record) = match fault {
            Fault::Evict { shard, ref key } => {
                self.servers[shard].store.evict(key);
                (None, Some(fault))
            }
            Fault::AdvanceTime { by_ms } => {
                self.now += by_ms;
                (None, Some(fault))
            }
            Fault::ClockJump { client, by_ms } => {
                self.clients[client].offset_ms += by_ms;
                (Some(client), Some(fault))
            }
            Fault::Restart { shard, .. } => {
                self.servers[shard].store.restart(self.now);
                (None, Some(fault))
            }
            Fault::Crash { client: c } => {
                // The crashed operation's history entry gets a `crash` mark: a critical
                // section it was in ends here (see `check::mutex`).
                self.seq += 1;
                self.tail = Tail::Marks;
                let hi = self.clients[c].hist_index as usize;
                let mark = Mark {
                    label: "crash".into(),
                    seq: self.seq,
                    time_ms: self.time(rules),
                };
                self.history.edit().ops[hi].marks.push(mark);
                let cl = &mut self.clients[c];
                cl.phase = Phase::Crashed;
                clients.end(c, cl, false);
                (Some(c), Some(fault))
            }
            // The trace records it as the call's delivery.
            Fault::Lose { client, reply } => {
                self.step(rules, client, Some(reply), clients, sink);
                (None, None)
            }
            Fault::Pause { client, ms } => {
                self.clients[client].paused_until = self.now + ms;
                (Some(client), Some(fault))
            }
            Fault::Delay {
                client,
                ref command,
                ms,
            } => {
                let command = command.clone();
                if sink.on() {
                    sink.event(self.now, Some(client), Event::Fault(fault));
                }
                self.delay(rules, client, command, ms, clients, sink);
                (None, None)
            }
            Fault::ShardDown { shard, ms } => {
                self.servers[shard].down_until = Some(self.now + ms);
                // It comes back empty, whatever its mode: the machine failed.
                let cfg = self.servers[shard].store.config().clone();
                self.servers[shard].store = Store::new(cfg, self.now);
                (None, Some(fault))
            }
            Fault::LruEvict { .. } | Fault::ShardUp { .. } => {
                unreachable!("the world does not choose {fault}")
            }
        };
        if let Some(fault) = record {
            if sink.on() {
                sink.event(self.now, client, Event::Fault(fault));
            }
        }
        let end = self
            .last_fault
            .map_or(0, |(_, _, end)| end)
            .max(self.now + lasts_ms);
        self.last_fault = Some((self.seq, self.now, end));
    }

    /// The `delay` fault: client `c`'s pending request `command` lands `ms` late, and the
    /// client times out meanwhile.
    fn delay(
        &mut self,
        rules: Rules,
        c: usize,
        command: crate::command::Command,
        ms: u64,
        clients: &mut impl Clients<Op, Ret, R>,
        sink: &mut impl Sink,
    ) {
        let shard = self.shard_of(&command);
        let at = self.now + ms;
        let pos = self.in_flight.partition_point(|f| f.at <= at);
        self.in_flight.insert(
            pos,
            InFlight {
                at,
                shard,
                command: command.clone(),
                client: c,
            },
        );
        sink.kv_call();
        self.now += rules.cfg.step_ms;
        clients.deliver(c, Delivered::Timeout, command.into());
        self.time_out(rules, c, clients, sink);
    }
}
