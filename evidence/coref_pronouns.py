"""
Do third-person pronouns go to who is meant? Every trained ``spanbert_coref`` run of a side-by-side folder
(``evidence/coref_litbank_side_by_side.py --out OUT``: its ``<system>_seed<N>/model.tar.gz``) predicts the short
passages of ``fixtures/coref/pronoun_passages.txt`` - written for this project, outside LitBank, each with people of
different gender or number side by side ("Tom and his daughter Clara ...") - and each gold pronoun is judged:

- a gold pronoun is a one-word third-person pronoun mention ("he", "her", "their", "it", ...) with an earlier mention
  in its gold cluster;
- its predicted antecedent is the closest earlier mention of its predicted cluster; that mention's entity is the one
  of the gold mention it equals or, failing that, of the shortest gold mention that holds it and ends on the same
  word (its head, for the English noun phrases of these passages: "Clara" in "his daughter Clara");
- **right**: the antecedent's entity is the pronoun's gold entity; **wrong**: another entity (the father's "he"
  linked to the daughter), or none; **unlinked**: the pronoun is in no predicted cluster with an earlier mention.

Accuracy is right / gold pronouns, per seed, then mean ± std over seeds. Nothing is tuned on the passages: they
were written before any of these models was trained, and only read here.

    .venv/bin/python -m evidence.coref_pronouns outputs/coref_agreement [--results results/coref_pronouns.json]
"""

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.summary import format_mean_std, format_table, mean_std

PASSAGES = REPO_ROOT / "fixtures" / "coref" / "pronoun_passages.txt"
RESULTS = RESULTS_DIR / "coref_pronouns.json"
Span = Tuple[int, int]
_CLOSING = re.compile(r"(\]\d+)+$")


@dataclass
class Passage:
    """One passage: ``sentences`` of words and its gold ``clusters`` (inclusive word offsets, passage-wide)."""

    line: int  # its first line in the file (1-based)
    sentences: List[List[str]]
    clusters: List[List[Span]]

    @property
    def words(self) -> List[str]:
        return [word for sentence in self.sentences for word in sentence]


class PassageFormatError(ValueError):
    pass


def parse_passages(path: Path = PASSAGES) -> List[Passage]:
    """The passages of ``path`` (format: the file's header). Raises :class:`PassageFormatError` naming the line."""
    passages: List[Passage] = []
    sentences: List[List[str]] = []
    entities: Dict[int, List[Span]] = {}
    opened: List[int] = []
    first_line = 0
    position = 0

    def finish() -> None:
        nonlocal sentences, entities, position
        if opened:
            raise PassageFormatError(f"{path}, passage at line {first_line}: {len(opened)} mention(s) never closed")
        if sentences:
            clusters = [sorted(spans) for _, spans in sorted(entities.items())]
            passages.append(Passage(first_line, sentences, clusters))
        sentences, entities, position = [], {}, 0

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not line:
            finish()
            continue
        if not sentences:
            first_line = number
        sentence = []
        for token in line.split():
            word = token.lstrip("[")
            opened.extend([position] * (len(token) - len(word)))
            closing = _CLOSING.search(word)
            if closing:
                for entity in re.findall(r"\](\d+)", closing.group(0)):
                    if not opened:
                        raise PassageFormatError(f"{path}, line {number}: {token!r} closes a mention never opened")
                    entities.setdefault(int(entity), []).append((opened.pop(), position))
                word = word[: closing.start()]
            if not word or "[" in word or "]" in word:
                raise PassageFormatError(f"{path}, line {number}: cannot read the token {token!r}")
            sentence.append(word)
            position += 1
        sentences.append(sentence)
    finish()
    return passages


def gold_pronouns(passage: Passage) -> Iterator[Tuple[Span, int]]:
    """Each judged pronoun (one-word third-person pronoun mention with an earlier gold mention) and its entity,
    in text order."""
    from spanbert_lib.coref.models.agreement import THIRD_PERSON_PRONOUNS

    words = passage.words
    judged = [
        (span, entity)
        for entity, cluster in enumerate(passage.clusters)
        for span in cluster
        if span[0] == span[1] and words[span[0]].lower() in THIRD_PERSON_PRONOUNS and min(cluster) < span
    ]
    yield from sorted(judged)


def entity_of_mention(passage: Passage, span: Span) -> Optional[int]:
    """The gold entity of a predicted mention: that of the gold mention it equals, else of the shortest gold mention
    holding it that ends on the same word; ``None`` when there is neither."""
    holders = [
        (gold[1] - gold[0], gold != span, entity)
        for entity, cluster in enumerate(passage.clusters)
        for gold in cluster
        if gold[0] <= span[0] and gold[1] == span[1]
    ]
    exact = [entity for _, inexact, entity in holders if not inexact]
    if exact:
        return exact[0]
    return min(holders)[2] if holders else None


def judge(passage: Passage, predicted: Sequence[Sequence[Span]]) -> Dict[str, List[str]]:
    """``{"right": [...], "wrong": [...], "unlinked": [...]}``: each judged pronoun described as
    ``"she (line L) -> his daughter Clara"``."""
    words = passage.words
    cluster_of = {tuple(span): [tuple(other) for other in cluster] for cluster in predicted for span in cluster}

    def text(span: Span) -> str:
        return " ".join(words[span[0] : span[1] + 1])

    verdicts: Dict[str, List[str]] = {"right": [], "wrong": [], "unlinked": []}
    for span, entity in gold_pronouns(passage):
        earlier = [other for other in cluster_of.get(span, []) if other < span]
        if not earlier:
            verdicts["unlinked"].append(f"{text(span)} (word {span[0]})")
            continue
        antecedent = max(earlier)
        verdict = "right" if entity_of_mention(passage, antecedent) == entity else "wrong"
        verdicts[verdict].append(f"{text(span)} (word {span[0]}) -> {text(antecedent)}")
    return verdicts


def predict(archive: Path, passages: Sequence[Passage]) -> List[List[List[Span]]]:
    """Clusters of each passage by the archive's model (one thread, CPU)."""
    import torch
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    import spanbert_lib.plugin  # noqa: F401  (registers the model)

    torch.set_num_threads(1)
    predictor = Predictor.from_archive(load_archive(str(archive)), "spanbert_coref")
    results = []
    for passage in passages:
        output = predictor.predict_tokenized(passage.sentences)
        results.append([[(int(start), int(end)) for start, end in cluster] for cluster in output["clusters"]])
    return results


def runs_in(folder: Path) -> List[Tuple[str, int, Path]]:
    """``(system key, seed, archive)`` of each finished run of ``folder`` that this library trained."""
    found = []
    for archive in sorted(folder.glob("*_seed*/model.tar.gz")):
        key, _, seed = archive.parent.name.rpartition("_seed")
        if seed.isdigit():
            found.append((key, int(seed), archive))
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a coref_litbank_side_by_side --out folder")
    parser.add_argument("--passages", type=Path, default=PASSAGES)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    try:
        passages = parse_passages(args.passages)
    except (OSError, PassageFormatError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    runs = runs_in(args.folder)
    if not runs:
        print(f"error: {args.folder} holds no <system>_seed<N>/model.tar.gz", file=sys.stderr)
        return 2
    total = sum(1 for passage in passages for _ in gold_pronouns(passage))
    per_system: Dict[str, Dict[int, Dict[str, List[str]]]] = {}
    for key, seed, archive in runs:
        verdicts: Dict[str, List[str]] = {"right": [], "wrong": [], "unlinked": []}
        for passage, clusters in zip(passages, predict(archive, passages)):
            for name, items in judge(passage, clusters).items():
                verdicts[name] += [f"passage at line {passage.line}: {item}" for item in items]
        per_system.setdefault(key, {})[seed] = verdicts
        counts = ", ".join(f"{name} {len(items)}" for name, items in verdicts.items())
        print(f"{key} seed {seed}: {counts} of {total} pronouns", flush=True)
    from evidence.coref_litbank_side_by_side import BY_KEY, DISPLAY

    rows = []
    for key, per_seed in sorted(
        per_system.items(), key=lambda item: list(BY_KEY).index(item[0]) if item[0] in BY_KEY else 99
    ):
        name = DISPLAY.get(BY_KEY[key].label, key) if key in BY_KEY else key
        row: List[object] = [name, " / ".join(map(str, sorted(per_seed)))]
        for name in ("right", "wrong", "unlinked"):
            shares = [100 * len(verdicts[name]) / total for verdicts in per_seed.values()]
            row.append(format_mean_std(mean_std(shares), digits=1))
        rows.append(row)
    columns = ["system", "seeds", "right (%)", "wrong entity (%)", "unlinked (%)"]
    print(format_table(columns, [[str(cell) for cell in row] for row in rows]))
    write_results(
        args.results,
        title="Third-person pronouns of passages written outside LitBank: resolved to who is meant?",
        module="evidence.coref_pronouns",
        tables={"pronouns": table(columns, rows)},
        notes=[
            f"{len(passages)} passages, {total} judged pronouns ({args.passages.relative_to(REPO_ROOT)})",
            "right: the closest earlier mention of the pronoun's predicted cluster is of its gold entity",
            f"models: every finished run of {args.folder}",
        ],
        verdicts=per_system,
    )
    print(f"wrote {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
