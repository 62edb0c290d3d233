"""Retrieval quality and speed on a real corpus: Cowork's pipeline against AnythingLLM's default, in one run.

    uv run python bench/retrieval.py [--pages N] [--questions N] [--sizes 10000,100000] [--no-cache]

Corpus: the Python 3.11 documentation as Debian's `python3.11-doc` installs it (HTML nobody here wrote; the test
script installs the package). Its generated index pages (genindex*, py-modindex, search) are left out of both
pipelines. Questions: `bench/retrieval_questions.json`, paraphrased the way a user who does not know the module names
asks, each with the page(s) that answer it.

- anchor: AnythingLLM's default — the page as plain text, 1,000-character chunks with 20 characters of overlap
  (recursive splitting at paragraphs, lines, then words), all-MiniLM-L6-v2, cosine top-k.
- cowork: `cowork.retrieval` as the server runs it — structure-aware chunks with the title and heading path
  embedded with them, BM25 (FTS5) fused with exact cosine by reciprocal rank, in a real SQLite file. Also its keyword
  and vector halves alone.

Both embed with Cowork's numpy all-MiniLM-L6-v2 (tests/embeddings proves it equal to sentence-transformers), so the
comparison is of pipelines, not models. Pages are ranked by their best chunk among the top 60; printed: hit@1, hit@5
and MRR@10 per pipeline. Embeddings are cached under ~/.cache/cowork-bench (keyed by the text's hash) so a rerun
costs seconds; `--no-cache` embeds everything again.

Then speed: ingestion throughput (`RetrievalIndex.index_file` on pages, against the raw encoder on the same chunk
texts: the ratio raw/ingest, target ≥ 0.8), and search latency at 10k and 100k chunks (the hybrid search Cowork
runs, and its exact vector half, against a plain numpy brute force over the same matrix).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from cowork.embeddings import LocalEmbedder, Vectors
from cowork.retrieval import RetrievalIndex
from cowork.retrieval._chunking import chunk_text, embedding_text
from cowork.store import Database
from cowork.store.repos import retrieval as repo

HERE = Path(__file__).parent
QUESTIONS = HERE / "retrieval_questions.json"
SKIP = ("genindex", "py-modindex", "search.html")
CACHE = Path.home() / ".cache" / "cowork-bench" / "embeddings"


class CachedEmbedder:
    """The local embedder with a disk cache by text hash (so reruns do not embed the corpus again)."""

    def __init__(self, use_cache: bool) -> None:
        self.inner = LocalEmbedder()
        self.id = self.inner.id
        self.batch_size = self.inner.batch_size
        self.use_cache = use_cache
        self.embedded = 0
        if use_cache:
            CACHE.mkdir(parents=True, exist_ok=True)

    async def dimension(self) -> int:
        return 384

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return self.embed_blocking(texts)

    def embed_blocking(self, texts: Sequence[str]) -> Vectors:
        if not self.use_cache:
            self.embedded += len(texts)
            return self.inner.embed_blocking(texts)
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        out = np.zeros((len(texts), 384), dtype=np.float32)
        missing = []
        for i, key in enumerate(keys):
            file = CACHE / key[:2] / f"{key}.npy"
            if file.exists():
                out[i] = np.load(file)
            else:
                missing.append(i)
        if missing:
            vectors = self.inner.embed_blocking([texts[i] for i in missing])
            self.embedded += len(missing)
            for row, i in enumerate(missing):
                file = CACHE / keys[i][:2] / f"{keys[i]}.npy"
                file.parent.mkdir(exist_ok=True)
                np.save(file, vectors[row])
                out[i] = vectors[row]
        return out


def progress(label: str, done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    print(f"\r  {label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)
    if done == total:
        print(file=sys.stderr)


def recursive_split(text: str, size: int = 1000, overlap: int = 20) -> list[str]:
    """LangChain's RecursiveCharacterTextSplitter as AnythingLLM configures it (1,000 / 20)."""

    def split(piece: str, separators: Sequence[str]) -> list[str]:
        if len(piece) <= size:
            return [piece]
        sep, rest = separators[0], separators[1:]
        parts = piece.split(sep) if sep else list(piece)
        out: list[str] = []
        current = ""
        for part in parts:
            if len(part) > size and rest:
                if current:
                    out.append(current)
                    current = ""
                out.extend(split(part, rest))
                continue
            candidate = f"{current}{sep}{part}" if current else part
            if len(candidate) > size and current:
                out.append(current)
                current = (current[-overlap:] + sep + part) if overlap else part
            else:
                current = candidate
        if current:
            out.append(current)
        return out

    return [c.strip() for c in split(text, ["\n\n", "\n", " ", ""]) if c.strip()]


def plain_text(path: Path) -> str:
    import trafilatura

    return trafilatura.extract(path.read_text(errors="replace"), output_format="txt", favor_recall=True) or ""


def ranks_to_metrics(rankings: list[list[str]], golds: list[list[str]]) -> tuple[float, float, float]:
    hit1 = hit5 = mrr = 0.0
    for ranking, gold in zip(rankings, golds, strict=True):
        positions = [i for i, page in enumerate(ranking[:10]) if page in gold]
        if positions:
            first = positions[0]
            hit1 += first == 0
            hit5 += first < 5
            mrr += 1.0 / (first + 1)
    n = len(golds)
    return hit1 / n, hit5 / n, mrr / n


def pages_in_order(uris: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for uri in uris:
        if uri not in seen:
            seen.append(uri)
    return seen


def anchor_rankings(pages: list[Path], root: Path, questions: list[str], embedder: CachedEmbedder) -> list[list[str]]:
    texts: list[str] = []
    owners: list[str] = []
    for done, page in enumerate(pages, 1):
        for chunk in recursive_split(plain_text(page)):
            texts.append(chunk)
            owners.append(page.relative_to(root).as_posix())
        progress("anchor: chunk", done, len(pages))
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    step = 256
    for start in range(0, len(texts), step):
        vectors[start : start + step] = embedder.embed_blocking(texts[start : start + step])
        progress("anchor: embed", min(start + step, len(texts)), len(texts))
    query_vectors = embedder.embed_blocking(questions)
    out = []
    for q in query_vectors:
        scores = vectors @ q
        top = np.argsort(-scores)[:60]
        out.append(pages_in_order([owners[i] for i in top]))
    print(f"  anchor: {len(texts)} chunks", file=sys.stderr)
    return out


def cowork_index(pages: list[Path], root: Path, db: Database, embedder: CachedEmbedder) -> RetrievalIndex:
    index = RetrievalIndex(db, embedder)
    for done, page in enumerate(pages, 1):
        index.index_file(page, kind="documents", scope="bench", uri=page.relative_to(root).as_posix())
        progress("cowork: index", done, len(pages))
    return index


def cowork_rankings(index: RetrievalIndex, questions: list[str], mode: str) -> list[list[str]]:
    return [
        pages_in_order([hit.uri for hit in index.search(q, kind="documents", scope="bench", limit=60, mode=mode)])  # type: ignore[arg-type]
        for q in questions
    ]


def timed(fn: Callable[[], object], runs: int) -> float:
    """Median milliseconds of `runs` calls."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def ingestion_ratio(pages: list[Path], root: Path) -> None:
    """Ingestion (convert, chunk, embed, store) against the raw encoder on the same chunk texts, no cache."""
    embedder = CachedEmbedder(use_cache=False)
    embedder.embed_blocking(["warm up"])
    texts: list[str] = []
    from cowork.retrieval._convert import convert_file

    for page in pages:
        converted = convert_file(page)
        texts += [embedding_text(converted.title, chunk) for chunk in chunk_text(converted.text)]
    with tempfile.TemporaryDirectory() as folder:
        db = Database.sqlite(Path(folder) / "ingest.db")
        db.migrate()
        index = RetrievalIndex(db, embedder)
        start = time.perf_counter()
        for page in pages:
            index.index_file(page, kind="documents", scope="ingest", uri=page.name)
        ingest = time.perf_counter() - start
        db.close()
    start = time.perf_counter()
    for s in range(0, len(texts), 32):
        embedder.inner.embed_blocking(texts[s : s + 32])
    raw = time.perf_counter() - start
    print(
        f"ingestion: {len(pages)} pages, {len(texts)} chunks: {len(texts) / ingest:.1f} chunks/s "
        f"(raw encoder {len(texts) / raw:.1f} chunks/s); ratio raw/ingest time: {raw / ingest:.2f} (target ≥ 0.8)"
    )


def _fill(db: Database, vectors: np.ndarray, sample_texts: list[str], embedder_id: str) -> None:
    """`len(vectors)` chunks in sources of 100, written 10,000 at a time."""
    size = len(vectors)
    per_source = 100

    def write(conn, start: int, stop: int) -> None:  # type: ignore[no-untyped-def]
        for s in range(start, stop, per_source):
            chunks = [
                repo.NewChunk(i - s, "", sample_texts[i % len(sample_texts)], vectors[i].tobytes())
                for i in range(s, min(s + per_source, stop))
            ]
            repo.put_source(
                conn, kind="documents", scope="latency", uri=f"doc{s}", title=f"Document {s}", content_hash=str(s),
                size=0, mtime_ns=0, embedder=embedder_id, new_chunks=chunks,
            )  # fmt: skip

    for start in range(0, size, 10_000):
        stop = min(start + 10_000, size)
        db.write_sync(functools.partial(write, start=start, stop=stop))


def latency_at(size: int, sample_texts: list[str], runs: int, embedder: LocalEmbedder) -> None:
    query = "copy a whole folder with everything inside it"
    query_vector = embedder.embed_blocking([query])[0]
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as folder:
        db = Database.sqlite(Path(folder) / "latency.db")
        db.migrate()
        _fill(db, vectors, sample_texts, embedder.id)
        index = RetrievalIndex(db, embedder)
        index.vector_ranking(query_vector, "documents", "latency", 10)  # load the matrix once
        matrix = index._matrix("documents", "latency").vectors
        brute = timed(lambda: np.argsort(-(matrix @ query_vector))[:10], runs)
        vector = timed(lambda: index.vector_ranking(query_vector, "documents", "latency", 60), runs)
        hybrid = timed(lambda: index.search(query, kind="documents", scope="latency", limit=8), runs)
        db.close()
    print(
        f"search at {size} chunks: numpy brute force {brute:.1f} ms; cowork exact vector {vector:.1f} ms "
        f"(ratio {vector / brute:.2f}); hybrid search incl. query embedding {hybrid:.1f} ms "
        f"(ratio {hybrid / brute:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=0, help="use only the gold pages plus this many others (0: all)")
    parser.add_argument("--questions", type=int, default=0, help="use only the first N questions (0: all)")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--ingest-pages", type=int, default=30)
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args()

    spec = json.loads(QUESTIONS.read_text())
    root = Path(spec["root"])
    if not root.is_dir():
        sys.exit(f"{root} is missing: install Debian's python3.11-doc (the test script does)")
    items = spec["questions"][: args.questions or None]
    questions = [item["q"] for item in items]
    golds = [item["gold"] for item in items]
    pages = sorted(p for p in root.rglob("*.html") if not any(p.name.startswith(s) for s in SKIP))
    if args.pages:
        gold_pages = {g for gold in golds for g in gold}
        chosen = [p for p in pages if p.relative_to(root).as_posix() in gold_pages]
        others = [p for p in pages if p.relative_to(root).as_posix() not in gold_pages]
        pages = sorted(chosen + others[: args.pages])
    print(f"corpus: {len(pages)} pages of {root}; {len(questions)} questions")

    embedder = CachedEmbedder(use_cache=not args.no_cache)
    anchor = anchor_rankings(pages, root, questions, embedder)
    with tempfile.TemporaryDirectory() as folder:
        db = Database.sqlite(Path(folder) / "bench.db")
        db.migrate()
        index = cowork_index(pages, root, db, embedder)
        chunks = db.read_sync(lambda c: repo.count_chunks(c, "documents", "bench"))
        results = {
            "anchor (AnythingLLM default)": anchor,
            "cowork hybrid": cowork_rankings(index, questions, "hybrid"),
            "cowork vector only": cowork_rankings(index, questions, "vector"),
            "cowork keyword only (BM25)": cowork_rankings(index, questions, "keyword"),
        }
        db.close()
    print(f"cowork: {chunks} chunks; embedded this run: {embedder.embedded} texts")
    figures = {}
    for name, rankings in results.items():
        hit1, hit5, mrr = ranks_to_metrics(rankings, golds)
        figures[name] = (hit1, hit5, mrr)
        print(f"{name:30s} hit@1 {hit1:.3f}  hit@5 {hit5:.3f}  MRR@10 {mrr:.3f}")
    a = figures["anchor (AnythingLLM default)"]
    c = figures["cowork hybrid"]
    print(f"ratio cowork/anchor: hit@1 {c[0] / max(a[0], 1e-9):.2f}, hit@5 {c[1] / max(a[1], 1e-9):.2f}, "
          f"MRR@10 {c[2] / max(a[2], 1e-9):.2f}")  # fmt: skip

    ingestion_ratio(pages[: args.ingest_pages], root)
    sample = [p.read_text(errors="replace")[:900] for p in pages[:50]]
    local = LocalEmbedder()
    for size in [int(s) for s in args.sizes.split(",") if s]:
        latency_at(size, sample, args.runs, local)


if __name__ == "__main__":
    main()
