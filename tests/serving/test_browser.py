"""
The page in a real browser: ``allennlp serve`` (the CLI, as a user starts it) with a tiny model of
every task, driven by Playwright in Debian's headless Chromium. Every view runs its example and the
rendered DOM is checked; a screenshot of each view is saved under ``outputs/screenshots/``.

Chromium comes from the Debian package ``chromium`` (``scripts/bootstrap.sh`` installs it when it
runs as root with apt-get); Playwright's own browser download is never used.
"""

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests import REPO_ROOT
from tests.serving.conftest import free_port
from tests.serving.tiny_archives import COREF_TEXT, NER_TEXT

SCREENSHOTS = REPO_ROOT / "outputs" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no chromium on PATH: install Debian's package "
        "(`apt-get install -y chromium`, as scripts/bootstrap.sh does when run as root)",
    ),
]


# A run in its second of three epochs, as `allennlp train` leaves its serialization directory.
TRAINING_LOG = """\
2026-11-23 22:07:28,181 - INFO - allennlp.training.gradient_descent_trainer - Epoch 0/2
2026-11-23 22:07:29,181 - INFO - allennlp.training.gradient_descent_trainer - Epoch 1/2
2026-11-23 22:07:29,300 - INFO - tqdm - batch_loss: 3.5, loss: 3.2500 ||:  40%|####      | 4/10 [00:01<00:02]
"""


@pytest.fixture(scope="module")
def training_run(tiny_archives, tmp_path_factory):
    """A serialization directory that looks mid-training; the test finishes it by adding the archive."""
    run = tmp_path_factory.mktemp("training") / "later"
    run.mkdir()
    shutil.copy(tiny_archives["typing"] / "config.json", run / "config.json")
    (run / "metrics_epoch_0.json").write_text("{}")
    (run / "out.log").write_text(TRAINING_LOG)
    return run


@pytest.fixture(scope="module")
def server_url(tiny_archives, training_run):
    port = free_port()
    models = [f"--model={name}={path}" for name, path in tiny_archives.items()] + [f"--model=later={training_run}"]
    command = [
        str(Path(sys.executable).with_name("allennlp")),
        "serve",
        *models,
        "--port",
        str(port),
        "--masking-tokenizer",
        "fixtures/tiny_bert",
    ]
    log = open(tiny_archives["coref"].parent / "serve.log", "w")
    process = subprocess.Popen(command, cwd=str(REPO_ROOT), stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while True:
            if process.poll() is not None:
                log.flush()
                pytest.fail(f"allennlp serve exited {process.returncode}:\n{Path(log.name).read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("allennlp serve did not answer /health within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def page(server_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root; --disable-dev-shm-usage: containers often have a tiny /dev/shm
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server_url + "/")
        page.wait_for_selector("body[data-ready=true]", timeout=30_000)
        yield page
        assert errors == [], errors
        browser.close()


def open_view(page, name):
    page.click(f".tab[data-view='{name}']")
    view = page.locator(f"section.view[data-view='{name}']")
    assert view.is_visible()
    return view


def run_example(view, text=None, selector="textarea"):
    """Optionally replaces the first input, submits, and waits until the form is idle again."""
    if text is not None:
        view.locator(selector).first.fill(text)
    view.locator("button[type=submit]").click()
    view.locator("form:not(.busy)").wait_for()
    view.locator("button[type=submit]:not([disabled])").wait_for()


def screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_tabs_and_model_cards(page):
    tabs = page.locator(".tab").evaluate_all("tabs => tabs.map(t => t.dataset.view)")
    assert tabs == ["masking", "coref", "qa", "qa_abstains", "ner", "relation", "semeval", "typing", "later"]
    view = open_view(page, "coref")
    assert view.locator(".model-card .encoder").inner_text() == "tiny_bert"
    assert view.locator(".metric[data-metric='conll_f1']").count() == 1


def test_masking_view(page):
    view = open_view(page, "masking")
    view.locator(".masked-text .masked-span").first.wait_for()
    spans = view.locator(".masked-text .masked-span")
    assert spans.count() >= 3
    replacements = set(spans.evaluate_all("nodes => nodes.map(n => n.dataset.replacement)"))
    assert replacements <= {"mask", "random", "keep"} and "mask" in replacements
    # whole words: the characters next to a span never continue a word inside it
    cut_words = spans.evaluate_all("""nodes => nodes.filter(n => {
        const alnum = c => /[A-Za-z0-9]/.test(c || "");
        const text = n.querySelector('.masked-original').textContent;
        const before = (n.previousSibling && n.previousSibling.textContent || "").slice(-1);
        const after = (n.nextSibling && n.nextSibling.textContent || "").slice(0, 1);
        return (alnum(before) && alnum(text[0])) || (alnum(after) && alnum(text[text.length - 1]));
    }).length""")
    assert cut_words == 0
    mask_outputs = view.locator(".masked-span.mask .masked-output").all_inner_texts()
    assert mask_outputs and all(set(output.split()) == {"[MASK]"} for output in mask_outputs)
    heights = view.locator(".hist-bar").evaluate_all("bars => bars.map(b => b.getBoundingClientRect().height)")
    assert len(heights) == 10 and max(heights) > 50 and heights[0] == max(heights)
    assert view.locator(".hist-expected").count() == 10
    screenshot(page, "masking")
    before = view.locator(".masked-text").inner_html()
    view.locator("button.secondary").click()  # another draw
    page.wait_for_function("(before) => document.querySelector('.masked-text').innerHTML !== before", arg=before)
    assert view.locator("input.seed").input_value() == "1"


def test_coreference_view(page):
    view = open_view(page, "coref")
    run_example(view, COREF_TEXT)
    view.locator(".coref-text .mention").first.wait_for()
    mentions = view.locator(".coref-text .mention").evaluate_all(
        "nodes => nodes.map(n => [n.dataset.cluster, getComputedStyle(n).borderBottomColor])"
    )
    colours = {}
    for cluster, colour in mentions:
        colours.setdefault(cluster, set()).add(colour)
    assert any(sum(1 for c, _ in mentions if c == cluster) >= 2 for cluster in colours)
    assert all(len(found) == 1 for found in colours.values())  # one colour per cluster
    assert len({next(iter(found)) for found in colours.values()}) == len(colours)  # distinct clusters, distinct colours
    items = view.locator(".cluster-item")
    assert items.count() == len(colours)
    swatch = items.first.locator(".swatch").evaluate("n => getComputedStyle(n).backgroundColor")
    assert swatch == next(iter(colours[items.first.get_attribute("data-cluster")]))
    cluster = mentions[0][0]
    view.locator(f".coref-text .mention[data-cluster='{cluster}']").first.hover()
    lit = view.locator(".coref-text .mention.lit").evaluate_all("nodes => nodes.map(n => n.dataset.cluster)")
    assert lit and set(lit) == {cluster}
    assert len(lit) == sum(1 for c, _ in mentions if c == cluster)  # the whole cluster lights up
    screenshot(page, "coreference")


def test_qa_views(page):
    view = open_view(page, "qa")
    view.locator("mark.answer").wait_for()
    answer = view.locator(".answer-text").inner_text()
    assert view.locator("mark.answer").inner_text() == answer
    rows = view.locator(".nbest-row")
    assert rows.count() >= 2 and rows.first.locator(".nbest-text").inner_text() == answer
    screenshot(page, "qa")
    view = open_view(page, "qa_abstains")
    view.locator(".no-answer").wait_for()
    assert view.locator(".no-answer .answer-label").text_content() == "No answer"
    assert view.locator("mark.answer").count() == 0
    screenshot(page, "qa_no_answer")


def test_span_ner_view(page):
    view = open_view(page, "ner")
    run_example(view, NER_TEXT)
    view.locator(".bracket").first.wait_for()
    brackets = view.locator(".bracket").evaluate_all(
        "nodes => nodes.map(n => [n.dataset.label, Number(n.dataset.level), n.getBoundingClientRect().top])"
    )
    assert len(brackets) == view.locator(".entity-table tbody tr").count() >= 3
    assert {label for label, _, _ in brackets} == {"PER"}
    assert max(level for _, level, _ in brackets) >= 2  # nested entities stack
    by_level = {}
    for _, level, top in brackets:
        by_level.setdefault(level, set()).add(round(top))
    tops = [min(by_level[level]) for level in sorted(by_level)]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)  # deeper levels are drawn lower
    assert view.locator(".bracket-label").first.inner_text() == "PER"
    screenshot(page, "span_ner")


def test_relation_view(page):
    view = open_view(page, "relation")
    view.locator(".prob-row").first.wait_for()
    assert view.locator(".rel-subject .rel-arg-text").inner_text() == view.locator("input[name=subject]").input_value()
    assert view.locator(".rel-object .rel-arg-text").inner_text() == view.locator("input[name=object]").input_value()
    values = [float(v.rstrip(" %")) for v in view.locator(".prob-row .prob-value").all_inner_texts()]
    assert sum(values) == pytest.approx(100.0, abs=0.5) and values == sorted(values, reverse=True)
    assert view.locator(".prob-row.top").get_attribute("data-label") == view.locator(".relation-label").inner_text()
    screenshot(page, "relation")


def test_semeval_relation_view(page):
    view = open_view(page, "semeval")
    view.locator(".prob-row").first.wait_for()
    assert view.locator(".rel-subject .rel-arg-text").inner_text() == "flood"  # from <e1>flood</e1>
    assert view.locator(".rel-object .rel-arg-text").inner_text() == "rain"
    assert "<e1>" not in view.locator(".rel-sentence").inner_text()
    labels = view.locator(".prob-row").evaluate_all("rows => rows.map(r => r.dataset.label)")
    assert len(labels) == 19 and "Cause-Effect(e2,e1)" in labels
    screenshot(page, "relation_semeval")


def test_entity_typing_view(page):
    view = open_view(page, "typing")
    view.locator(".prob-row").first.wait_for()
    assert view.locator(".rel-subject .rel-arg-text").inner_text() == view.locator("input[name=mention]").input_value()
    predicted = view.locator(".type-chip").all_inner_texts()
    highlighted = view.locator(".prob-row.top").evaluate_all("rows => rows.map(r => r.dataset.label)")
    assert sorted(predicted) == sorted(highlighted)
    assert view.locator(".prob-row").count() >= 10
    screenshot(page, "entity_typing")


def test_a_model_in_training_shows_progress_then_appears(page, training_run, tiny_archives):
    view = open_view(page, "later")
    card = view.locator(".model-card.training")
    assert card.is_visible()
    facts = card.locator(".model-facts").inner_text()
    assert "2 / 3" in facts and "3.2500" in facts
    width = card.locator(".progress-bar").evaluate(
        "bar => bar.getBoundingClientRect().width / bar.parentNode.getBoundingClientRect().width"
    )
    assert width == pytest.approx((1 + 0.4) / 3, abs=0.02)
    screenshot(page, "training")
    shutil.copy(tiny_archives["typing"] / "metrics.json", training_run / "metrics.json")
    shutil.copy(tiny_archives["typing"] / "model.tar.gz", training_run / "model.tar.gz")
    # the server polls every 2 s (two equal sizes), the page every 3 s
    page.locator("section.view[data-view='later'][data-status='ready'] .model-card:not(.training)").wait_for(
        timeout=30_000
    )
    view.locator(".prob-row").first.wait_for()
    assert page.locator(".tab[data-view='later']").get_attribute("data-status") == "ready"


def test_bad_input_shows_the_servers_message(page):
    view = open_view(page, "typing")
    view.locator("input[name=mention]").fill("not in the sentence")
    view.locator("button[type=submit]").click()
    assert "does not occur in the sentence" in view.locator(".error-box").inner_text()
