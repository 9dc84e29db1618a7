"""
LUKE-style entity-aware encoding (Yamada et al., EMNLP 2020): entities are tokens beside the words.

- ``entity_vocabulary``: the special entity ids (``ENTITY_PAD`` 0 ... ``ENTITY_TAIL`` 5) and
  ``EntityVocabulary`` for real entities (ids from 6).
- ``entity_embeddings.EntityEmbeddings``: entity id + mention position + type -> [B, E, H].
- ``entity_aware_attention.EntityAwareSelfAttention``: four query matrices (word/entity x word/entity).
- ``encoder.EntityAwareTransformer`` (registered ``"entity_aware_transformer"`` under
  ``EntityAwareEncoder``): a pretrained BERT-family model running words and entities together.
- ``mention_features.MentionFeatures``: features of given mentions, entity states or span-boundary features.
- ``entity_prediction_head``: masked entity prediction (LUKE's entity MLM) tied to the entity embeddings.

See ``encoder`` for the inputs, outputs and how task models use it.
"""

from spanbert_lib.common.modules.entity_aware.encoder import EntityAwareEncoder, EntityAwareTransformer  # noqa: F401
from spanbert_lib.common.modules.entity_aware.entity_aware_attention import EntityAwareSelfAttention  # noqa: F401
from spanbert_lib.common.modules.entity_aware.entity_embeddings import EntityEmbeddings  # noqa: F401
from spanbert_lib.common.modules.entity_aware.entity_prediction_head import (  # noqa: F401
    EntityPredictionHead,
    masked_entity_loss,
)
from spanbert_lib.common.modules.entity_aware.entity_vocabulary import (  # noqa: F401
    ENTITY_HEAD,
    ENTITY_MASK,
    ENTITY_MASK2,
    ENTITY_PAD,
    ENTITY_TAIL,
    ENTITY_UNK,
    NUM_SPECIAL_ENTITIES,
    SPECIAL_ENTITIES,
    EntityVocabulary,
)
from spanbert_lib.common.modules.entity_aware.mention_features import MentionFeatures  # noqa: F401

# Generic span-model inputs, defined in common/modules/span_inputs.py; still importable from here.
from spanbert_lib.common.modules.span_inputs import default_span_extractor, wordpiece_inputs  # noqa: F401
