"""
A trained model as an installable package, the way spaCy ships pipelines: ``allennlp package-model ARCHIVE OUT
--name NAME`` writes ``OUT/NAME-VERSION-py3-none-any.whl`` (:mod:`.model_package`, :mod:`.wheel_files`); once
installed, ``Coreference("NAME")`` / ``SpanNer("NAME")`` and ``spacy.load("NAME")`` (:mod:`.spacy_loading`) find it
by name. An application package: it may import the task packages.
"""
