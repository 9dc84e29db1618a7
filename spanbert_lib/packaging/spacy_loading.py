"""``spacy.load("NAME")`` of an installed model package: a blank English pipeline with the model's component."""

import json
from pathlib import Path
from typing import Any, Iterable, Union

from spanbert_lib.pipelines.model_source import packaged_model


def load_packaged_pipeline(
    package_dir: Path,
    vocab: Union[bool, Any] = True,
    disable: Union[str, Iterable[str]] = (),
    enable: Union[str, Iterable[str]] = (),
    exclude: Union[str, Iterable[str]] = (),
    config: Any = None,
    **_: Any,
) -> Any:
    """
    The spaCy pipeline of the model package in ``package_dir``: ``spacy.blank("en")`` and the model's component
    (``spanbert_coref`` or ``spanbert_span_ner``) over the packaged archive. The arguments are ``spacy.load``'s.

    # Raises

    ValueError
        For a package whose model has no spaCy component.
    """
    import spacy

    import spanbert_lib.spacy_components  # noqa: F401  (registers the factories)

    source = packaged_model(package_dir)
    component = source.manifest.get("spacy_component")
    if not component:
        raise ValueError(
            f"{source.package}: a {source.manifest.get('model_type')} model has no spaCy component; load it with "
            "allennlp's Predictor.from_path"
        )
    excluded = [exclude] if isinstance(exclude, str) else list(exclude)
    disabled = [disable] if isinstance(disable, str) else list(disable)
    nlp = spacy.blank("en", vocab=vocab, config=config or {})
    nlp.meta.update({"name": source.package, "version": source.manifest.get("version", "0.0.0")})
    if component not in excluded:
        settings = {"archive": str(source.archive), "overrides": json.dumps(source.overrides)}
        nlp.add_pipe(component, config=settings)
        if component in disabled:
            nlp.disable_pipe(component)
    return nlp
