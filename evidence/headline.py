"""
The README's results table: one headline figure per comparison, taken from the results files the evidence scripts
and benchmarks write (so it never disagrees with them), into ``results/headline.json``.

    python -m evidence.headline          # then python -m evidence.results renders README.md and docs/index.md
"""

import sys
from typing import Any, Callable, Dict, List, Optional, Sequence

from evidence.results import RESULTS_DIR, read_results, table, write_results

HEADLINE_FILE = RESULTS_DIR / "headline.json"


def rows_of(name: str, table_name: str) -> List[Dict[str, Any]]:
    """The rows of a results table as ``{column: cell}``."""
    found = read_results(name)["tables"][table_name]
    return [dict(zip(found["columns"], row)) for row in found["rows"]]


def row(name: str, table_name: str, first_cell: Any, **equal: Any) -> Dict[str, Any]:
    """The first row of a table whose first cell starts with ``first_cell`` and whose cells equal ``equal``."""
    for candidate in rows_of(name, table_name):
        first = str(next(iter(candidate.values())))
        if first.startswith(str(first_cell)) and all(candidate.get(k) == v for k, v in equal.items()):
            return candidate
    raise SystemExit(f"error: results/{name}.json {table_name}: no row starting {first_cell!r} {equal or ''}")


def plain(cell: Any) -> str:
    return str(cell).replace("**", "")


def coreference() -> List[str]:
    systems = {
        key: row("coref_litbank", "systems", key) for key in ("`spanbert_coref` (", "allennlp-models", "Maverick")
    }
    fastcoref = [row("coref_litbank", "systems", f"fastcoref {name}") for name in ("F-coref", "LingMess")]
    published = row("coref_litbank", "published", "Maverick")
    others = [
        f"allennlp-models `coref` {plain(systems['allennlp-models']['CoNLL F1 with singletons'])}",
        f"Maverick {plain(systems['Maverick']['CoNLL F1 with singletons'])}",
        "fastcoref F-coref / LingMess " + " / ".join(plain(system["CoNLL F1 with singletons"]) for system in fastcoref),
        f"(Maverick's paper: {published['CoNLL F1']} with a 500M-parameter encoder trained to convergence)",
    ]
    return [
        "coreference",
        "LitBank, 70 documents, 6 epochs, seeds 1-3; CoNLL F1 with LitBank's singletons",
        f"CoNLL F1 {systems['`spanbert_coref` (']['CoNLL F1 with singletons']}",
        "; ".join(others),
    ]


def span_ner() -> List[str]:
    ours = row("ner_litbank", "systems", "entity-aware")
    spanmarker = row("ner_litbank", "systems", "SpanMarker")
    curve_ours = row("ner_litbank_curves", "curves", "entity-aware")
    curve_spanmarker = row("ner_litbank_curves", "curves", "SpanMarker")
    later = "F1 after 4,800 sentences"
    return [
        "nested span NER",
        "LitBank, 2,400 training sentences seen, seeds 1-3; exact-span F1",
        f"F1 **{ours['F1']}**",
        f"SpanMarker {spanmarker['F1']}; given twice the training (seed 1) SpanMarker {curve_spanmarker[later]}, "
        f"ours {curve_ours[later]}",
    ]


def extractive_qa() -> List[str]:
    mean = row("qa_side_by_side", "seeds", "mean")
    return [
        "extractive QA",
        "SQuAD 1.1, 640 questions, 80 updates, 3 seeds; EM / F1",
        f"**{mean['ours EM']} / {mean['ours F1']}**",
        f"Hugging Face `AutoModelForQuestionAnswering` {mean['Hugging Face EM']} / {mean['Hugging Face F1']}",
    ]


def relations() -> List[str]:
    ours = row("semeval2010", "systems", "ours")
    hugging_face = row("semeval2010", "systems", "Hugging Face")
    return [
        "relation classification",
        "SemEval-2010 Task 8, 1 epoch, seeds 1-3; official macro-F1",
        f"**{ours['macro-F1']}**",
        f"Hugging Face `AutoModelForSequenceClassification` {hugging_face['macro-F1']}",
    ]


def pre_training() -> List[str]:
    adapted = row("main_job", "heldout", "adapted encoder: MLM")
    frozen = row("main_job", "heldout", "heads on the frozen encoder: MLM")
    unigram = row("main_job", "heldout", "unigram")
    perplexity = "at [MASK]: perplexity"
    return [
        "pre-training (the main job)",
        "MiniLM adapted with MLM + SBO on the fixtures corpus, held-out text; perplexity at `[MASK]`",
        f"**{adapted[perplexity]:,}** adapted",
        f"{frozen[perplexity]:,} with the heads on the frozen encoder (always `the`: {unigram[perplexity]:,})",
    ]


def masking_objective() -> List[str]:
    conll = "coref CoNLL F1 (with singletons)"
    rows = {name: row("masking_ablation", "ablation", name) for name in ("geometric spans, MLM + SBO", "no adaptation")}
    others = [row("masking_ablation", "ablation", name) for name in ("geometric spans, MLM", "random wordpieces")]
    return [
        "what adapting the encoder buys (masking ablation)",
        "MiniLM adapted on nine novels with each masking objective, then LitBank coreference; dev CoNLL F1, seed 1",
        f"**{rows['geometric spans, MLM + SBO'][conll]}** SpanBERT's objective",
        f"no adaptation {rows['no adaptation'][conll]}; geometric spans without SBO {others[0][conll]}; "
        f"random wordpieces {others[1][conll]}",
    ]


def failure_paths() -> List[str]:
    total = next(r for r in rows_of("failure_sweep", "by_command") if "all" in str(r["command"]))
    return [
        "bad input and misuse",
        "every command and the server given wrong paths, corrupt files, hostile HTTP, crafted archives",
        f"**{plain(total['good'])} good** of {plain(total['cases'])} cases",
        f"{plain(total['bad'])} bad (data lost, a traceback, code run from an archive)",
    ]


def speed() -> List[str]:
    def trained(system: str) -> Dict[str, Any]:
        return row("coref_inference_trained", "prediction", 8074, system=system, precision="float32")

    ours, maverick, fastcoref = trained("`spanbert_coref_litbank`"), trained("`maverick`"), trained("`fastcoref`")
    return [
        "coreference prediction",
        "one 8,074-word document, trained models, one CPU thread; seconds and peak memory",
        f"{ours['prediction s']} s, {ours['peak RSS MB']:,} MB",
        f"Maverick {maverick['prediction s']} s, {maverick['peak RSS MB']:,} MB; "
        f"F-coref {fastcoref['prediction s']} s, {fastcoref['peak RSS MB']:,} MB",
    ]


COMPARISONS: Sequence[Callable[[], List[str]]] = (
    coreference,
    span_ner,
    extractive_qa,
    relations,
    pre_training,
    masking_objective,
    speed,
    failure_paths,
)


def main(argv: Optional[List[str]] = None) -> int:
    rows = [comparison() for comparison in COMPARISONS]
    write_results(
        HEADLINE_FILE,
        "One headline figure per comparison, from the results files of the evidence scripts and benchmarks",
        "evidence.headline",
        {
            "comparisons": table(
                ["task", "set-up", "this library", "instead (retrained here, not the released models)"], rows
            )
        },
        ["Every cell is read from the results file of its comparison; docs/results.md shows those tables whole."],
    )
    print(f"wrote {HEADLINE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
