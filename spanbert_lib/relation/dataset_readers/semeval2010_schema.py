"""
The label inventory of SemEval-2010 Task 8 (Hendrickx et al. 2010): nine relation types, each in
two directions (``Cause-Effect(e1,e2)``: e1 is the cause; ``Cause-Effect(e2,e1)``: e2 is), plus
``Other`` - 19 labels in all.
"""

from typing import Optional, Tuple

OTHER = "Other"

SEMEVAL2010_RELATIONS: Tuple[str, ...] = (
    "Cause-Effect",
    "Component-Whole",
    "Content-Container",
    "Entity-Destination",
    "Entity-Origin",
    "Instrument-Agency",
    "Member-Collection",
    "Message-Topic",
    "Product-Producer",
)

DIRECTIONS: Tuple[str, str] = ("(e1,e2)", "(e2,e1)")

SEMEVAL2010_LABELS: Tuple[str, ...] = (OTHER,) + tuple(
    relation + direction for relation in SEMEVAL2010_RELATIONS for direction in DIRECTIONS
)


def split_label(label: str) -> Tuple[str, Optional[str]]:
    """
    ``"Cause-Effect(e2,e1)"`` -> ``("Cause-Effect", "(e2,e1)")``; ``"Other"`` -> ``("Other", None)``.
    Raises ``ValueError`` for anything that is not one of :data:`SEMEVAL2010_LABELS`.
    """
    if label == OTHER:
        return OTHER, None
    relation, direction = label[: -len(DIRECTIONS[0])], label[-len(DIRECTIONS[0]) :]
    if relation not in SEMEVAL2010_RELATIONS or direction not in DIRECTIONS:
        raise ValueError(
            f"unknown SemEval-2010 Task 8 label {label!r}: expected {OTHER!r} or one of the 9 "
            f"relations ({', '.join(SEMEVAL2010_RELATIONS)}) followed by (e1,e2) or (e2,e1)"
        )
    return relation, direction
