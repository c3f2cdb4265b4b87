"""The decorator of the compiled loops (core/compiled.py): what happens where numba may not
keep its machine code. The loops' answers are tested through the node groups
(tests/core/test_node_groups.py)."""

from __future__ import annotations

import pytest

from hetsched.core import compiled


def test_without_a_folder_for_the_cache_the_loops_compile_in_each_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """numba refuses ``cache=True`` when it finds no folder it may write (a read-only
    installation, a user without a writable home): the kernel is compiled without the cache,
    and a warning names NUMBA_CACHE_DIR."""
    real = compiled.njit

    def no_locator(*args: object, **kwargs: object) -> object:
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'twice': no locator available for file"
                               " 'compiled.py'")
        return real(*args, **kwargs)

    monkeypatch.setattr(compiled, "njit", no_locator)
    with pytest.warns(RuntimeWarning, match="compiled again by every process.*NUMBA_CACHE_DIR"):
        twice = compiled.compiled(lambda x: 2 * x)
    assert twice(21) == 42
