"""
A case module's list of cases: each a name and a builder that makes the case's files in its own directory and
returns the :class:`~tests.failure_sweep.grading.Case`. Builders run when the case runs, not when pytest collects
(they need the trained archives); the names are known at collection and are the tests' ids.
"""

from typing import Callable, Dict, Iterator, Tuple

from tests.failure_sweep.grading import Case
from tests.failure_sweep.workspace import CaseDir

Builder = Callable[[CaseDir], Case]


class CaseBook:
    """Builders by case name, in the order they were added; ``slow`` ones take more than about 20 s."""

    def __init__(self) -> None:
        self.builders: Dict[str, Builder] = {}
        self.slow: set = set()

    def add(self, name: str, build: Builder, slow: bool = False) -> None:
        if name in self.builders:
            raise ValueError(f"two cases are named {name!r}")
        self.builders[name] = build
        if slow:
            self.slow.add(name)

    def case(self, name: str, slow: bool = False) -> Callable[[Builder], Builder]:
        """Decorator form of :meth:`add`."""

        def register(build: Builder) -> Builder:
            self.add(name, build, slow)
            return build

        return register

    def extend(self, other: "CaseBook") -> None:
        for name, build in other.builders.items():
            self.add(name, build, name in other.slow)

    def __iter__(self) -> Iterator[Tuple[str, Builder]]:
        return iter(self.builders.items())

    def __len__(self) -> int:
        return len(self.builders)
