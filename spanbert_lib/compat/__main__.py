"""
``python -m spanbert_lib.compat install`` writes ``spanbert_lib_compat.pth`` into the
current environment's site-packages (needed for editable installs; a wheel ships it).
``python -m spanbert_lib.compat status`` tells whether the import hook is active.
"""

import argparse
import sys
import sysconfig
from pathlib import Path

PTH_NAME = "spanbert_lib_compat.pth"
PTH_LINE = "import spanbert_lib.compat; spanbert_lib.compat.install()\n"


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m spanbert_lib.compat")
    parser.add_argument("action", choices=["install", "status"])
    args = parser.parse_args()
    target = Path(sysconfig.get_paths()["purelib"]) / PTH_NAME
    if args.action == "install":
        target.write_text(PTH_LINE)
        print(f"wrote {target}")
        return 0
    from spanbert_lib.compat import is_installed

    print(
        f"{target}: {'present' if target.exists() else 'missing'}; "
        f"import hook {'active' if is_installed() else 'NOT active'} in this interpreter"
    )
    return 0 if is_installed() else 1


if __name__ == "__main__":
    sys.exit(main())
