"""Reference-free context relevance (SPEC §10): judges, judgments, metrics."""
