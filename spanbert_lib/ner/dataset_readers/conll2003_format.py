"""
The CoNLL-2003 NER format: one token per line, whitespace-separated columns ``word POS chunk
NER`` (any number >= 2 of columns, the same on every token line of a file; the NER tag is the
last), blank lines between sentences, ``-DOCSTART-`` lines between documents. Tags are IOB1 or
IOB2 (see :mod:`~spanbert_lib.ner.dataset_readers.bio_tags`).
"""

import os
from typing import Iterator, Optional

from spanbert_lib.common.text_files import read_lines
from spanbert_lib.ner.dataset_readers.bio_tags import NerFormatError
from spanbert_lib.ner.dataset_readers.ner_document import DocumentBuilder, NerDocument

DOCSTART = "-DOCSTART-"


def iter_conll2003_documents(path: str) -> Iterator[NerDocument]:
    """
    The documents of a CoNLL-2003 file. Documents without sentences are skipped. Raises
    :class:`NerFormatError` naming file and line for a token line with a different column count
    than the file's first, or an invalid tag.

    # Parameters

    path : `str`
        The file.

    # Returns

    `Iterator[NerDocument]`
        Its documents, with ids ``<file name>#<n>`` (n = 0, 1, ... in file order; a file without
        ``-DOCSTART-`` is one document).
    """
    name = os.path.basename(path)
    num_columns: Optional[int] = None
    builder = DocumentBuilder(f"{name}#0", path)
    num_documents = 0
    for line_number, line in read_lines(path):
        columns = line.split()
        if not columns:
            builder.end_sentence()
            continue
        if columns[0] == DOCSTART:
            document = builder.build()
            if document is not None:
                yield document
                num_documents += 1
            builder = DocumentBuilder(f"{name}#{num_documents}", path)
            continue
        if num_columns is None:
            if len(columns) < 2:
                raise NerFormatError(
                    f"{path}:{line_number}: a CoNLL-2003 token line needs at least a word "
                    f"and an NER tag column, got {line.rstrip()!r}"
                )
            num_columns = len(columns)
        elif len(columns) != num_columns:
            raise NerFormatError(
                f"{path}:{line_number}: {len(columns)} columns where the file's token "
                f"lines have {num_columns}: {line.rstrip()!r}"
            )
        builder.add_token(columns[0], (columns[-1],), line_number)
    document = builder.build()
    if document is not None:
        yield document
