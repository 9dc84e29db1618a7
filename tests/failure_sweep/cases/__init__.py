"""
Every case of the sweep: :data:`COMMAND_CASES` (a :class:`~tests.failure_sweep.book.CaseBook` of command lines, one
module per command group, in the tables' order) and :func:`http_cases` (requests to the server).
"""

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases import (
    archive_code,
    build_vocab,
    coref,
    evaluate,
    executable,
    export_encoder,
    export_onnx,
    masking_stats,
    predict,
    predict_outputs,
    serve,
    squad_eval,
    train,
)
from tests.failure_sweep.cases.http import http_cases  # noqa: F401  (the HTTP cases, for the tests)

COMMAND_CASES = CaseBook()
for module in (
    predict,
    predict_outputs,
    evaluate,
    train,
    coref,
    squad_eval,
    export_encoder,
    export_onnx,
    build_vocab,
    masking_stats,
    serve,
    archive_code,
    executable,
):
    COMMAND_CASES.extend(module.book)
