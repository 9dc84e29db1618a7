import glob
import io
import logging
import pickle

import pytest

from spanbert_lib.common.errors import InvalidEncodingError, UserInputError
from spanbert_lib.coref.dataset_readers.conll_format import (
    MIN_COLUMNS_WITH_WORDS,
    ConllDocument,
    ConllFormatError,
    conll_text,
    coreference_cells,
    format_conll_document,
    iter_conll_documents,
    parse_conll_lines,
    parse_coreference_cell,
    read_conll_documents,
    split_columns,
    write_conll_documents,
)
from tests import REPO_ROOT, require_external_data

FIXTURES = REPO_ROOT / "fixtures" / "coref"
GOLD_FIXTURE = FIXTURES / "multi_part.gold_conll"
RESPONSE_FIXTURE = FIXTURES / "multi_part.response_conll"


def sorted_clusters(clusters):
    return sorted(sorted(cluster) for cluster in clusters)


def words_of(document, span):
    return document.words[span[0] : span[1] + 1]


# ----------------------------------------------------------------------- OntoNotes sample


@pytest.mark.external_data
def test_ontonotes_sample_documents_tokens_speakers_and_clusters():
    path = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    documents = read_conll_documents(path)

    assert [d.document_id for d in documents] == [
        ("bc/cctv/00/cctv_0000", part) for part in ("000", "001", "003", "005")
    ]
    assert {d.genre for d in documents} == {"bc"}
    assert [len(d.sentences) for d in documents] == [3, 1, 4, 1]
    assert [len(s) for s in documents[0].sentences] == [27, 24, 14]
    assert all(speaker == "Speaker#1" for d in documents for s in d.speakers for speaker in s)
    assert documents[0].first_line == "#begin document (bc/cctv/00/cctv_0000); part 000"
    assert [d.begin_line_number for d in documents] == [1, 72, 103, 157]
    assert documents[0].source_path == str(path)

    part0, part1, part3, part5 = documents
    assert part0.sentences[0][:5] == ["In", "the", "summer", "of", "2005"]
    assert part0.sentences[1][14:16] == ["Hong", "Kong"]
    assert part3.sentences[3][-1] == "."

    # read off the file by eye (offsets over the whole part: sentence lengths 27, 24, 14)
    # part 000: "(23" "Hong" "Kong 23)" in sentence 1 (words 23-24) and sentence 2 (14-15 -> 41-42);
    # cluster 18: "their" (sentence 2 word 1 -> 28), "these well - known cartoon images" (32-37)
    assert part0.cluster_ids == ["23", "18"]
    assert part0.clusters == [[(23, 24), (41, 42)], [(28, 28), (32, 37)]]
    assert words_of(part0, (32, 37)) == ["these", "well", "-", "known", "cartoon", "images"]
    # part 001: a singleton "the city 's"
    assert part1.clusters == [[(14, 16)]]
    assert words_of(part1, (14, 16)) == ["the", "city", "'s"]
    # part 003 (sentence lengths 14, 5, 6, 22): cluster 6 = the three "Hong Kong";
    # cluster 44 = "the clever Hong Kong people" ... "they" - nested around a cluster-6 mention
    assert sorted_clusters(part3.clusters) == [[(3, 4), (29, 30), (42, 43)], [(27, 31), (36, 36)]]
    assert words_of(part3, (27, 31)) == ["the", "clever", "Hong", "Kong", "people"]
    assert words_of(part3, (36, 36)) == ["they"]
    # part 005: "Hong Kong Wetland Park ... construction" (0-9); cluster 19 twice
    assert part5.clusters == [[(0, 9)], [(20, 24), (28, 29)]]
    assert words_of(part5, (20, 24)) == ["the", "Hong", "Kong", "SAR", "government"]


@pytest.mark.external_data
def test_iteration_is_lazy_and_stops_at_the_first_broken_document(tmp_path):
    path = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    lines = path.read_text().splitlines(keepends=True)
    # break part 001 (lines 72-101): drop its '#end document'
    assert lines[100].startswith("#end document")
    broken = tmp_path / "broken.gold_conll"
    broken.write_text("".join(lines[:100] + lines[101:]))

    documents = iter_conll_documents(broken)
    first = next(documents)
    assert first.document_id == ("bc/cctv/00/cctv_0000", "000")
    with pytest.raises(ConllFormatError) as error:
        next(documents)
    # part 003's '#begin document' (now line 102) comes inside the still open part 001
    assert "broken.gold_conll:102: " in str(error.value)
    assert "inside document" in str(error.value)


# ------------------------------------------------------------------------------- LitBank


@pytest.mark.external_data
def test_litbank_document_with_empty_coreference_column():
    path = require_external_data("coref", "litbank", "1023_bleak_house_brat.conll")
    [document] = read_conll_documents(path)

    assert document.document_id == ("1023_bleak_house_brat", "0")
    assert document.genre is None
    assert document.sentences[0] == ["CHAPTER", "I", "In", "Chancery", "London", "."]
    assert document.speakers[0] == ["_"] * 6
    # counted independently with awk on the tab-separated file: 2,269 token lines, 60 blank
    # lines (sentence ends), 256 '(' in column 13 (mentions), 136 distinct cluster ids
    assert document.num_words == 2269
    assert len(document.sentences) == 60
    assert sum(len(cluster) for cluster in document.clusters) == 256
    assert len(document.clusters) == 136
    assert document.clusters[0] == [(3, 3), (1816, 1816), (2012, 2012)]
    assert {document.words[i] for i in (3, 1816, 2012)} == {"Chancery"}
    assert document.clusters[1] == [(4, 4), (239, 245)]
    assert words_of(document, (239, 245)) == ["a", "great", "(", "and", "dirty", ")", "city"]
    assert document.clusters[document.cluster_ids.index("14")] == [(221, 245)]


@pytest.mark.external_data
def test_all_litbank_files_parse_and_round_trip_through_the_writer():
    folder = require_external_data("coref", "litbank")
    paths = sorted(glob.glob(str(folder / "*.conll")))
    assert len(paths) == 80
    for path in paths:
        [document] = read_conll_documents(path)
        assert document.clusters, path
    # writing a document with its own clusters and reading it back loses nothing
    [document] = read_conll_documents(paths[0])
    [again] = parse_conll_lines(io.StringIO(conll_text([document])), source="rewritten")
    assert again.sentences == document.sentences
    assert sorted_clusters(again.clusters) == sorted_clusters(document.clusters)


# ------------------------------------------------------------------------ own fixture


def test_fixture_with_parts_speakers_nested_and_singleton_mentions():
    documents = read_conll_documents(GOLD_FIXTURE)
    assert [d.document_id for d in documents] == [
        ("nw/test/00/test_0001", "000"),
        ("nw/test/00/test_0001", "001"),
        ("bc/test/00/test_0002", "000"),
    ]
    assert [d.genre for d in documents] == ["nw", "nw", "bc"]
    part0, part1, other = documents

    # sentence 1 has 13 columns (one predicate), sentence 2 has 12: allowed per sentence
    assert part0.sentences == [
        ["John", "said", "his", "sister", "likes", "him", "."],
        ["She", "lives", "in", "Paris", "."],
    ]
    assert part0.speakers == [["Alice"] * 7, ["Bob"] * 5]
    # "(2|(1)" on "his": the one-word mention of 1 and the start of "his sister" (2)
    assert part0.clusters == [[(0, 0), (2, 2), (5, 5)], [(2, 3), (7, 7)], [(10, 10)]]
    assert part0.cluster_ids == ["1", "2", "3"]

    # "[John Smith , [the chief]]" both of cluster 12: "12)|12)" closes the inner one first
    assert part1.speakers == [["Carol"] * 7, ["Dave"] * 5]
    assert part1.clusters == [[(3, 4), (0, 4), (7, 7)], [(9, 10)]]
    assert part1.cluster_ids == ["12", "5"]
    assert other.clusters == [[(0, 0), (3, 3)]]
    assert other.speakers == [["Speaker#1"] * 3] * 2


def test_tab_separated_response_fixture_with_empty_last_column():
    documents = read_conll_documents(RESPONSE_FIXTURE)
    assert [d.document_id for d in documents] == [
        ("nw/test/00/test_0001", "001"),
        ("nw/test/00/test_0001", "000"),
        ("nw/test/00/not_in_key", "000"),
    ]
    part1, part0, _ = documents
    # "(0|(0" then "0)" one word later: the later opening closes first -> (0, 1), then (0, 4)
    assert part1.clusters == [[(0, 1), (0, 4), (7, 7)], [(9, 10)]]
    # "(1|(2)": cluster 2's one-word mention is read before cluster 1 opens
    assert part0.clusters == [[(0, 0), (5, 5)], [(2, 2)], [(2, 3), (7, 7)], [(9, 10)]]
    assert part0.words == read_conll_documents(GOLD_FIXTURE)[0].words


def test_split_columns_on_any_whitespace():
    # a trailing tab adds no column: the last column is the last non-empty field
    assert split_columns("a\tb\t") == ["a", "b"]
    assert split_columns("a   b  c ") == ["a", "b", "c"]
    assert split_columns("a b (1)  \t ") == ["a", "b", "(1)"]


# ---------------------------------------------------------------------------- errors

HEADER = "#begin document (nw/x/00/x_0000); part 000\n"


def token(index, word, coref="-", columns=12):
    extra = ["*"] * (columns - 12)
    return (
        " ".join(
            ["nw/x/00/x_0000", "0", str(index), word, "NN", "*", "-", "-", "-", "Speaker#1", "*"] + extra + [coref]
        )
        + "\n"
    )


MALFORMED = {
    # name: (file text, line number in the message, phrase in the message)
    "closing_never_opened": (
        HEADER + token(0, "a", "(1)") + token(1, "b", "2)") + "#end document\n",
        3,
        "closes a mention of cluster 2 that was never opened",
    ),
    "left_open_at_end": (
        HEADER + token(0, "a", "(1") + token(1, "b") + "\n#end document\n",
        5,
        "cluster 1 opened on line 2 is still open",
    ),
    "one_column": (
        HEADER + token(0, "a") + "(1)\n#end document\n",
        3,
        "expected at least 2 columns (the document id, then coreference in the last), found 1",
    ),
    "missing_end_document": (HEADER + token(0, "a") + token(1, "b") + "\n", 4, "missing '#end document'"),
    "begin_inside_open_document": (
        HEADER + token(0, "a") + "\n" + HEADER + token(0, "b") + "#end document\n",
        4,
        "'#begin document' inside document 'nw/x/00/x_0000' begun on line 1",
    ),
    "token_outside_document": (token(0, "a") + HEADER + "#end document\n", 1, "token line outside a document"),
    "end_without_begin": (
        HEADER + token(0, "a") + "#end document\n#end document\n",
        4,
        "'#end document' without a matching '#begin document'",
    ),
    "hash_line_inside_document": (
        HEADER + token(0, "a") + "# sent_id = 2\n#end document\n",
        3,
        "unexpected '#' line inside document",
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_files_raise_errors_naming_file_and_line(tmp_path, name):
    text, line_number, phrase = MALFORMED[name]
    path = tmp_path / f"{name}.gold_conll"
    path.write_text(text)
    with pytest.raises(ConllFormatError) as error:
        read_conll_documents(path)
    message = str(error.value)
    assert message.startswith(f"{path}:{line_number}: "), message
    assert phrase in message
    assert "\n" not in message
    assert error.value.line_number == line_number
    assert isinstance(error.value, UserInputError)
    assert str(pickle.loads(pickle.dumps(error.value))) == message


def test_invalid_utf8_names_file_line_and_byte_offset(tmp_path):
    path = tmp_path / "latin1.gold_conll"
    first_lines = (HEADER + token(0, "a")).encode("utf-8")
    path.write_bytes(first_lines + token(1, "caf\xe9").encode("latin-1") + b"#end document\n")
    with pytest.raises(InvalidEncodingError) as error:
        read_conll_documents(path)
    offset = len(first_lines) + len("nw/x/00/x_0000 0 1 caf")
    assert str(error.value) == (
        f"{path}:3: invalid UTF-8 byte(s) b'\\xe9' at byte offset {offset}; convert the file to UTF-8"
    )


@pytest.mark.parametrize(
    "cell, singles, opens, closes, ignored",
    [
        ("-", [], [], [], ""),
        ("_", [], [], [], ""),
        ("(12)", ["12"], [], [], ""),
        ("(1|(2)", ["2"], ["1"], [], ""),
        ("1)|(4)", ["4"], [], ["1"], ""),
        # several brackets on one token without '|'
        ("(1(1", [], ["1", "1"], [], ""),
        ("1)1)", [], [], ["1", "1"], ""),
        ("(2)(3", ["2"], ["3"], [], ""),
        ("7)(8)", ["8"], [], ["7"], ""),
        ("(1(2", [], ["1", "2"], [], ""),
        # removing "(2)" joins "(1" and "3)" into "(13)", which the reference then reads too
        ("(1(2)3)", ["2", "13"], [], [], ""),
        # a split antecedent is dropped
        ("(3+1)|(4)", ["4"], [], [], ""),
        # other text is no mention (reported by the reader)
        ("*", [], [], [], "*"),
        ("(x", [], [], [], "(x"),
        ("B-PER", [], [], [], "B-PER"),
    ],
)
def test_coreference_cells_are_read_as_the_reference_reads_them(cell, singles, opens, closes, ignored):
    assert parse_coreference_cell(cell) == (singles, opens, closes, ignored)


def test_other_text_in_the_last_column_is_no_mention_with_one_warning(caplog):
    text = HEADER + token(0, "a", "*") + token(1, "b", "(1)") + token(2, "c", "(x") + "#end document\n"
    with caplog.at_level(logging.WARNING, logger="spanbert_lib.coref.dataset_readers.conll_format"):
        [document] = parse_conll_lines(io.StringIO(text), source="odd.conll")
    assert document.clusters == [[(1, 1)]]
    [record] = caplog.records
    assert record.getMessage().startswith(
        "odd.conll:2: 2 coreference cell(s) hold text that is no mention bracket, e.g. '*'"
    )


def test_lines_of_any_column_count_and_whitespace():
    # the reference scorer's own layouts: 5 tab-separated columns, a header without a part and
    # with a trailing space, a trailing tab, lines of a sentence with different column counts
    text = (
        "#begin document (LuoTestCase); \n"
        "test1\t0\t0\ta1\t(0\ntest1\t0\t1\ta2\t0)\t\ntest1 0 2 junk * * -  \n"
        " \t \n"
        "test2\t0\t0\tc\t(1)\ntest2\t0\t1\td\t(0)\n#end document \n"
    )
    [document] = parse_conll_lines(io.StringIO(text))
    assert document.document_id == ("LuoTestCase", "")
    assert document.sentences == [["a1", "a2", "junk"], ["c", "d"]]
    assert document.speakers == [["-"] * 3, ["-"] * 2]
    assert document.clusters == [[(0, 1), (4, 4)], [(3, 3)]]
    assert document.token_line_numbers == [2, 3, 4, 6, 7]
    assert document.has_words


def test_windows_line_ends_and_a_byte_order_mark(tmp_path):
    text = HEADER + token(0, "a", "(1") + token(1, "b", "1)") + "\n#end document\n"
    path = tmp_path / "windows.conll"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    [document] = read_conll_documents(path)
    assert document.words == ["a", "b"]
    assert document.clusters == [[(0, 1)]]


def test_document_id_and_coreference_only():
    text = "#begin document (nw/x); part 000\nnw/x -\nnw/x (1\nnw/x 1)\n\nnw/x (1)\n#end document\n"
    [document] = parse_conll_lines(io.StringIO(text))
    assert document.clusters == [[(1, 2), (3, 3)]]
    assert document.num_words == 4
    assert not document.has_words
    assert document.sentences == [["", "", ""], [""]]
    # readers that need words ask for five columns
    with pytest.raises(
        ConllFormatError,
        match=r"<string>:2: expected at least 5 columns \(the "
        r"word in column 4, coreference in the last\), "
        r"found 2",
    ):
        list(parse_conll_lines(io.StringIO(text), min_columns=MIN_COLUMNS_WITH_WORDS))
    with pytest.raises(ValueError, match="min_columns must be at least 2"):
        list(parse_conll_lines(io.StringIO(text), min_columns=1))


def test_well_formed_version_of_the_error_cases_parses():
    text = HEADER + token(0, "a", "(1") + token(1, "b", "1)|(2)") + "\n#end document\n"
    [document] = parse_conll_lines(io.StringIO(text))
    assert document.clusters == [[(0, 1)], [(1, 1)]]


def test_writer_keeps_every_column_of_the_reference_layouts():
    text = (
        "#begin document (LuoTestCase); \n"
        "t\t0\t0\ta1\t(0\nt\t0\t1\ta2\t0)\t\nt 0 2 junk -  \n"
        "t\t0\t3\tx\t_\t\n#end document\n"
    )
    [document] = parse_conll_lines(io.StringIO(text))
    assert document.clusters == [[(0, 1)]]
    written = format_conll_document(document, [[(2, 3)]]).splitlines()
    # a stray tab after a cell stays; LitBank's empty last column (after '_') gets the cell
    assert written[1:5] == ["t\t0\t0\ta1\t-", "t\t0\t1\ta2\t-\t", "t 0 2 junk (0  ", "t\t0\t3\tx\t_\t0)"]
    [again] = parse_conll_lines(io.StringIO("\n".join(written)))
    assert again.clusters == [[(2, 3)]]


# ---------------------------------------------------------------------------- writing


def test_coreference_cells_for_nested_and_one_word_mentions():
    clusters = [[(0, 4), (3, 4), (7, 7)], [(9, 10)], [(3, 10)]]
    cells = coreference_cells(12, clusters)
    assert cells == ["(0", "-", "-", "(2|(0", "0)|0)", "-", "-", "(0)", "-", "(1", "1)|2)", "-"]
    # the cells read back to the same mentions
    text = HEADER + "".join(token(i, "w", cell) for i, cell in enumerate(cells))
    [document] = parse_conll_lines(io.StringIO(text + "#end document\n"))
    assert sorted_clusters(document.clusters) == sorted_clusters(clusters)


def test_writer_rejects_crossing_mentions_of_one_cluster_and_bad_spans():
    with pytest.raises(ValueError, match="cross each other"):
        coreference_cells(6, [[(0, 3), (2, 5)]])
    with pytest.raises(ValueError, match="cross each other"):
        coreference_cells(6, [[(0, 3), (3, 5)]])  # "(0|0)" on word 3 would read as (3, 3)
    with pytest.raises(ValueError, match="outside the document"):
        coreference_cells(6, [[(4, 6)]])
    with pytest.raises(ValueError, match="outside the document"):
        coreference_cells(6, [[(3, 2)]])


def test_writer_replaces_only_the_coreference_column(tmp_path):
    documents = read_conll_documents(GOLD_FIXTURE)
    predicted = [[[(0, 0), (5, 5), (7, 7)]], [], [[(0, 0)], [(3, 3)]]]
    out = tmp_path / "predicted.conll"
    write_conll_documents(out, documents, predicted)

    rewritten = read_conll_documents(out)
    assert [d.document_id for d in rewritten] == [d.document_id for d in documents]
    assert [d.first_line for d in rewritten] == [d.first_line for d in documents]
    for original, new, clusters in zip(documents, rewritten, predicted):
        assert new.sentences == original.sentences
        assert new.speakers == original.speakers
        assert new.clusters == clusters
        for old_lines, new_lines in zip(original.raw_lines, new.raw_lines):
            for old_line, new_line in zip(old_lines, new_lines):
                assert split_columns(old_line)[:-1] == split_columns(new_line)[:-1]
    assert rewritten[1].raw_lines[0][0].split()[-1] == "-"


def test_writer_round_trips_gold_and_accepts_clusters_by_document_id():
    documents = read_conll_documents(GOLD_FIXTURE) + read_conll_documents(RESPONSE_FIXTURE)
    again = list(parse_conll_lines(io.StringIO(conll_text(documents)), source="rewritten"))
    for original, new in zip(documents, again):
        assert sorted_clusters(new.clusters) == sorted_clusters(original.clusters)
        assert new.sentences == original.sentences

    by_id = {d.document_id: [[(0, 0)]] for d in documents[:3]}
    text = conll_text(documents[:3], by_id)
    assert [d.clusters for d in parse_conll_lines(io.StringIO(text))] == [[[(0, 0)]]] * 3
    with pytest.raises(KeyError, match="not_in_key"):
        conll_text(documents, by_id)
    with pytest.raises(ValueError, match="clusters for 1 documents but 6"):
        conll_text(documents, [[]])


def test_writer_for_a_document_built_in_memory():
    document = ConllDocument(
        doc_key="wb/a/00/a_0001",
        part="002",
        sentences=[["Mary", "smiled", "."], ["She", "left", "."]],
        speakers=[["M"] * 3, ["N"] * 3],
        genre="wb",
        clusters=[[(0, 0), (3, 3)]],
    )
    text = format_conll_document(document)
    lines = text.splitlines()
    assert lines[0] == "#begin document (wb/a/00/a_0001); part 002"
    assert lines[1].split("\t") == ["wb/a/00/a_0001", "2", "0", "Mary", "-", "-", "-", "-", "-", "M", "*", "(0)"]
    assert lines[-1] == "#end document"
    [again] = parse_conll_lines(io.StringIO(text))
    assert again.document_id == ("wb/a/00/a_0001", "002")
    assert again.speakers == document.speakers
    assert again.clusters == document.clusters
