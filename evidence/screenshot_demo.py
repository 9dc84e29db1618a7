"""
Screenshots of a running ``allennlp serve`` page, one PNG per view, each after running the view's
prefilled example (how ``docs/serve_demo.png`` was made from ``bash scripts/demo.sh``).

    .venv/bin/python -m evidence.screenshot_demo [--url http://127.0.0.1:8000] \
        [--out outputs/demo/screenshots] [VIEW ...]

Drives Debian's ``chromium`` through Playwright (``executable_path``; Playwright's own browser
download is never used). Without VIEW names every view on the page is captured.
"""

import argparse
import shutil
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("views", nargs="*", help="view names (the tabs' data-view); default: all")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--out", default="outputs/demo/screenshots")
    parser.add_argument("--width", type=int, default=1200)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("error: Debian's chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": args.width, "height": 900})
        page.goto(args.url + "/")
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        names = args.views or page.eval_on_selector_all(".tab[data-view]", "tabs => tabs.map(t => t.dataset.view)")
        for name in names:
            page.click(f".tab[data-view='{name}']")
            view = page.locator(f"section.view[data-view='{name}']")
            submit = view.locator("button[type=submit]")
            if submit.count() and submit.first.is_enabled():
                submit.first.click()
                view.locator("form:not(.busy)").first.wait_for(timeout=120_000)
                view.locator("button[type=submit]:not([disabled])").first.wait_for(timeout=120_000)
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=True)
            print(path)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
