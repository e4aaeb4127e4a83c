"""YANG source as a tree of statements, and back to text: enough to rewrite a published module for a server that
cannot read one of its constructs (``yang_inline``). Each argument keeps its source text (quotes, escapes and
``+`` joins as written), so what is not rewritten prints as it was.

Examples
--------
>>> module = parse('module m { prefix "m"; leaf a { type uint8; } // why\\n }')
>>> [child.keyword for child in module.children or []]
['prefix', 'leaf']
>>> module.find("leaf").find("type").value
'uint8'
>>> print(to_text(module), end="")
module m {
  prefix "m";
  leaf a {
    type uint8;
  }
}
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

from srfabric.errors import ModelError


@dataclass
class Statement:
    """``keyword argument;`` or ``keyword argument { children }``; ``argument`` as written, quotes and all."""

    keyword: str
    argument: str | None = None
    children: list[Statement] | None = None

    @property
    def value(self) -> str:
        """The argument without its quotes (a name or path; a joined or escaped string stays as written)."""
        raw = self.argument or ""
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" and "+" not in raw:
            return raw[1:-1]
        return raw

    def find(self, keyword: str) -> Statement:
        """The first child with ``keyword``; ``ModelError`` when there is none."""
        for child in self.children or []:
            if child.keyword == keyword:
                return child
        raise ModelError(f"yang {self.keyword} {self.value}", f"has no {keyword}")

    def all(self, keyword: str) -> list[Statement]:
        return [child for child in self.children or [] if child.keyword == keyword]

    def walk(self) -> Iterator[Statement]:
        """This statement and every statement under it, parents first."""
        yield self
        for child in self.children or []:
            yield from child.walk()

    def copied(self) -> Statement:
        return copy.deepcopy(self)


def tokens(text: str) -> Iterator[tuple[str, int]]:
    """(token, offset): ``{``, ``}``, ``;``, ``+``, a quoted string as written, or a bare word; comments skipped."""
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char.isspace():
            at += 1
        elif text.startswith("//", at):
            at = _after(text, "\n", at)
        elif text.startswith("/*", at):
            at = _after(text, "*/", at)
        elif char in "{};+":
            yield char, at
            at += 1
        elif char in "\"'":
            end = _string_end(text, at)
            yield text[at:end], at
            at = end
        else:
            end = at
            while end < size and not text[end].isspace() and text[end] not in "{};" \
                    and not text.startswith(("//", "/*"), end):
                end += 1
            yield text[at:end], at
            at = end


def _after(text: str, closing: str, at: int) -> int:
    found = text.find(closing, at + 2)
    return len(text) if found < 0 else found + len(closing)


def _string_end(text: str, at: int) -> int:
    quote, end = text[at], at + 1
    while end < len(text) and text[end] != quote:
        end += 2 if quote == '"' and text[end] == "\\" else 1
    if end >= len(text):
        raise ModelError("yang", f"a string opened at offset {at} is not closed")
    return end + 1


def parse(text: str) -> Statement:
    """The module (or submodule) statement ``text`` holds; ``ModelError`` naming the offset where it is not
    YANG as this reads it."""
    stream = list(tokens(text))
    statement, at = _statement(text, stream, 0)
    if at != len(stream):
        raise ModelError("yang", f"text after the module's closing brace, at offset {stream[at][1]}")
    return statement


def _statement(text: str, stream: list[tuple[str, int]], at: int) -> tuple[Statement, int]:
    if at >= len(stream) or stream[at][0] in "{};+":
        raise ModelError("yang", f"a statement's keyword expected at offset {_offset(stream, at, text)}")
    keyword, at = stream[at][0], at + 1
    parts: list[str] = []
    while at < len(stream) and stream[at][0] not in "{};":
        parts.append(stream[at][0])
        at += 1
    argument = " ".join(parts) if parts else None
    if at >= len(stream):
        raise ModelError("yang", f"{keyword} is not ended by ; or a block")
    if stream[at][0] == ";":
        return Statement(keyword, argument), at + 1
    if stream[at][0] == "}":
        raise ModelError("yang", f"{keyword} is not ended by ; or a block (offset {stream[at][1]})")
    children: list[Statement] = []
    at += 1
    while at < len(stream) and stream[at][0] != "}":
        child, at = _statement(text, stream, at)
        children.append(child)
    if at >= len(stream):
        raise ModelError("yang", f"the block of {keyword} {argument or ''} is not closed")
    return Statement(keyword, argument, children), at + 1


def _offset(stream: list[tuple[str, int]], at: int, text: str) -> int:
    return stream[at][1] if at < len(stream) else len(text)


def to_text(statement: Statement, indent: int = 0) -> str:
    """``statement`` as YANG source, two spaces a level."""
    head = " " * indent + statement.keyword + (f" {statement.argument}" if statement.argument is not None else "")
    if statement.children is None:
        return head + ";\n"
    inner = "".join(to_text(child, indent + 2) for child in statement.children)
    return f"{head} {{\n{inner}{' ' * indent}}}\n"
