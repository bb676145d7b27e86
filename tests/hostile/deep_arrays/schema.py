"""Arrays nested 200 levels deep: list[list[...]] past what Python can parse."""


def build() -> dict:
    node: dict = {"type": "string"}
    for _ in range(200):
        node = {"type": "array", "items": node}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "anyOf": [], "$defs": {"Deep": node}}
