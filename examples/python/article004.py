"""Article 004 (shared/seeds/004_06f75a6f6448120d.txt, "Структуры данных в
memcached/MemcacheDB. Часть 1"): the lock, the atomic counter, the visitor counter.

Ported from Python 2 to Python 3 only; every defect of the printed code is kept. Where the
printed code cannot run at all, the minimal repair of shared/seeds/STRUCTURES.md is made
and marked ``[repair]``. Docstrings are translated from the Russian.
"""

import time as _time

from memcache_iface import MemcacheObject

__all__ = ["time", "MCLock", "MCCounter", "MCVisitorCounter", "LOCK_TIMEOUT"]


def time():
    """
    The current time in seconds from any moment (e.g. the UNIX Epoch).
    (004 line 182 declares it without a body; this is the calling client's own clock.)

    @return: the current time in seconds
    @rtype: C{int}
    """
    return int(_time.time())


# --------------------------------------------------------------------------------------
# Lock (004, "Блокировка", line 93). The code block printed under this heading is a copy
# of the counter's (lines 112-158); the article's text gives the design: a named lock,
# usable from any process, that dies by itself (expiry) if its holder crashes; correctness
# rests on `add` letting exactly one process create the key (STRUCTURES.md section 2).
# 001 uses it as `MCLock(name)` with `while not self.lock.try_lock(): pass` and
# `self.lock.unlock()`.

LOCK_TIMEOUT = 2
"""lock_timeout in seconds: the article gives no value; 2 s as in the Rust transcription
(models/src/lock.rs LOCK_TIMEOUT_SECS)."""


class MCLock(MemcacheObject):
    def __init__(self, mc, name, lock_timeout=LOCK_TIMEOUT):
        """
        Constructor.

        @param name: the lock's name
        @type name: C{str}
        @param lock_timeout: the lock's expiry, seconds
        """
        super(MCLock, self).__init__(mc)
        self.key = 'lock' + name
        self.lock_timeout = lock_timeout

    def try_lock(self):
        """
        Try to take the lock: `add` stores the key only if no one holds it.

        @return: whether the lock was taken
        @rtype: C{bool}
        """
        try:
            self.mc.add(self.key, 1, self.lock_timeout)
            return True
        except KeyError:
            return False

    def unlock(self):
        """
        Release the lock.
        """
        self.mc.delete(self.key)


# --------------------------------------------------------------------------------------
# Atomic counter (004, "Атомарный счетчик"; its code is printed at lines 112-158, under
# the lock's heading).


class MCCounter(MemcacheObject):
    def __init__(self, mc, name):
        """
        Constructor.

        @param name: the counter's name
        @type name: C{str}
        """
        super(MCCounter, self).__init__(mc)
        self.key = 'counter' + name

    def increment(self, value=1):
        """
        Increase the counter by the given value.

        @param value: the increment
        @type value: C{int}
        """
        while True:
            try:
                self.mc.incr(self.key, value)
                return
            except KeyError:
                pass

            try:
                self.mc.add(self.key, value, 0)
                return
            except KeyError:
                pass

    def value(self):
        """
        Get the counter's value.

        @return: the counter's current value
        @rtype: C{int}
        """
        try:
            return self.mc.get(self.key)
        except KeyError:
            return 0


# --------------------------------------------------------------------------------------
# Visitor counter (004, "Счетчик посетителей", lines 279-325; an identical copy is printed
# at lines 190-236 under the counter's heading).


class MCVisitorCounter(MemcacheObject):
    def __init__(self, mc, name, T):
        """
        Constructor.

        @param name: the counter's name
        @type name: C{str}
        @param T: the counter's period, seconds
        @type T: C{int}
        """
        super(MCVisitorCounter, self).__init__(mc)
        self.keys = ('counter' + name + '_0', 'counter' + name + '_1')
        self.T = T  # [repair] the printed class never stores T; it is a field

    def _active(self):
        """
        Get the index of the current counter.

        @return: 0 or 1
        """
        T = self.T  # [repair] (see __init__)
        return 0 if (time() % (2*T)) < T else 1

    def increment(self):
        """
        Increase the counter's value.
        """
        T = self.T  # [repair] (see __init__)
        active = self._active()
        while True:
            try:
                self.mc.incr(self.keys[1-active], 1)
                return
            except KeyError:
                pass

            try:
                self.mc.add(self.keys[1-active], 1, 2*T)   # line 43 (as printed)
                return
            except KeyError:
                pass

    def value(self):
        """
        Get the counter's value.

        @return: the counter's current value
        @rtype: C{int}
        """
        try:
            return self.mc.get(self.keys[self._active()])
        except KeyError:
            return 0
