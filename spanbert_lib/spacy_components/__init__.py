"""
spaCy pipeline components over this library's model archives, found by spaCy through the
``spacy_factories`` entry points of ``setup.py``:

- ``spanbert_coref`` (:mod:`.coref_component`): one span group per cluster (``doc.spans["spanbert_coref_clusters_1"]``,
  ...), ``doc._.spanbert_coref_clusters`` (lists of ``Span``) and ``doc._.spanbert_resolved_text``;
- ``spanbert_span_ner`` (:mod:`.span_ner_component`): nested entities in ``doc.spans["spanbert_ner"]``
  (labels, and scores in the group's ``attrs``), the best non-overlapping ones in ``doc.ents`` on request.

Shared: :mod:`.archive_source` (the archive a component loads, checked for its task, copied into a
saved pipeline), :mod:`.doc_words` (a Doc's sentences of words, and character spans back onto its
tokens), :mod:`.archive_component` (batching through the predictor, serialisation).

An application package like ``serving``: it may import the task packages.
"""
