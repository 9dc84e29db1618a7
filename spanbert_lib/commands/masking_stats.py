"""
``allennlp masking-stats CONFIG_OR_READER_JSON TEXT_PATH [--json] [--plot FILE.png]``

Reads TEXT_PATH with the configured dataset reader, applies the configured masking scheme
and reports what it did: masked fraction of tokens, mean span length in words, the
span-length histogram (Joshi et al. 2020, Figure 2; ``--plot`` draws it), the share of spans
replaced by [MASK] / random tokens / kept, how many spans start at a word start, and the block
fill rate (wordpieces per block over ``max_sequence_length``: low when documents are short, e.g. a
book read with one document per paragraph).

CONFIG_OR_READER_JSON is a training config (its ``dataset_reader`` and ``model.masker`` are
used) or the parameters of a dataset reader alone, optionally with a ``masker`` key; a config of
another task is refused naming the file. ``--plot`` may not name an input; the PNG is written to a
temporary file moved into place when it is complete.
"""

import argparse
import json
from typing import Any, Dict, Optional, cast

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.common_arguments import non_negative_int, positive_int


@Subcommand.register("masking-stats")
class MaskingStats(Subcommand):
    requires_plugins = True

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Apply a configured masking scheme to text and report span statistics."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("config", type=str, help="training config or dataset reader params (json/jsonnet)")
        subparser.add_argument("text_path", type=str, help="text file, directory or glob to read")
        subparser.add_argument("--json", action="store_true", help="print one JSON object")
        subparser.add_argument("--plot", type=str, default=None, help="write the span length histogram as a PNG")
        subparser.add_argument("--batch-size", type=positive_int, default=32)
        subparser.add_argument("--seed", type=non_negative_int, default=0, help="seed of the masking generator")
        subparser.add_argument("--max-blocks", type=positive_int, default=None, help="stop after this many blocks")
        subparser.add_argument(
            "-o",
            "--overrides",
            type=str,
            default="",
            help="a JSON structure used to override the config, as for `allennlp train`",
        )
        subparser.set_defaults(func=_masking_stats_from_args)
        return subparser


def _masking_stats_from_args(args: argparse.Namespace) -> None:
    statistics = masking_statistics(
        args.config,
        args.text_path,
        batch_size=args.batch_size,
        seed=args.seed,
        max_blocks=args.max_blocks,
        plot=args.plot,
        overrides=args.overrides,
    )
    if args.json:
        print(json.dumps(statistics, sort_keys=True))
    else:
        print(format_statistics(statistics))


def masking_statistics(
    config: str,
    text_path: str,
    batch_size: int = 32,
    seed: int = 0,
    max_blocks: Optional[int] = None,
    plot: Optional[str] = None,
    overrides: str = "",
) -> Dict[str, Any]:
    """
    Masks every block the configured reader yields for a text and collects the statistics.

    # Parameters

    config : `str`
        A training config (its ``dataset_reader`` and ``model.masker``) or dataset reader
        parameters, optionally with a ``masker`` key (json/jsonnet file).
    text_path : `str`
        Text file, directory or glob to read.
    batch_size : `int`, optional (default = `32`)
        Blocks masked at once.
    seed : `int`, optional (default = `0`)
        Seed of the masking generator.
    max_blocks : `int`, optional (default = `None`)
        Stop after this many blocks.
    plot : `str`, optional (default = `None`)
        A PNG file to draw the span length histogram to.
    overrides : `str`, optional (default = `""`)
        A JSON structure overriding the config, as for ``allennlp train``.

    # Returns

    `Dict[str, Any]`
        :class:`MaskingStatistics`' statistics plus ``num_blocks``, ``mean_block_length`` and
        ``block_fill_rate``.
    """
    import itertools

    import torch
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader

    import spanbert_lib.plugin  # noqa: F401
    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.pretraining.masking import Masker, MaskingStatistics, plot_span_length_histogram
    from spanbert_lib.safeguards.command_inputs import config_file_inputs
    from spanbert_lib.safeguards.same_file import refuse_output_over_input

    refuse_output_over_input(plot, [*config_file_inputs(config, overrides), text_path], "--plot")
    params = Params.from_file(config, params_overrides=overrides)
    if "dataset_reader" in params:
        reader_params = params.pop("dataset_reader")
        masker_params = params.get("model", Params({})).pop("masker", None)
    else:
        reader_params = params
        masker_params = params.pop("masker", None)
    reader = DatasetReader.from_params(reader_params)
    masker = Masker.from_params(masker_params) if masker_params is not None else Masker.by_name("geometric_span")()
    tokenizer = getattr(reader, "tokenizer", None)  # the fast tokenizer the reader loaded (and checked)
    if tokenizer is None or getattr(tokenizer, "mask_token_id", None) is None:
        raise UserInputError(
            f"not a pre-training configuration: its dataset reader {type(reader).__name__} makes no blocks of "
            "wordpieces to mask (give a training config of a pre-training reader, or that reader's parameters)",
            path=config,
        )
    vocab_size = len(tokenizer)  # len() of a fast tokenizer is not free: once, not per batch

    generator = torch.Generator().manual_seed(seed)
    accumulator = MaskingStatistics()
    num_blocks = num_block_tokens = 0
    instances = reader.read(text_path)
    if max_blocks is not None:
        instances = itertools.islice(instances, max_blocks)
    while True:
        chunk = list(itertools.islice(instances, batch_size))
        if not chunk:
            break
        tensors = cast(Dict[str, torch.Tensor], Batch(chunk).as_tensor_dict())  # TensorFields only
        num_blocks += len(chunk)
        num_block_tokens += int((tensors["input_ids"] != tokenizer.pad_token_id).sum())
        output = masker.mask(
            tensors["input_ids"],
            tensors["word_ids"],
            mask_token_id=tokenizer.mask_token_id,
            vocab_size=vocab_size,
            phrase_ids=tensors.get("phrase_ids"),
            generator=generator,
        )
        accumulator.update(output, tensors["word_ids"])
    statistics = accumulator.get_statistics()
    statistics.update(_block_fill(num_blocks, num_block_tokens, getattr(reader, "max_sequence_length", None)))
    if plot:
        from spanbert_lib.safeguards.atomic_files import atomic_output_path

        if not statistics["span_length_histogram"]:
            raise UserInputError("nothing was masked, so there is no span length histogram to plot", path=text_path)
        with atomic_output_path(plot) as temporary_plot:
            plot_span_length_histogram(
                statistics["span_length_histogram"], temporary_plot, title=f"{type(masker).__name__} on {text_path}"
            )
    return statistics


def _block_fill(num_blocks: int, num_block_tokens: int, max_sequence_length: Optional[int]) -> Dict[str, Any]:
    """``num_blocks``, ``mean_block_length`` (wordpieces incl. specials) and ``block_fill_rate`` (that
    over ``max_sequence_length``; None for a reader without one)."""
    mean_length = num_block_tokens / num_blocks if num_blocks else 0.0
    fill_rate = mean_length / max_sequence_length if max_sequence_length else None
    return {"num_blocks": num_blocks, "mean_block_length": mean_length, "block_fill_rate": fill_rate}


def format_statistics(statistics: Dict[str, Any]) -> str:
    """
    The statistics as a readable report.

    # Parameters

    statistics : `Dict[str, Any]`
        The result of :func:`masking_statistics`.

    # Returns

    `str`
        The report, lines joined with newlines, the span length histogram drawn with ``#``.
    """
    fill_rate = statistics.get("block_fill_rate")
    lines = [
        f"blocks                     {statistics.get('num_blocks', 0)}, "
        f"mean length {statistics.get('mean_block_length', 0):.1f}"
        + (f" wordpieces, block fill rate {fill_rate:.3f}" if fill_rate is not None else " wordpieces"),
        f"tokens (maskable)          {statistics['num_tokens']}",
        f"masked fraction            {statistics['masked_fraction']:.4f}",
        f"mean span length (words)   {statistics['mean_span_length_words']:.3f}",
        f"spans starting at a word   {statistics['spans_start_at_word_start']:.4f}",
        "replacement (over spans)   " + "  ".join(f"{k} {v:.3f}" for k, v in statistics["replacement"].items()),
        "span length histogram (words: count)",
    ]
    histogram = statistics["span_length_histogram"]
    total = max(1, sum(histogram.values()))
    for length in sorted(histogram, key=int):
        count = histogram[length]
        lines.append(f"  {int(length):>3} {count:>8}  {'#' * round(50 * count / total)}")
    return "\n".join(lines)
