"""
ONNX export of a model archive (``allennlp export-onnx ARCHIVE DIR``): the encoder of every model
and the heads whose shapes a static graph can hold (QA start/end logits, span NER scores,
coreference mention scores), with dynamic batch and length axes.

- :mod:`.dependencies`: the optional ``onnx`` / ``onnxruntime`` packages (``pip install onnx onnxruntime``).
- :mod:`.graphs`: the exported modules (each a thin wrapper that reuses the model's own layers).
- :mod:`.graph_inputs`: the graphs' inputs from a model's tensors (what the readers produce).
- :mod:`.exporter`: writes the graphs, checks each with onnxruntime and writes ``export.json`` /
  ``README.txt`` (what is exported, what stays in PyTorch).

An application package like ``serving``: it may import the task packages.
"""
