"""A 10 MB schema: 2,100 object types with 5,000-character descriptions."""


def build() -> dict:
    defs = {
        f"Type{i}": {"type": "object", "description": "d" * 5000, "properties": {"a": {"type": "string"}}}
        for i in range(2100)
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "anyOf": [], "$defs": defs}
