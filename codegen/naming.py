"""Naming rules shared by every emitter.

Names are derived, never looked up in a table:

* a named type keeps its ``$defs`` name (made a valid identifier);
* a union variant is ``<Tag><Union>``: the tag value (or the variant's title)
  in PascalCase followed by the union's name, e.g. the ``text`` variant of
  ``ContentBlock`` is ``TextContentBlock``.  When the tag already ends with the
  union's last word that word is not repeated (``tool_call_update`` in
  ``SessionUpdate`` is ``ToolCallSessionUpdate``); a tag without a letter or
  digit is spelled by its code points (``"-"`` gives ``U002DContentBlock``);
* a name that is already taken gets the suffix ``Variant``; if that is taken
  too the schema is reported as unusable, so no name is ever numbered;
* a class name is ASCII letters and digits and starts with a capital letter,
  so it never equals a field name and the engine keeps it as it is;
* fields are snake_case; a leading underscore becomes ``field_`` (``_meta`` is
  ``field_meta``), and keywords or names that would shadow a pydantic member
  or a builtin the annotations use (``str``, ``list``...) get a trailing
  underscore.
"""

from __future__ import annotations

import keyword
import re
import unicodedata

_PLAIN_CLASS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9]|[^A-Za-z0-9]|$)|[A-Z]?[a-z0-9]+|[A-Z]+|[^\W_]+", re.UNICODE)

# Attribute names of pydantic.BaseModel (and a few of ours) that a field must not shadow.
_MODEL_MEMBERS = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "from_orm",
        "json",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "update_forward_refs",
        "validate",
        "model_computed_fields",
        "model_config",
        "model_extra",
        "model_fields",
        "model_fields_set",
        "register",
    }
)

# Builtins the generated annotations use: a field of that name would shadow them in its class body.
ANNOTATION_BUILTINS = frozenset({"bool", "dict", "float", "int", "list", "str"})

# What the generated models module may import: name -> module (see pysource.import_block).
MODEL_IMPORTS: dict[str, str] = {
    "Annotated": "typing",
    "Any": "typing",
    "Literal": "typing",
    "TypeAlias": "typing",
    "ConfigDict": "pydantic",
    "Field": "pydantic",
    "StrictBool": "pydantic",
    "StrictFloat": "pydantic",
    "StrictStr": "pydantic",
    "AcpModel": "._base",
    "DefaultOnError": "._base",
    "DefaultOnNull": "._base",
    "JsonInt": "._base",
    "NotNull": "._base",
    "Reserved": "._base",
    "SkipInvalidItems": "._base",
    "TaggedUnion": "._base",
    "UnionTag": "._base",
}

META_BASE = "WithMeta"
"""The class of a models module that declares ``_meta`` once, for the classes that extend it."""

# Names the generated modules import or define; a schema type may not take them.
RESERVED_TYPE_NAMES = frozenset(MODEL_IMPORTS) | frozenset(
    {
        META_BASE,
        "BaseModel",
        "ClassVar",
        "Discriminator",
        "Tag",
        "TypeAdapter",
        "Union",
        "Model",  # datamodel-code-generator's name for the schema root
        "annotations",
        "bool",
        "bytes",
        "dict",
        "float",
        "int",
        "list",
        "object",
        "str",
        "tagged_union",
        "type",
    }
)


def words(text: str) -> list[str]:
    """Split camelCase, PascalCase, snake_case, kebab-case or free text into words."""
    text = unicodedata.normalize("NFKC", text)
    return _WORD.findall(text)


def pascal(text: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk``; ``searchAndReplace`` -> ``SearchAndReplace``."""
    return "".join(w[:1].upper() + w[1:] for w in words(text))


def snake(text: str) -> str:
    """``toolCallId`` -> ``tool_call_id``; ``URLMode`` -> ``url_mode``."""
    return "_".join(w.lower() for w in words(text))


def is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and name.isascii()


def class_name(schema_name: str) -> str:
    """A ``$defs`` name as a Python class name: ASCII letters and digits, upper-case first.

    datamodel-code-generator rewrites any other class name (it drops
    underscores, for one), so a name outside that shape is made PascalCase
    here; a reserved name or keyword gets the suffix ``Type``.
    """
    name = unicodedata.normalize("NFKC", schema_name)
    if not name.isascii():
        name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    if not _PLAIN_CLASS_NAME.fullmatch(name):
        name = pascal(name)
    if not name:
        name = "Type"
    if name[0].isdigit():
        name = "Type" + name
    name = name[0].upper() + name[1:]  # never equal to a snake_case field name
    if name in RESERVED_TYPE_NAMES or keyword.iskeyword(name):
        name += "Type"
    return name


def _tag_words(tag: str) -> list[str]:
    parts = [w[:1].upper() + w[1:] for w in words(tag)]
    ascii_parts = []
    for part in parts:
        if not part.isascii():
            part = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode()
        if part:
            ascii_parts.append(part[:1].upper() + part[1:])
    return ascii_parts


def variant_name(tag_or_title: str, union: str) -> str:
    """``<Tag><Union>`` with the union's last word not repeated."""
    return variant_names(tag_or_title, union)[0]


def variant_names(tag_or_title: str, union: str) -> list[str]:
    """The names a union member may take, best first: ``<Tag><Union>`` without the union's
    last word repeated, then with it (``tool_call_update`` in ``SessionUpdate`` is
    ``ToolCallSessionUpdate``, or ``ToolCallUpdateSessionUpdate`` when ``tool_call`` took that).
    """
    tag = _tag_words(tag_or_title) or [f"U{ord(c):04X}" for c in tag_or_title]
    union_words = words(union)
    candidates = [tag]
    if len(tag) > 1 and union_words and tag[-1].lower() == union_words[-1].lower():
        candidates.insert(0, tag[:-1])
    names = []
    for found in candidates:
        name = "".join(found) + union
        names.append(name if name[:1].isalpha() else "Variant" + name)
    return names


def field_name(wire: str) -> str:
    """A wire property name as a Python attribute name."""
    stripped = wire.lstrip("_")
    base = snake(stripped)
    if not base:
        base = "field"
    elif stripped != wire:
        base = "field_" + base
    if base[0].isdigit():
        base = "field_" + base
    if not base.isascii():
        base = snake(unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode()) or "field"
    shadows = base in _MODEL_MEMBERS or base in ANNOTATION_BUILTINS or base.startswith("model_")
    if keyword.iskeyword(base) or shadows:
        base += "_"
    return base


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name`` plus as many ``_`` as needed to be new."""
    while name in taken:
        name += "_"
    return name


def package_name(release: str, unstable: bool) -> str:
    """``2.0.0-alpha.7`` -> ``acp_2_0_0_alpha_7`` (``..._unstable`` for the unstable schema)."""
    slug = re.sub(r"[^0-9a-z]+", "_", release.lower()).strip("_")
    return f"acp_{slug}" + ("_unstable" if unstable else "")


def method_name(wire: str, kind: str, params_type: str) -> str:
    """The Python name of a JSON-RPC method.

    The wire name is ``namespace/verb`` (``session/new``) or a bare verb
    (``initialize``); a ``$`` namespace counts as none.

    * a notification is named like an event, ``namespace_verb``:
      ``session/update`` -> ``session_update``, ``$/cancel_request`` -> ``cancel_request``;
    * a request whose verb has several words already names its object and is
      just the verb: ``session/set_config_option`` -> ``set_config_option``;
    * otherwise a request is ``verb_object``, where the object is the
      namespace as the params type spells it (``session/list`` with
      ``ListSessionsRequest`` -> ``list_sessions``), and is left out when the
      params type does not mention it (``session/prompt`` with
      ``PromptRequest`` -> ``prompt``).
    """
    namespace, _, verb = wire.rpartition("/")
    namespace = "" if namespace.strip("$") == "" else namespace
    verb_words = [w.lower() for w in words(verb)]
    if kind == "notification":
        return "_".join([w.lower() for w in words(namespace)] + verb_words)
    if not namespace or len(verb_words) > 1:
        return "_".join(verb_words)
    type_words = [w.lower() for w in words(params_type)]
    noun_words = [w.lower() for w in words(namespace)]
    for spelling in (
        noun_words,
        [*noun_words[:-1], noun_words[-1] + "s"],
        [*noun_words[:-1], noun_words[-1].rstrip("s")],
    ):
        size = len(spelling)
        for start in range(len(type_words) - size + 1):
            if type_words[start : start + size] == spelling:
                return "_".join(verb_words + spelling)
    return "_".join(verb_words)
