"""
The ``segmented_transformer`` embedder: each segment is encoded on its own, exactly as the
plain transformer encodes ``[CLS] pieces [SEP]``, and the pieces come back in document order.
"""

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.fields import TextField
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder, TextFieldEmbedder
from allennlp.nn import util
from transformers import AutoModel

from spanbert_lib.common.token_embedders import SegmentedTransformerEmbedder
from spanbert_lib.common.token_indexers import SegmentedWordpieceIndexer, sentence_tokens
from spanbert_lib.coref.dataset_readers.conll_format import read_conll_documents
from tests import REPO_ROOT, TINY_BERT_DIR

FIXTURE = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"


@pytest.fixture(scope="module")
def documents():
    return read_conll_documents(FIXTURE)


@pytest.fixture(scope="module")
def indexer():
    return SegmentedWordpieceIndexer(str(TINY_BERT_DIR), max_segment_len=16)


@pytest.fixture(scope="module")
def reference_model():
    return AutoModel.from_pretrained(str(TINY_BERT_DIR)).eval()


def batch_tensors(document_sentences, indexer):
    instances = [
        Instance({"text": TextField(sentence_tokens(sentences), {"tokens": indexer})})
        for sentences in document_sentences
    ]
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    return batch.as_tensor_dict()["text"]


def expected_piece_states(sentences, indexer, model) -> torch.Tensor:
    """``(P, H)``: each segment run alone through the plain model, specials dropped."""
    document = indexer.segment(sentences)
    states = []
    with torch.no_grad():
        for start, end in zip(document.segment_starts, document.segment_ends):
            ids = [document.cls_token_id, *document.piece_ids[start:end].tolist(), document.sep_token_id]
            output = model(input_ids=torch.tensor([ids])).last_hidden_state[0]
            states.append(output[1:-1])
    return torch.cat(states, dim=0)


def test_pieces_match_independent_segment_encoding(documents, indexer, reference_model):
    embedder = SegmentedTransformerEmbedder(str(TINY_BERT_DIR)).eval()
    text = batch_tensors([d.sentences for d in documents], indexer)
    with torch.no_grad():
        output = embedder(**text["tokens"])
    mask = text["tokens"]["mask"]
    assert output.shape == (*mask.shape, 32)
    for row, document in enumerate(documents):
        expected = expected_piece_states(document.sentences, indexer, reference_model)
        num_pieces = len(expected)
        torch.testing.assert_close(output[row, :num_pieces], expected, atol=1e-5, rtol=1e-4)
        assert output[row, num_pieces:].abs().sum() == 0  # padding pieces are zero


def test_batched_equals_one_document_at_a_time(documents, indexer):
    embedder = SegmentedTransformerEmbedder(str(TINY_BERT_DIR), max_segments_per_pass=2).eval()
    text = batch_tensors([d.sentences for d in documents], indexer)
    with torch.no_grad():
        together = embedder(**text["tokens"])
        for row, document in enumerate(documents):
            alone = embedder(**batch_tensors([document.sentences], indexer)["tokens"])
            torch.testing.assert_close(together[row, : alone.size(1)], alone[0], atol=1e-5, rtol=1e-4)


def test_segments_are_encoded_a_few_at_a_time_by_default_with_the_same_states(documents, indexer):
    """A document of more segments than one pass takes (the default, 8): the states of all segments at once."""
    sentences = [sentence for document in documents for sentence in document.sentences] * 6
    text = batch_tensors([sentences], indexer)["tokens"]
    segments = int(text["segment_mask"].any(-1).sum())
    default = SegmentedTransformerEmbedder(str(TINY_BERT_DIR)).eval()
    assert default.max_segments_per_pass == 8 and segments > 8
    calls = []
    default.segment_encoder.register_forward_hook(lambda module, inputs, output: calls.append(inputs[0].size(0)))
    all_at_once = SegmentedTransformerEmbedder(str(TINY_BERT_DIR), max_segments_per_pass=None).eval()
    all_at_once.load_state_dict(default.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(default(**text), all_at_once(**text), atol=1e-5, rtol=1e-4)
    assert max(calls) == 8 and sum(calls) == segments


def test_text_field_embedding_from_params_and_word_spans(documents, indexer):
    embedder = TextFieldEmbedder.from_params(
        Params({"token_embedders": {"tokens": {"type": "segmented_transformer", "model_name": str(TINY_BERT_DIR)}}})
    )
    assert isinstance(embedder, BasicTextFieldEmbedder)
    assert embedder.get_output_dim() == 32
    text = batch_tensors([documents[0].sentences], indexer)
    states = embedder(text)
    assert states.shape[:2] == util.get_text_field_mask(text).shape
    # the first and last piece of each word are reachable through the word maps
    starts = util.batched_index_select(states, text["tokens"]["word_starts"])
    assert starts.shape == (1, documents[0].num_words, 32)
    starts.sum().backward()
    grads = [p.grad for p in embedder.parameters() if p.requires_grad]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)


def test_bfloat16_inference_is_close_to_float32_and_training_stays_float32(documents, indexer):
    full = SegmentedTransformerEmbedder(str(TINY_BERT_DIR)).eval()
    half = SegmentedTransformerEmbedder(str(TINY_BERT_DIR), autocast_dtype="bfloat16").eval()
    text = batch_tensors([d.sentences for d in documents], indexer)["tokens"]
    with torch.no_grad():
        expected, output = full(**text), half(**text)
    assert output.dtype == torch.float32 and output.shape == expected.shape
    real = text["mask"]
    assert not torch.equal(output[real], expected[real])  # the transformer did run in bfloat16
    similarity = torch.nn.functional.cosine_similarity(output[real], expected[real], dim=-1)
    assert float(similarity.min()) > 0.99
    assert output[~real].abs().sum() == 0
    full.train()
    half.train()
    torch.manual_seed(0)
    trained_full = full(**text)
    torch.manual_seed(0)
    trained_half = half(**text)
    assert torch.equal(trained_full, trained_half)  # training: float32, the same dropout masks
    trained_half.sum().backward()  # and differentiable


def test_an_unknown_autocast_dtype_is_a_configuration_error():
    with pytest.raises(Exception, match="autocast_dtype must name a floating point torch dtype, got 'float8'"):
        SegmentedTransformerEmbedder(str(TINY_BERT_DIR), autocast_dtype="float8")
