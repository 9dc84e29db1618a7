"""
The SemEval-2010 Task 8 official score (scorer v1.2, "(9+1)-way, directionality taken into account")
against values worked out by hand, including predictions with the right relation but the wrong direction.
"""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.training.metrics import Metric

from spanbert_lib.relation.dataset_readers.semeval2010_schema import SEMEVAL2010_LABELS, split_label
from spanbert_lib.relation.metrics import SemEval2010MacroF1, semeval2010_official_score

# (gold, predicted)
CASE = [
    ("Cause-Effect(e1,e2)", "Cause-Effect(e1,e2)"),  # correct
    ("Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)"),  # right relation, wrong direction (xDIRx)
    ("Cause-Effect(e2,e1)", "Cause-Effect(e2,e1)"),  # correct
    ("Component-Whole(e1,e2)", "Cause-Effect(e1,e2)"),  # wrong relation
    ("Component-Whole(e1,e2)", "Component-Whole(e1,e2)"),  # correct
    ("Other", "Component-Whole(e2,e1)"),  # a relation where there is none
    ("Other", "Other"),  # Other is never scored itself
    ("Message-Topic(e1,e2)", "Other"),  # missed
    ("Other", "Product-Producer(e1,e2)"),  # a relation absent from the gold labels
]
# By hand, per relation (direction dropped):
#   Cause-Effect    correct 2 (rows 1, 3); predicted 4 (rows 1-4, row 2 counted as a wrong one); gold 3
#                   P = 2/4, R = 2/3, F1 = 4/7
#   Component-Whole correct 1 (row 5); predicted 2 (rows 5, 6); gold 2: P = R = F1 = 1/2
#   Message-Topic   correct 0; predicted 0; gold 1: P = R = F1 = 0
#   Product-Producer is not in the gold labels: left out of the average, as the scorer does.
EXPECTED = {
    "macro_precision": (1 / 2 + 1 / 2 + 0) / 3,
    "macro_recall": (2 / 3 + 1 / 2 + 0) / 3,
    "macro_f1": (4 / 7 + 1 / 2 + 0) / 3,
}


def test_official_score_on_label_strings_matches_the_hand_computation():
    gold, predicted = zip(*CASE)
    assert semeval2010_official_score(gold, predicted) == pytest.approx(EXPECTED)


def test_direction_matters_and_other_is_excluded():
    relation = "Entity-Origin(e1,e2)"
    assert semeval2010_official_score([relation], [relation])["macro_f1"] == 1.0
    # only the direction wrong: no credit at all (the scorer's official score, not the undirected one)
    assert semeval2010_official_score([relation], ["Entity-Origin(e2,e1)"])["macro_f1"] == 0.0
    # all Other: nothing to average
    assert semeval2010_official_score(["Other", "Other"], ["Other", "Other"])["macro_f1"] == 0.0
    # perfect on the relations, Other predicted for Other: 1.0; a wrong Other costs nothing in P/R of a relation
    assert semeval2010_official_score([relation, "Other"], [relation, "Cause-Effect(e1,e2)"]) == pytest.approx(
        {"macro_precision": 1.0, "macro_recall": 1.0, "macro_f1": 1.0}
    )
    with pytest.raises(ValueError, match="unknown SemEval-2010 Task 8 label 'Cause-Effect'"):
        semeval2010_official_score(["Cause-Effect"], ["Other"])
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        semeval2010_official_score(["Other", "Other"], ["Other"])


def test_label_inventory():
    assert len(SEMEVAL2010_LABELS) == 19 and SEMEVAL2010_LABELS[0] == "Other"
    assert split_label("Member-Collection(e2,e1)") == ("Member-Collection", "(e2,e1)")
    assert split_label("Other") == ("Other", None)
    with pytest.raises(ValueError):
        split_label("Member-Collection(e1,e1)")


def _vocabulary(labels):
    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(list(labels), "labels")
    return vocab


def test_registered_metric_accumulates_batches_with_logits_ids_and_mask():
    vocab = _vocabulary(reversed(SEMEVAL2010_LABELS))  # an order unlike the schema's
    metric = Metric.from_params(Params({"type": "semeval2010_macro_f1"}), vocab=vocab)
    assert isinstance(metric, SemEval2010MacroF1)
    index = vocab.get_token_to_index_vocabulary("labels")
    gold = torch.tensor([index[g] for g, _ in CASE])
    predicted = torch.tensor([index[p] for _, p in CASE])
    logits = torch.nn.functional.one_hot(predicted, len(index)).float() * 5.0
    metric(logits[:4], gold[:4])  # logits
    metric(predicted[4:], gold[4:])  # label ids
    # masked-out examples change nothing
    metric(torch.tensor([index["Other"]]), torch.tensor([index["Cause-Effect(e1,e2)"]]), torch.tensor([False]))
    assert metric.get_metric(reset=True) == pytest.approx(EXPECTED)
    assert metric.get_metric() == {"macro_precision": 0.0, "macro_recall": 0.0, "macro_f1": 0.0}


def test_metric_rejects_a_vocabulary_of_other_labels():
    with pytest.raises(ConfigurationError, match="not SemEval-2010 Task 8's"):
        SemEval2010MacroF1(_vocabulary(["Other", "per:title"]))
