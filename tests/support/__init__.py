"""Test helpers shared by the test modules (plain Python, importable as ``support``).

What more than one test module uses lives here, never in a test module: no test
module imports another (tests/test_layout.py checks it). Each module says what it
holds; among them:

- ``support.tiny_corpus``: two tiny documents and three questions for the engine.
- ``support.plugin_project`` / ``support.baseline_project``: the projects of the
  plugin's pytester runs, their baseline set-up, and ``MODES`` (one process, then
  pytest-xdist, marked ``dist``).
- ``support.openai_server.OpenAIServer``: an OpenAI-compatible HTTP server (embeddings
  and chat completions, scriptable responses, recorded requests) for the real
  ``openai`` client.
- ``support.project_runs``: pytest run in a project on disk as a user would (the
  environment, the run, the model-missing skip, timings taken out of its output).
- ``support.chroma_server.ChromaServer``: a real ``chroma run`` server on 127.0.0.1,
  which dies with the test process that started it (``support.lifeline``).

``tests/`` has no ``__init__.py``, so pytest puts it on ``sys.path`` and test modules
import these as ``from support.openai_server import OpenAIServer``.
"""
