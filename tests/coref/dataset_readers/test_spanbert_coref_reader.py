"""
The ``spanbert_coref`` reader on the hand-written fixture (expected values worked out from
``fixtures/coref/segmented_document.gold_conll`` by hand), the OntoNotes sample and LitBank.
"""

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.data.data_loaders import MultiProcessDataLoader

from spanbert_lib.common.errors import EmptyInputError, InvalidEncodingError
from spanbert_lib.common.token_indexers import SegmentedWordpieceIndexer
from spanbert_lib.coref.dataset_readers import SpanBertCorefReader, clusters_in_document
from spanbert_lib.coref.dataset_readers.conll_format import (
    ConllFormatError,
    format_conll_document,
    read_conll_documents,
)
from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

FIXTURE = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"

PART0_WORDS = (
    "Anna told Ben that her old friend from Boston had called . "
    "She said he would visit next week . "
    "The friend , who had lived in Boston for many wonderful years near the old harbour "
    "and the quiet river , said that the city was lovely in September ."
).split()

PART0_CLUSTERS = [
    [(0, 0), (4, 4), (12, 12)],  # Anna, her, She
    [(2, 2)],  # Ben (singleton)
    [(4, 8), (14, 14), (20, 40)],  # her old friend from Boston, he, The friend ... river ,
    [(8, 8), (27, 27), (43, 44)],  # Boston (nested in cluster 2's mention), Boston, the city
    [(33, 35)],  # the old harbour (nested in (20, 40))
    [(48, 48)],  # September
]


def make_reader(max_segment_len=16, **kwargs) -> SpanBertCorefReader:
    indexer = SegmentedWordpieceIndexer(str(TINY_BERT_DIR), max_segment_len=max_segment_len)
    return SpanBertCorefReader({"tokens": indexer}, **kwargs)


def labelled_spans(instance):
    spans = instance["spans"].tensor.tolist()
    labels = instance["span_labels"].tensor.tolist()
    return {tuple(span): label for span, label in zip(spans, labels) if label >= 0}


def test_fixture_words_clusters_speakers_genre():
    reader = make_reader()
    instances = list(reader.read(FIXTURE))
    assert [(i["metadata"]["doc_key"], i["metadata"]["part"]) for i in instances] == [
        ("tc/test/00/test_0010", "000"),
        ("tc/test/00/test_0010", "001"),
        ("xx/other/00/doc_0001", "000"),
    ]
    first = instances[0]
    assert first["metadata"]["words"] == PART0_WORDS
    assert [len(s) for s in first["metadata"]["sentences"]] == [12, 8, 30]
    assert first["metadata"]["clusters"] == PART0_CLUSTERS
    assert first["sentence_ids"].tensor.tolist() == [0] * 12 + [1] * 8 + [2] * 30
    # speakers: Anna = 1 (first), Ben = 2
    assert first["speaker_ids"].tensor.tolist() == [1] * 12 + [2] * 8 + [1] * 30
    assert first["metadata"]["speakers"] == ["Anna", "Ben"]
    assert first["genre"].tensor.item() == 5  # tc in (bc, bn, mz, nw, pt, tc, wb)
    # every gold mention is a candidate (max_span_width 30 >= 21 words of (20, 40))
    assert labelled_spans(first) == {span: index for index, cluster in enumerate(PART0_CLUSTERS) for span in cluster}
    assert first["metadata"]["unreachable_gold_mentions"] == []

    second = instances[1]
    # "the story ended" is a mention of clusters 7 and 8 (indices 1, 2): labelled with the first;
    # "late . Very late" (10, 13) crosses a sentence boundary
    assert second["metadata"]["clusters"] == [[(0, 0), (15, 15)], [(4, 6)], [(4, 6)], [(10, 13)]]
    assert labelled_spans(second) == {(0, 0): 0, (15, 15): 0, (4, 6): 1}
    assert second["metadata"]["unreachable_gold_mentions"] == [(10, 13)]
    assert second["speaker_ids"].tensor.tolist() == [1, 1, 1] + [0] * 15  # "-" = no speaker

    third = instances[2]
    assert third["genre"].tensor.item() == 7 == reader.num_genres - 1  # unknown genre "xx"
    assert third["speaker_ids"].tensor.tolist() == [1] * 5 + [2] * 4
    assert third["metadata"]["clusters"] == [[(0, 0), (7, 7)], [(2, 2), (5, 5)]]

    stats = reader.last_read_stats
    assert (stats.documents, stats.instances, stats.gold_mentions) == (3, 3, 12 + 5 + 4)
    assert (stats.unreachable, stats.crossing_sentences, stats.too_wide) == (1, 1, 0)
    assert stats.in_several_clusters == 1 and stats.unknown_genre == 1


def test_candidate_spans_and_too_wide_gold_mentions():
    reader = make_reader(max_span_width=20)
    first = next(iter(reader.read(FIXTURE)))
    spans = first["spans"].tensor.numpy()
    lengths, width = [12, 8, 30], 20
    assert len(spans) == sum(n - w + 1 for n in lengths for w in range(1, min(n, width) + 1))
    sentence_ids = first["sentence_ids"].tensor.numpy()
    assert (sentence_ids[spans[:, 0]] == sentence_ids[spans[:, 1]]).all()
    assert (spans[:, 1] - spans[:, 0] < width).all()
    # (20, 40) is 21 words wide: not a candidate, kept in the gold clusters, reported
    assert (20, 40) not in labelled_spans(first)
    assert first["metadata"]["clusters"] == PART0_CLUSTERS
    assert first["metadata"]["unreachable_gold_mentions"] == [(20, 40)]
    assert reader.last_read_stats.too_wide == 1  # counted as instances are made


def test_batch_tensors_of_several_documents():
    reader = make_reader()
    instances = list(reader.read(FIXTURE))
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    tensors = batch.as_tensor_dict()
    num_spans = [len(i["spans"].tensor) for i in instances]
    assert tensors["spans"].shape == (3, max(num_spans), 2)
    assert tensors["span_labels"].shape == (3, max(num_spans))
    assert tensors["spans"][1, num_spans[1] :].eq(-1).all()
    assert tensors["speaker_ids"].shape == tensors["sentence_ids"].shape == (3, 50)
    assert tensors["sentence_ids"][2, 9:].eq(-1).all()
    assert tensors["genre"].tolist() == [5, 5, 7]
    text = tensors["text"]["tokens"]
    assert text["word_starts"].shape == (3, 50)
    assert text["input_ids"].shape[-1] <= 16
    assert len(tensors["metadata"]) == 3


def test_predictions_can_be_written_back():
    reader = make_reader()
    instance = next(iter(reader.read(FIXTURE)))
    metadata = instance["metadata"]
    clusters = clusters_in_document(metadata, [[(0, 0), (12, 12)]])
    text = format_conll_document(metadata["document"], clusters)
    lines = text.splitlines()
    assert lines[0] == "#begin document (tc/test/00/test_0010); part 000"
    assert lines[1].split()[3] == "Anna" and lines[1].split()[-1] == "(0)"
    assert lines[14].split()[3] == "She" and lines[14].split()[-1] == "(0)"


def test_training_window_is_seeded_and_consistent():
    documents = read_conll_documents(FIXTURE)
    reader = make_reader(max_segment_len=16, max_training_segments=2)
    indexer = reader._token_indexers["tokens"]
    offsets = []
    for _ in range(4):
        instances = list(reader.read(FIXTURE))
        assert reader.last_read_stats.windowed == 3  # 6, 4 and 5 segments of 16 pieces
        for instance, document in zip(instances, documents):
            metadata = instance["metadata"]
            offset, words = metadata["word_offset"], metadata["words"]
            assert words == document.words[offset : offset + len(words)]
            assert indexer.segment(metadata["sentences"]).num_segments <= 2
            # gold clusters = the document's mentions inside the window, shifted
            inside = [
                [(s - offset, e - offset) for s, e in cluster if s >= offset and e < offset + len(words)]
                for cluster in document.clusters
            ]
            assert metadata["clusters"] == [c for c in inside if c]
            labels = labelled_spans(instance)
            for cluster in metadata["clusters"]:
                for span in cluster:
                    if span not in metadata["unreachable_gold_mentions"]:
                        assert labels[span] in {i for i, c in enumerate(metadata["clusters"]) if span in c}
            assert metadata["num_document_words"] == document.num_words
        offsets.append([i["metadata"]["word_offset"] for i in instances])
    assert len({tuple(o) for o in offsets}) > 1  # a new window on each read
    # the same seed replays the same windows
    again = make_reader(max_segment_len=16, max_training_segments=2)
    replayed = [[i["metadata"]["word_offset"] for i in again.read(FIXTURE)] for _ in range(4)]
    assert replayed == offsets
    for seed in (99, None):  # None: OS entropy
        other = make_reader(max_segment_len=16, max_training_segments=2, window_seed=seed)
        for instance in other.read(FIXTURE):
            assert indexer.segment(instance["metadata"]["sentences"]).num_segments <= 2


def test_data_loader_batches():
    reader = make_reader(max_segment_len=16, max_training_segments=3)
    loader = MultiProcessDataLoader(reader, str(FIXTURE), batch_size=2, max_instances_in_memory=2)
    loader.index_with(Vocabulary())
    batches = list(loader)
    assert [len(b["metadata"]) for b in batches] == [2, 1]
    for batch in batches:
        assert batch["text"]["tokens"]["input_ids"].shape[1] <= 3
        assert batch["spans"].shape[:2] == batch["span_labels"].shape


def test_window_leaves_short_documents_whole():
    reader = make_reader(max_segment_len=512, max_training_segments=1)
    instances = list(reader.read(FIXTURE))
    assert [i["metadata"]["word_offset"] for i in instances] == [0, 0, 0]
    assert instances[0]["metadata"]["clusters"] == PART0_CLUSTERS
    assert reader.last_read_stats.windowed == 0


def test_text_to_instance():
    reader = make_reader()
    instance = reader.text_to_instance(
        [["John", "said", "he", "left", "."], ["He", "did", "."]],
        gold_clusters=[[(0, 0), (2, 2), (5, 5)]],
        doc_key="nw/x/00/x_0001",
    )
    assert instance["genre"].tensor.item() == 3  # nw
    assert instance["speaker_ids"].tensor.tolist() == [0] * 8
    assert labelled_spans(instance) == {(0, 0): 0, (2, 2): 0, (5, 5): 0}
    no_gold = reader.text_to_instance([["Hello", "."]])
    assert "span_labels" not in no_gold.fields and no_gold["metadata"]["clusters"] is None
    with pytest.raises(ValueError, match="outside its 2 words"):
        reader.text_to_instance([["Hello", "."]], gold_clusters=[[(1, 2)]])
    with pytest.raises(ValueError, match="one name per word"):
        reader.text_to_instance([["Hello", "."]], speakers=[["A"]])


def test_from_params_and_configuration_errors():
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "spanbert_coref",
                "token_indexers": {
                    "tokens": {"type": "segmented_wordpiece", "model_name": str(TINY_BERT_DIR), "max_segment_len": 128}
                },
                "max_span_width": 10,
                "max_training_segments": 3,
            }
        )
    )
    assert isinstance(reader, SpanBertCorefReader)
    assert reader.max_span_width == 10 and reader.max_training_segments == 3
    with pytest.raises(ConfigurationError, match="segmented_wordpiece"):
        DatasetReader.from_params(
            Params(
                {
                    "type": "spanbert_coref",
                    "token_indexers": {"tokens": {"type": "single_id"}},
                    "max_training_segments": 3,
                }
            )
        )


def test_empty_documents_are_skipped_and_counted(tmp_path):
    text = FIXTURE.read_text().split("#end document")[0] + "#end document\n"
    path = tmp_path / "empty.gold_conll"
    path.write_text("#begin document (nw/empty/00/e_0001); part 000\n#end document\n" + text)
    reader = make_reader()
    instances = list(reader.read(path))
    assert len(instances) == 1
    assert reader.last_read_stats.skipped_empty == [f"document 'nw/empty/00/e_0001' part '000' ({path}:1)"]


def _fixture_with_line_6_replaced(tmp_path, old, new, encoding="utf-8"):
    lines = FIXTURE.read_text().splitlines()
    assert lines[5].endswith(old)
    lines[5] = lines[5][: -len(old)] + new
    path = tmp_path / "bad.gold_conll"
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


# name: (file writer, error type, message after "FILE:LINE: " or "FILE: ", line or None)
READER_ERRORS = {
    "unbalanced_brackets": (
        lambda tmp: _fixture_with_line_6_replaced(tmp, "(2|(0)", "(2|(0)|7)"),
        ConllFormatError,
        "unbalanced coreference brackets: '7)' closes a mention of cluster 7 that was never opened",
        6,
    ),
    "no_word_column": (
        lambda tmp: _fixture_with_line_6_replaced(
            tmp, FIXTURE.read_text().splitlines()[5], "tc/test/00/test_0010 (2|(0)"
        ),
        ConllFormatError,
        "expected at least 5 columns (the word in column 4, coreference in "
        "the last), found 2 in document 'tc/test/00/test_0010'",
        6,
    ),
    "invalid_utf8": (
        lambda tmp: _fixture_with_line_6_replaced(tmp, "(2|(0)", "caf\u00e9 (2|(0)", "latin-1"),
        InvalidEncodingError,
        "invalid UTF-8 byte(s) b'\\xe9'",
        6,
    ),
    "empty_file": (
        lambda tmp: (tmp / "empty.gold_conll", (tmp / "empty.gold_conll").write_text(""))[0],
        EmptyInputError,
        "no document with words in 1 CoNLL file(s) (0 '#begin document' blocks); nothing to read",
        None,
    ),
    "only_empty_documents": (
        lambda tmp: (tmp / "e.conll", (tmp / "e.conll").write_text("#begin document (a); part 000\n#end document\n"))[
            0
        ],
        EmptyInputError,
        "no document with words in 1 CoNLL file(s) (1 '#begin document' blocks); nothing to read",
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(READER_ERRORS))
def test_bad_input_raises_one_error_naming_file_and_line(tmp_path, name):
    write, error_type, message, line = READER_ERRORS[name]
    path = write(tmp_path)
    with pytest.raises(error_type) as error:
        list(make_reader().read(path))
    where = f"{path}:{line}: " if line else f"{path}: "
    assert str(error.value).startswith(where), str(error.value)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_reader_reads_five_column_files_with_any_whitespace(tmp_path):
    # the layout of the reference scorer's test files: 5 columns, trailing tabs and spaces
    path = tmp_path / "five.conll"
    path.write_text(
        "#begin document (five); \n"
        "five\t0\t0\tAnna\t(1)\t\nfive 0 1 smiled -  \n"
        "five\t0\t2\t.\t-\n\nfive\t0\t0\tShe\t(1)\n#end document\n"
    )
    [instance] = make_reader().read(path)
    assert instance["metadata"]["words"] == ["Anna", "smiled", ".", "She"]
    assert instance["metadata"]["clusters"] == [[(0, 0), (3, 3)]]
    with pytest.raises(ConfigurationError, match="min_columns must be at least 5"):
        make_reader(min_columns=2)


def test_directory_and_glob_paths(tmp_path):
    text = FIXTURE.read_text()
    (tmp_path / "a.gold_conll").write_text(text)
    (tmp_path / "b.gold_conll").write_text(text)
    (tmp_path / "notes.txt").write_text("not conll")
    reader = make_reader()
    assert len(list(reader.read(tmp_path))) == 6
    assert len(list(reader.read(str(tmp_path / "a.*")))) == 3
    assert len(list(reader.read(f"{tmp_path}#files=1:"))) == 3  # the second file only
    with pytest.raises(FileNotFoundError, match="no data files found at .*missing"):
        list(reader.read(tmp_path / "missing"))


@pytest.mark.external_data
def test_ontonotes_sample():
    path = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    reader = make_reader(max_segment_len=128)
    instances = list(reader.read(path))
    documents = read_conll_documents(path)
    assert len(instances) == len(documents) == 4
    assert [i["metadata"]["part"] for i in instances] == ["000", "001", "003", "005"]
    first = instances[0]
    assert first["metadata"]["words"][:5] == ["In", "the", "summer", "of", "2005"]
    # "Hong Kong" (words 23-24) opens and closes cluster 23, the first cluster of the file
    assert first["metadata"]["clusters"][0][0] == (23, 24)
    assert first["metadata"]["words"][23:25] == ["Hong", "Kong"]
    assert first["genre"].tensor.item() == 0  # bc
    # the first sentence is all Speaker#1
    assert first["speaker_ids"].tensor[:27].tolist() == [1] * 27
    for instance, document in zip(instances, documents):
        assert instance["metadata"]["words"] == document.words
        assert instance["metadata"]["clusters"] == document.clusters
        reachable = {span for cluster in document.clusters for span in cluster} - set(
            instance["metadata"]["unreachable_gold_mentions"]
        )
        assert set(labelled_spans(instance)) == reachable


@pytest.mark.external_data
def test_litbank_file():
    path = require_external_data("coref", "litbank", "1023_bleak_house_brat.conll")
    reader = make_reader(max_segment_len=384)
    (instance,) = list(reader.read(path))
    (document,) = read_conll_documents(path)
    metadata = instance["metadata"]
    assert metadata["doc_key"] == "1023_bleak_house_brat" and metadata["genre"] is None
    assert metadata["words"][:6] == ["CHAPTER", "I", "In", "Chancery", "London", "."]
    assert metadata["clusters"] == document.clusters
    assert (3, 3) in metadata["clusters"][0]  # "Chancery", a singleton cluster
    assert sum(len(c) == 1 for c in metadata["clusters"]) > 0
    assert instance["genre"].tensor.item() == 7
    assert instance["speaker_ids"].tensor.eq(0).all()  # "_" = no speaker
    reachable = {span for cluster in document.clusters for span in cluster} - set(metadata["unreachable_gold_mentions"])
    assert set(labelled_spans(instance)) == reachable
    assert all(e - s + 1 > 30 for s, e in metadata["unreachable_gold_mentions"])


@pytest.mark.external_data
def test_litbank_training_windows():
    path = require_external_data("coref", "litbank", "1023_bleak_house_brat.conll")
    (document,) = read_conll_documents(path)
    reader = make_reader(max_segment_len=128, max_training_segments=3)
    indexer = reader._token_indexers["tokens"]
    for _ in range(3):
        (instance,) = list(reader.read(path))
        metadata = instance["metadata"]
        offset, words = metadata["word_offset"], metadata["words"]
        assert 0 < len(words) < document.num_words
        assert words == document.words[offset : offset + len(words)]
        assert indexer.segment(metadata["sentences"]).num_segments <= 3
        inside = [
            [(s - offset, e - offset) for s, e in cluster if s >= offset and e < offset + len(words)]
            for cluster in document.clusters
        ]
        assert metadata["clusters"] == [c for c in inside if c]
