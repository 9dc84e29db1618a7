"""
The LitBank nested-NER TSV format (``*_brat.tsv``): one token per line, tab-separated, the
word then one BIO tag per layer (4 layers, 5 in some files; lines end with a tab, so there is an
empty last field, which is ignored), blank lines between sentences, one document per file.
Layer 1 (column 2) is read first: where two layers give the same span different labels, its
label is kept. (In the released files column 2 is not always the outermost annotation - e.g.
``the earth`` in column 2 inside ``the face of the earth`` in column 3 - so "first layer" is
meant by column, not by nesting.)
"""

import os
from typing import Optional

from spanbert_lib.common.text_files import read_lines
from spanbert_lib.ner.dataset_readers.bio_tags import NerFormatError
from spanbert_lib.ner.dataset_readers.ner_document import DocumentBuilder, NerDocument


def read_litbank_document(path: str) -> Optional[NerDocument]:
    """
    The document of one LitBank TSV file. Raises :class:`NerFormatError` naming file and line for
    an empty word, a line without tags, a different number of layers than the file's first token
    line, or an invalid tag.

    # Parameters

    path : `str`
        The file.

    # Returns

    `Optional[NerDocument]`
        The document (id: the file name without ``.tsv``), or None if it has no token line.
    """
    name = os.path.basename(path)
    builder = DocumentBuilder(name[:-4] if name.endswith(".tsv") else name, path)
    num_layers: Optional[int] = None
    for line_number, line in read_lines(path):
        if not line.strip():
            builder.end_sentence()
            continue
        fields = line.split("\t")
        while fields and fields[-1] == "":
            fields.pop()
        if len(fields) < 2 or not fields[0].strip():
            raise NerFormatError(
                f"{path}:{line_number}: a LitBank token line needs a word and at least "
                f"one tag column (tab-separated), got {line!r}"
            )
        if num_layers is None:
            num_layers = len(fields) - 1
        elif len(fields) - 1 != num_layers:
            raise NerFormatError(
                f"{path}:{line_number}: {len(fields) - 1} tag columns where the file's "
                f"token lines have {num_layers}: {line!r}"
            )
        builder.add_token(fields[0], fields[1:], line_number)
    return builder.build()
