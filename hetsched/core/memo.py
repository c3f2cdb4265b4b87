"""A small memo of values keyed by the identity of immutable objects.

The node tuple of one placement is built once (by a slot search) and then checked and
converted by its slot, its booking, its decision and the driver's booking: work on tuples
of thousands of node ids that an identity lookup saves (:func:`hetsched.core.decisions.
distinct_nodes`, :meth:`hetsched.core.timeline.ClusterTimeline._locals`).
"""

from __future__ import annotations

from typing import Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """The values stored for the last ``size`` objects, found by identity (``is``).

    The memo holds each object it was given, so no other object can take its id while its
    entry lives; an equal but distinct object is not found. When full, storing forgets the
    oldest entry. Meant for immutable objects (tuples): a value stays true of its object.

    >>> memo = IdentityMemo(2)
    >>> a, b, c = (1, 2), (3, 4), (5, 6)
    >>> memo.put(a, "a"); memo.put(b, "b")
    >>> memo.get(a), memo.get(tuple([1, 2]))  # an equal tuple is another object
    ('a', None)
    >>> memo.put(c, "c")  # full: ``a``, the oldest, is forgotten
    >>> memo.get(a), memo.get(b), memo.get(c)
    (None, 'b', 'c')
    """

    __slots__ = ("_entries", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an identity memo needs room for one entry, got size {size}")
        self.size = size
        self._entries: dict[int, tuple[object, V]] = {}  # id -> (the object, its value)

    def get(self, key: object) -> V | None:
        """The value stored for ``key`` itself, or ``None``."""
        entry = self._entries.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        return None

    def put(self, key: object, value: V) -> None:
        """Store ``value`` for ``key`` (forgetting the oldest entry when full)."""
        entries = self._entries
        if len(entries) >= self.size:
            del entries[next(iter(entries))]
        entries[id(key)] = (key, value)
