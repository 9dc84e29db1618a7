"""
Learning curves of the side-by-side runs (``evidence/coref_litbank_curves.py``, ``evidence/ner_litbank_curves.py``):
our runs' validation after every epoch, and the curves as a PNG (one panel per x axis, e.g. epochs or budgets and
training CPU minutes; one colour per system; dev score on y).
"""

import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Type


def read_json(path: Path) -> Dict[str, Any]:
    """A JSON file's object; {} when the file is not there."""
    return json.loads(path.read_text()) if path.exists() else {}


def validation_points(folder: Path, metric: str, cost_file: str) -> List[Dict[str, Optional[float]]]:
    """
    An allennlp run's validation after every epoch: ``{"epoch", "cpu_minutes", "score"}`` per
    ``metrics_epoch_N.json`` in epoch order (epochs counted from 1), ``score`` = 100 x its ``validation_<metric>``
    (None where missing), CPU minutes prorated over the epochs from the ``cpu_seconds`` of ``folder/cost_file``
    (None without it).
    """
    epochs = sorted(folder.glob("metrics_epoch_*.json"), key=lambda path: int(path.stem.rsplit("_", 1)[1]))
    cpu = read_json(folder / cost_file).get("cpu_seconds")
    points = []
    for index, path in enumerate(epochs):
        score = json.loads(path.read_text()).get(f"validation_{metric}")
        points.append(
            {
                "epoch": index + 1,
                "cpu_minutes": round(cpu * (index + 1) / len(epochs) / 60, 2) if cpu else None,
                "score": round(100 * score, 2) if score is not None else None,
            }
        )
    return points


def collect_curves(
    runs: Iterable[Tuple[Any, int, Path]],
    curve_of: Callable[[Any, int, Path], Dict[str, Any]],
    failures: Tuple[Type[Exception], ...],
) -> Tuple[List[Dict[str, Any]], List[str]]:
    """
    ``curve_of(system, seed, folder)`` for each run folder: the curves with a point or a final score, and a line for
    each run left out (one that raised one of ``failures``, or has nothing finished yet).
    """
    curves, skipped = [], []
    for system, seed, folder in runs:
        try:
            curve = curve_of(system, seed, folder)
        except failures as error:
            skipped.append(f"{folder.name}: {str(error).splitlines()[0]}")
            continue
        if curve["points"] or curve.get("final"):
            curves.append(curve)
        else:
            skipped.append(f"{folder}: nothing finished yet")
    return curves, skipped


def save_curves(
    out: Path,
    png: Path,
    curves: List[Dict[str, Any]],
    skipped: List[str],
    plot: Callable[[List[Dict[str, Any]], Path], None],
    describe: Callable[[Dict[str, Any]], str],
) -> None:
    """Writes ``out/curves.json`` and ``plot(curves, png)``, and prints ``describe(curve)`` per curve, each skipped run
    and where the files went."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "curves.json").write_text(json.dumps({"curves": curves, "skipped": skipped}, indent=2) + "\n")
    plot(curves, png)
    for curve in curves:
        print(describe(curve))
    for line in skipped:
        print(f"skipped: {line}")
    print(f"wrote {out / 'curves.json'} and {png}")


Curve = Dict[str, Any]
"""``{"label", "colour", "style", "points": [point], "final": point or None}``; a point maps each x key and the
y key to a number (None where not measured) and holds ``"error"`` where its prediction failed."""


def plot_curves(
    curves: List[Curve], path: Path, axes_x: Sequence[Tuple[str, str]], y: Tuple[str, str], title: str
) -> None:
    """
    Writes ``path``. A curve whose points all have the panel's x is a line with markers; one without such points
    shows its final score as a square; a failed point is an ``x`` at 0. Each label is shown once in the legend.

    # Parameters

    curves : `List[Curve]`
        The curves (module docstring).
    path : `Path`
        The PNG to write (its folder is made).
    axes_x : `Sequence[Tuple[str, str]]`
        ``(point key, axis label)`` per panel, left to right.
    y : `Tuple[str, str]`
        ``(point key, axis label)`` of the score.
    title : `str`
        The figure's title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y_key, y_label = y
    figure, axes = plt.subplots(1, len(axes_x), figsize=(6 * len(axes_x), 4.5), sharey=True, squeeze=False)
    labelled = set()
    for curve in curves:
        points = [point for point in curve["points"] if point.get(y_key) is not None]
        final = curve.get("final")
        label = None if curve["label"] in labelled else curve["label"]
        labelled.add(curve["label"])
        for axis, (x_key, _) in zip(axes[0], axes_x):
            if points and all(point.get(x_key) is not None for point in points):
                xs, ys = [point[x_key] for point in points], [point[y_key] for point in points]
                axis.plot(xs, ys, curve["style"], color=curve["colour"], marker="o", markersize=3, label=label)
            elif final and final.get(x_key) is not None and final.get(y_key) is not None:
                axis.plot([final[x_key]], [final[y_key]], "s", color=curve["colour"], label=label)
            for failed in (p for p in curve["points"] if "error" in p and p.get(x_key) is not None):
                axis.plot([failed[x_key]], [0], "x", color=curve["colour"])
    for axis, (_, x_label) in zip(axes[0], axes_x):
        axis.set_xlabel(x_label)
        axis.grid(alpha=0.3)
    axes[0][0].set_ylabel(y_label)
    axes[0][-1].legend(fontsize=8, loc="lower right")
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
