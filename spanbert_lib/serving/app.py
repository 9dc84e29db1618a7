"""
The FastAPI application of ``allennlp serve``.

Routes: ``GET /`` (the page, from ``static/``), ``GET /health``, ``GET /models``, ``GET /masking``,
``POST /mask`` (the masking preview), ``POST /predict/{name}``. Every error is a JSON object
``{"error": message}``: 400 bad JSON (also nested too deep, or a string with a lone surrogate, which is
not text) / bad input (the predictor's message) / missing Host header, 404 unknown model or route, 413 body
over the size limit, 415 a POST whose body is not declared JSON, 421 a Host header the server does not
answer for (DNS rebinding; see :mod:`~spanbert_lib.serving.request_guards`), 503 model still training, 500
the model raised (short message; the traceback goes to the server log only).

Predictions run in worker threads, never on the event loop, so the page, ``/health`` and the other
models stay responsive while one long document is processed. At most ``max_concurrent_predictions``
run at once over all models, and each model (and the masking preview) runs one request, or one batch of
requests, at a time: predictors share Hugging Face fast tokenizers, whose settings are not safe to change
from two threads at once. Concurrent requests to one model are gathered for ``batch_wait_ms`` and
predicted as one batch of at most ``max_batch_size`` (:mod:`~spanbert_lib.serving.batching`; each request
gets what it would get alone); ``batch_wait_ms=0`` predicts every request on its own.

FastAPI is imported when an application is built, not with this module: ``--include-package
spanbert_lib`` imports every module of the library on every ``allennlp`` command.
"""

import logging
import os
from typing import TYPE_CHECKING, Callable, Dict, Iterable, Optional, Union

from spanbert_lib.serving.batching import RequestBatcher
from spanbert_lib.serving.examples import MASKING_EXAMPLE
from spanbert_lib.serving.masking_preview import MaskingPreview
from spanbert_lib.serving.request_body import ApiError, read_json_body, require_object
from spanbert_lib.serving.request_guards import LOOPBACK_HOSTS, RequestGuard
from spanbert_lib.serving.responses import json_response
from spanbert_lib.serving.served_model import InvalidModelInput, ModelFailure, ServedModel
from spanbert_lib.serving.training_watch import TrainingWatch

if TYPE_CHECKING:
    import anyio

logger = logging.getLogger(__name__)

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
DEFAULT_MAX_REQUEST_CHARS = 100_000
DEFAULT_MAX_CONCURRENT_PREDICTIONS = 2
DEFAULT_BATCH_WAIT_MS = 5.0
DEFAULT_MAX_BATCH_SIZE = 16

Entry = Union[ServedModel, TrainingWatch]


class ModelRegistry:
    """
    The served models by name: loaded ones and ones still training (replaced once loaded).

    # Parameters

    entries : `Iterable[ServedModel | TrainingWatch]`, optional (default = `()`)
        The models, by their ``name``.
    """

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._entries: Dict[str, Entry] = {}
        self._locks: Dict[str, "anyio.Lock"] = {}
        self.batchers: Dict[str, RequestBatcher] = {}
        for entry in entries:
            self._entries[entry.name] = entry

    def refresh(self) -> None:
        """Swaps in every watched training whose archive has finished loading."""
        for name, entry in list(self._entries.items()):
            if isinstance(entry, TrainingWatch):
                loaded = entry.loaded_model()
                if loaded is not None:
                    self._entries[name] = loaded

    def describe(self):
        """The ``GET /models`` entries of every model, loaded or training."""
        self.refresh()
        return [entry.describe() for entry in self._entries.values()]

    def get(self, name: str) -> Entry:
        """
        One model by name.

        # Parameters

        name : `str`
            The model's name.

        # Returns

        `ServedModel | TrainingWatch`
            The model, or the watch of its training; :class:`ApiError` 404 for an unknown name.
        """
        self.refresh()
        if name not in self._entries:
            loaded = ", ".join(self._entries) or "none"
            raise ApiError(404, f"no model named {name!r} is served (models: {loaded})")
        return self._entries[name]

    def lock(self, name: str):
        """
        The lock that lets one request at a time use a model (created on first use).

        # Parameters

        name : `str`
            The model's name.

        # Returns

        `anyio.Lock`
            Its lock.
        """
        import anyio

        if name not in self._locks:
            self._locks[name] = anyio.Lock()
        return self._locks[name]

    def batcher(self, name: str, model: ServedModel, make: Callable[[ServedModel], RequestBatcher]) -> RequestBatcher:
        """
        The request batcher of a loaded model (made on first use, and again when a finished training
        replaced the model).

        # Parameters

        name : `str`
            The model's name.
        model : `ServedModel`
            The model (:meth:`get`).
        make : `Callable[[ServedModel], RequestBatcher]`
            Makes a model's batcher.

        # Returns

        `RequestBatcher`
            Its batcher.
        """
        batcher = self.batchers.get(name)
        if batcher is None or batcher.model is not model:
            batcher = self.batchers[name] = make(model)
        return batcher


def create_app(
    models: Iterable[Entry] = (),
    masking: Optional[MaskingPreview] = None,
    *,
    max_request_chars: int = DEFAULT_MAX_REQUEST_CHARS,
    max_concurrent_predictions: int = DEFAULT_MAX_CONCURRENT_PREDICTIONS,
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
    batch_wait_ms: float = DEFAULT_BATCH_WAIT_MS,
    max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
):
    """
    The FastAPI application serving the models (routes: see the module docstring).

    # Parameters

    models : `Iterable[ServedModel | TrainingWatch]`, optional (default = `()`)
        The models, by their ``name``.
    masking : `MaskingPreview`, optional (default = `None`)
        The masking preview (built with its defaults when not given).
    max_request_chars : `int`, optional (default = `100000`)
        Larger request bodies get 413.
    max_concurrent_predictions : `int`, optional (default = `2`)
        Worker threads running predictions (and masking previews) at once, over all models.
    allowed_hosts : `Iterable[str]`, optional (default = `LOOPBACK_HOSTS`)
        Host names requests may name in their ``Host`` header besides the loopback names (see
        :mod:`~spanbert_lib.serving.request_guards`).
    batch_wait_ms : `float`, optional (default = `5.0`)
        How long an idle model waits for concurrent requests to join a batch (milliseconds); 0: no
        batching, each request is predicted on its own.
    max_batch_size : `int`, optional (default = `16`)
        Most requests predicted in one batch.

    # Returns

    `FastAPI`
        The application.
    """
    import anyio
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles
    from starlette.exceptions import HTTPException as StarletteHTTPException

    if max_request_chars < 1 or max_concurrent_predictions < 1 or max_batch_size < 1:
        raise ValueError("max_request_chars, max_concurrent_predictions and max_batch_size must be positive")
    if not batch_wait_ms >= 0:
        raise ValueError(f"batch_wait_ms must be a non-negative number, got {batch_wait_ms!r}")
    registry = ModelRegistry(models)
    masking = masking or MaskingPreview()
    limiter = anyio.CapacityLimiter(max_concurrent_predictions)
    masking_lock = anyio.Lock()

    async def run_in_thread(function, *args):
        return await anyio.to_thread.run_sync(function, *args, limiter=limiter)

    def make_batcher(model: ServedModel) -> RequestBatcher:
        return RequestBatcher(model, batch_wait_ms / 1000, max_batch_size, run_in_thread)

    # No Swagger / ReDoc pages: FastAPI's fetch their scripts from a CDN, and nothing here may need the network.
    app = FastAPI(title="spanbert_lib demo", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.registry = registry
    app.state.masking = masking
    app.state.max_request_chars = max_request_chars
    app.state.batch_wait_ms = batch_wait_ms
    app.state.max_batch_size = max_batch_size

    @app.exception_handler(ApiError)
    async def api_error(_: Request, error: ApiError) -> JSONResponse:
        return JSONResponse({"error": error.message}, status_code=error.status_code)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(error.detail)}, status_code=error.status_code, headers=error.headers)

    @app.exception_handler(Exception)
    async def unexpected_error(request: Request, error: Exception) -> JSONResponse:
        logger.exception("unexpected error answering %s %s", request.method, request.url.path)
        return JSONResponse({"error": "internal server error"}, status_code=500)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(os.path.join(STATIC_DIR, "index.html"), headers={"Cache-Control": "no-cache"})

    @app.get("/health")
    async def health() -> dict:
        entries = registry.describe()
        return {
            "status": "ok",
            "models_ready": [e["name"] for e in entries if e["status"] == "ready"],
            "models_training": [e["name"] for e in entries if e["status"] != "ready"],
        }

    @app.get("/models")
    async def list_models() -> list:
        return registry.describe()

    @app.get("/masking")
    async def masking_settings() -> dict:
        return {**masking.describe(), "example": MASKING_EXAMPLE}

    @app.post("/mask")
    async def mask(request: Request):
        body = require_object(await read_json_body(request, max_request_chars))
        text, seed = body.get("text"), body.get("seed", 0)
        if not isinstance(text, str):
            raise ApiError(400, "the masking preview needs 'text': a string")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
            raise ApiError(400, f"'seed' must be a non-negative integer, got {seed!r}")
        async with masking_lock:
            return json_response(await anyio.to_thread.run_sync(masking.preview, text, seed, limiter=limiter))

    @app.post("/predict/{name}")
    async def predict(name: str, request: Request):
        entry = registry.get(name)
        body = await read_json_body(request, max_request_chars)
        if isinstance(entry, TrainingWatch):
            raise ApiError(503, f"model {name!r} is not ready yet: {entry.status_line()}")
        require_object(body)
        try:
            if batch_wait_ms > 0:
                output = await registry.batcher(name, entry, make_batcher).predict(body)
            else:
                async with registry.lock(name):
                    output = await anyio.to_thread.run_sync(entry.predict, body, limiter=limiter)
        except InvalidModelInput as error:
            raise ApiError(400, str(error)) from error
        except ModelFailure as error:
            logger.error("model %r failed on a request", name, exc_info=error.__cause__ or error)
            raise ApiError(500, f"the model {name!r} failed on this input ({error})") from error
        return json_response(output)

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(RequestGuard, allowed_hosts=tuple(allowed_hosts))
    return app
