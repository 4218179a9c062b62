"""A dependency-free recorder of operation histories in kvsim's ``jsonl`` format.

Threads (the "processes" of the history) report each operation twice: when it starts
(``invoke``) and when it ends (``ok``, ``fail`` or ``info``). The recorder puts every event
in ONE total order (a lock around a counter), which is the real-time order the
linearizability checker needs: an event written before another happened before it.

The file it writes is what ``kvsim check-history --spec SPEC FILE`` reads (see
``src/formats/jsonl.rs``): one JSON object per line,

    {"process": 0, "type": "invoke", "f": "add", "value": 1, "time": 12}
    {"process": 0, "type": "ok", "f": "add", "value": null, "time": 13}
    {"process": 1, "type": "invoke", "f": "read", "key": "arr", "value": null, "time": 13}
    {"process": 1, "type": "ok", "f": "read", "key": "arr", "value": [3, 5], "time": 14}

- ``process``: an integer, the client; a process has at most one operation open at a time.
- ``type``: ``invoke`` (the operation starts; ``value`` is its argument), ``ok`` (it
  completed; ``value`` is its result), ``fail`` (it certainly did NOT take effect), ``info``
  (its outcome is unknown: a timeout, a closed connection, any exception; the checker lets
  it take effect at any point after its invocation, or never).
- ``f``: the operation's name; ``key`` (optional): the key of a keyed operation;
  ``value``: any JSON (``null`` is nil); ``time``: milliseconds since the recorder's
  ``t0`` (``History(t0=time.monotonic() - time.time())`` gives Unix-epoch ms, which the
  time-window specs below need: a visitor counter's period is ``time() // T``); the
  linearizability specs use only the order of the lines.

The ``f`` names and value shapes each ``--spec`` reads (``src/specs/*.rs``):

=============  =====================================================================
spec           operations
=============  =====================================================================
counter        ``read`` -> int; ``add n`` -> anything (acknowledged only);
               ``incr n`` / ``decr n`` -> the new value (an int)
set            ``add v``, ``remove v`` -> anything; ``contains v`` -> true/false;
               ``read`` -> a list of all members (``null``: empty)
mutex          ``acquire`` (blocking), ``try-acquire`` -> true/false, ``release``;
               the owner is the process
list-append    ``append`` with ``key`` and ``value`` v; ``read`` with ``key`` -> the list
register       ``read`` -> v, ``write v``
cas-register   ``read``, ``write v``, ``cas [old, new]``
kv             ``get``, ``put``, ``append`` with ``key``
queue          ``enqueue v``, ``dequeue`` -> v or ``null`` when empty
visitor-       ``increment``; ``value`` -> the count (``--period SECS``: the T of
counter        ``MCVisitorCounter``; times are needed)
event-log      ``put id``; ``fetch`` -> ``[id, ...]``; ``fetch-range`` ->
               ``{"back", "span", "events"}``; ``poll`` -> its rounds' windows
               (``--window SECS``: timeChunk x (numChunks - 1); times are needed)
=============  =====================================================================
"""

import json
import threading
import time as _time

__all__ = ["History"]


class History(object):
    """Events of concurrent operations, in one total order."""

    def __init__(self, t0=None):
        self._lock = threading.Lock()
        self._events = []
        self._count = 0
        # Several histories of one run may share a time base (pass the same t0).
        self.t0 = _time.monotonic() if t0 is None else t0

    def _emit(self, process, type_, f, value, key):
        with self._lock:
            event = {
                "process": int(process),
                "type": type_,
                "f": f,
                "value": value,
                "time": int((_time.monotonic() - self.t0) * 1000),
            }
            if key is not None:
                event["key"] = key
            self._count += 1
            self._events.append(event)
            return self._count

    def invoke(self, process, f, value=None, key=None):
        """Operation ``f`` of ``process`` starts, with argument ``value``."""
        return self._emit(process, "invoke", f, value, key)

    def ok(self, process, f, value=None, key=None):
        """It completed with result ``value``."""
        return self._emit(process, "ok", f, value, key)

    def fail(self, process, f, value=None, key=None):
        """It certainly did not take effect."""
        return self._emit(process, "fail", f, value, key)

    def info(self, process, f, value=None, key=None):
        """Its outcome is unknown (timeout, lost connection, any exception)."""
        return self._emit(process, "info", f, value, key)

    def call(self, process, f, fn, value=None, key=None, result=None):
        """Runs ``fn()`` as operation ``f``: ``invoke``, then ``ok`` with
        ``result(ret)`` (or ``None`` when ``result`` is not given), or ``info`` with the
        exception's text if it raised. Returns ``(True, ret)`` or ``(False, exc)``."""
        self.invoke(process, f, value, key)
        try:
            ret = fn()
        except Exception as e:  # the outcome is unknown: info
            self.info(process, f, "%s: %s" % (type(e).__name__, e), key)
            return False, e
        self.ok(process, f, result(ret) if result else None, key)
        return True, ret

    def events(self):
        """A copy of the events so far."""
        with self._lock:
            return list(self._events)

    def count(self, f=None, type_=None):
        """How many events (of function ``f`` and type ``type_``, if given)."""
        with self._lock:
            return sum(
                1
                for e in self._events
                if (f is None or e["f"] == f) and (type_ is None or e["type"] == type_)
            )

    def dumps(self):
        """The history as JSON lines."""
        return "".join(json.dumps(e, sort_keys=False) + "\n" for e in self.events())

    def write(self, path):
        """Writes the history to ``path``."""
        with open(path, "w") as out:
            out.write(self.dumps())
