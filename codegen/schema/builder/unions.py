"""Unions of objects: tagged variants, catch-alls, shared properties and nesting.

* an ``anyOf`` whose members are objects is a union.  Members that pin one
  property with ``const`` are tagged variants; a member that excludes the known
  tags with ``not`` is the catch-all of an open union; other members are
  untagged;
* properties next to the ``anyOf`` are shared by every variant (and recorded
  on the union as its common fields);
* a variant that builds on another union, by ``$ref`` or with an ``anyOf`` of
  its own, becomes a union of its own, one class per member of the inner
  union, at any depth: every level keeps its own tag, so each dispatches in
  one step;
* a member whose tag property is ``{"type": "null"}`` is selected when the tag
  is null or absent;
* a member that is not an object (a scalar or array schema, or one without a
  type, which accepts any JSON value) is a plain member of that type: the union
  takes such values as they are (an untyped member makes it open to any value).

Derived classes and unions record where they come from (:class:`Origin`), so
that their docstrings can say which member of which union they are.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ... import naming
from ..ir import (
    JsonScalar,
    ObjectType,
    Origin,
    OriginKind,
    Ref,
    ReservedTags,
    Scalar,
    TagValue,
    TypeExpr,
    UnionType,
    Variant,
    resolve,
)
from .context import BuildContext, Members, TypeInfo, is_marked_unstable, properties_of
from .node import Node, Pointer
from .types import Part

if TYPE_CHECKING:
    from .types import TypeBuilder

_OBJECT_KEYWORDS = frozenset(
    {"properties", "required", "additionalProperties", "$ref", "allOf", "anyOf", "oneOf", "not"}
)
"""Keywords that make a union member an object (or build it on others): the rest are values."""


@dataclass
class Option:
    """One member of an inner union a variant builds on: the parts it adds, and its own inner unions."""

    label: str
    kind: OriginKind
    parts: list[Part]
    branches: list[Branch]
    doc: str = ""
    tag: JsonScalar = None


@dataclass
class Branch:
    """An inner union a variant builds on: its members and, if tagged, its tag."""

    options: list[Option]
    tag_wire: str | None = None
    tag_py: str | None = None
    exclusive: bool = False
    source: str | None = None
    """The union a variant builds on with a ``$ref`` (``None``: an ``anyOf`` written in the variant)."""


class UnionBuilder:
    """Builds the unions of objects of one schema file (and the variant classes they need)."""

    def __init__(self, ctx: BuildContext, type_builder: TypeBuilder) -> None:
        self.ctx = ctx
        self.type_builder = type_builder

    def tag_property(self, members: list[Node]) -> str | None:
        """The property every tagged member pins with ``const``."""
        candidates: set[str] | None = None
        for member in members:
            consts = {
                key
                for key, prop in properties_of(member).items()
                if "const" in prop and isinstance(prop.get("const"), (str, int))
            }
            if not consts or "not" in member:
                continue
            candidates = consts if candidates is None else candidates & consts
        if not candidates:
            return None
        return sorted(candidates)[0]

    @staticmethod
    def reserved_values(member: Node, tag: str) -> tuple[JsonScalar, ...]:
        found: list[JsonScalar] = []

        def walk(node: object) -> None:
            if isinstance(node, dict):
                prop = (
                    node.get("properties", {}).get(tag) if isinstance(node.get("properties"), dict) else None
                )
                if isinstance(prop, dict):
                    if "const" in prop:
                        found.append(prop["const"])
                    if isinstance(prop.get("enum"), list):
                        found.extend(prop["enum"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(member.get("not"))
        return tuple(dict.fromkeys(v for v in found if v is None or isinstance(v, (str, int, float))))

    @staticmethod
    def is_value_member(member: Node) -> bool:
        """Whether a union member is not an object: a scalar or array schema, or an untyped one."""
        return not (_OBJECT_KEYWORDS & member.keys()) and member.get("type") != "object"

    def member_parts(self, member: Node) -> tuple[list[Part], list[Branch]]:
        """The field sources of one union member, and the inner unions it builds on."""
        parts: list[Part] = []
        if "properties" in member or "required" in member:
            parts.append(self.type_builder.inline_part(member))
        branches: list[Branch] = []
        refs: list[Node] = []
        if "$ref" in member:
            refs.append(member.child("$ref"))
        for item in member.entries("allOf"):
            if item.is_object and "$ref" in item:
                refs.append(item.child("$ref"))
            elif item.is_object:
                item_parts, item_branches = self.member_parts(item)
                parts.extend(item_parts)
                branches.extend(item_branches)
        for ref in refs:
            target = self.type_builder.ensure(self.ctx.resolve(ref))
            if isinstance(target, ObjectType):
                parts.append(Part(ref, class_name=target.name))
            elif isinstance(target, UnionType):
                branches.append(self.branch_of_union(target, ref.pointer))
            else:
                raise self.ctx.error("a union member may only build on object types", ref)
        nested = self.ctx.members(member)
        if nested is not None:
            branches.append(self.inline_branch(nested))
        return parts, branches

    def inline_branch(self, nested: Members) -> Branch:
        """An ``anyOf`` written inside a member: its members are options, tagged or told apart by title."""
        tag = self.tag_property(nested.nodes)
        tag_py = naming.field_name(tag) if tag is not None else None
        options: list[Option] = []
        for item in nested.nodes:
            selector = self.selector(item, tag)
            item_parts, item_branches = self.member_parts(item)
            label = item.title() or (str(selector[0]) if selector[1] == "tag" else "")
            if not label:
                raise self.ctx.error("a nested union member needs a title to be named", item)
            options.append(Option(label, selector[1], item_parts, item_branches, item.doc(), selector[0]))
        return Branch(options, tag, tag_py, exclusive=nested.exclusive)

    def branch_of_union(self, target: UnionType, where: Pointer) -> Branch:
        """A variant builds on the union ``target``: each of its members is an option, at any depth."""
        options: list[Option] = []
        for variant in target.members:
            kind = self.kind_of(target, variant)
            label = variant.title or ("other" if kind == "other" else str(variant.tag))
            found = resolve(self.ctx.types, variant.type)
            if isinstance(found, ObjectType):
                parts, branches = [Part(where, class_name=found.name)], []
            elif isinstance(found, UnionType):
                parts, branches = [], [self.branch_of_union(found, where)]
            else:
                raise self.ctx.error(
                    f"a variant may not build on {target.name}: its member {label!r} is not an object",
                    where,
                )
            options.append(Option(label, kind, parts, branches, variant.doc, variant.tag))
        return Branch(
            options, target.tag_wire_name, target.tag_py_name, exclusive=target.exclusive, source=target.name
        )

    def kind_of(self, union: UnionType, variant: Variant) -> OriginKind:
        """How ``variant`` of the built ``union`` is selected (see :meth:`selector`)."""
        if variant is union.catch_all:
            return "other"
        if variant.tag is not None:
            return "tag"
        found = resolve(self.ctx.types, variant.type)
        if isinstance(found, ObjectType) and union.tag_wire_name is not None:
            tag_field = next(
                (f for f in self.ctx.all_fields(found.name) if f.wire_name == union.tag_wire_name), None
            )
            if tag_field is not None and tag_field.type == Scalar("null"):
                return "null"
        if isinstance(found, UnionType) and found.origin is not None and found.origin.kind == "null":
            return "null"
        return "untagged"

    def selector(self, member: Node, tag: str | None) -> tuple[JsonScalar, OriginKind]:
        """How a union member is selected: its tag value, or as catch-all, null-tag or untagged member."""
        prop = properties_of(member).get(tag) if tag is not None else None
        if prop is None or not prop.is_object:
            return None, "untagged"
        if "const" in prop:
            return prop.get("const"), "tag"
        if "not" in member:
            return None, "other"
        if prop.get("type") == "null":
            return None, "null"
        return None, "untagged"

    def variant_class(
        self,
        name: str,
        parts: list[Part],
        doc: str,
        where: Node,
        info: TypeInfo,
        tag: TagValue | None,
        reserved: ReservedTags | None,
        origin: Origin | None,
    ) -> str:
        fields, base = self.type_builder.combine(parts, name, None)
        if tag is not None:
            fields = tuple(
                replace(f, py_name=tag.py_name) if f.wire_name == tag.wire_name else f for f in fields
            )
        self.ctx.types[name] = ObjectType(
            name=name,
            fields=fields,
            doc=doc,
            pointer=str(where.pointer),
            unstable=info.unstable,
            internal=info.internal,
            base=base,
            extra=self.type_builder.extra_of(parts),
            tag=tag,
            reserved=reserved,
            origin=origin,
        )
        return name

    def build_object_union(
        self,
        name: str,
        def_name: str | None,
        node: Node,
        members: Members,
        info: TypeInfo,
        skip: frozenset[Pointer] = frozenset(),
    ) -> UnionType:
        """A union of objects, written as a ``$defs`` entry or inline (``def_name`` is then ``None``).

        Members at a pointer in ``skip`` are left out (an inline union's bare ``null`` members).
        """
        shared = [self.type_builder.inline_part(node)] if "properties" in node or "required" in node else []
        tag = self.tag_property(members.nodes)
        tag_py = naming.field_name(tag) if tag is not None else None
        variants: list[Variant] = []
        catch_all: Variant | None = None
        for member in members.nodes:
            if member.pointer in skip:
                continue
            tag_value, kind = self.selector(member, tag)
            title = member.title()
            doc = member.doc()
            if self.is_value_member(member):
                context = name + naming.pascal(title or "member")
                value = self.type_builder.type_expr(member, context)
                variants.append(Variant(tag=None, type=value, title=title, doc=doc))
                continue
            parts, branches = self.member_parts(member)
            member_info = info.marked_unstable(is_marked_unstable(member))
            tag_info = (
                TagValue(tag, tag_py, tag_value) if tag is not None and tag_py and kind == "tag" else None
            )
            reserved = (
                ReservedTags(tag, tag_py, self.reserved_values(member, tag))
                if tag is not None and tag_py and kind == "other"
                else None
            )
            plain = not shared and tag_info is None and reserved is None and not branches
            if plain and len(parts) == 1 and parts[0].class_name is not None:
                expr: TypeExpr = Ref(parts[0].class_name)
            else:
                label = self.member_label(tag_value, title, kind == "other", parts, member)
                origin = Origin(name, tag, tag_value, label, kind)
                base_name = self.ctx.claim_first(naming.variant_names(label, name), member)
                expr = self.expand(
                    base_name, shared + parts, branches, doc, member, member_info, tag_info, reserved, origin
                )
            variant = Variant(tag=tag_value, type=expr, title=title, doc=doc)
            if kind == "other":
                if catch_all is not None:
                    raise self.ctx.error("a union may have only one catch-all member", member)
                catch_all = variant
            else:
                if tag_value is not None and any(v.tag == tag_value for v in variants):
                    raise self.ctx.error(f"tag value {tag_value!r} appears twice", member)
                variants.append(variant)
        common_fields = self.type_builder.combine(shared, name, def_name)[0] if shared else ()
        return UnionType(
            name=name,
            variants=tuple(variants),
            tag_wire_name=tag,
            tag_py_name=tag_py,
            catch_all=catch_all,
            fields=common_fields,
            exclusive=members.exclusive,
            **info.fields(),
        )

    def member_label(
        self, tag_value: JsonScalar, title: str, is_catch_all: bool, parts: list[Part], member: Node
    ) -> str:
        if tag_value is not None:
            return str(tag_value)
        if title:
            return title
        if is_catch_all:
            return "other"
        required = sorted(set().union(*(p.required for p in parts))) if parts else []
        if not required:
            raise self.ctx.error("an untagged union member needs a title to be named", member)
        return "with_" + required[0]

    def expand(
        self,
        name: str,
        parts: list[Part],
        branches: list[Branch],
        doc: str,
        member: Node,
        info: TypeInfo,
        tag: TagValue | None,
        reserved: ReservedTags | None,
        origin: Origin | None,
    ) -> Ref:
        """The type of a variant made of ``parts`` that builds on the inner unions ``branches``.

        Without inner unions it is one class.  Otherwise it is a union on the
        first inner union's tag, with one member per option, each expanded in
        turn with the option's parts and the remaining inner unions: the
        nesting of the schema, level by level, with the outer tags pinned on
        every class at the bottom.  Every class and union of it is placed at
        the union ``member`` it comes from.
        """
        if not branches:
            return Ref(self.variant_class(name, parts, doc, member, info, tag, reserved, origin))
        first, rest = branches[0], branches[1:]
        variants: list[Variant] = []
        catch_all: Variant | None = None
        for option in first.options:
            child = self.ctx.claim(naming.pascal(option.label) + name, member)
            child_origin = Origin(name, first.tag_wire, option.tag, option.label, option.kind)
            expr = self.expand(
                child,
                parts + option.parts,
                option.branches + rest,
                option.doc,
                member,
                info,
                tag,
                reserved,
                child_origin,
            )
            variant = Variant(tag=option.tag, type=expr, title=option.label, doc=option.doc)
            if option.kind == "other" and first.tag_wire is not None:
                catch_all = variant
            else:
                variants.append(variant)
        self.ctx.types[name] = UnionType(
            name=name,
            variants=tuple(variants),
            doc=doc,
            pointer=str(member.pointer),
            unstable=info.unstable,
            internal=info.internal,
            tag_wire_name=first.tag_wire,
            tag_py_name=first.tag_py,
            catch_all=catch_all,
            origin=origin,
            exclusive=first.exclusive,
            mirrors=first.source,
        )
        return Ref(name)
