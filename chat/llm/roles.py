"""What a sentence of an abstract does: state the paper's contribution, report a result, or set
the scene ("... remains a long-standing challenge"). Rules over the wording, microseconds each.

Answers prefer contributions and results: a user asking what is new, or how something works,
wants what the papers did, not the background every abstract opens with.
"""

from __future__ import annotations

import re

CONTRIBUTION, RESULT, BACKGROUND, OTHER = "contribution", "result", "background", "other"

_F = re.IGNORECASE
_CONTRIBUTION = re.compile(
    r"\b(?:we|this\s+(?:paper|work|study|article|report)|our\s+(?:work|paper|study|approach|"
    r"method|framework|model|system)|here\s*,?\s+we|in\s+this\s+(?:paper|work|study))\b"
    r"[^.;]{0,60}?\b(?:propos\w*|present\w*|introduc\w*|develop\w*|design\w*|describ\w*|"
    r"devis\w*|formulat\w*|build|built|construct\w*|creat\w*|releas\w*|offer\w*|contribut\w*|"
    r"establish\w*|tackl\w*|address\w*|investigat\w*|explor\w*|stud(?:y|ies)|examin\w*|"
    r"leverag\w*|extend\w*|adapt\w*|train\w*|curat\w*|collect\w*|call(?:ed)?|name[sd]?|dub\w*|"
    r"term(?:ed)?|focus\w*|aim\w*)\b",
    _F,
)
_RESULT = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat\w*|achiev\w*|attain\w*|improv\w*|reduc\w*|boost\w*|"
    r"exceed\w*|state[\s-]of[\s-]the[\s-]art|sota|significant(?:ly)?|substantial(?:ly)?|"
    r"(?:results|experiments|evaluations?|analys[ie]s)\s+(?:show|demonstrate|indicate|reveal|"
    r"suggest|confirm)\w*|we\s+(?:show|find|found|demonstrate|observe|prove|reveal|confirm)\w*|"
    r"shows?\s+that|demonstrat\w*\s+that|gains?\s+of|speed[\s-]?up|faster|fewer)\b"
    r"|\d+(?:\.\d+)?\s*(?:%|x\b|×|points?\b)",
    _F,
)
# Scene-setting in so many words: never a result, whatever numbers it carries.
_BACKGROUND = re.compile(
    r"\b(?:long[\s-]standing|remains?\s+(?:a\s+|an\s+)?(?:\w+\s+)?(?:challeng|open|difficult|"
    r"unclear|unexplored|underexplored|limited)\w*|ha(?:ve|s)\s+(?:recently\s+)?(?:attracted|"
    r"gained|received|drawn|become|emerged|(?:shown|achieved|demonstrated|made|witnessed)\s+"
    r"(?:great|remarkable|impressive|promising|significant|tremendous|substantial|notable|rapid|"
    r"considerable|unprecedented|exceptional))|"
    r"in\s+recent\s+years|recent(?:ly)?\s+(?:years|advances|progress|developments)|^recently\b|"
    r"there\s+(?:has|have)\s+been|(?:increasing|growing)\s+(?:number|interest|attention|body)|"
    r"is\s+(?:a|an)\s+(?:fundamental|key|crucial|important|critical|essential|challenging)|"
    r"plays?\s+(?:a|an)\s+\w+\s+role|widely\s+(?:used|adopted|studied)|(?:a|an)\s+(?:key|major|"
    r"fundamental|critical|central)\s+(?:challenge|problem|issue))\b",
    _F,
)
# Others' shortcomings: background unless the sentence also reports what this paper achieved
# ("outperforms existing methods" is a result).
_OTHERS = re.compile(
    r"\b(?:(?:existing|previous|prior|current|conventional|traditional)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:methods|approaches|works?|studies|techniques|models|systems)|suffers?\s+from|"
    r"struggles?\s+(?:with|to)|often\s+fails?\s+to|however|despite|nevertheless)\b",
    _F,
)


def role(sentence: str, position: int = 1) -> str:
    """CONTRIBUTION, RESULT, BACKGROUND or OTHER for one sentence of an abstract (`position` 0 is
    its first sentence after the title, which more often sets the scene)."""
    if _CONTRIBUTION.search(sentence) and not _BACKGROUND.match(sentence):
        return CONTRIBUTION
    if _RESULT.search(sentence) and not _BACKGROUND.search(sentence):
        return RESULT
    if _BACKGROUND.search(sentence) or _OTHERS.search(sentence) or position == 0:
        return BACKGROUND
    return OTHER


# How much each role adds to a sentence's score (on top of its meaning, a cosine in -1..1).
BONUS = {CONTRIBUTION: 0.15, RESULT: 0.1, OTHER: 0.0, BACKGROUND: -0.2}


def bonus(sentence: str, position: int = 1) -> float:
    return BONUS[role(sentence, position)]
