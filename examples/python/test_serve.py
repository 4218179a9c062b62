#!/usr/bin/env python3
"""``kvsim serve`` through a real client: each fault of the control channel, its effect as
pymemcache sees it and its line in the trace; and the commands clients send on connect
and in health checks (``version``, ``stats``, ``flush_all``).

    python3 examples/python/test_serve.py        (CI runs it; needs pymemcache)

Starts ``target/release/kvsim serve`` itself (building it first if it is missing).
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KVSIM = os.path.join(ROOT, "target", "release", "kvsim")

from pymemcache.client.base import Client  # noqa: E402
from pymemcache.exceptions import MemcacheUnexpectedCloseError  # noqa: E402


def ensure_built():
    if not os.path.exists(KVSIM):
        subprocess.run(["cargo", "build", "--release", "-p", "kvsim-cli"], cwd=ROOT,
                       check=True)


class Serve(object):
    """A ``kvsim serve`` with a control channel and a trace, on free loopback ports."""

    def __init__(self, *extra):
        self.dir = tempfile.mkdtemp(prefix="kvsim-serve-test-")
        self.trace_path = os.path.join(self.dir, "trace.jsonl")
        args = [KVSIM, "serve", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0",
                "--trace", self.trace_path] + list(extra)
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.port = self.control_port = None
        self.clients = []
        ready = threading.Event()

        def drain():
            for line in self.proc.stderr:
                m = re.search(r"listening on [^\s]*:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                m = re.search(r"control on [^\s]*:(\d+)", line)
                if m:
                    self.control_port = int(m.group(1))
                if self.port and self.control_port:
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        ready.wait(10)
        if not (self.port and self.control_port):
            self.stop()
            raise RuntimeError("kvsim serve did not start")

    def client(self, timeout=5.0):
        c = Client(("127.0.0.1", self.port), connect_timeout=5, timeout=timeout,
                   default_noreply=False)
        self.clients.append(c)
        return c

    def control(self, line):
        """One control command's reply lines (through END for the listing commands)."""
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=5) as s, \
                s.makefile("rw", newline="\n") as f:
            f.write(line + "\n")
            f.flush()
            out = []
            listing = line in ("conns", "stats", "help")
            while True:
                reply = f.readline().rstrip("\r\n")
                out.append(reply)
                if not listing or reply == "END" or reply == "":
                    return out

    def conn_id(self, client):
        """The server's id of ``client``'s connection (its socket's local address)."""
        client.version()  # make sure it is connected
        me = "%s:%d" % client.sock.getsockname()[:2]
        for line in self.control("conns"):
            parts = line.split()
            if len(parts) == 3 and parts[2] == me:
                return parts[1]
        raise AssertionError("%s not among the server's connections" % me)

    def trace(self):
        with open(self.trace_path) as f:
            return [json.loads(l) for l in f if l.strip()]

    def traced(self, kind, text):
        return any(l["kind"] == kind and l["text"] == text for l in self.trace())

    def stop(self):
        for c in self.clients:
            c.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.proc.stderr.close()


class Faults(unittest.TestCase):
    def setUp(self):
        self.serve = Serve()

    def tearDown(self):
        self.serve.stop()

    def test_evict(self):
        c = self.serve.client()
        self.assertTrue(c.set("k", b"v"))
        self.assertEqual(self.serve.control("evict k"), ["OK"])
        self.assertIsNone(c.get("k"))
        self.assertTrue(self.serve.traced("fault", "evict k"))

    def test_restart(self):
        c = self.serve.client()
        c.set("k", b"v")
        self.assertEqual(self.serve.control("restart"), ["OK"])
        # The old connection is gone; pymemcache reconnects on its next call.
        with self.assertRaises((MemcacheUnexpectedCloseError, ConnectionError, OSError)):
            c.get("k")
        self.assertIsNone(self.serve.client().get("k"), "volatile data lost")
        self.assertTrue(self.serve.traced("fault", "restart"))

    def test_clock_jump(self):
        c = self.serve.client()
        c.set("lease", b"me", expire=3)
        self.assertEqual(c.get("lease"), b"me")
        self.assertEqual(self.serve.control("clock +4"), ["OK"])
        self.assertIsNone(c.get("lease"), "the jump ran the lease out")
        self.assertTrue(self.serve.traced("fault", "clock +4 s"))

    def test_drop_request(self):
        c = self.serve.client()
        cid = self.serve.conn_id(c)
        self.assertEqual(self.serve.control("drop-request %s" % cid),
                         ["OK drop-request armed"])
        with self.assertRaises((MemcacheUnexpectedCloseError, ConnectionError, OSError)):
            c.set("k", b"v")
        self.assertIsNone(self.serve.client().get("k"), "the request was not applied")
        self.assertTrue(self.serve.traced("fault", "drop-request"))

    def test_drop_reply(self):
        c = self.serve.client()
        cid = self.serve.conn_id(c)
        self.serve.control("drop-reply %s" % cid)
        with self.assertRaises((MemcacheUnexpectedCloseError, ConnectionError, OSError)):
            c.set("k", b"v")
        self.assertEqual(self.serve.client().get("k"), b"v", "applied, reply lost")
        self.assertTrue(self.serve.traced("fault", "drop-reply"))

    def test_delay_reply_past_the_clients_timeout(self):
        c = self.serve.client(timeout=0.3)
        cid = self.serve.conn_id(c)
        self.serve.control("delay-reply %s 1000" % cid)
        with self.assertRaises(socket.timeout):
            c.set("k", b"v")
        self.assertEqual(self.serve.client().get("k"), b"v", "applied; only the reply is late")
        self.assertTrue(self.serve.traced("fault", "delay-reply 1000 ms"))

    def test_pause(self):
        c = self.serve.client()
        cid = self.serve.conn_id(c)
        self.serve.control("pause %s 800" % cid)
        done = []
        t = threading.Thread(target=lambda: done.append(c.set("k", b"v")))
        t.start()
        time.sleep(0.2)
        self.assertIsNone(self.serve.client().get("k"), "not applied during the pause")
        t.join(5)
        self.assertEqual(done, [True])
        self.assertEqual(self.serve.client().get("k"), b"v")
        self.assertTrue(self.serve.traced("fault", "pause 800 ms"))


class HealthChecks(unittest.TestCase):
    """What client libraries send on connect and in health checks."""

    def setUp(self):
        self.serve = Serve()

    def tearDown(self):
        self.serve.stop()

    def test_version_stats_flush_all(self):
        c = self.serve.client()
        self.assertEqual(c.version(), b"1.6.18")
        c.set("a", b"1")
        c.get("a")
        c.get("missing")
        stats = c.stats()
        self.assertEqual(stats[b"version"], b"1.6.18")
        self.assertEqual(stats[b"get_hits"], 1)
        self.assertEqual(stats[b"get_misses"], 1)
        self.assertEqual(stats[b"cmd_get"], 2)
        self.assertEqual(stats[b"curr_items"], 1)
        self.assertIn(b"maxconns", c.stats("settings"))
        self.assertTrue(c.flush_all())
        self.assertIsNone(c.get("a"))
        self.assertEqual(c.stats()[b"cmd_flush"], 1)


if __name__ == "__main__":
    ensure_built()
    unittest.main(verbosity=2)
