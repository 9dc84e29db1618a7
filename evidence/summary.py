"""
Several seeds summarised the same way by every evidence script: mean and SAMPLE standard deviation
(n - 1; none for a single seed), and one table with a row per seed and a ``mean ± std`` row per system.
"""

import math
import statistics
from typing import Dict, List, Mapping, Optional, Sequence, Tuple


def seed_overrides(seed: int) -> Dict[str, int]:
    """allennlp's ``random_seed``, ``numpy_seed`` and ``pytorch_seed`` all set to ``seed``."""
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def mean_std(values: Sequence[Optional[float]], digits: Optional[int] = None) -> Dict[str, Optional[float]]:
    """
    ``{"mean": ..., "std": ...}`` of ``values``: the sample standard deviation (n - 1), None for one
    value (a spread one seed cannot show); rounded to ``digits`` when given. ``None`` entries (a figure
    a resumed run does not have) are left out; both are ``None`` when nothing is left.
    """
    present = [float(value) for value in values if value is not None]
    if not present:
        return {"mean": None, "std": None}
    mean = statistics.mean(present)
    std = statistics.stdev(present) if len(present) > 1 else None
    if digits is not None:
        mean, std = round(mean, digits), None if std is None else round(std, digits)
    return {"mean": mean, "std": std}


def seed_summary(per_seed: Mapping[int, Mapping[str, float]], scores: Sequence[str]) -> Dict:
    """
    One system's seeds: ``{"per_seed": ..., "mean": {score: mean}, "f1_std": ...}`` (the sample standard
    deviation of ``f1``), the shape the side-by-side scripts write to ``side_by_side.json``.
    """
    return {
        "per_seed": dict(sorted(per_seed.items())),
        "mean": {name: mean_std([s[name] for s in per_seed.values()])["mean"] for name in scores},
        "f1_std": mean_std([s["f1"] for s in per_seed.values()])["std"],
    }


def format_mean_std(values: Mapping[str, Optional[float]], digits: int = 1) -> str:
    """``"43.0 ± 1.4"`` for a :func:`mean_std` result (``"-"`` when it has no mean, ``"41.0 (1 seed)"`` without a
    spread)."""
    if values["mean"] is None:
        return "-"
    if values["std"] is None:
        return f"{values['mean']:.{digits}f} (1 seed)"
    return f"{values['mean']:.{digits}f} ± {values['std']:.{digits}f}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool = False) -> str:
    """``rows`` under ``header``: a markdown table, or plain text in aligned columns (text left, figures right)."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) if index < 2 else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(cells, widths))
        ).rstrip()

    return "\n".join([line(header), line(["-" * width for width in widths])] + [line(row) for row in rows])


def seed_table(
    results: Mapping[str, Mapping[int, Mapping[str, Optional[float]]]],
    columns: Sequence[Tuple[str, str]],
    digits: int = 1,
    markdown: bool = False,
) -> str:
    """
    One row per system and seed with the figures named by ``columns`` (``(key, heading)`` pairs),
    then per system a ``mean ± std`` row over its seeds.

    # Parameters

    results : `Mapping[str, Mapping[int, Mapping[str, Optional[float]]]]`
        ``results[system][seed][key]``; a missing or ``None`` figure prints as ``-``.
    columns : `Sequence[Tuple[str, str]]`
        The figures to show, in order.
    digits : `int`, optional (default = `1`)
        Decimals of every figure.
    markdown : `bool`, optional (default = `False`)
        A markdown table instead of aligned plain text.
    """
    header = ["system", "seed"] + [heading for _, heading in columns]
    rows: List[List[str]] = []
    for system, per_seed in results.items():
        for seed, figures in sorted(per_seed.items()):  # in seed order, however the runs finished
            rows.append([system, str(seed)] + [_cell(figures.get(key), digits) for key, _ in columns])
        rows.append(
            [system, "mean ± std"]
            + [format_mean_std(mean_std([f.get(key) for f in per_seed.values()]), digits) for key, _ in columns]
        )
    return format_table(header, rows, markdown)


def _cell(value: Optional[float], digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"
