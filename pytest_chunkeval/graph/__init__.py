"""Graph-RAG relationship retrieval (SPEC §11): extract ``(subject, predicate,
object)`` relationships with verbatim evidence from each chunk, merge them into a
graph, retrieve relationships per question and score them against gold
relationships that do not depend on the chunking."""
