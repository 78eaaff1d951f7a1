"""browser_support.PageLoads and measured(): one load of a page serves every test that reads it, and a
failure is raised in the tests that read the failed part, never swallowed or blamed on another part."""

from __future__ import annotations

import pytest
from browser_support import PageLoads, measured


def test_one_load_serves_every_part_and_a_failed_part_fails_only_its_readers():
    loads, calls = PageLoads(), []

    def broken(page):
        raise ValueError(f"cannot read {page}")

    def load():
        calls.append(1)
        return measured("page.html", {"title": lambda page: page.upper(), "moved": broken,
                                      "after": lambda page: len(page)})

    assert loads.part("k", load, "title") == "PAGE.HTML"
    with pytest.raises(ValueError, match=r"cannot read page\.html"):
        loads.part("k", load, "moved")
    assert loads.part("k", load, "after") == 9  # a part after a failed one still ran
    assert calls == [1]


def test_a_load_that_failed_fails_each_test_of_the_page_with_its_reason():
    loads, calls = PageLoads(), []

    def load():
        calls.append(1)
        raise TimeoutError("the page never settled")

    for name in ("title", "moved"):
        with pytest.raises(TimeoutError, match="never settled"):
            loads.part("k", load, name)
    assert calls == [1]
