"""acp-codegen: typed Python bindings and API diffs for the ACP v2 schema releases."""

__version__ = "0.1.0"
