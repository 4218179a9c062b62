"""Article 001 (shared/seeds/001_f88c2113fc811bef.txt, the continuation of 004): the event
log, the two arrays (MCArray1: read-mostly, under the lock; MCArray2: append-mostly) and
the table.

Ported from Python 2 to Python 3 only; every defect of the printed code is kept. Where the
printed code cannot run at all, the minimal repair of shared/seeds/STRUCTURES.md is made
and marked ``[repair]``; the Python 2 -> 3 changes are marked ``[py3]``. The article's
docstrings lost their Japanese text in the source; they are kept as skeletons. The
serialization functions are declared without bodies in the article; their bodies here
are this project's choice.
"""

import json

from memcache_iface import MemcacheObject
from article004 import MCLock, time

__all__ = [
    "Event", "MCEventLog", "MCArray1", "MCArray2", "MCTable",
    "serializeArray", "deserializeArray", "serializeInt", "deserializeIntArray",
]


# --------------------------------------------------------------------------------------
# Event log (001, "イベントログ", line 10).


class Event:
    """An event: the article gives it only when(), serialize() and deserialize(); here an
    event is an id and the second it happened at, serialized as "when:id\\n" so that
    events concatenated by `append` read back one per line."""

    def __init__(self, ident, when):
        self.ident = ident
        self._when = when

    def when(self):
        """The moment the event happened (seconds, as time())."""
        return self._when

    def serialize(self):
        """
        @return: the serialized event
        @rtype: C{str}
        """
        return "%d:%d\n" % (self._when, self.ident)

    @staticmethod  # [py3] printed "@static" (no such decorator)
    def deserialize(serialized):
        """
        @param serialized: serialized events, concatenated
        @type serialized: C{str}
        @return: the events
        @rtype: C{list(Event)}
        """
        events = []
        for line in serialized.split("\n"):
            if line:
                when, ident = line.split(":")
                events.append(Event(int(ident), int(when)))
        return events

    def __repr__(self):
        return "Event(%d, %d)" % (self.ident, self._when)


class MCEventLog(MemcacheObject):
    def __init__(self, mc, name, timeChunk=10, numChunks=10):
        """
        @param name:
        @type name: C{str}
        @param timeChunk:
        @type timeChunk: C{int}
        @param numChunks:
        @type numChunks: C{int}
        """
        super(MCEventLog, self).__init__(mc)
        self.keyTemplate = 'messagelog' + name + '_%d';
        self.timeChunk = timeChunk
        self.numChunks = numChunks

    def put(self, event):
        """
        @param event:
        @type event: L{Event}
        """
        serialized = event.serialize()
        key = self.keyTemplate % (event.when() // self.timeChunk % self.numChunks)
        while True:
            try:
                self.mc.append(key, serialized)
                return
            except KeyError:
                pass
            try:
                self.mc.add(key, serialized, self.timeChunk * (self.numChunks-1))
                return
            except KeyError:
                pass

    def fetch(self, first=None, last=None):
        """
        @param first:
        @type first: C{int}
        @param last:
        @type last: C{int}
        @return:
        @rtype: C{list(Event)}
        """
        if last is None or last > time():
            last = time()
        if first is None or last < first or (last-first) > self.timeChunk * (self.numChunks-1):
            # printed "time() — self.timeChunk ..." (a dash the translation made of "-")
            first = time() - self.timeChunk * (self.numChunks-1)
        firstKey = first // self.timeChunk % self.numChunks  # [repair] printed "/" (Python 2)
        lastKey = last // self.timeChunk % self.numChunks    # [repair] printed "/" (Python 2)
        if firstKey < lastKey:
            keyRange = range(firstKey, lastKey+1)
        else:
            # [py3] Python 2's range() returned lists, which "+" concatenated
            keyRange = list(range(firstKey, self.numChunks)) + list(range(0, lastKey+1))
        keys = [self.keyTemplate % n for n in keyRange]
        result = []
        for key in keys:
            try:
                events = Event.deserialize(self.mc.get(key))
            except KeyError:
                continue
            # [repair] printed "..., l)": no such name; the events just read are meant
            result.extend(filter(lambda e: e.when() >= first and e.when() <= last, events))
        return result


# --------------------------------------------------------------------------------------
# Array, task 1: read-mostly, changed under the lock (001, "配列", MCArray1, line 80).


def serializeArray(array):
    """(declared without a body in 001) JSON."""
    return json.dumps(array)


def deserializeArray(str):
    """(declared without a body in 001) JSON."""
    return json.loads(str)


class MCArray1(MemcacheObject):
    def __init__(self, mc, name):
        """
        @param name:
        @type name: C{str}
        """
        super(MCArray1, self).__init__(mc)
        self.lock = MCLock(mc, name)  # [repair] printed MCLock(name): the lock needs mc
        self.key = 'array' + name

    def fetch(self):
        """
        @return:
        @rtype: C{list}
        """
        try:
            return deserializeArray(self.mc.get(self.key))
        except KeyError:
            return []

    def change(self, add_elems=[], delete_elems=[]):
        """
        @param add_elems:
        @type add_elems: C{list}
        @param delete_elems:
        @type delete_elems: C{list}
        """
        while not self.lock.try_lock():
            pass
        try:
            try:
                array = deserializeArray(self.mc.get(self.key))
            except KeyError:
                array = []
            # [py3] Python 2's filter() returned a list, which "+" concatenated
            array = list(filter(lambda e: e not in delete_elems, array)) + add_elems
            self.mc.set(self.key, serializeArray(array), 0)
        finally:
            self.lock.unlock()


# --------------------------------------------------------------------------------------
# Array, task 2: append-mostly (001, MCArray2, line 118).


def serializeInt(int):
    """(declared without a body in 001) "5," so that appends concatenate."""
    return "%d," % int


def deserializeIntArray(str):
    """(declared without a body in 001) "5,3," -> [5, 3]."""
    return [int(x) for x in str.split(",") if x]


class MCArray2(MemcacheObject):
    def __init__(self, mc, name):
        """
        @param name:
        @type name: C{str}
        """
        super(MCArray2, self).__init__(mc)
        self.key = 'array' + name

    def fetch(self):
        """
        @return:
        @rtype: C{list}
        """
        try:
            return deserializeIntArray(self.mc.get(self.key))
        except KeyError:
            return []

    def add(self, element):
        """
        @param element:
        @type element: C{int}
        """
        element = serializeInt(element)
        while True:
            try:
                self.mc.append(self.key, element)
            except KeyError:
                return
            try:
                self.mc.add(self.key, element, 0)
            except KeyError:
                return


# --------------------------------------------------------------------------------------
# Table (001, "テーブル", MCTable, line 139).


class MCTable(MemcacheObject):
    def __init__(self, mc, name):
        """
        @param name:
        @type name: C{str}
        """
        super(MCTable, self).__init__(mc)
        self.lock = MCLock(mc, name)  # [repair] printed MCLock(name): the lock needs mc
        self.key = 'table' + name

    def has(self, key):
        """
        @param key:
        @type key: C{str}
        @rtype: C{bool}
        """
        try:
            self.mc.get(self.key + '_v_' + key)
            return True
        except KeyError:
            return False

    def fetch(self):
        """
        @return:
        @rtype: C{list(str)}
        """
        try:
            return deserializeArray(self.mc.get(self.key + '_keys'))
        except KeyError:
            pass

    def add(self, key):
        """
        @param key:
        @type key: C{str}
        """
        while not self.lock.try_lock():
            pass
        try:
            try:
                array = deserializeArray(self.mc.get(self.key + '_keys'))
            except KeyError:
                array = []
            if key not in array:
                array.append(key)
                self.mc.set(self.key + '_v_' + key, 1, 0)
                self.mc.set(self.key + '_keys', serializeArray(array), 0)
        finally:
            self.lock.unlock()

    def delete(self, key):
        """
        The article: "the same as add()". Under the lock: remove the key from the list,
        delete its "_v_" key, write the list back (STRUCTURES.md section 8).
        """
        while not self.lock.try_lock():
            pass
        try:
            try:
                array = deserializeArray(self.mc.get(self.key + '_keys'))
            except KeyError:
                array = []
            if key in array:
                array.remove(key)
                self.mc.delete(self.key + '_v_' + key)
                self.mc.set(self.key + '_keys', serializeArray(array), 0)
        finally:
            self.lock.unlock()
