//! The handle a simulated client's structure code talks to: a [`Kv`] whose every call
//! parks the client until the scheduler delivers it.

use crate::command::{Command, Reply};
use crate::kv::{Kv, KvError};
use crate::rng::SimRng;
use crate::sim::{Delivered, SimConfig};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// A client's clock: `offset + true time × (1 + drift) + jumps`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientClock {
    /// Fixed offset from true time, in ms.
    pub offset_ms: i64,
    /// Rate error in parts per million.
    pub drift_ppm: i64,
}

impl ClientClock {
    /// The clock's reading (unix ms) at true time `true_ms` (unix ms).
    pub fn read(&self, true_ms: u64, epoch_ms: u64) -> u64 {
        let elapsed = true_ms.saturating_sub(epoch_ms) as i128;
        let drifted = elapsed + elapsed * self.drift_ppm as i128 / 1_000_000;
        (epoch_ms as i128 + drifted + self.offset_ms as i128).max(0) as u64
    }

    /// How much true time passes while this clock advances `ms`.
    pub fn true_duration(&self, ms: u64) -> u64 {
        let d = ms as i128 * 1_000_000 / (1_000_000 + self.drift_ppm as i128).max(1);
        d.max(0) as u64
    }
}

/// What a parked client asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    /// A KV command.
    Command(Command),
    /// A wait of this many ms by its own clock: a sleep, or the structure's work.
    Sleep(u64, Wait),
}

/// Why a client waits: a sleep of its own ([`Kv::sleep_ms`]) or its structure's work
/// ([`Kv::work`]); the trace names them apart ([`crate::sim::Event::Work`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Wait {
    /// A sleep (a back-off, a poll's pause).
    Sleep,
    /// The structure's own work between store calls.
    Work,
}

/// The state a client shares with the executor.
#[derive(Debug)]
pub(crate) struct Slot {
    pub request: Option<Request>,
    /// What came back for the command sent: its reply, or else [`Slot::error`]. Kept
    /// apart (not as one `Result`): the reply is moved in as the store made it, not
    /// shifted into a larger enum's layout (the profile showed such copies stall on loads
    /// that straddle two of the previous copy's stores).
    pub reply: Option<Reply>,
    /// The error the client sees instead of a reply (a timeout, a refused connection).
    pub error: Option<KvError>,
    /// The command of a send that timed out, handed back with the timeout
    /// ([`Slot::deliver`]), so that a library with retries left sends it again without
    /// having kept a copy of every command.
    pub resend: Option<Command>,
    pub true_ms: u64,
    pub epoch_ms: u64,
    pub clock: ClientClock,
    /// The seed of the current operation's random stream; the generator is made on the
    /// first draw (most operations draw nothing).
    pub rng_seed: u64,
    pub rng: Option<SimRng>,
    pub marks: Vec<&'static str>,
    /// How often the client read its clock (the stateright bridge records a poll's time
    /// only when the client read it; no effect on a run).
    pub clock_reads: u32,
    /// How often the client library sends a command again after a timeout
    /// ([`crate::sim::SimConfig::retries`]).
    pub retries: u32,
    /// How long each [`Kv::work`] call takes ([`crate::sim::SimConfig::work_ms`]).
    pub work_ms: [u64; 2],
    /// The current operation's stream of work durations, apart from its random numbers
    /// (so that a run with work draws the same keys and tokens as one without); made on
    /// the first draw.
    pub work_rng: Option<SimRng>,
    /// The probes hit so far ([`Kv::probe`]), in order.
    pub probes: Vec<&'static str>,
}

impl Slot {
    /// Hands the client what came back for its `command`: the reply, or the error (each
    /// replaces anything left of the other); a timeout hands the command back too
    /// ([`Slot::resend`]).
    #[inline]
    pub(crate) fn deliver(&mut self, delivered: Delivered, command: Command) {
        match delivered {
            Delivered::Reply(reply) => self.put_reply(reply),
            other => {
                if self.put_failure(&other, &command) {
                    self.resend = Some(command);
                }
            }
        }
    }

    /// [`Slot::deliver`] of a reply.
    #[inline]
    pub(crate) fn put_reply(&mut self, reply: Reply) {
        self.reply = Some(reply);
        self.error = None;
    }

    /// [`Slot::deliver`] of copies (the command is copied only for a timeout).
    pub(crate) fn deliver_copy(&mut self, delivered: &Delivered, command: &Command) {
        match delivered {
            Delivered::Reply(reply) => self.put_reply(reply.clone()),
            other => {
                if self.put_failure(other, command) {
                    self.resend = Some(command.clone());
                }
            }
        }
    }

    /// [`Slot::deliver`] of what is not a reply: its error. Whether it is a timeout (whose
    /// command the caller hands back, [`Slot::resend`]).
    fn put_failure(&mut self, delivered: &Delivered, command: &Command) -> bool {
        self.reply = None;
        self.error = delivered.to_result(command).err();
        matches!(delivered, Delivered::Timeout)
    }

    /// Forgets what came back (a poll that delivers nothing).
    pub(crate) fn clear_delivery(&mut self) {
        self.reply = None;
        self.error = None;
    }
}

/// A simulated client's KV handle. Cloning it gives another handle to the same client.
#[derive(Clone, Debug)]
pub struct SimClient {
    pub(crate) slot: Rc<RefCell<Slot>>,
}

impl SimClient {
    pub(crate) fn new(seed: u64, epoch_ms: u64, clock: ClientClock) -> SimClient {
        SimClient {
            slot: Rc::new(RefCell::new(Slot {
                request: None,
                reply: None,
                error: None,
                resend: None,
                true_ms: epoch_ms,
                epoch_ms,
                clock,
                rng_seed: seed,
                rng: None,
                marks: Vec::new(),
                clock_reads: 0,
                retries: 0,
                work_ms: [0, 0],
                work_rng: None,
                probes: Vec::new(),
            })),
        }
    }

    /// The same handle with the run's client knobs: its client library sends a
    /// timed-out command again up to `cfg.retries` times, and its work takes
    /// `cfg.work_ms`.
    pub(crate) fn configured(self, cfg: &SimConfig) -> SimClient {
        {
            let mut slot = self.slot.borrow_mut();
            slot.retries = cfg.retries;
            slot.work_ms = cfg.work_ms;
        }
        self
    }

    /// Starts a new operation whose random numbers come from `rng_seed`.
    pub(crate) fn start_op(&self, rng_seed: u64) {
        let mut slot = self.slot.borrow_mut();
        slot.rng_seed = rng_seed;
        slot.rng = None;
        slot.work_rng = None;
    }
}

/// [`SimClient`]'s [`Kv::execute`]: sends the command and waits for what comes back; a
/// timeout while retries are left sends it again (the executor hands a timed-out command
/// back, [`Slot::deliver`]: the profile showed a copy made and dropped at every call of a
/// client with retries). One future, not one per send: it runs at every KV call of a
/// simulated client.
struct Execute<'a> {
    client: &'a SimClient,
    /// The command, until it is sent.
    command: Option<Command>,
    /// Sends so far.
    sent: u32,
    /// The handle's retries, read at the first poll.
    retries: Option<u32>,
    /// Whether a send waits for its reply.
    parked: bool,
}

impl Future for Execute<'_> {
    type Output = Result<Reply, KvError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut slot = this.client.slot.borrow_mut();
        let retries = *this.retries.get_or_insert(slot.retries);
        if this.parked {
            this.parked = false;
            // A send with retries left timed out: send it again. (A command handed back
            // and not sent again stays in the slot until the next timeout replaces it.)
            // What came back is judged where it lies and moved out once, straight into
            // the result: the profile (`kvsim check`) showed a copy through the stack
            // stall on a load that straddled two of the copy's own stores.
            let again = this.sent <= retries && matches!(slot.error, Some(KvError::Timeout { .. }));
            if !again {
                if let Some(error) = slot.error.take() {
                    return Poll::Ready(Err(error));
                }
                return Poll::Ready(Ok(slot
                    .reply
                    .take()
                    .expect("the executor resumes a client only with its reply")));
            }
            slot.error = None;
            this.command = slot.resend.take();
        }
        let command = this
            .command
            .take()
            .expect("a timed-out command is handed back to be sent again");
        this.sent += 1;
        slot.request = Some(Request::Command(command));
        this.parked = true;
        Poll::Pending
    }
}

/// Returns `Pending` once (the executor resumes the client when its request is served).
struct Park(bool);

impl Future for Park {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

impl Kv for SimClient {
    /// As a client library does: a command whose reply does not come is sent again, up
    /// to the handle's `retries` times (most libraries retry timeouts, also of commands
    /// that are not idempotent, such as `incr`).
    #[inline]
    fn execute(&self, command: Command) -> impl Future<Output = Result<Reply, KvError>> {
        Execute {
            client: self,
            command: Some(command),
            sent: 0,
            retries: None,
            parked: false,
        }
    }

    fn now_ms(&self) -> u64 {
        let mut s = self.slot.borrow_mut();
        s.clock_reads += 1;
        s.clock.read(s.true_ms, s.epoch_ms)
    }

    async fn sleep_ms(&self, ms: u64) {
        self.slot.borrow_mut().request = Some(Request::Sleep(ms, Wait::Sleep));
        Park(false).await;
    }

    /// As [`Kv::work`] does, but the trace shows the wait as the structure's work
    /// ([`crate::sim::Event::Work`]), not as a sleep.
    async fn work(&self) {
        let ms = self.work_ms();
        if ms > 0 {
            self.slot.borrow_mut().request = Some(Request::Sleep(ms, Wait::Work));
            Park(false).await;
        }
    }

    fn random_u64(&self) -> u64 {
        let mut slot = self.slot.borrow_mut();
        let seed = slot.rng_seed;
        slot.rng.get_or_insert_with(|| SimRng::new(seed)).next_u64()
    }

    fn mark(&self, label: &'static str) {
        self.slot.borrow_mut().marks.push(label);
    }

    fn probe(&self, name: &'static str) {
        self.slot.borrow_mut().probes.push(name);
    }

    /// Drawn from the operation's own stream of work durations, uniformly in the run's
    /// `work_ms` range; nothing is drawn when the range is `[0, 0]`.
    fn work_ms(&self) -> u64 {
        let mut slot = self.slot.borrow_mut();
        let [lo, hi] = slot.work_ms;
        if hi == 0 {
            return 0;
        }
        let seed = slot.rng_seed;
        slot.work_rng
            .get_or_insert_with(|| SimRng::derive(seed, WORK_STREAM))
            .range_inclusive(lo, hi)
    }
}

/// The stream number of work durations ([`SimRng::derive`]).
const WORK_STREAM: u64 = 0x776f_726b;
