"""A ``pretrained_transformer`` token embedder whose embedding matrix has rows for the entity markers."""

from typing import Any, Dict, List, Optional, cast

import torch
from allennlp.common import cached_transformers
from allennlp.common.checks import ConfigurationError
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder, TokenEmbedder

from spanbert_lib.relation.entity_markers import entity_marker_tokens, marker_description, marker_tokenizer_kwargs

MARKER_INITIALISATIONS = ("description", "mean")


@TokenEmbedder.register("entity_marker_aware")
class EntityMarkerAwareEmbedder(PretrainedTransformerEmbedder):
    """
    allennlp's ``pretrained_transformer`` embedder, loaded with the entity markers added to the
    tokenizer (as the ``entity_marker_aware`` indexer does). The input embedding matrix is resized
    to the tokenizer (``resize_token_embeddings``) and the marker rows are initialised by
    ``marker_initialisation``:

    * ``"description"`` (default): the mean input embedding of the wordpieces of words that
      describe the marker - ``[SUBJ-PERSON]`` <- "subject person", ``[/OBJ-STATE_OR_PROVINCE]``
      <- "end object state or province". Markers start near the meaning of their role and type,
      and distinct from each other, instead of at one shared point; fine-tuning moves them.
    * ``"mean"``: the mean of all pretrained rows (every marker starts at the same point).

    When the model is loaded from an archive the trained rows overwrite this initialisation.

    # Parameters

    model_name : `str`
        The Hugging Face model to load.
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Tokenizer arguments; the entity markers are added to its additional special tokens.
    marker_initialisation : `str`, optional (default = `"description"`)
        How the marker rows start: ``"description"`` or ``"mean"`` (see above).
    **kwargs
        The other arguments of ``pretrained_transformer``.
    """

    def __init__(
        self,
        model_name: str,
        *,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        marker_initialisation: str = "description",
        **kwargs,
    ) -> None:
        if marker_initialisation not in MARKER_INITIALISATIONS:
            raise ConfigurationError(
                f"entity_marker_aware embedder: unknown marker_initialisation "
                f"{marker_initialisation!r}; choose one of {', '.join(MARKER_INITIALISATIONS)}"
            )
        full_kwargs = marker_tokenizer_kwargs(tokenizer_kwargs)
        super().__init__(model_name, tokenizer_kwargs=full_kwargs, **kwargs)
        # the same (cached) tokenizer object as allennlp's PretrainedTransformerTokenizer builds
        tokenizer = cached_transformers.get_tokenizer(model_name, **full_kwargs)
        # transformers annotates it as any Module; a BERT-style model's is an Embedding
        embeddings = cast(torch.nn.Embedding, self.transformer_model.get_input_embeddings())
        if embeddings.num_embeddings < len(tokenizer):
            raise ConfigurationError(
                f"entity_marker_aware embedder: {model_name} could not be resized to "
                f"{len(tokenizer)} token embeddings (has {embeddings.num_embeddings})"
            )
        marker_ids = initialise_marker_rows(embeddings, tokenizer, marker_initialisation)
        self.marker_ids = marker_ids


def initialise_marker_rows(embeddings: torch.nn.Embedding, tokenizer, how: str = "description") -> List[int]:
    """
    Sets the input-embedding rows of the entity markers in place and returns their ids.

    # Parameters

    embeddings : `torch.nn.Embedding`
        The input embeddings, already resized to ``tokenizer`` (markers included).
    tokenizer : `transformers.PreTrainedTokenizerBase`
        A tokenizer built with ``marker_tokenizer_kwargs``.
    how : `str`, optional (default = `"description"`)
        ``"description"``: the mean row of the wordpieces of the marker's description
        ("subject person"); ``"mean"``: the mean of all non-marker rows.
    """
    markers = entity_marker_tokens()
    marker_ids = tokenizer.convert_tokens_to_ids(markers)
    pretrained_rows = torch.ones(embeddings.num_embeddings, dtype=torch.bool)
    pretrained_rows[marker_ids] = False
    with torch.no_grad():
        weight = embeddings.weight
        mean_row = weight[pretrained_rows].mean(dim=0)
        for marker, marker_id in zip(markers, marker_ids):
            if how == "mean":
                weight[marker_id] = mean_row
                continue
            piece_ids = tokenizer(marker_description(marker), is_split_into_words=True, add_special_tokens=False)[
                "input_ids"
            ]
            piece_ids = [i for i in piece_ids if i != tokenizer.unk_token_id]
            weight[marker_id] = weight[piece_ids].mean(dim=0) if piece_ids else mean_row
    return marker_ids
