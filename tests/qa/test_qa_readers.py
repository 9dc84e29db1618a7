"""
The SQuAD and MRQA readers: exact character offsets (unicode, uncased tokenizer), window layout
and labels, unanswerable questions, relocated / missing answers (counted), clear errors.
"""

import copy
import gzip
import json
import unicodedata

import numpy as np
import pytest
import transformers

from spanbert_lib.qa.dataset_readers import MrqaReader, QADataError, SquadReader, split_data_path
from spanbert_lib.qa.dataset_readers.windows import char_span_to_token_span
from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
SQUAD11 = str(REPO_ROOT / "fixtures" / "qa" / "squad11.json")
SQUAD20 = str(REPO_ROOT / "fixtures" / "qa" / "squad20.json")
MRQA = str(REPO_ROOT / "fixtures" / "qa" / "mrqa.jsonl")
MRQA_SAMPLE = str(REPO_ROOT / "fixtures" / "qa" / "mrqa_sample.jsonl")

UNICODE_PASSAGE = (
    "Café Zoë in  Kraków\tserves crème brûlée; Jose\u0301 Núñez (東京タワー) says 😀 İstanbul straße ﬁne. "
)


def minilm_dir():
    if not (MINILM / "tokenizer.json").exists():
        pytest.skip("pretrained/all-MiniLM-L6-v2 is missing (run scripts/bootstrap.sh)")
    return str(MINILM)


def strip_accents_lower(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")


def instance_arrays(instance):
    return {name: field.tensor.numpy() for name, field in instance.fields.items() if name != "metadata"}


def window_text(arrays, context, window, start, end):
    """Passage text of window positions start..end (inclusive), through the instance's own offsets."""
    first = arrays["context_token_index"][window, start]
    last = arrays["context_token_index"][window, end]
    return context[arrays["context_offsets"][first, 0] : arrays["context_offsets"][last, 1]]


@pytest.mark.parametrize("model", ["tiny", "minilm"])
def test_passage_offsets_are_exact_character_by_character(model):
    model_dir = str(TINY_BERT_DIR) if model == "tiny" else minilm_dir()
    reader = SquadReader(model_dir)
    passage = reader.window_tokenizer.tokenize_passage(UNICODE_PASSAGE)
    offsets = passage.offsets
    tokens = transformers.AutoTokenizer.from_pretrained(model_dir).convert_ids_to_tokens(passage.ids.tolist())
    covered = np.zeros(len(UNICODE_PASSAGE), dtype=int)
    for token, (start, end) in zip(tokens, offsets):
        assert 0 <= start < end <= len(UNICODE_PASSAGE)
        covered[start:end] += 1
        piece = UNICODE_PASSAGE[start:end]
        if token != "[UNK]":
            expected = strip_accents_lower(piece) if model == "minilm" else piece
            assert token.removeprefix("##") == expected, (token, piece)
    # every non-space character is in exactly one token; whitespace in none
    for position, char in enumerate(UNICODE_PASSAGE):
        assert covered[position] == (0 if char.isspace() else 1), (position, char)
    assert np.all(np.diff(offsets[:, 0]) > 0)
    # the combining accent of "Jose\u0301" belongs to its token, so answers keep it
    jose = UNICODE_PASSAGE.index("Jose\u0301")
    span = char_span_to_token_span(offsets, jose, jose + 5)
    assert UNICODE_PASSAGE[offsets[span[0], 0] : offsets[span[1], 1]] == "Jose\u0301"
    # every character span from the start of token i to the end of token j maps back to (i, j),
    # also when it starts or ends inside those tokens
    for i in range(len(offsets)):
        for j in range(i, min(i + 6, len(offsets))):
            start, end = offsets[i, 0], offsets[j, 1]
            assert char_span_to_token_span(offsets, start, end) == (i, j)
            assert char_span_to_token_span(offsets, end - 1, end) == (j, j)
            assert char_span_to_token_span(offsets, start, start + 1) == (i, i)


def test_minilm_labels_map_back_to_original_case_and_accents():
    reader = SquadReader(minilm_dir(), max_seq_length=40, doc_stride=8, max_query_length=8)
    answers = ["Café Zoë", "Kraków", "crème brûlée", "Jose\u0301 Núñez", "東京タワー", "straße ﬁne"]
    for answer in answers:
        instance = reader.text_to_instance(
            "Where?",
            UNICODE_PASSAGE,
            "q",
            answer_texts=[answer],
            answer_candidates=[(answer, UNICODE_PASSAGE.index(answer))],
        )
        arrays = instance_arrays(instance)
        labelled = np.flatnonzero(arrays["answer_span"][:, 0] > 0)
        assert len(labelled) >= 1
        for window in labelled:
            start, end = arrays["answer_span"][window]
            assert window_text(arrays, UNICODE_PASSAGE, window, start, end) == answer


def test_multi_window_layout_and_labels():
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    instances = list(reader.read(SQUAD11))
    long_questions = [i for i in instances if i["metadata"]["id"] in {"q10", "q11", "q12"}]
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))
    for instance in long_questions:
        meta = instance["metadata"].metadata
        arrays = instance_arrays(instance)
        context = meta["context"]
        passage = reader.window_tokenizer.tokenize_passage(context)
        question_ids = tokenizer(meta["question"], add_special_tokens=False)["input_ids"]
        num_windows = arrays["input_ids"].shape[0]
        assert num_windows == meta["num_windows"] > 2
        capacity = 64 - 3 - len(question_ids)
        for w in range(num_windows):
            ids = arrays["input_ids"][w][arrays["attention_mask"][w]]
            chunk = passage.ids[24 * w : 24 * w + capacity]
            # [CLS] passage [SEP] question [SEP], token types 0...0 1...1
            assert ids.tolist() == [
                tokenizer.cls_token_id,
                *chunk,
                tokenizer.sep_token_id,
                *question_ids,
                tokenizer.sep_token_id,
            ]
            types = arrays["token_type_ids"][w][arrays["attention_mask"][w]]
            assert types.tolist() == [0] * (len(chunk) + 2) + [1] * (len(question_ids) + 1)
            index = arrays["context_token_index"][w]
            assert index[1 : 1 + len(chunk)].tolist() == list(range(24 * w, 24 * w + len(chunk)))
            assert (index[1 + len(chunk) :] == -1).all() and index[0] == -1
        # each passage token is max-context in exactly one window
        counts = np.bincount(arrays["context_token_index"][arrays["max_context_mask"]], minlength=len(passage.ids))
        assert (counts == 1).all()
        # labels: the answer in every window that holds all of it, [CLS] elsewhere
        answer = meta["answers"][0]
        char_start = context.index(answer)
        first, last = char_span_to_token_span(passage.offsets, char_start, char_start + len(answer))
        for w in range(num_windows):
            contains = 24 * w <= first and last < 24 * w + capacity
            start, end = arrays["answer_span"][w]
            if contains:
                assert window_text(arrays, context, w, start, end) == answer
            else:
                assert (start, end) == (0, 0)
        assert (arrays["answer_span"][:, 0] > 0).sum() >= 1


def test_question_first_and_overlap_windows_match_hugging_face():
    """stride_mode="overlap" + question_first reproduce the HF tokenizer's overflowing windows exactly."""
    reader = SquadReader(
        str(TINY_BERT_DIR),
        max_seq_length=48,
        doc_stride=10,
        stride_mode="overlap",
        question_first=True,
        max_query_length=30,
    )
    context = json.load(open(SQUAD11))["data"][0]["paragraphs"][3]["context"]
    question = "Which village has a school?"
    arrays = instance_arrays(reader.text_to_instance(question, context, "x"))
    hf = transformers.AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))(
        question, context, truncation="only_second", max_length=48, stride=10, return_overflowing_tokens=True
    )
    assert arrays["input_ids"].shape[0] == len(hf["input_ids"]) > 3
    for w, expected in enumerate(hf["input_ids"]):
        assert arrays["input_ids"][w][arrays["attention_mask"][w]].tolist() == expected
        assert arrays["token_type_ids"][w][arrays["attention_mask"][w]].tolist() == hf["token_type_ids"][w]


def test_step_stride_semantics():
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=48, doc_stride=10, max_query_length=30)
    context = json.load(open(SQUAD11))["data"][0]["paragraphs"][3]["context"]
    arrays = instance_arrays(reader.text_to_instance("Which village?", context, "x"))
    first_tokens = arrays["context_token_index"][:, 1]
    assert first_tokens.tolist() == [10 * w for w in range(len(first_tokens))]


def test_relocated_answer_is_counted_and_labelled_at_the_text():
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=128, doc_stride=64, max_query_length=24)
    instances = {i["metadata"]["id"]: i for i in reader.read(SQUAD11)}
    assert reader.stats.answers_relocated == 1  # q6: answer_start moved by 7 in the fixture
    assert reader.stats.answers_not_found == 0 and reader.stats.questions == 12
    assert reader.stats.answers_at_given_offset == 11
    arrays = instance_arrays(instances["q6"])
    start, end = arrays["answer_span"][0]
    assert window_text(arrays, instances["q6"]["metadata"]["context"], 0, start, end) == "eight hours"
    # all gold answers are kept for evaluation
    assert instances["q1"]["metadata"]["answers"] == ["March 1932", "in March 1932"]


def test_answer_not_in_passage_is_skipped_not_mislabelled(tmp_path):
    data = json.load(open(SQUAD11))
    qas = data["data"][0]["paragraphs"][0]["qas"]
    qas[0]["answers"] = [{"text": "April 1999", "answer_start": 29}]  # not in the passage at all
    qas[1]["answers"] = [{"text": "Brunel", "answer_start": 0}, {"text": "Bradfield", "answer_start": 0}]
    path = tmp_path / "bad_answers.json"
    path.write_text(json.dumps(data))
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=128, doc_stride=64, max_query_length=24)
    instances = {i["metadata"]["id"]: i for i in reader.read(str(path))}
    assert reader.stats.answers_not_found == 2  # "April 1999" and "Brunel"
    assert reader.stats.questions_without_usable_answer == 1
    assert reader.stats.answers_relocated == 2  # "Bradfield" at 0, q6 of the fixture
    assert (instance_arrays(instances["q1"])["answer_span"] == -1).all()  # evaluated, never trained on
    assert instances["q1"]["metadata"]["answers"] == ["April 1999"]
    arrays = instance_arrays(instances["q2"])
    start, end = arrays["answer_span"][0]
    assert window_text(arrays, instances["q2"]["metadata"]["context"], 0, start, end) == "Bradfield"


@pytest.mark.parametrize("skip", [False, True])
def test_unanswerable_questions_point_at_cls(skip):
    reader = SquadReader(
        str(TINY_BERT_DIR),
        max_seq_length=64,
        doc_stride=24,
        max_query_length=24,
        skip_impossible_windows_in_training=skip,
    )
    instances = {i["metadata"]["id"]: i for i in reader.read(SQUAD20)}
    assert reader.stats.unanswerable_questions == 3
    for qid in ("u1", "u2", "u3"):
        labels = instance_arrays(instances[qid])["answer_span"]
        assert (labels == (-1 if skip else 0)).all()
        assert instances[qid]["metadata"]["answers"] == [] and instances[qid]["metadata"]["is_impossible"]
    labels = instance_arrays(instances["q11"])["answer_span"]
    assert (labels[:, 0] > 0).sum() >= 1
    assert set(labels[labels[:, 0] <= 0].ravel().tolist()) == {-1 if skip else 0}


def test_prediction_instances_have_no_labels():
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    instance = reader.text_to_instance("Who?", "Alice met Bob.", "x")
    assert "answer_span" not in instance.fields and instance["metadata"]["answers"] is None


def test_questions_about_the_same_passage_tokenise_it_once(monkeypatch):
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    calls = []
    tokenize = reader.window_tokenizer.tokenize_passage
    monkeypatch.setattr(reader.window_tokenizer, "tokenize_passage", lambda text: calls.append(text) or tokenize(text))
    passage = " ".join(f"Room {i} shows maps from {1600 + i}." for i in range(12))  # several windows
    first = reader.text_to_instance("Which room?", passage, "a")
    second = reader.text_to_instance("Which maps are from 1605?", "".join(passage), "b")  # equal, not the same object
    assert calls == [passage]
    fresh = SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    for instance, question in ((first, "Which room?"), (second, "Which maps are from 1605?")):
        expected = instance_arrays(fresh.text_to_instance(question, passage))
        arrays = instance_arrays(instance)
        assert arrays.keys() == expected.keys() and arrays["input_ids"].shape[0] > 1
        for key in expected:
            np.testing.assert_array_equal(arrays[key], expected[key])
    # a refused passage is not remembered; another passage is tokenised, then the first one again
    with pytest.raises(QADataError, match="the passage is empty"):
        reader.text_to_instance("Who?", "  ", "c")
    reader.text_to_instance("Who?", "Alice met Bob.", "d")
    reader.text_to_instance("Who?", passage, "e")
    assert calls == [passage, "Alice met Bob.", passage]


def test_article_selector(tmp_path):
    data = json.load(open(SQUAD11))
    data["data"].append(copy.deepcopy(data["data"][0]))
    for paragraph in data["data"][1]["paragraphs"]:
        for qa in paragraph["qas"]:
            qa["id"] = "second-" + qa["id"]
    path = tmp_path / "two_articles.json"
    path.write_text(json.dumps(data))
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=128, doc_stride=64, max_query_length=24)
    first = [i["metadata"]["id"] for i in reader.read(f"{path}#articles=:1")]
    second = [i["metadata"]["id"] for i in reader.read(f"{path}#articles=1:")]
    assert len(first) == len(second) == 12
    assert all(not q.startswith("second-") for q in first) and all(q.startswith("second-") for q in second)
    assert split_data_path("a.json") == ("a.json", slice(None))
    assert split_data_path("a.json#articles=2:-1") == ("a.json", slice(2, -1))
    with pytest.raises(QADataError, match="#articles=START:END"):
        split_data_path("a.json#articles=x")


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def squad_with(question_changes=None, context=None):
    data = json.load(open(SQUAD11))
    paragraph = data["data"][0]["paragraphs"][1]
    if context is not None:
        paragraph["context"] = context
    if question_changes is not None:
        question_changes(paragraph["qas"][1])
    return data


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"data": [ {"title": "x", ', r"not valid JSON: .*line 1 column"),
        ({"version": "1.1"}, r"no top-level 'data' list"),
        (squad_with(lambda qa: qa.pop("question")), r"paragraphs\[1\]\.qas\[1\]: question q5 has no 'question'"),
        (squad_with(lambda qa: qa.pop("id")), r"paragraphs\[1\]\.qas\[1\]: no 'id' string"),
        (squad_with(lambda qa: qa.pop("answers")), r"question q5 has no 'answers' list"),
        (
            squad_with(lambda qa: qa["answers"][0].pop("answer_start")),
            r"q5: answers\[0\] has no integer 'answer_start'",
        ),
        (squad_with(lambda qa: qa["answers"][0].pop("text")), r"q5: answers\[0\] has no 'text'"),
        (squad_with(lambda qa: qa.update(answers=[])), r"q5 has no answer and is not marked is_impossible"),
        (squad_with(lambda qa: qa.update(is_impossible=True)), r"q5 is marked is_impossible but has 2 answer"),
        (squad_with(context="   "), r"paragraphs\[1\]: an empty context \(question ids \['q4', 'q5', 'q6'\]\)"),
        (
            {"data": [{"paragraphs": [{"qas": [{"id": "z"}]}]}]},
            r"paragraphs\[0\]: no 'context' string \(question ids \['z'\]\)",
        ),
    ],
)
def test_squad_errors_name_file_and_question(tmp_path, content, message):
    path = write(tmp_path, "broken.json", content)
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    with pytest.raises(QADataError, match=message) as error:
        list(reader.read(path))
    assert str(path) in str(error.value)


def test_missing_file_and_empty_predictor_passage(tmp_path):
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    with pytest.raises(QADataError, match="cannot read .*nothing.json"):
        list(reader.read(str(tmp_path / "nothing.json")))
    with pytest.raises(QADataError, match="question q9: the passage is empty"):
        reader.text_to_instance("Who?", " \n ", "q9")
    with pytest.raises(QADataError, match="question q9 is empty"):
        reader.text_to_instance("  ", "Alice met Bob.", "q9")


def test_mrqa_reader_unicode_answers():
    reader = MrqaReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    instances = list(reader.read(MRQA))
    assert len(instances) == 12
    assert reader.stats.answers_at_given_offset == 12 and reader.stats.answers_not_found == 0
    by_id = {i["metadata"]["id"]: i for i in instances}
    arrays = instance_arrays(by_id["mq8"])
    labelled = np.flatnonzero(arrays["answer_span"][:, 0] > 0)
    for window in labelled:
        start, end = arrays["answer_span"][window]
        assert window_text(arrays, by_id["mq8"]["metadata"]["context"], window, start, end) == "José Núñez"
    assert by_id["mq1"]["metadata"]["answers"] == ["March 1932", "in March 1932"]


def test_mrqa_sample_in_the_official_format():
    """The fixture itself follows the MRQA 2019 format: spaCy-style tokens with character offsets, and
    char_spans / token_spans with INCLUSIVE ends that agree with each other and with the text."""
    lines = [json.loads(line) for line in open(MRQA_SAMPLE, encoding="utf-8")]
    assert lines[0] == {"header": {"dataset": "SpanBERTLibFixture", "split": "dev"}}
    occurrences = []
    for record in lines[1:]:
        context, tokens = record["context"], record["context_tokens"]
        assert set(record) == {"context", "context_tokens", "qas"}
        for token, offset in tokens:
            assert context[offset : offset + len(token)] == token
        for qa in record["qas"]:
            assert set(qa) == {"qid", "question", "question_tokens", "answers", "is_impossible", "detected_answers"}
            for token, offset in qa["question_tokens"]:
                assert qa["question"][offset : offset + len(token)] == token
            for detected in qa["detected_answers"]:
                assert set(detected) == {"text", "char_spans", "token_spans"}
                occurrences.append(len(detected["char_spans"]))
                for (start, end), (first, last) in zip(detected["char_spans"], detected["token_spans"], strict=True):
                    assert context[start : end + 1].lower() == detected["text"].lower()
                    assert tokens[first][1] == start and tokens[last][1] + len(tokens[last][0]) - 1 == end
    assert len(lines) == 4 and max(occurrences) == 3


def sample_reader():
    # the windows of fixtures/configs/qa/mrqa_sample_tiny.jsonnet (96 wordpieces, step 64)
    return MrqaReader(str(TINY_BERT_DIR), max_seq_length=96, doc_stride=64, max_query_length=24)


def test_mrqa_sample_labels_are_the_first_inclusive_char_span(tmp_path):
    reader = sample_reader()
    plain = list(reader.read(MRQA_SAMPLE))
    assert reader.stats.questions == 6 and reader.stats.answers_at_given_offset == 6
    assert reader.stats.answers_not_found == reader.stats.answers_relocated == reader.stats.span_text_mismatches == 0
    # every passage needs 2 windows of 96 wordpieces (the tiny vocabulary cuts words into many pieces), the
    # museum passage (450 wordpieces) 7
    assert reader.stats.multi_window_questions == 6 and reader.stats.windows == 2 + 2 + 7 * 3 + 2
    gz_path = tmp_path / "mrqa_sample.jsonl.gz"
    with gzip.open(gz_path, "wt", encoding="utf-8") as handle:
        handle.write(open(MRQA_SAMPLE, encoding="utf-8").read())
    compressed = list(reader.read(str(gz_path)))
    assert [i["metadata"]["id"] for i in plain] == [i["metadata"]["id"] for i in compressed]
    for a, b in zip(plain, compressed):
        for name, array in instance_arrays(a).items():
            np.testing.assert_array_equal(array, instance_arrays(b)[name])

    records = [json.loads(line) for line in open(MRQA_SAMPLE, encoding="utf-8")][1:]
    first_span = {qa["qid"]: qa["detected_answers"][0]["char_spans"][0] for r in records for qa in r["qas"]}
    # hand-checked first spans: "rhine" (normalised text) -> "Rhine" at 10..14 (3 occurrences), the end of
    # the museum passage, and "Charles Babbage" right before "'s"
    assert first_span["fx-1"] == [10, 14] and first_span["fx-6"] == [53, 67]
    for instance in compressed:
        arrays = instance_arrays(instance)
        context, qid = instance["metadata"]["context"], instance["metadata"]["id"]
        start_char, end_char = first_span[qid]
        labelled = np.flatnonzero(arrays["answer_span"][:, 0] > 0)
        assert labelled.size > 0, qid
        assert (arrays["answer_span"][np.setdiff1d(np.arange(len(arrays["answer_span"])), labelled)] == 0).all()
        for window in labelled:
            start, end = arrays["answer_span"][window]
            first = arrays["context_token_index"][window, start]
            last = arrays["context_token_index"][window, end]
            # wordpieces back to characters: exactly the inclusive MRQA span, end + 1 exclusive
            assert (arrays["context_offsets"][first, 0], arrays["context_offsets"][last, 1]) == (
                start_char,
                end_char + 1,
            )
            assert window_text(arrays, context, window, start, end) == context[start_char : end_char + 1]
    by_id = {i["metadata"]["id"]: i for i in compressed}
    museum = by_id["fx-3"]["metadata"]
    assert museum["num_windows"] == 7
    assert museum["context"].endswith("holds the anchor of the steamer Hildegard.")
    # the anchor is at the end of the passage: only the last windows contain it
    assert np.flatnonzero(instance_arrays(by_id["fx-3"])["answer_span"][:, 0] > 0).tolist() == [6]
    # "coins" is detected three times (rooms 1, 6, 11); the first occurrence is the label, in the first window
    assert np.flatnonzero(instance_arrays(by_id["fx-5"])["answer_span"][:, 0] > 0).tolist() == [0]
    assert by_id["fx-1"]["metadata"]["answers"] == ["Rhine", "the Rhine"]


def test_mrqa_span_text_mismatch_is_counted(tmp_path):
    """A file written with EXCLUSIVE ends ("1932" as [17, 21]) is read as MRQA says (inclusive: "1932.") and
    counted; the same answer with the inclusive end gives "1932"."""

    def read(end):
        record = {
            "context": "Alice met Bob in 1932.",
            "qas": [
                {
                    "qid": "a",
                    "question": "When?",
                    "answers": ["1932"],
                    "detected_answers": [{"text": "1932", "char_spans": [[17, end]], "token_spans": [[4, 4]]}],
                }
            ],
        }
        path = write(tmp_path, f"end{end}.jsonl", json.dumps({"header": {}}) + "\n" + json.dumps(record) + "\n")
        reader = MrqaReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
        arrays = instance_arrays(list(reader.read(path))[0])
        start, end = arrays["answer_span"][0]
        return window_text(arrays, "Alice met Bob in 1932.", 0, start, end), reader.stats.span_text_mismatches

    assert read(20) == ("1932", 0)
    assert read(21) == ("1932.", 1)


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"context": "x", "qas": []}'], r"line 1: expected the MRQA header"),
        (['{"header": {}}', '{"context": "Alice met Bob.", "qas": [{"qid": "a"'], r"line 2: not valid JSON"),
        (
            ['{"header": {}}', "", '{"context": "", "qas": [{"qid": "a"}]}'],
            r"line 3: an empty context \(question ids \['a'\]\)",
        ),
        (
            [
                '{"header": {}}',
                '{"context": "Alice met Bob.", "qas": [{"qid": "a", "question": "Who?", "answers": []}]}',
            ],
            r"line 2 qas\[0\]: question a needs a non-empty 'answers' list",
        ),
        (
            ['{"header": {}}', '{"context": "Alice met Bob.", "qas": [{"question": "Who?", "answers": ["Bob"]}]}'],
            r"line 2 qas\[0\]: no 'qid' string",
        ),
        (
            [
                '{"header": {}}',
                '{"context": "Alice met Bob.", "qas": [{"qid": "a", "question": "Who?", "answers": ["Bob"], '
                '"detected_answers": [{"text": "Bob.", "char_spans": [[10, 14]]}]}]}',
            ],
            r"line 2 qas\[0\]: question a: detected_answers\[0\] char span \[10, 14\] is not inside the context of 14 ",
        ),
        (
            [
                '{"header": {}}',
                '{"context": "Alice met Bob.", "qas": [{"qid": "a", "question": "Who?", "answers": ["Bob"], '
                '"is_impossible": true}]}',
            ],
            r"line 2 qas\[0\]: question a: 'is_impossible' must be false",
        ),
    ],
)
def test_mrqa_errors(tmp_path, lines, message):
    path = write(tmp_path, "broken.jsonl", "\n".join(lines) + "\n")
    reader = MrqaReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24)
    with pytest.raises(QADataError, match=message) as error:
        list(reader.read(path))
    assert path in str(error.value)


@pytest.mark.external_data
def test_real_squad_answers_map_back_exactly():
    """On real SQuAD 1.1 dev articles (uncased MiniLM), the labels decode to their gold answer texts."""
    path = require_external_data("qa", "squad11_dev_part1.json")
    reader = SquadReader(minilm_dir(), max_seq_length=384, doc_stride=128, approximate_answer_starts=True)
    mismatches = total = 0
    for instance in reader.read(f"{path}#articles=:2"):
        arrays = instance_arrays(instance)
        meta = instance["metadata"].metadata
        for window in np.flatnonzero(arrays["answer_span"][:, 0] > 0):
            total += 1
            start, end = arrays["answer_span"][window]
            mismatches += window_text(arrays, meta["context"], window, start, end) != meta["answers"][0].strip()
    assert reader.stats.answers_not_found == 0 and reader.stats.questions > 250
    # only gold answers that start or end inside a wordpiece ("Japan" of "Japanese") widen to whole pieces
    assert total >= reader.stats.questions and mismatches / total < 0.01


def test_answer_longer_than_a_window_is_counted():
    reader = SquadReader(str(TINY_BERT_DIR), max_seq_length=24, doc_stride=8, max_query_length=8)
    passage = "Alice met Bob at the old market near the river bridge on a cold Monday morning in March."
    answer = "Alice met Bob at the old market near the river bridge on a cold Monday morning"
    labels = instance_arrays(
        reader.text_to_instance(
            "What happened?", passage, "long", answer_texts=[answer], answer_candidates=[(answer, 0)]
        )
    )["answer_span"]
    assert (labels == 0).all() and labels.shape[0] > 1
    assert reader.stats.answers_in_no_window == 1 and reader.stats.answers_at_given_offset == 1


def test_bad_window_settings_are_configuration_errors():
    from allennlp.common.checks import ConfigurationError

    with pytest.raises(ConfigurationError, match="leaves no room for the passage"):
        SquadReader(str(TINY_BERT_DIR), max_seq_length=64, max_query_length=64)
    with pytest.raises(ConfigurationError, match="smaller than the smallest window capacity"):
        SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=40, stride_mode="overlap", max_query_length=24)
    with pytest.raises(ConfigurationError, match="stride_mode"):
        SquadReader(str(TINY_BERT_DIR), stride_mode="hop")
