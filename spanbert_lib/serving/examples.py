"""
What each task of the page is called, which predictor serves it, and the example input the page
starts with. The texts were written for this project.
"""

from typing import Any, Dict, Optional

# model type (the config's ``model.type``) -> task of the page
MODEL_TASKS = {
    "spanbert_coref": "coreference",
    "coref": "coreference",  # allennlp-models
    "spanbert_qa": "qa",
    "transformer_qa": "qa",  # allennlp-models
    "spanbert_span_ner": "span_ner",
    "spanbert_relation_classifier": "relation",
    "spanbert_entity_pair_relation_classifier": "relation",
    "spanbert_entity_typing": "entity_typing",
}

# task (or "semeval2010" for relation models read by a SemEval reader) -> predictor names, preferred first
TASK_PREDICTORS = {
    "coreference": ("spanbert_coref",),
    "qa": ("spanbert_qa",),
    "span_ner": ("spanbert_span_ner",),
    "relation": ("spanbert_relation_classifier",),
    "semeval2010": ("spanbert_semeval2010_task8",),
    "entity_typing": ("spanbert_entity_typing",),
}
SEMEVAL_READERS = ("spanbert_semeval2010_task8",)

TASK_TITLES = {
    "coreference": "Coreference",
    "qa": "Question answering",
    "span_ner": "Span NER",
    "relation": "Relation classification",
    "entity_typing": "Entity typing",
    "generic": "Model",
}

MASKING_EXAMPLE = (
    "SpanBERT masks contiguous spans of whole words instead of single tokens. The length of every "
    "span is drawn from a geometric distribution, so most spans are short, and about fifteen percent "
    "of the words of a sequence are masked. Most masked spans become [MASK] tokens, some become random "
    "words, and some are left unchanged, and the model learns to predict every masked word from the "
    "two words at the boundary of its span."
)

_COREFERENCE_EXAMPLE = {
    "document": "Anna told Ben that her old friend from Boston had called. She said he would visit next "
    "week. The friend had lived in Boston for many years, and Anna missed him.",
}
_QA_EXAMPLE = {
    "passage": "SpanBERT was introduced by Mandar Joshi and his colleagues in 2020. Instead of masking "
    "random single tokens, it masks contiguous spans of whole words, and it adds a span "
    "boundary objective that predicts each masked token from the two tokens at the boundary "
    "of its span. The model reached an F1 score of 94.6 on SQuAD 1.1.",
    "question": "What does the span boundary objective predict?",
}
_SPAN_NER_EXAMPLE = {
    "text": "Elizabeth Bennet walked from Longbourn to Netherfield, where Mr. Bingley and his two "
    "sisters were staying with the officers of the regiment.",
}
_TACRED_EXAMPLE = {
    "sentence": "Mandar Joshi, a researcher at the University of Washington, presented SpanBERT in Seattle.",
    "subj_char_span": [0, 12],
    "obj_char_span": [34, 58],
    "subj_type": "PERSON",
    "obj_type": "ORGANIZATION",
}
_SEMEVAL_EXAMPLE = {"sentence": "The <e1>flood</e1> was caused by heavy <e2>rain</e2> in the mountains."}
_ENTITY_TYPING_EXAMPLE = {
    "sentence": "After the match, the young goalkeeper from Lisbon thanked the crowd.",
    "start": 17,
    "end": 37,
}


def example_input(task: str, predictor: Optional[str]) -> Dict[str, Any]:
    """
    The input the page shows first for a model.

    # Parameters

    task : `str`
        The model's task (a value of :data:`MODEL_TASKS`, or ``"generic"``).
    predictor : `Optional[str]`
        The predictor it is served with (tells SemEval from TACRED relation models).

    # Returns

    `Dict[str, Any]`
        A copy of the example input; empty for a task without one.
    """
    if task == "relation":
        return dict(_SEMEVAL_EXAMPLE if predictor in TASK_PREDICTORS["semeval2010"] else _TACRED_EXAMPLE)
    examples: Dict[str, Dict[str, Any]] = {
        "coreference": _COREFERENCE_EXAMPLE,
        "qa": _QA_EXAMPLE,
        "span_ner": _SPAN_NER_EXAMPLE,
        "entity_typing": _ENTITY_TYPING_EXAMPLE,
    }
    return dict(examples.get(task, {}))


def default_predictor(task: str, reader_type: Optional[str]) -> Optional[str]:
    """
    The predictor a model is served with unless told otherwise.

    # Parameters

    task : `str`
        The model's task.
    reader_type : `Optional[str]`
        The model's dataset reader type (tells SemEval from TACRED relation models).

    # Returns

    `Optional[str]`
        The first registered predictor of the task; None: the model's default predictor.
    """
    from allennlp.predictors import Predictor

    key = "semeval2010" if task == "relation" and reader_type in SEMEVAL_READERS else task
    available = set(Predictor.list_available())
    return next((name for name in TASK_PREDICTORS.get(key, ()) if name in available), None)
