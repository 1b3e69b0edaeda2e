"""docs/claims.md against the declaration schema (ldprepro.claims.declarations): every key and test
kind documented, each test's keys listed exactly (required ones marked), each worked example a valid
declaration of its own kind, and the config schema's list of tests the same as the engine's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ldprepro.claims import conditions
from ldprepro.claims.declarations import COMMON_KEYS, REQUIRED, TEST_KEYS, validate
from ldprepro.pipeline.parse import load_yaml

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs/claims.md").read_text(encoding="utf-8")


def section(test: str) -> str:
    """The text of the doc's section ``### `test` `` (to the next heading)."""
    found = re.search(rf"^### `{test}`\n(.*?)(?=^#{{2,3}} |\Z)", DOC, re.S | re.M)
    assert found, f"docs/claims.md has no section for the test {test!r}"
    return found.group(1)


def test_every_test_kind_has_a_section_and_no_section_is_stale():
    documented = re.findall(r"^### `([a-z_]+)`$", DOC, re.M)
    assert documented == list(TEST_KEYS)


@pytest.mark.parametrize("test", list(TEST_KEYS))
def test_each_section_lists_its_test_s_keys_exactly(test):
    line = re.search(r"^Keys: (.*)\.$", section(test), re.M)
    assert line, f"the {test} section lost its 'Keys:' line"
    listed = dict(re.findall(r"`([a-z_]+)`( \(required\))?", line.group(1)))
    assert set(listed) == TEST_KEYS[test]
    assert {k for k, req in listed.items() if req} == REQUIRED[test]


@pytest.mark.parametrize("test", list(TEST_KEYS))
def test_each_worked_example_is_a_valid_declaration_of_its_kind(test):
    block = re.search(rf"<!-- claim-example: {test} -->\s*```yaml\n(.*?)```", section(test), re.S)
    assert block, f"the {test} section lost its worked example"
    (decl,) = validate(yaml.safe_load(block.group(1)), f"docs/claims.md [{test}]", import_functions=True)
    assert decl["test"] == test


def test_every_common_key_is_in_the_table():
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", DOC, re.M))
    assert rows == COMMON_KEYS


def test_the_scope_paragraph_names_every_condition_variable_and_function():
    scopes = DOC[DOC.index("**Scopes.**") : DOC.index("**Margins.**")]
    for name in [*conditions.VARIABLES, *conditions.FUNCTIONS]:
        assert f"`{name}`" in scopes, name


def test_the_config_schema_accepts_exactly_the_engine_s_tests():
    schema = load_yaml((REPO / "workflow/schemas/config.schema.yaml").read_text(encoding="utf-8"))
    assert schema["$defs"]["claim_list"]["items"]["properties"]["test"]["enum"] == list(TEST_KEYS)
