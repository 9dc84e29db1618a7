"""
Deterministic tiny BERT-family model directories for tests and fixture configs.

``build_tiny_bert(directory)`` writes ``config.json``, ``model.safetensors`` and the files of
a fast WordPiece tokenizer (``tokenizer.json``, ``vocab.txt``, ``tokenizer_config.json``,
``special_tokens_map.json``), all of which ``transformers.AutoModel`` / ``AutoTokenizer``
load offline. Same arguments -> identical weights and vocabulary (fixed seed, vocabulary
trained on fixed text). The committed ``fixtures/tiny_bert`` is exactly
``python -m spanbert_lib.common.testing.tiny_models fixtures/tiny_bert``.
"""

import argparse
import os
from pathlib import Path
from typing import List, Optional, Sequence, Union

from spanbert_lib.common.wordpiece import wordpiece_tokenizer_from_vocab

# Vocabulary: every printable ASCII character, alone and as a continuation piece (so
# nothing ASCII maps to [UNK]), a few suffixes, and a few hundred common English words
# (so that ordinary sentences tokenise into sensible pieces).
_ASCII = [chr(c) for c in range(33, 127)]
_SUFFIXES = ["##s", "##ed", "##ing", "##ly", "##er", "##est", "##es", "##'s"]
_WORDS = """
the of and to a in is was that for it as with his he on be at by i this had not are but from or have an they
which one you were her all she there would their we him been has when who will more no if out so said what up
its about into than them can only other new some could time these two may then do first any my now such like
our over man me even most made after also did many before must through back years where much your way well down
should because each just those people how too little state good very make world still own see men work long get
here between both life being under never day same another know while last might us great old year off come since
against go came right used take three city town river street house school company news report story people woman
child family friend morning evening night week month today tomorrow yesterday north south east west market bridge
station garden kitchen window door table letter book paper music film game team player coach doctor teacher
student river lake mountain valley island coast harbour village road train ship boat car plane bus happy sad
good bad great terrible wonderful awful excellent poor lovely boring exciting quiet loud bright dark warm cold
love hate like enjoy dislike recommend avoid praise blame visit travel arrive leave open close begin end
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
September October November December London Paris Berlin Rome Madrid Boston Chicago Alice Bob Carol David Emma
Frank Grace Henry Isabel John Mary Peter Sarah Thomas
"""


def tiny_vocabulary() -> List[str]:
    words = _WORDS.split()
    return [*_ASCII, *(f"##{c}" for c in _ASCII), *_SUFFIXES, *words, *(w.lower() for w in words)]


def build_tiny_bert(
    output_dir: Union[str, os.PathLike],
    *,
    vocab: Optional[Sequence[str]] = None,
    hidden_size: int = 32,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 2,
    intermediate_size: int = 64,
    max_position_embeddings: int = 512,
    lowercase: bool = False,
    seed: int = 0,
) -> Path:
    """
    Writes a randomly initialised (seeded) ``BertModel`` and its tokenizer to ``output_dir``
    and returns the path. ``vocab`` defaults to :func:`tiny_vocabulary`.
    """
    import torch
    from transformers import BertConfig, BertModel

    output = Path(output_dir)
    tokenizer = wordpiece_tokenizer_from_vocab(
        tiny_vocabulary() if vocab is None else vocab,
        output,
        lowercase=lowercase,
        model_max_length=max_position_embeddings,
    )
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
    )
    generator_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = BertModel(config, add_pooling_layer=True)
    finally:
        torch.random.set_rng_state(generator_state)
    model.save_pretrained(str(output), safe_serialization=True)
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description="Write a deterministic tiny BERT model directory.")
    parser.add_argument("output_dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(build_tiny_bert(args.output_dir, seed=args.seed))


if __name__ == "__main__":
    main()
