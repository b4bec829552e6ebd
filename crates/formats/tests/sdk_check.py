"""Checks tackle's exported definitions and results with the providers' own Python SDKs.

Run by the formats crate's `sdk` test with the venv `.ci/sdk-venv.sh` makes. Input: a JSON file
of `{"definitions": {format: tools}, "results": {shape: value}}`. Every problem is printed; the
exit status is 1 when there is any.
"""

import copy
import json
import sys
import typing

import typing_extensions

from pydantic import TypeAdapter

import anthropic.types as anthropic_types
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam
from anthropic.types.tool_result_block_param import Content as AnthropicResultContent
from google.genai import types as genai
import mcp.types as mcp_types
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import (
    ChatCompletionContentPartParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_function_call_output_item_list_param import (
    ResponseFunctionCallOutputItemParam,
)
from openai.types.responses.response_input_param import FunctionCallOutput
from openai.types.shared_params import FunctionDefinition

problems = []


def problem(where, what):
    problems.append(f"{where}: {what}")


def typed_dict_of(hint, value):
    """The TypedDict `value` is meant as: `hint` itself, or the member of the union `hint`
    whose `type` literal it carries."""
    if typing_extensions.is_typeddict(hint):
        return hint
    members = typing.get_args(hint) or (hint,)
    for member in members:
        if not typing_extensions.is_typeddict(member):
            continue
        # Without extras, `Required[Literal["text"]]` is `Literal["text"]`.
        literals = typing.get_args(typing_extensions.get_type_hints(member).get("type"))
        if not literals or value.get("type") in literals:
            return member
    return None


def check_typed(where, hint, value):
    """Validates `value` as `hint` (a TypedDict or a union of them): types, required keys, and
    no key the SDK does not know (pydantic ignores unknown TypedDict keys)."""
    try:
        TypeAdapter(hint).validate_python(value)
    except Exception as err:  # noqa: BLE001 - any validation error is a finding
        problem(where, f"rejected by {getattr(hint, '__name__', hint)}: {err}")
        return
    member = typed_dict_of(hint, value) if isinstance(value, dict) else None
    if member is None:
        return
    allowed = set(member.__required_keys__) | set(member.__optional_keys__)
    extra = set(value) - allowed
    missing = set(member.__required_keys__) - set(value)
    if extra:
        problem(where, f"keys {sorted(extra)} unknown to {member.__name__}")
    if missing:
        problem(where, f"keys {sorted(missing)} required by {member.__name__}")


def check_strict(where, schema):
    """The SDK's strict-schema helper must accept the schema unchanged."""
    original = copy.deepcopy(schema)
    working = copy.deepcopy(schema)
    try:
        ensured = _ensure_strict_json_schema(working, path=(), root=working)
    except Exception as err:  # noqa: BLE001
        problem(where, f"strict helper failed: {err}")
        return
    if ensured != original:
        problem(where, f"strict helper changed the schema:\n{json.dumps(ensured)}\n{json.dumps(original)}")


def same_base64(value):
    """`value` with base64 `data` in one alphabet: google-genai writes bytes back URL-safe."""
    if isinstance(value, dict):
        return {
            key: (item.replace("-", "+").replace("_", "/") if key == "data" and isinstance(item, str) else same_base64(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [same_base64(item) for item in value]
    return value


def round_trip(where, model, value):
    """`value` parses as the pydantic `model` and comes back unchanged (nothing unknown
    dropped, nothing renamed)."""
    try:
        parsed = model.model_validate(value)
    except Exception as err:  # noqa: BLE001
        problem(where, f"rejected by {model.__name__}: {err}")
        return
    back = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if same_base64(back) != same_base64(value):
        problem(where, f"{model.__name__} does not keep it as it is:\n{json.dumps(back)}\n{json.dumps(value)}")


def definitions(formats):
    for tool in formats["openai"]:
        name = tool["function"]["name"]
        check_typed(f"openai {name}", ChatCompletionFunctionToolParam, tool)
        check_typed(f"openai {name} function", FunctionDefinition, tool["function"])
    for tool in formats["openai-strict"]:
        name = tool["function"]["name"]
        check_typed(f"openai-strict {name}", ChatCompletionFunctionToolParam, tool)
        check_typed(f"openai-strict {name} function", FunctionDefinition, tool["function"])
        if tool["function"].get("strict") is True:
            check_strict(f"openai-strict {name}", tool["function"]["parameters"])
        else:
            problem(f"openai-strict {name}", "not strict")
    for tool in formats["openai-responses"]:
        check_typed(f"openai-responses {tool['name']}", FunctionToolParam, tool)
        if tool.get("strict"):
            check_strict(f"openai-responses {tool['name']}", tool["parameters"])
    for tool in formats["anthropic"]:
        check_typed(f"anthropic {tool['name']}", ToolParam, tool)
        if tool["input_schema"].get("type") != "object":
            problem(f"anthropic {tool['name']}", "input_schema is not an object schema")
    for tool in formats["gemini"]:
        round_trip("gemini tool", genai.Tool, tool)
        for declaration in tool["functionDeclarations"]:
            round_trip(f"gemini {declaration['name']}", genai.FunctionDeclaration, declaration)
    for tool in formats["mcp"]["tools"]:
        round_trip(f"mcp {tool['name']}", mcp_types.Tool, tool)
    round_trip("mcp tools/list", mcp_types.ListToolsResult, formats["mcp"])
    for tool in formats["json"]:
        for key in ("name", "description", "inputSchema", "outputSchema"):
            if key not in tool:
                problem(f"json {tool.get('name')}", f"no {key}")


def results(shapes):
    for i, message in enumerate(shapes["openai_chat"]):
        where = f"openai_chat message {i}"
        if message["role"] == "tool":
            check_typed(where, ChatCompletionToolMessageParam, message)
        else:
            check_typed(where, ChatCompletionUserMessageParam, message)
            for j, part in enumerate(message["content"]):
                check_typed(f"{where} part {j}", ChatCompletionContentPartParam, part)
    for i, item in enumerate(shapes["openai_responses"]):
        where = f"openai_responses item {i}"
        check_typed(where, FunctionCallOutput, item)
        if isinstance(item["output"], list):
            for j, part in enumerate(item["output"]):
                check_typed(f"{where} part {j}", ResponseFunctionCallOutputItemParam, part)
    message = shapes["anthropic"]
    check_typed("anthropic message", MessageParam, message)
    for i, block in enumerate(message["content"]):
        check_typed(f"anthropic block {i}", ToolResultBlockParam, block)
        for j, part in enumerate(block["content"]):
            check_typed(f"anthropic block {i} part {j}", AnthropicResultContent, part)
    for shape in ("gemini_follow_up", "gemini_inline"):
        round_trip(shape, genai.Content, shapes[shape])
    for i, result in enumerate(shapes["mcp"]):
        round_trip(f"mcp result {i}", mcp_types.CallToolResult, result)


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        exported = json.load(file)
    definitions(exported["definitions"])
    results(exported["results"])
    for line in problems:
        print(line)
    if problems:
        sys.exit(1)
    print("checked with the providers' SDKs: no problem")


main()
