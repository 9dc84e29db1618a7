"""
Dynamic batching of ``POST /predict/{name}``: concurrent requests to one model are gathered for a few
milliseconds and predicted as one batch (the predictor's ``predict_batch_json``), each request answered
with its own result.

* A model runs one batch at a time (as it ran one request at a time without batching: predictors share
  Hugging Face fast tokenizers, whose settings are not safe to change from two threads at once).
* Requests that arrive while a batch runs wait for it and form the next batch, at once.
* A request that finds the model idle opens a window of ``wait_seconds`` for others to join, ended early
  when ``max_batch_size`` have come, but only when the model's previous batch held more than one request:
  with one client at a time nobody would join, and its requests are answered without the wait.
* A batch of one is predicted as without batching (``predict_json``). A batch whose prediction raises (one
  bad input, a model failure) is predicted again one request at a time, so that each request gets its own
  answer or its own error, exactly as without batching.

Batches are whole: a request is never split, and a batch holds at most ``max_batch_size`` requests.
"""

import asyncio
import logging
from typing import Any, Callable, List, Optional, Union

logger = logging.getLogger(__name__)

Outcome = Union[Any, Exception]


def predict_each(predict: Callable[[Any], Any], inputs: List[Any]) -> List[Outcome]:
    """
    Each input predicted on its own: its output, or the exception its prediction raised.

    # Parameters

    predict : `Callable[[Any], Any]`
        The one-request prediction (``ServedModel.predict``).
    inputs : `List[Any]`
        The requests' bodies.

    # Returns

    `List[Outcome]`
        One output or ``Exception`` per input, in order.
    """
    outcomes: List[Outcome] = []
    for item in inputs:
        try:
            outcomes.append(predict(item))
        except Exception as error:  # noqa: BLE001 - handed to the request it belongs to
            outcomes.append(error)
    return outcomes


class RequestBatcher:
    """
    Gathers concurrent requests to one model into batches (see the module docstring).

    # Parameters

    model : `Any`
        A served model: ``predict(inputs)`` and, optionally, ``predict_batch(list_of_inputs)`` returning
        one output or exception per input (:meth:`ServedModel.predict_batch`); without it the requests of
        a batch are predicted one by one.
    wait_seconds : `float`
        How long an idle model waits for more requests to join one (greater than 0).
    max_batch_size : `int`
        Most requests in one batch.
    run_in_thread : `Callable`
        ``async run_in_thread(function, *args)``: runs a blocking call off the event loop (the
        application's worker threads and their limit).
    """

    def __init__(self, model: Any, wait_seconds: float, max_batch_size: int, run_in_thread: Callable) -> None:
        if wait_seconds <= 0 or max_batch_size < 1:
            raise ValueError("wait_seconds must be positive and max_batch_size at least 1")
        self.model = model
        self.wait_seconds = wait_seconds
        self.max_batch_size = max_batch_size
        self._run_in_thread = run_in_thread
        self._pending: List[tuple] = []
        self._running = False
        self._full: Optional[asyncio.Event] = None
        self._task: Optional[asyncio.Task] = None  # held: the event loop keeps only weak references
        self.previous_batch_size = 1
        self.batch_sizes: List[int] = []  # every batch predicted, for tests and the log

    async def predict(self, inputs: Any) -> Any:
        """
        The model's output for one request, predicted within a batch.

        # Parameters

        inputs : `Any`
            The request's JSON body.

        # Returns

        `Any`
            What ``model.predict(inputs)`` returns; raises what it raises.
        """
        future = asyncio.get_running_loop().create_future()
        self._pending.append((inputs, future))
        if self._full is not None and len(self._pending) >= self.max_batch_size:
            self._full.set()
        if not self._running:
            self._running = True
            self._task = asyncio.get_running_loop().create_task(self._run_batches())
        return await future

    async def _gather(self) -> None:
        """Waits for more requests while the batch is not full, at most ``wait_seconds``."""
        if len(self._pending) >= self.max_batch_size or self.previous_batch_size < 2:
            return
        self._full = asyncio.Event()
        try:
            await asyncio.wait_for(self._full.wait(), timeout=self.wait_seconds)
        except asyncio.TimeoutError:
            pass
        finally:
            self._full = None

    async def _run_batches(self) -> None:
        batch: List[tuple] = []
        try:
            await self._gather()
            while self._pending:
                batch = [item for item in self._pending[: self.max_batch_size] if not item[1].done()]
                del self._pending[: self.max_batch_size]
                if not batch:
                    continue
                self.previous_batch_size = len(batch)
                self.batch_sizes.append(len(batch))
                outcomes = await self._run_in_thread(self._predict_batch, [inputs for inputs, _ in batch])
                for (_, future), outcome in zip(batch, outcomes):
                    if future.done():  # the client went away
                        continue
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
                batch = []
        except BaseException:
            # cancelled (the server is stopping) or a bug: nobody waiting may hang
            for _, future in batch + self._pending:
                if not future.done():
                    future.set_exception(RuntimeError("the prediction was interrupted"))
            self._pending.clear()
            raise
        finally:
            self._running = False
            self._task = None

    def _predict_batch(self, inputs: List[Any]) -> List[Outcome]:
        if len(inputs) == 1:
            return predict_each(self.model.predict, inputs)
        predict_batch = getattr(self.model, "predict_batch", None)
        if predict_batch is None:
            return predict_each(self.model.predict, inputs)
        return predict_batch(inputs)
