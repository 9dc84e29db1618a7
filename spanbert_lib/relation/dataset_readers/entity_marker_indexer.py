"""A ``pretrained_transformer`` token indexer whose tokenizer knows the entity markers."""

from typing import Any, Dict, Optional

from allennlp.data.token_indexers import PretrainedTransformerIndexer, TokenIndexer

from spanbert_lib.relation.entity_markers import marker_tokenizer_kwargs


@TokenIndexer.register("entity_marker_aware")
class EntityMarkerAwareIndexer(PretrainedTransformerIndexer):
    """
    allennlp's ``pretrained_transformer`` indexer with every entity marker of
    :func:`~spanbert_lib.relation.entity_markers.entity_marker_tokens` added to the tokenizer as
    an additional special token (so ``[SUBJ-PERSON]`` has its own id, right after the
    pretrained vocabulary). Pair it with the ``entity_marker_aware`` token embedder, which
    grows the embedding matrix to match.

    # Parameters

    model_name : `str`
        The Hugging Face model whose tokenizer is used.
    namespace : `str`, optional (default = `"tags"`)
        As ``pretrained_transformer``'s.
    max_length : `int`, optional (default = `None`)
        As ``pretrained_transformer``'s.
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Tokenizer arguments; the entity markers are added to its additional special tokens.
    **kwargs
        The other arguments of ``pretrained_transformer``.
    """

    def __init__(
        self,
        model_name: str,
        namespace: str = "tags",
        max_length: Optional[int] = None,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        **kwargs,
    ) -> None:
        super().__init__(
            model_name,
            namespace=namespace,
            max_length=max_length,  # type: ignore[arg-type]  # why: allennlp annotates it int, defaults it to None
            tokenizer_kwargs=marker_tokenizer_kwargs(tokenizer_kwargs),
            **kwargs,
        )
