"""The agents the TCK-keyed tests judge, as a ``subject`` fixture each test parametrizes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tck.harness import Subject


@pytest.fixture
def subject(request: pytest.FixtureRequest) -> Subject:
    found: Subject = request.param
    return found


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Put the requirement ids and the agent of a test on its reports (``tests.tck.report`` reads them)."""
    if call.when == "setup":
        ids = sorted({i for mark in item.iter_markers("tck") for i in mark.args})
        subject = getattr(getattr(item, "callspec", None), "params", {}).get("subject")
        item.user_properties.append(("tck", ids))
        item.user_properties.append(("agent", subject.name if isinstance(subject, Subject) else None))
    yield
