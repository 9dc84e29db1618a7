"""
Makes (or checks) the anchors' virtual environment ``.venv-baselines/anchors`` from ``scripts/baselines/anchors.lock``
(fastcoref, maverick-coref, span-marker), beside the library's ``.venv`` and never into it:

    .venv/bin/python scripts/baselines/make_env.py

torch goes in first at the version of the repository's ``requirements.lock`` (the local CPU wheel), then the lock
with ``--no-deps`` (``spanbert_lib.evidence.environments.ensure_environment``); an unchanged lock costs nothing the
next time. Prints the environment's python.
"""

import sys

from spanbert_lib.evidence.environments import EnvironmentSetupError, ensure_environment

ENVIRONMENT = ".venv-baselines/anchors"
LOCK = "scripts/baselines/anchors.lock"


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
