"""`python -m cowork.testing.mockllm`: run the mock LLM server in the foreground."""

from __future__ import annotations

import argparse
import sys

from ._ollama import MockOllamaModel, load_ollama_models
from ._script import Script, echo_script, load_script
from ._server import DEFAULT_MODELS, MockLLMServer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cowork.testing.mockllm",
        description=(
            "Serve scripted OpenAI (Chat Completions and Responses), Anthropic, Gemini and Ollama responses. "
            "Prints 'mockllm listening on URL' once ready."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--script", metavar="FILE", help='JSON list of responses, or {"responses": [...], "loop": true}'
    )
    source.add_argument("--echo", action="store_true", help='answer every request with "echo: <last user message>"')
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated names for /v1/models")
    parser.add_argument(
        "--ollama-models", metavar="FILE", help="JSON list of models for Ollama's /api/tags and /api/show"
    )
    parser.add_argument(
        "--api-key", action="append", dest="api_keys", metavar="KEY", help="accept only this key (repeatable)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted; exit code 2 for bad arguments, a bad script or a bad models file."""
    parser = _parser()
    args = parser.parse_args(argv)
    script: Script = echo_script
    ollama_models: list[MockOllamaModel] = []
    try:
        if not args.echo:
            script = load_script(args.script)
        if args.ollama_models:
            ollama_models = load_ollama_models(args.ollama_models)
    except ValueError as e:
        print(f"mockllm: error: {e}", file=sys.stderr, flush=True)
        return 2
    models = [name.strip() for name in args.models.split(",") if name.strip()]
    server = MockLLMServer(
        script,
        models=models,
        ollama_models=ollama_models,
        api_keys=args.api_keys,
        host=args.host,
        port=args.port,
    )
    try:
        server.run(on_started=lambda url: print(f"mockllm listening on {url}", flush=True))
    except KeyboardInterrupt:
        # uvicorn shuts down gracefully, then re-raises the Ctrl-C it captured.
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
