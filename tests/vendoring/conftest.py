"""The stand-in npm registry of the fetch tests, for the bump tests."""

from tests.schema.test_npm import registry

__all__ = ["registry"]
