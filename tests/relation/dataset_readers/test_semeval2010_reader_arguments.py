"""The SemEval-2010 reader restates only the default it changes; the TACRED reader's arguments pass through."""

from allennlp.common import Params
from allennlp.data import DatasetReader

from spanbert_lib.relation.dataset_readers import SemEval2010Task8Reader
from tests import TINY_BERT_DIR


def test_shared_arguments_reach_the_tacred_base_from_a_config():
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "spanbert_semeval2010_task8",
                "model_name": str(TINY_BERT_DIR),
                "max_seq_length": 40,
                "tokenizer_kwargs": {"do_lower_case": False},
            }
        )
    )
    assert type(reader) is SemEval2010Task8Reader
    assert reader._scheme == "typed_entity_markers" and reader._max_seq_length == 40
    assert reader._hf_tokenizer.do_lower_case is False
