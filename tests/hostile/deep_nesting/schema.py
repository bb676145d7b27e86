"""Objects nested 200 levels deep inside one type."""


def build() -> dict:
    node: dict = {"type": "string"}
    for _ in range(200):
        node = {"type": "object", "properties": {"n": node}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "anyOf": [], "$defs": {"Deep": node}}
