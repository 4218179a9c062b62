"""The memcached interface the articles' Python assumes, over pymemcache.

Article 004 (../../../shared/seeds/004_06f75a6f6448120d.txt, "class Memcache") declares
the interface every structure of 004 and 001 is written against:

    get(key)                  -> the value;          raises KeyError: the key is missing
    add(key, value, expire=0)                      # raises KeyError: the key already exists
    incr(key, value=1)        -> the new value;      raises KeyError: the key is missing
    append(key, value)                             # raises KeyError: the key is missing
    delete(key)

Article 001 also calls ``set(key, value, expire)`` (MCArray1, MCTable), which never raises
KeyError. ``MemcacheObject`` is 004's base class of every structure.

This module implements exactly that over ``pymemcache.client.base.Client`` (a real
memcached client speaking the text protocol), with ``default_noreply=False`` so that
``add``/``append`` report NOT_STORED (pymemcache answers True/False only then) and a socket
timeout. Any other failure (a timeout, a connection closed by the server, a server error)
is *not* a KeyError: it propagates as pymemcache's or the socket's exception, as it would
have with the Python 2 client of the articles' time, and the caller's history records the
operation's outcome as unknown.

Values are stored as python-memcached (the Python 2 client of 2009) stored them: a ``str``
as its UTF-8 bytes with flags 0, an ``int`` as its decimal text with flags 2, so that
``get`` of a counter created by ``add(key, 1)`` and then ``incr``-ed returns an ``int``.
``incr``/``append`` keep the item's flags, as memcached does.

``before`` is a hook for the test harness, not part of the article's interface: it is called
as ``before(command, key)`` just before each command is sent, so that a runner can inject a
fault (e.g. pause this connection) at an exact point of a structure's code without touching
that code.
"""

from pymemcache.client.base import Client

__all__ = ["Memcache", "MemcacheObject"]

_FLAG_STR = 0
_FLAG_INT = 2  # python-memcached's _FLAG_INTEGER


class _Serde(object):
    """python-memcached's encoding of str and int values."""

    def serialize(self, key, value):
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, int):
            return str(value).encode("ascii"), _FLAG_INT
        if isinstance(value, bytes):
            return value, _FLAG_STR
        return str(value).encode("utf-8"), _FLAG_STR

    def deserialize(self, key, value, flags):
        if flags == _FLAG_INT:
            return int(value)
        return value.decode("utf-8")


class Memcache(object):
    """004's ``Memcache`` interface; one object is one connection (not thread-safe: give
    each thread its own)."""

    def __init__(self, host, port, timeout=5.0, before=None):
        self.client = Client(
            (host, port),
            serde=_Serde(),
            default_noreply=False,
            connect_timeout=timeout,
            timeout=timeout,
            no_delay=True,
        )
        self.before = before

    def _before(self, command, key):
        if self.before is not None:
            self.before(self, command, key)

    def get(self, key):
        """The key's value; raises KeyError if the key is missing."""
        self._before("get", key)
        value = self.client.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def add(self, key, value, expire=0):
        """Stores the value only if the key does not exist yet; raises KeyError if it
        does (NOT_STORED)."""
        self._before("add", key)
        if not self.client.add(key, value, expire, noreply=False):
            raise KeyError(key)

    def incr(self, key, value=1):
        """Adds ``value`` to the key's number; returns the new value; raises KeyError if
        the key is missing."""
        self._before("incr", key)
        result = self.client.incr(key, value, noreply=False)
        if result is None:
            raise KeyError(key)
        return result

    def append(self, key, value):
        """Appends a suffix to an existing key's value; raises KeyError if the key is
        missing (NOT_STORED)."""
        self._before("append", key)
        if not self.client.append(key, value, noreply=False):
            raise KeyError(key)

    def delete(self, key):
        """Deletes the key (a missing key is not an error: 004 declares no KeyError)."""
        self._before("delete", key)
        self.client.delete(key, noreply=False)

    def set(self, key, value, expire=0):
        """Stores the value unconditionally (001's MCArray1 and MCTable use it)."""
        self._before("set", key)
        self.client.set(key, value, expire, noreply=False)

    # -- for the harness, not the article --------------------------------------------

    def sockname(self):
        """This connection's local address ``host:port`` (connecting if need be), to find
        its id in ``kvsim serve``'s control ``conns`` list."""
        if self.client.sock is None:
            self.client._connect()
        host, port = self.client.sock.getsockname()[:2]
        return "%s:%d" % (host, port)

    def close(self):
        self.client.close()


class MemcacheObject(object):
    """004's base class of every structure."""

    def __init__(self, mc):
        """
        @param mc: the memcached driver
        @type mc: L{Memcache}
        """
        self.mc = mc
