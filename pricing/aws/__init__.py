"""AWS price sources: pure parsers (`parse`, `offers`), boto3 fetchers (`fetch`) and the fixture replay (`recorded`).

Nothing here imports Django, so the parsers can be tested (and reused) without a database.
"""
