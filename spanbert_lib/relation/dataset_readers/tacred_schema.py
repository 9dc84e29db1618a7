"""
The fixed inventories of TACRED (Zhang et al. 2017): entity types, relation labels, and the
mapping of the Penn Treebank escapes found in its ``token`` lists back to plain characters.
"""

from typing import Dict, Tuple

# The 17 entity types (Stanford NER types plus TACRED's fine-grained additions). Subjects are
# PERSON or ORGANIZATION in TACRED; the marker vocabulary covers every type for both roles.
TACRED_ENTITY_TYPES: Tuple[str, ...] = (
    "PERSON",
    "ORGANIZATION",
    "LOCATION",
    "DATE",
    "NUMBER",
    "MISC",
    "CITY",
    "COUNTRY",
    "STATE_OR_PROVINCE",
    "TITLE",
    "NATIONALITY",
    "RELIGION",
    "IDEOLOGY",
    "URL",
    "DURATION",
    "CRIMINAL_CHARGE",
    "CAUSE_OF_DEATH",
)

NO_RELATION = "no_relation"

# The 42 labels of TACRED: 41 relations and no_relation.
TACRED_RELATIONS: Tuple[str, ...] = (
    NO_RELATION,
    "org:alternate_names",
    "org:city_of_headquarters",
    "org:country_of_headquarters",
    "org:dissolved",
    "org:founded",
    "org:founded_by",
    "org:member_of",
    "org:members",
    "org:number_of_employees/members",
    "org:parents",
    "org:political/religious_affiliation",
    "org:shareholders",
    "org:stateorprovince_of_headquarters",
    "org:subsidiaries",
    "org:top_members/employees",
    "org:website",
    "per:age",
    "per:alternate_names",
    "per:cause_of_death",
    "per:charges",
    "per:children",
    "per:cities_of_residence",
    "per:city_of_birth",
    "per:city_of_death",
    "per:countries_of_residence",
    "per:country_of_birth",
    "per:country_of_death",
    "per:date_of_birth",
    "per:date_of_death",
    "per:employee_of",
    "per:origin",
    "per:other_family",
    "per:parents",
    "per:religion",
    "per:schools_attended",
    "per:siblings",
    "per:spouse",
    "per:stateorprovince_of_birth",
    "per:stateorprovince_of_death",
    "per:stateorprovinces_of_residence",
    "per:title",
)

# PTB escapes (matched case-insensitively) and quote conventions. ``` `` ``` and ``''`` are the
# PTB opening/closing double quotes, a lone backtick an opening single quote.
_PTB_BRACKETS: Dict[str, str] = {
    "-lrb-": "(",
    "-rrb-": ")",
    "-lsb-": "[",
    "-rsb-": "]",
    "-lcb-": "{",
    "-rcb-": "}",
}
_PTB_QUOTES: Dict[str, str] = {"``": '"', "''": '"', "`": "'"}


def convert_ptb_token(token: str) -> str:
    """``-LRB-`` -> ``(`` (and the other brackets), PTB quotes -> ``"`` / ``'``; anything else unchanged."""
    bracket = _PTB_BRACKETS.get(token.lower())
    if bracket is not None:
        return bracket
    return _PTB_QUOTES.get(token, token)
