"""
``allennlp serve``: trained archives behind a JSON API and an interactive page.

* :mod:`~spanbert_lib.serving.model_spec` parses ``NAME=ARCHIVE[:PREDICTOR]`` arguments;
* :mod:`~spanbert_lib.serving.served_model` loads an archive with its predictor and describes it
  (task, encoder, best validation metrics), telling bad input (400) from model failures (500);
* :mod:`~spanbert_lib.serving.training_watch` follows a serialization directory still training and
  loads its archive once it appears;
* :mod:`~spanbert_lib.serving.masking_preview` applies a configured :class:`Masker` to pasted text;
* :mod:`~spanbert_lib.serving.app` builds the FastAPI application (``static/`` holds the page);
* :mod:`~spanbert_lib.serving.connections` limits the server's connections (header timeout, a cap, the
  open-file limit) and keeps its log quiet under a flood.

Importing this package imports neither allennlp nor FastAPI; the modules do.
"""
