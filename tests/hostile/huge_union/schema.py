"""One tagged union with 5,000 variants."""


def build() -> dict:
    members = [
        {
            "title": f"V{i}",
            "type": "object",
            "properties": {"kind": {"type": "string", "const": f"v{i}"}, "x": {"type": "string"}},
            "required": ["kind"],
        }
        for i in range(5000)
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "anyOf": [],
        "$defs": {"Big": {"anyOf": members}},
    }
