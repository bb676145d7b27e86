"""200 types, each extending the next with allOf."""


def build() -> dict:
    defs: dict = {
        f"A{i}": {"allOf": [{"$ref": f"#/$defs/A{i + 1}"}], "properties": {f"p{i}": {"type": "string"}}}
        for i in range(200)
    }
    defs["A200"] = {"type": "object", "properties": {"last": {"type": "string"}}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "anyOf": [], "$defs": defs}
