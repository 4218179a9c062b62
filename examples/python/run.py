#!/usr/bin/env python3
"""Runs the articles' Python structures against ``kvsim serve`` under named faults and
checks their histories with ``kvsim check-history``.

    python3 examples/python/run.py [--only STRUCTURE[/FAULT]] [--keep DIR] [--seed N] [-v]

For each case (structure, fault): start ``target/release/kvsim serve`` on free loopback
ports (building it first if it is missing), run a few threads doing the structure's
operations through the article's own code, record every operation (``kvsim_history``),
inject the case's fault through the server's control channel, write the history to a
file and check it with ``kvsim check-history --spec SPEC --json``. A case expected to be a
violation gets a few rounds (a new server and new keys each) to show it. One line per
case; exit status 0 when every verdict is the expected one, 1 otherwise.

Python 3 standard library and pymemcache only (``pip install pymemcache``).
"""

import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(HERE))
KVSIM = os.path.join(ROOT, "target", "release", "kvsim")

try:
    import pymemcache  # noqa: F401
except ImportError:
    sys.exit("run.py: needs pymemcache (pip install pymemcache)")

from kvsim_history import History  # noqa: E402
from memcache_iface import Memcache  # noqa: E402
from article004 import MCCounter, MCLock, MCVisitorCounter, time as article_time  # noqa: E402
from article001 import Event, MCArray1, MCArray2, MCEventLog, MCTable  # noqa: E402

THREADS = 3
PAUSE_MS = 3000  # longer than the lock's 2 s expiry (article004.LOCK_TIMEOUT), with a
# second to spare for the next holder's get and set under load
CLIENT_TIMEOUT = 5.0  # longer than any pause, so a paused command completes
CASE_DEADLINE = 20.0  # seconds a case's threads may take


# ----------------------------------------------------------------------------------------
# The server and its control channel.


class ControlError(Exception):
    pass


class Server(object):
    """A ``kvsim serve`` process on free loopback ports."""

    def __init__(self, seed, control=True):
        self.seed = seed
        self.with_control = control
        self.proc = None
        self.port = None
        self.control_port = None
        self.stderr_lines = []

    def start(self):
        args = [KVSIM, "serve", "--listen", "127.0.0.1:0", "--seed", str(self.seed)]
        if self.with_control:
            args += ["--control", "127.0.0.1:0"]
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        ready = threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.stderr_lines.append(line.rstrip("\n"))
                m = re.search(r"listening on [^\s]*:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                m = re.search(r"control on [^\s]*:(\d+)", line)
                if m:
                    self.control_port = int(m.group(1))
                if self.port and (self.control_port or not self.with_control):
                    ready.set()
            ready.set()  # the process ended

        threading.Thread(target=drain, daemon=True).start()
        ready.wait(10)
        if self.port is None or (self.with_control and self.control_port is None):
            self.stop()
            raise RuntimeError("kvsim serve did not start: %s"
                               % " / ".join(l.strip() for l in self.stderr_lines[:3]))
        return self

    def memcache(self, before=None):
        return Memcache("127.0.0.1", self.port, timeout=CLIENT_TIMEOUT, before=before)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def serve_has_control():
    """Whether this kvsim's ``serve`` takes ``--control``."""
    out = subprocess.run([KVSIM, "serve", "--help"], capture_output=True, text=True)
    return "--control" in out.stdout


class Control(object):
    """``kvsim serve --control``'s line protocol: one command per line, answered by one
    line ``OK ...`` / ``NOT_FOUND`` / ``ERROR reason``, or, for ``conns`` and ``stats``,
    several lines ended by ``END``."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rw", newline="\n")
        self.lock = threading.Lock()

    def _send(self, line):
        self.file.write(line + "\n")
        self.file.flush()

    def command(self, line):
        with self.lock:
            self._send(line)
            reply = self.file.readline().rstrip("\r\n")
        if not reply or reply.startswith("ERROR"):
            raise ControlError("%s: %s" % (line, reply or "connection closed"))
        return reply

    def lines(self, line):
        with self.lock:
            self._send(line)
            out = []
            while True:
                reply = self.file.readline()
                if not reply:
                    raise ControlError("%s: connection closed" % line)
                reply = reply.rstrip("\r\n")
                if reply == "END":
                    return out
                if reply.startswith("ERROR"):
                    raise ControlError("%s: %s" % (line, reply))
                out.append(reply)

    def evict(self, key):
        return self.command("evict %s" % key)

    def restart(self):
        return self.command("restart")

    def drop_request(self, conn):
        return self.command("drop-request %s" % conn)

    def drop_reply(self, conn):
        return self.command("drop-reply %s" % conn)

    def delay_reply(self, conn, ms):
        return self.command("delay-reply %s %d" % (conn, ms))

    def pause(self, conn, ms):
        return self.command("pause %s %d" % (conn, ms))

    def clock(self, secs):
        return self.command("clock +%d" % secs)

    def conns(self):
        """{peer address: connection id}"""
        out = {}
        for line in self.lines("conns"):
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "CONN":
                out[parts[2]] = parts[1]
        return out

    def stats(self):
        return dict(l.split(None, 2)[1:] for l in self.lines("stats") if l.startswith("STAT"))

    def conn_of(self, mc):
        """The server's id of ``mc``'s connection (matched by its local address)."""
        me = mc.sockname()
        for _ in range(100):
            conns = self.conns()
            if me in conns:
                return conns[me]
            time.sleep(0.01)
        raise ControlError("conns: no connection from %s in %s" % (me, sorted(conns)))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ----------------------------------------------------------------------------------------
# Workloads. Each takes a Ctx and returns ({spec name: History}, whether its threads
# finished).


class Ctx(object):
    def __init__(self, server, control, fault, rng, name):
        self.server = server
        self.control = control
        self.fault = fault
        self.rng = rng
        self.name = name
        self.errors = []  # the harness's own failures (not the structure's)

    def memcache(self, before=None):
        return self.server.memcache(before)

    def rand(self, p):
        return random.Random(self.rng.random() * 1e9 + p)


def run_threads(ctx, targets):
    """Runs the callables in threads; False if one did not end by CASE_DEADLINE. An
    exception that escapes a thread (the harness's, e.g. a refused control command) is
    kept in ctx.errors: the case's verdict is then an error, not a finding."""
    def guarded(target):
        try:
            target()
        except Exception as e:
            ctx.errors.append("%s: %s" % (type(e).__name__, e))

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    end = time.monotonic() + CASE_DEADLINE
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    return not any(t.is_alive() for t in threads)


def once_hook(ctx, command, key, action):
    """A ``Memcache.before`` hook that runs ``action(mc)`` the first time any thread is
    about to send ``command`` on ``key``: the fault lands at that exact point of the
    structure's code."""
    state = {"done": False}
    guard = threading.Lock()

    def hook(mc, cmd, k):
        if cmd != command or k != key:
            return
        with guard:
            if state["done"]:
                return
            state["done"] = True
        try:
            action(mc)
        except Exception as e:
            ctx.errors.append("fault at %s %s: %s: %s" % (cmd, k, type(e).__name__, e))
            raise

    return hook


def counter(ctx):
    """004's MCCounter: increments (``add 1``) and reads (``read``) -> spec counter.
    restart: the server restarts after a few increments; evict: the counter's key is
    evicted. Either way the next increment re-creates it from the increment alone.
    drop-reply: every connection's next request is applied and its reply lost (the
    operation is recorded ``info``, outcome unknown): the counter survives that."""
    h = History()
    ops = 25
    acked = threading.Semaphore(0)

    def worker(p):
        mc = ctx.memcache()
        c = MCCounter(mc, ctx.name)
        rng = ctx.rand(p)
        for _ in range(ops):
            if rng.random() < 0.6:
                done, _ = h.call(p, "add", lambda: c.increment(1), value=1)
                if done:
                    acked.release()
            else:
                h.call(p, "read", c.value, result=int)
            time.sleep(rng.uniform(0, 0.004))
        mc.close()

    def nemesis():
        if ctx.fault == "none":
            return
        for _ in range(8):  # after 8 acknowledged increments
            acked.acquire(timeout=5)
        if ctx.fault == "restart":
            ctx.control.restart()
        elif ctx.fault == "evict":
            ctx.control.evict("counter" + ctx.name)
        elif ctx.fault == "drop-reply":
            ctx.control.drop_reply("all")

    finished = run_threads(ctx, [lambda p=p: worker(p) for p in range(THREADS)] + [nemesis])
    final_read(ctx, h, lambda mc: MCCounter(mc, ctx.name).value(), "read", int)
    return {"counter": h}, finished


def final_read(ctx, h, fn, f, result, key=None):
    """One more read by a fresh process after every thread is done."""
    mc = ctx.memcache()
    h.call(THREADS, f, lambda: fn(mc), key=key, result=result)
    mc.close()


def lock(ctx):
    """004's lock protecting a number: each operation takes the lock (spinning on
    try_lock, as 001's callers do), reads the number, writes it + 1 and unlocks.
    Recorded twice: as ``incr 1`` returning the number it wrote (spec counter: a lost
    update returns the same value twice) and as acquire/release (spec mutex).
    pause: the first holder's connection stalls for PAUSE_MS (longer than the lock's
    expiry) just before it writes the number."""
    hc = History()
    hm = History(t0=hc.t0)
    key = "protected" + ctx.name
    hook = None
    if ctx.fault == "pause":
        hook = once_hook(ctx, "set", key,
                         lambda mc: ctx.control.pause(ctx.control.conn_of(mc), PAUSE_MS))
    ops = 4

    def worker(p):
        mc = ctx.memcache(hook)
        lk = MCLock(mc, ctx.name)
        for _ in range(ops):
            hc.invoke(p, "incr", 1)
            hm.invoke(p, "acquire")
            try:
                while not lk.try_lock():
                    pass
            except Exception as e:
                hm.info(p, "acquire", repr(e))
                hc.info(p, "incr", repr(e))
                continue
            hm.ok(p, "acquire")
            written = None
            try:
                try:
                    v = mc.get(key)
                except KeyError:
                    v = 0
                mc.set(key, v + 1)
                written = v + 1
            except Exception:
                pass
            hm.invoke(p, "release")
            try:
                lk.unlock()
                hm.ok(p, "release")
            except Exception as e:
                hm.info(p, "release", repr(e))
            if written is None:
                hc.info(p, "incr")
            else:
                hc.ok(p, "incr", written)
        mc.close()

    finished = run_threads(ctx, [lambda p=p: worker(p) for p in range(THREADS)])
    return {"counter": hc, "mutex": hm}, finished


def array_append(ctx):
    """001's MCArray2: add(x) of unique x (``append``) and fetch() (``read``), on one key
    -> spec list-append. No fault needed: the printed loop returns when append misses, so
    nothing is ever stored."""
    h = History()
    ops = 12

    def worker(p):
        mc = ctx.memcache()
        arr = MCArray2(mc, ctx.name)
        rng = ctx.rand(p)
        for i in range(ops):
            if rng.random() < 0.6:
                x = p * 100 + i
                h.call(p, "append", lambda: arr.add(x), value=x, key=ctx.name)
            else:
                h.call(p, "read", arr.fetch, key=ctx.name, result=list)
        mc.close()

    finished = run_threads(ctx, [lambda p=p: worker(p) for p in range(THREADS)])
    final_read(ctx, h, lambda mc: MCArray2(mc, ctx.name).fetch(), "read", list, ctx.name)
    return {"list-append": h}, finished


def array_locked(ctx):
    """001's MCArray1: change(add_elems=[x]) of unique x (``append``: it adds at the end)
    and fetch() (``read``) -> spec list-append. pause: the first writer's connection
    stalls for PAUSE_MS just before its set of the array, so its lock expires and another
    writer's change is overwritten by the stale array it read."""
    h = History()
    key = "array" + ctx.name
    hook = None
    if ctx.fault == "pause":
        hook = once_hook(ctx, "set", key,
                         lambda mc: ctx.control.pause(ctx.control.conn_of(mc), PAUSE_MS))
    ops = 6

    def worker(p):
        mc = ctx.memcache(hook)
        arr = MCArray1(mc, ctx.name)
        rng = ctx.rand(p)
        for i in range(ops):
            if rng.random() < 0.6:
                x = p * 100 + i
                h.call(p, "append", lambda: arr.change(add_elems=[x]), value=x, key=ctx.name)
            else:
                h.call(p, "read", arr.fetch, key=ctx.name, result=list)
        mc.close()

    finished = run_threads(ctx, [lambda p=p: worker(p) for p in range(THREADS)])
    final_read(ctx, h, lambda mc: MCArray1(mc, ctx.name).fetch(), "read", list, ctx.name)
    return {"list-append": h}, finished


def table(ctx):
    """001's MCTable: one writer adds and deletes two keys in turn (``add``/``remove``);
    the other threads ask has() of the key being changed (``contains``), then fetch()
    (``read``) -> spec set. No fault needed: between the two writes of add (the member's
    key, then the member list) has() sees a member that the next fetch() lacks, and
    between delete's the reverse."""
    h = History()
    current = {"key": "k0", "done": False}
    changes = 150
    reads = 250

    def writer():
        p = 0
        mc = ctx.memcache()
        t = MCTable(mc, ctx.name)
        present = set()
        for i in range(changes):
            k = "k%d" % (i % 2)
            current["key"] = k
            if k in present:
                h.call(p, "remove", lambda: t.delete(k), value=k)
                present.discard(k)
            else:
                h.call(p, "add", lambda: t.add(k), value=k)
                present.add(k)
        current["done"] = True
        mc.close()

    def reader(p):
        mc = ctx.memcache()
        t = MCTable(mc, ctx.name)
        for _ in range(reads):
            if current["done"]:
                break
            k = current["key"]
            done, _ = h.call(p, "contains", lambda: t.has(k), value=k, result=bool)
            if done:
                h.call(p, "read", t.fetch, result=lambda v: list(v or []))
        mc.close()

    finished = run_threads(ctx, [writer] + [lambda p=p: reader(p) for p in range(1, THREADS)])
    final_read(ctx, h, lambda mc: MCTable(mc, ctx.name).fetch(), "read",
               lambda v: list(v or []))
    return {"set": h}, finished


def epoch_history():
    """A History whose ``time`` is the wall clock in Unix epoch milliseconds, the clock the
    articles' ``time()`` reads: the recorder counts from ``t0`` on the monotonic clock, and
    a ``t0`` that far back turns its count into the wall clock (the two clocks advance
    together; NTP slews both). The time-window specs judge periods and windows of that
    clock, so their histories need it."""
    return History(t0=time.monotonic() - time.time())


VC_PERIOD = 2
"""The visitor counter's T, seconds. With T = 1 the printed expiry of 2*T seconds ends on
the period's boundary (the server counts whole seconds), hiding the defect; T = 2 shows it
within 8 s."""

EL_TIME_CHUNK, EL_NUM_CHUNKS = 1, 3
"""The event log's timeChunk and numChunks: a window W = timeChunk * (numChunks-1) of 2 s."""

EL_WINDOW = EL_TIME_CHUNK * (EL_NUM_CHUNKS - 1)

POLL_SLEEP = 0.3
"""Seconds between a poll's two rounds."""

# The parameters each time-window spec needs (check-history --spec SPEC ...).
SPEC_FLAGS = {
    "visitor-counter": ["--period", str(VC_PERIOD)],
    "event-log": ["--window", str(EL_WINDOW)],
}


def visitor_counter(ctx):
    """004's MCVisitorCounter with T = 2 s: two threads count visits (``increment``), one
    reads value() every 100 ms (``value``, the count) -> spec visitor-counter
    (``--period 2``), times in epoch milliseconds. No fault needed: the run starts in the
    second half of a period A, so the shadow key the first visit creates there, with the
    printed expiry of 2*T seconds (line 43), lives until the middle of period A+2, in
    which it is the shadow key again: the visits of A+2 before that moment are added to
    A's stale count and vanish with it, and value() in A+3 answers fewer visits than A+2
    had (the article's own warning). The run ends 0.3-0.75 s into A+3."""
    h = epoch_history()
    T = VC_PERIOD
    while not 1.05 <= time.time() % T < 1.5:  # the second half of a period
        time.sleep(0.01)
    until = time.monotonic() + 5.25

    def visitor(p):
        mc = ctx.memcache()
        c = MCVisitorCounter(mc, ctx.name, T)
        rng = ctx.rand(p)
        while time.monotonic() < until:
            h.call(p, "increment", c.increment)
            time.sleep(rng.uniform(0.01, 0.08))
        mc.close()

    def watcher(p):
        mc = ctx.memcache()
        c = MCVisitorCounter(mc, ctx.name, T)
        while time.monotonic() < until:
            h.call(p, "value", c.value, result=int)
            time.sleep(0.1)
        mc.close()

    finished = run_threads(ctx, [lambda: visitor(0), lambda: visitor(1), lambda: watcher(2)])
    return {"visitor-counter": h}, finished


def event_log(ctx):
    """001's MCEventLog with timeChunk = 1 s, numChunks = 3 (W = 2 s): two threads put
    events (``put``, the event's id; its when() is the putting thread's time() within the
    call), one polls as the article says (``poll``): events = fetch(), then, 300 ms later,
    fetch(first=lastSeen) with lastSeen = max(e.when()) of those events; a poll returns
    its two rounds' windows -> spec event-log (``--window 2``), times in epoch
    milliseconds. No fault needed: the second round starts at the second lastSeen, whose
    events the first round returned, so it returns them again (and a window inside one
    chunk goes round the whole ring, reading that chunk twice)."""
    h = epoch_history()
    until = time.monotonic() + 2.5
    W = EL_WINDOW

    def putter(p):
        mc = ctx.memcache()
        log = MCEventLog(mc, ctx.name, timeChunk=EL_TIME_CHUNK, numChunks=EL_NUM_CHUNKS)
        rng = ctx.rand(p)
        i = 0
        while time.monotonic() < until:
            ident = p * 10000 + i
            h.call(p, "put", lambda: log.put(Event(ident, article_time())), value=ident)
            i += 1
            time.sleep(rng.uniform(0.01, 0.08))
        mc.close()

    def poller(p):
        mc = ctx.memcache()
        log = MCEventLog(mc, ctx.name, timeChunk=EL_TIME_CHUNK, numChunks=EL_NUM_CHUNKS)

        def fetch(now, first):
            # fetch(first, last) with last = now, the time() it would read itself, and a
            # first it keeps as it is, so that the window read is known exactly: the
            # window's record {back, span, events} is relative to that reading, now.
            events = log.fetch(first, now)
            return events, {"back": now - first, "span": now - first,
                            "events": [e.ident for e in events]}

        def poll():
            now = article_time()
            events, first_round = fetch(now, now - W)  # fetch()
            time.sleep(POLL_SLEEP)
            now = article_time()
            if events:
                last_seen = max(e.when() for e in events)
                # fetch(first=lastSeen), with fetch's own correction of a first too old
                first = last_seen if now - last_seen <= W else now - W
            else:
                first = now - W  # fetch() again: max() of nothing raises in the article
            return [first_round, fetch(now, first)[1]]

        time.sleep(0.3)  # let the putters put a few events first
        while time.monotonic() < until:
            h.call(p, "poll", poll, value=int(POLL_SLEEP * 1000), result=lambda r: r)
            time.sleep(0.1)
        mc.close()

    finished = run_threads(ctx, [lambda: putter(0), lambda: putter(1), lambda: poller(2)])
    return {"event-log": h}, finished


# (structure, fault, workload, expected verdict, rounds for an expected violation)
CASES = [
    ("counter", "none", counter, "ok", 1),
    ("counter", "restart", counter, "violation", 3),
    ("counter", "evict", counter, "violation", 3),
    ("counter", "drop-reply", counter, "ok", 1),
    ("lock", "none", lock, "ok", 1),
    ("lock", "pause", lock, "violation", 3),
    ("array-append", "none", array_append, "violation", 3),
    ("array-locked", "none", array_locked, "ok", 1),
    ("array-locked", "pause", array_locked, "violation", 3),
    ("table", "none", table, "violation", 5),
    ("visitor-counter", "none", visitor_counter, "violation", 2),
    ("event-log", "none", event_log, "violation", 2),
]

NEEDS_CONTROL = {"restart", "evict", "pause", "drop-reply"}


# ----------------------------------------------------------------------------------------
# Checking.


def check(path, spec):
    """``kvsim check-history --spec SPEC --json PATH`` (with the spec's parameters,
    SPEC_FLAGS) -> (verdict, reason)."""
    out = subprocess.run(
        [KVSIM, "check-history", "--spec", spec] + SPEC_FLAGS.get(spec, [])
        + ["--json", "--time-limit", "20", path],
        capture_output=True, text=True)
    try:
        result = json.loads(out.stdout)[0]
    except (ValueError, IndexError, KeyError):
        return "error", (out.stderr or out.stdout).strip()[:300]
    return result.get("verdict", "error"), result.get("reason", "")


def combine(verdicts):
    """One verdict of several specs' verdicts: a violation if any, ok if all, else the
    first other."""
    vs = [v for v, _ in verdicts.values()]
    if "violation" in vs:
        return "violation"
    if vs and all(v == "ok" for v in vs):
        return "ok"
    return next((v for v in vs if v != "ok"), "unknown")


def run_case(structure, fault, workload, expected, rounds, args, outdir, has_control):
    last = None
    for rnd in range(rounds):
        seed = (args.seed * 1000 + zlib.crc32(("%s/%s" % (structure, fault)).encode())
                + rnd) % 2 ** 63
        rng = random.Random(seed)
        if fault in NEEDS_CONTROL and not has_control:
            return "unknown", "kvsim serve has no --control (needed for %s)" % fault, {}
        server = Server(seed, control=has_control).start()
        control = Control(server.control_port) if has_control else None
        name = "%s%d%d" % (re.sub(r"\W", "", structure), rnd, rng.randrange(10 ** 6))
        ctx = Ctx(server, control, fault, rng, name)
        try:
            histories, finished = workload(ctx)
        finally:
            if control:
                control.close()
            server.stop()
        stem = os.path.join(outdir, "%s-%s-r%d" % (structure, fault, rnd))
        verdicts = {}
        for spec, h in histories.items():
            path = "%s-%s.jsonl" % (stem, spec)
            h.write(path)
            verdicts[spec] = check(path, spec)
        if ctx.errors:
            return "error", "; ".join(ctx.errors[:3]), verdicts
        verdict = combine(verdicts)
        if not finished:
            # operations still open are unknown to the checker; a pass is not evidence
            verdicts["workload"] = ("unknown", "threads did not finish in %ds" % CASE_DEADLINE)
            if verdict == "ok":
                verdict = "unknown"
        last = (verdict, "(round %d of %d)" % (rnd + 1, rounds) if rnd else "", verdicts)
        if verdict == expected:
            break
    return last


def build_if_missing():
    if os.path.exists(KVSIM):
        return
    print("run.py: %s missing: cargo build --release -p kvsim-cli" % KVSIM, flush=True)
    subprocess.run(["cargo", "build", "--release", "-p", "kvsim-cli"], cwd=ROOT, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[],
                    help="run only STRUCTURE or STRUCTURE/FAULT (repeatable)")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the histories to DIR and keep them (default: a temporary "
                         "directory, removed at the end)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the workloads and servers")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each spec's verdict and reason")
    args = ap.parse_args()

    known = {c[0] for c in CASES} | {"%s/%s" % (c[0], c[1]) for c in CASES}
    for o in args.only:
        if o not in known:
            ap.error("--only %s: expected one of %s" % (o, ", ".join(sorted(known))))
    build_if_missing()
    has_control = serve_has_control()
    if not has_control:
        print("run.py: this kvsim serve has no --control: the fault cases are unknown",
              flush=True)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        outdir = args.keep
    else:
        outdir = tempfile.mkdtemp(prefix="kvsim-python-")
    start = time.monotonic()
    failures = 0
    try:
        for structure, fault, workload, expected, rounds in CASES:
            if args.only and structure not in args.only and \
                    "%s/%s" % (structure, fault) not in args.only:
                continue
            t = time.monotonic()
            try:
                verdict, note, verdicts = run_case(structure, fault, workload, expected,
                                                   rounds, args, outdir, has_control)
            except Exception as e:  # the harness itself failed: not a verdict
                verdict, note, verdicts = "error", "%s: %s" % (type(e).__name__, e), {}
            secs = time.monotonic() - t
            good = verdict == expected
            failures += 0 if good else 1
            line = "%-16s %-10s %-9s (expected %s)  %s" % (
                structure, fault, verdict, expected, "ok" if good else "FAILED")
            specs = ", ".join("%s: %s" % (s, v) for s, (v, _) in verdicts.items())
            if specs:
                line += "  [%s]" % specs
            if note:
                line += "  %s" % note
            if args.verbose:
                line += "  %.1fs" % secs
            print(line, flush=True)
            if args.verbose or verdict != expected:
                for s, (v, reason) in verdicts.items():
                    if reason:
                        print("    %s: %s" % (s, reason), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(outdir, ignore_errors=True)
    print("%d case(s) not as expected, %.1f s" % (failures, time.monotonic() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
