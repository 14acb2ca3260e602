#!/usr/bin/env python3
"""Golden renders for engine/chat's differential tests.

Renders expression probes and the fixture chat templates with tool-use
conversations through Python jinja2 (3.1.6) configured as Hugging Face's
apply_chat_template does, and writes python_cases.json. Run from this
directory:  python3 gen_python_cases.py
"""
import datetime, json, os, sys
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.exceptions import TemplateError

assert jinja2.__version__ == "3.1.6", jinja2.__version__

def raise_exception(message):
    raise TemplateError(message)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

# The fixture's clock: strftime_now("%d %b %Y") gives "22 Nov 2026".
NOW = datetime.datetime(2026, 11, 22, 10, 0, 0)


class AssistantTracker(Extension):
    """transformers' {% generation %} tag, as it renders when no assistant
    mask is requested: the body, in a call block."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def render(src, ctx):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    try:
        return env.from_string(src).render(**ctx), None
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search «documents» with \"filters\"",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Words to find"},
            "limit": {"type": "integer", "description": "At most this many", "nullable": True},
            "filters": {"type": "object", "description": "Field filters",
                        "properties": {"year": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}},
                        "required": ["year"]},
            "scores": {"type": ["array", "null"], "items": {"type": "number"}}},
            "required": ["query"]}}}]

def tool_conversation(args):
    return [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call12345", "type": "function",
            "function": {"name": "get_weather", "arguments": args}}]},
        {"role": "tool", "content": "{\"temperature\": 21}", "tool_call_id": "call12345", "name": "get_weather"},
        {"role": "assistant", "content": "<think>easy</think>It is 21 °C in Paris."},
        {"role": "user", "content": "Thanks! «日本語» 😀"},
    ]

PROBE_CONTEXT = {
    "messages": tool_conversation({"city": "Paris", "unit": "celsius"}) + [
        {"role": "user", "content": "  Hi <b> & 'q' \"dq\"  "}],
    "tools": TOOLS,
    "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>",
}

def probes():
    """One template per line; lines between "##{" and "##}" form one template."""
    out, block = [], None
    with open("probes.jinja") as f:
        for line in f:
            line = line.rstrip("\n")
            if line == "##{":
                block = []
            elif line == "##}":
                out.append("\n".join(block))
                block = None
            elif block is not None:
                block.append(line)
            elif line.strip() and not line.startswith("##"):
                out.append(line)
    return out


def conversations():
    """(label, context) pairs rendered through every template."""
    out = []
    for label, args in (("args_dict", {"city": "Paris", "unit": "celsius"}),
                        ("args_str", "{\"city\": \"Paris\"}")):
        for with_tools in (True, False):
            ctx = {"messages": tool_conversation(args), "add_generation_prompt": True,
                   "bos_token": "<s>", "eos_token": "</s>"}
            if with_tools:
                ctx["tools"] = TOOLS
                ctx["functions"] = json.dumps(TOOLS)
                ctx["datetime"] = "2026-11-22"
            out.append((f"{label}/tools={with_tools}", ctx))
    multimodal = [
        {"role": "user", "content": [{"type": "text", "text": "What is in "}, {"type": "image"},
                                     {"type": "text", "text": "this picture?"}]},
        {"role": "assistant", "content": "A cat.", "reasoning_content": "It has whiskers."},
        {"role": "user", "content": "Sure?  "},
    ]
    for thinking in (True, False):
        out.append((f"multimodal/thinking={thinking}",
                    {"messages": multimodal, "add_generation_prompt": not thinking,
                     "bos_token": "<|begin|>", "eos_token": "<|end|>", "enable_thinking": thinking}))
    return out


def template_cases(tdir, embed):
    cases = []
    for name in sorted(os.listdir(tdir)):
        if not name.endswith(".jinja"):
            continue
        src = open(os.path.join(tdir, name)).read()
        for label, ctx in conversations():
            out, err = render(src, ctx)
            case = {"name": f"{name}/{label}", "context": ctx, "expected": out, "expected_error": err}
            if embed:
                case["template"] = src
            else:
                case["template_file"] = name
            cases.append(case)
    return cases


def write(path, cases):
    with open(path, "w") as f:
        json.dump({"renderer": f"python jinja2 {jinja2.__version__}, Hugging Face conventions",
                   "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{path}: {len(cases)} cases, {sum(c['expected_error'] is not None for c in cases)} errors")


def main():
    # gen_python_cases.py                  -> python_cases.json (probes + fixture templates)
    # gen_python_cases.py DIR OUT.json     -> OUT.json for the templates in DIR, text embedded
    #                                         (for CHAT_EXTRA_CASES=OUT.json go test ...)
    if len(sys.argv) == 3:
        write(sys.argv[2], template_cases(sys.argv[1], embed=True))
        return
    cases = []
    for src in probes():
        out, err = render(src, PROBE_CONTEXT)
        cases.append({"name": "probe", "template": src, "context": PROBE_CONTEXT,
                      "expected": out, "expected_error": err})
    cases += template_cases("../../../../shared/testdata/chat_templates/templates", embed=False)
    write("python_cases.json", cases)


main()
