"""The identity memo behind the node-tuple shortcuts (hetsched.core.memo)."""

from __future__ import annotations

import gc

import pytest

from hetsched.core.memo import IdentityMemo


def test_the_memo_keeps_its_objects_so_no_other_takes_their_id() -> None:
    memo: IdentityMemo[str] = IdentityMemo(4)
    memo.put(tuple(range(1000, 1003)), "first")  # the caller keeps no reference
    gc.collect()
    others = [tuple(range(n, n + 3)) for n in range(2000)]  # would reuse a freed id
    assert all(memo.get(other) is None for other in others)


def test_the_oldest_entry_goes_first_and_size_is_checked() -> None:
    memo: IdentityMemo[int] = IdentityMemo(3)
    keys = [(n,) for n in range(5)]
    for n, key in enumerate(keys):
        memo.put(key, n)
    assert [memo.get(key) for key in keys] == [None, None, 2, 3, 4]
    with pytest.raises(ValueError, match="room for one entry"):
        IdentityMemo(0)
