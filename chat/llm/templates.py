"""Every fixed phrase the extractive composer writes, in one place.

The composer quotes sources and adds nothing of its own except these lead-ins and labels: a test
(tests/chat/llm/test_shapes.py) removes every quoted sentence from an answer and checks that what
is left matches one of these templates, filled only with metadata (titles, dates, counts, the
names and ids the user typed). A new phrase goes here or the test fails.
"""

# The overview (and every answer before intents existed).
LEAD_IN = "From the retrieved papers:"
NO_SOURCES = (
    "No papers were retrieved for this question, so there is nothing to answer it from. "
    "Try other words or a wider time window."
)
NOT_ENOUGH = (
    "The retrieved papers are not enough to answer this question: none of them mentions {words}. "
    "Try other words or a wider time window."
)
PARTLY = "None of these papers mentions {words}, so they answer the question only in part."
# A question after a number ("How many GPUs…") whose quoted sentences state none.
NO_NUMBER = (
    "The passages found do not state the number asked for; the closest ones are quoted below."
)

# The question names a paper by what it introduced ("GPT-3") and the catalogue has none.
NAMED_ABSENT = (
    "No paper in the catalogue introduces {names}, and none of the papers found mentions it, "
    "so this question cannot be answered from the catalogue: quoting other papers would "
    "answer about them instead."
)

# ... and one that papers found mention without introducing it ("GPT-4"): their mentions only.
NAMED_ONLY_MENTIONED = (
    "No paper in the catalogue introduces {names}; the papers found only mention it:"
)

# Before an answer whose question had misspelt words (chat.retrieval.spelling).
SHOWING_RESULTS = "Showing results for “{question}”."

# One paper with what it says about the question (overview and named paper), then its quotes.
PAPER_LABEL = "**{title}** ({published}):"

# Lists: one line per paper, its contribution quoted and cited.
LIST_LEAD = "{count} papers, best match first:"
LIST_LEAD_NEWEST = "{count} papers, newest first:"
LIST_LEAD_ONE = "1 paper:"
LIST_LEAD_AUTHORS = "{count} {papers} by {authors} in the catalogue, newest first:"
LIST_LEAD_CATEGORIES = "{count} {papers} in {categories}, newest first:"
LIST_ITEM = "{rank}. **{title}** ({published}): {quote}"
LIST_ITEM_BARE = "{rank}. **{title}** ({published}) [{number}]"

# "Papers like <id>": the seed first, then its neighbours, each with the sentence nearest to it.
SEED_LEAD = "Papers similar to **{title}** ({published}, arXiv {arxiv_id}):"
SEED_MISSING = "arXiv {arxiv_id} is not in the catalogue; papers matching the question instead:"
SEED_MISSING_NOTHING = (
    "arXiv {arxiv_id} is not in the catalogue, and no other paper matched the question."
)

# A named paper: its contributions and results.
NAMED_LEAD = "What **{title}** ({published}) reports:"
# What is asked of a paper's record ("who wrote Adam?"), from the catalogue; then what it reports.
RECORD_AUTHORS = "**{title}** (arXiv {arxiv_id}) is by {authors} [{number}]."
RECORD_DATE = "**{title}** (arXiv {arxiv_id}) was first posted to arXiv {when} [{number}]."
RECORD_ORIGIN = "{name} was introduced by **{title}** ({published}, arXiv {arxiv_id}), by {authors} [{number}]."
RECORD_CONTEXT = "What it reports:"

# Compare A vs B.
COMPARE_SIDE = "**On {side}:**"
COMPARE_SIDE_MISSING = "**On {side}:** none of the retrieved papers mentions it."
COMPARE_SIDE_ONLY_BESIDE = (
    "**On {side}:** the retrieved papers name it only beside {other} (below)."
)
COMPARE_DIFFERENCE = "**Where the papers set them side by side:**"

# Timeline: papers grouped by period, oldest first.
TIMELINE_LEAD = "The retrieved papers by period, oldest first:"
TIMELINE_PERIOD = "**{period}** ({count} {papers}):"
TIMELINE_ITEM = "- **{title}** ({published}): {quote}"
TIMELINE_ITEM_BARE = "- **{title}** ({published}) [{number}]"

# Freshness: the question wants the newest work and the catalogue's newest is not that new.
FRESHNESS = "The newest paper on this in the catalogue is from {month} ({age} before today)."
NO_CITATION_COUNTS = (
    "The catalogue has no citation counts (arXiv publishes none), so it cannot say which paper is "
    "cited most; here is what each paper reports."
)

# Follow-ups on the previous answer's papers (chat.pipeline.previous). "Which of these…": the
# papers whose own text says so, each with the sentence that does and where it is.
SELECTION_LEAD = "Of the {total} papers of the previous answer, {count} say so in their own words:"
SELECTION_LEAD_ONE = "Of the {total} papers of the previous answer, one says so in its own words:"
SELECTION_ITEM = "{rank}. **{title}** ({published}, {where}): {quote}"
# Kept by meaning only: the abstract is close to the words but no sentence has them.
SELECTION_NEAR = "{rank}. **{title}** ({published}), close in meaning only: {quote}"
SELECTION_NEAR_LEAD = (
    "None of the {total} papers of the previous answer says so in words; {count} come close in "
    "meaning:"
)
SELECTION_OTHERS = "Not said in the text of the other {count}: {titles}."
SELECTION_UNREAD = "Only the abstract of {titles} was read (no full text)."
SELECTION_ABSTRACTS_ONLY = "Judged from their abstracts: no full text of these papers was read."
WHERE_ABSTRACT = "abstract"
# "which of them are from before 2021?": the papers in that window.
WINDOW_LEAD = "Of the {total} papers of the previous answer, {count} are in that window:"
WINDOW_LEAD_ONE = "Of the {total} papers of the previous answer, one is in that window:"
# "compare them", "compare the first two": each paper's own contributions and results.
SIDE_BY_SIDE_LEAD = "The {count} papers side by side, each in its own words:"

# Bullets of quotes under a label.
QUOTE_ITEM = "- {quote}"

ALL = {
    name: value
    for name, value in dict(globals()).items()
    if name.isupper() and isinstance(value, str)
}
