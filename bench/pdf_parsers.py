"""Three PDF text extractors on the shared arXiv PDFs: speed, memory and fidelity.

Each parser runs in its own spawned process (so its peak memory is its own, C allocations
included: ru_maxrss after minus before the work), over the same pages. Fidelity probes, on each
parser's raw output (before our cleaning, so it is the library being judged):

- abstract 8-gram recall: share of the 8-word windows of the paper's abstract (metadata.jsonl,
  restored by hand) found in page 1's text, after the same light normalisation for every parser
  (lower case, line-end hyphens joined, other hyphens dropped). Interleaved columns, glued or
  split words and unexpanded ligatures all lower it. Reported apart for one- and two-column papers.
- ligatures: U+FB00..FB06 code points left in the text ("diﬃcult" is not "difficult" to search).
- line-end hyphens: how many the parser marks (PDFium: U+FFFE; others: "-" before a newline).
- ±: count, against the most any parser finds (an extractor that drops or mangles it finds fewer);
  "(cid:" escapes (pdfminer's unmapped glyphs).
- stamp litter: lines of one character (arXiv's vertical id stamp spelt letter by letter).
"""

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

PARSERS = ("pypdfium2", "pypdf", "pdfminer.six")
_LIGATURES = re.compile("[\ufb00-\ufb06]")
_LINE_END = re.compile(r"[-\ufffe]\s*\n\s*|\ufffe")


@dataclass
class ParserResult:
    parser: str
    version: str = ""
    pages: int = 0
    seconds: float = 0.0
    peak_mb: float = 0.0
    recall_one_column: float = 0.0
    recall_two_column: float = 0.0
    ligatures: int = 0
    line_end_hyphens: int = 0
    plus_minus: int = 0
    cid_escapes: int = 0
    one_char_lines: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0


def _extract(parser: str, path: Path, max_pages: int) -> list[str]:
    if parser == "pypdfium2":
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(path)
        try:
            return [
                document[i].get_textpage().get_text_range().replace("\r\n", "\n")
                for i in range(min(max_pages, len(document)))
            ]
        finally:
            document.close()
    if parser == "pypdf":
        import pypdf

        reader = pypdf.PdfReader(path)
        return [page.extract_text() or "" for page in reader.pages[:max_pages]]
    if parser == "pdfminer.six":
        from pdfminer.high_level import extract_text

        return [
            extract_text(path, page_numbers=[i])
            for i in range(max_pages)
            if i == 0 or _has_page(path, i)
        ]
    raise ValueError(parser)


def _has_page(path: Path, index: int) -> bool:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    try:
        return index < len(document)
    finally:
        document.close()


def _memory_kb(field: str) -> int:
    """VmRSS (now) or VmHWM (peak) of this process. Not ru_maxrss: Linux keeps that across
    exec, so a spawned child would report its parent's peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _version(parser: str) -> str:
    from importlib.metadata import version

    return version(parser)


def normalised_words(text: str) -> list[str]:
    text = _LINE_END.sub("", text).replace("-", "")
    return re.findall(r"\w+", text.lower())


def shingle_recall(reference: str, text: str, n: int = 8) -> float:
    ref = normalised_words(reference)
    grams = {tuple(ref[i : i + n]) for i in range(len(ref) - n + 1)}
    if not grams:
        return 0.0
    words = normalised_words(text)
    found = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    return len(grams & found) / len(grams)


def run_parser(parser: str, pdfs: list[dict], max_pages: int) -> ParserResult:
    """One parser over `pdfs` ({path, layout, abstract}); meant to run in a fresh process."""
    import gc

    result = ParserResult(parser=parser, version=_version(parser))
    # Peak memory counts from the bare interpreter: the library's import and its work.
    base = _memory_kb("VmRSS")
    _extract(parser, Path(pdfs[0]["path"]), 1)  # imports and first-use setup are not timed
    gc.collect()
    recalls = {"one-column": [], "two-column": []}
    started = time.perf_counter()
    texts = []
    for pdf in pdfs:
        try:
            pages = _extract(parser, Path(pdf["path"]), max_pages)
        except Exception as exc:  # a benchmark reports a parser's crash, it does not stop
            result.errors.append(f"{Path(pdf['path']).name}: {type(exc).__name__}: {exc}")
            continue
        result.pages += len(pages)
        texts.append((pdf, pages))
    result.seconds = time.perf_counter() - started
    result.peak_mb = (_memory_kb("VmHWM") - base) / 1024
    for pdf, pages in texts:
        whole = "\n".join(pages)
        if pages and pdf.get("abstract"):
            recalls.setdefault(pdf["layout"], []).append(shingle_recall(pdf["abstract"], pages[0]))
        result.ligatures += len(_LIGATURES.findall(whole))
        result.line_end_hyphens += whole.count("\ufffe") + len(re.findall(r"-\n", whole))
        result.plus_minus += whole.count("±")
        result.cid_escapes += whole.count("(cid:")
        result.one_char_lines += sum(1 for line in whole.split("\n") if len(line.strip()) == 1)
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    result.recall_one_column = mean(recalls.get("one-column", []))
    result.recall_two_column = mean(recalls.get("two-column", []))
    return result


def _child(parser: str, pdfs: list[dict], max_pages: int, queue) -> None:
    queue.put(asdict(run_parser(parser, pdfs, max_pages)))


def compare(pdfs: list[dict], max_pages: int, parsers=PARSERS) -> list[ParserResult]:
    """Each parser in its own spawned process, one after the other."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = []
    for parser in parsers:
        queue = context.Queue()
        process = context.Process(target=_child, args=(parser, pdfs, max_pages, queue))
        process.start()
        data = queue.get()
        process.join()
        results.append(ParserResult(**data))
    return results


def shared_pdfs(folder: Path, limit: int | None = None) -> list[dict]:
    """The shared PDFs with their layout (manifest.jsonl) and abstract (metadata.jsonl)."""
    manifest = {}
    for line in (folder / "manifest.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            manifest[record["arxiv_id"]] = record
    abstracts = {}
    for line in (folder / "metadata.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            abstracts[record["id"]] = record.get("abstract") or ""
    pdfs = []
    for arxiv_id, record in sorted(manifest.items()):
        path = folder / f"{arxiv_id}{record['version']}.pdf"
        if path.is_file():
            pdfs.append(
                {
                    "path": str(path),
                    "arxiv_id": arxiv_id,
                    "layout": record.get("layout", ""),
                    "pages": record.get("pages", 0),
                    "abstract": abstracts.get(arxiv_id, ""),
                }
            )
    return pdfs[:limit] if limit else pdfs


if __name__ == "__main__":
    import sys

    from bench import SHARED_DATA

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for r in compare(shared_pdfs(SHARED_DATA / "arxiv-pdf", count), 2):
        print(r)
