"""Window layout, max-context positions, character -> token spans and answer relocation, by hand."""

import numpy as np
import pytest

from spanbert_lib.qa.dataset_readers.examples import locate_answer
from spanbert_lib.qa.dataset_readers.windows import char_span_to_token_span, max_context_mask, window_starts


@pytest.mark.parametrize(
    "num_tokens, capacity, step, expected",
    [
        (5, 10, 3, [0]),  # fits in one window
        (10, 10, 3, [0]),  # exactly fits
        (11, 10, 3, [0, 3]),  # second window (3..10) reaches the end
        (20, 10, 4, [0, 4, 8, 12]),  # 12 + 10 >= 20 stops
        (20, 6, 10, [0, 6, 12, 18]),  # a step larger than a window is capped (no token skipped)
    ],
)
def test_window_starts(num_tokens, capacity, step, expected):
    assert window_starts(num_tokens, capacity, step) == expected
    # every token is in some window
    covered = set()
    for start in expected:
        covered.update(range(start, min(start + capacity, num_tokens)))
    assert covered == set(range(num_tokens))


def test_max_context_mask_follows_bert_rule():
    # 10 tokens, windows of 6 starting at 0 and 4: token t in window [s, s + l) scores
    # min(t - s, s + l - 1 - t) + 0.01 * l; both windows have length 6.
    mask = max_context_mask([0, 4], capacity=6, num_tokens=10)
    # token 4: window 0 -> min(4, 1) = 1; window 1 -> min(0, 5) = 0   => window 0
    # token 5: window 0 -> min(5, 0) = 0; window 1 -> min(1, 4) = 1   => window 1
    expected_window0 = [True, True, True, True, True, False]  # tokens 0-5
    expected_window1 = [False, True, True, True, True, True]  # tokens 4-9
    assert mask[0].tolist() == expected_window0
    assert mask[1].tolist() == expected_window1


def test_max_context_tie_goes_to_first_window_and_short_last_window():
    # windows [0, 4) and [2, 5) (last one shorter: length 3). token 2: window 0 min(2, 1) = 1 + 0.04,
    # window 1 min(0, 2) = 0 + 0.03 -> 0; token 3: window 0 min(3, 0) = 0.04, window 1 min(1, 1) = 1.03 -> 1
    mask = max_context_mask([0, 2], capacity=4, num_tokens=5)
    assert mask[0].tolist() == [True, True, True, False]
    assert mask[1].tolist() == [False, True, True, False]  # last position is past the window's end
    # equal scores: the first window wins. Windows [0, 5) and [2, 7): token 3 scores min(3, 1) = 1 in
    # window 0 and min(1, 3) = 1 in window 1 (same lengths)
    mask = max_context_mask([0, 2], capacity=5, num_tokens=7)
    assert mask[0].tolist() == [True, True, True, True, False]  # tokens 0-4
    assert mask[1].tolist() == [False, False, True, True, True]  # tokens 2-6


def test_char_span_to_token_span():
    # "The cat's hat."  tokens: The(0,3) cat(4,7) '(7,8) s(8,9) hat(10,13) .(13,14)
    offsets = np.array([[0, 3], [4, 7], [7, 8], [8, 9], [10, 13], [13, 14]])
    assert char_span_to_token_span(offsets, 4, 7) == (1, 1)
    assert char_span_to_token_span(offsets, 4, 9) == (1, 3)
    assert char_span_to_token_span(offsets, 3, 7) == (1, 1)  # leading space ignored
    assert char_span_to_token_span(offsets, 5, 6) == (1, 1)  # inside a token: the whole token
    assert char_span_to_token_span(offsets, 0, 14) == (0, 5)
    assert char_span_to_token_span(offsets, 9, 10) is None  # only whitespace
    assert char_span_to_token_span(offsets, 12, 14) == (4, 5)


def test_locate_answer():
    context = "a cat and a cat and a dog"
    assert locate_answer(context, "cat", 2) == (2, "exact")
    assert locate_answer(context, "cat", 10) == (12, "relocated")  # 12 is 2 away, 2 is 8 away
    assert locate_answer(context, "cat", 7) == (2, "relocated")  # tie 2 vs 12 (both 5 away): earlier
    assert locate_answer(context, "cat", 100) == (12, "relocated")
    assert locate_answer(context, "cat", None) == (2, "relocated")
    assert locate_answer(context, "cow", 2) == (None, "not_found")
    assert locate_answer(context, "  ", 1) == (None, "not_found")
    assert locate_answer(context, "dog", -3) == (22, "relocated")


def test_locate_answer_preferring_whole_words():
    context = "a heavyweight boxer fought eight rounds in 1973, not 97 times"
    # the approximate offset points at "eight" inside "heavyweight": moved to the whole word
    assert locate_answer(context, "eight", 8) == (8, "exact")
    assert locate_answer(context, "eight", 8, prefer_whole_words=True) == (27, "relocated")
    assert locate_answer(context, "97", 45, prefer_whole_words=True) == (53, "relocated")
    # no whole-word occurrence: the given one stays
    assert locate_answer(context, "eavy", 3, prefer_whole_words=True) == (3, "exact")
    assert locate_answer(context, "1973,", 43, prefer_whole_words=True) == (43, "exact")
