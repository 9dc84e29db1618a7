"""
Makes (or checks) the anchors' virtual environment ``.venv-baselines/anchors`` from ``evidence/baselines/anchors.lock``
(fastcoref, maverick-coref, span-marker), beside the library's ``.venv`` and never into it:

    .venv/bin/python -m evidence.baselines.make_env

torch goes in first at the version of the repository's ``requirements.lock`` (the local CPU wheel), then the lock
with ``--no-deps`` (``evidence.environments.ensure_environment``); an unchanged lock costs nothing the
next time. Prints the environment's python.
"""

import sys

from evidence.environments import EnvironmentSetupError, ensure_environment

ENVIRONMENT = ".venv-baselines/anchors"
LOCK = "evidence/baselines/anchors.lock"


def main() -> int:
    try:
        python = ensure_environment(ENVIRONMENT, LOCK)
    except EnvironmentSetupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
