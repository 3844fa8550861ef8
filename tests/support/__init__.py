"""Test helpers shared by the test modules (plain Python, importable as ``support``).

- ``support.openai_server.OpenAIServer``: an OpenAI-compatible HTTP server (embeddings
  and chat completions, scriptable responses, recorded requests) for the real
  ``openai`` client.
- ``support.chroma_server.ChromaServer``: a real ``chroma run`` server on 127.0.0.1.

``tests/`` has no ``__init__.py``, so pytest puts it on ``sys.path`` and test modules
import these as ``from support.openai_server import OpenAIServer``.
"""
