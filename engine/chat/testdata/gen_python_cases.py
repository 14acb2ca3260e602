#!/usr/bin/env python3
"""Golden renders for engine/chat's differential tests.

Renders expression probes and the fixture chat templates with tool-use
conversations through Python jinja2 (3.1.6) configured as Hugging Face's
apply_chat_template does, and writes python_cases.json. Run from this
directory:  python3 gen_python_cases.py
"""
import json, os, sys
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.ext import loopcontrols
from jinja2.exceptions import TemplateError

assert jinja2.__version__ == "3.1.6", jinja2.__version__

def raise_exception(message):
    raise TemplateError(message)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

def render(src, ctx):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: "22 Nov 2026"
    try:
        return env.from_string(src).render(**ctx), None
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}]

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
    with open("probes.jinja") as f:
        return [line.rstrip("\n") for line in f
                if line.strip() and not line.startswith("##")]

def main():
    cases = []
    for src in probes():
        out, err = render(src, PROBE_CONTEXT)
        cases.append({"name": "probe", "template": src, "context": PROBE_CONTEXT,
                      "expected": out, "expected_error": err})
    tdir = "../../../../shared/testdata/chat_templates/templates"
    if len(sys.argv) > 1:
        tdir = sys.argv[1]
    for name in sorted(os.listdir(tdir)):
        src = open(os.path.join(tdir, name)).read()
        for label, args in (("args_dict", {"city": "Paris", "unit": "celsius"}),
                            ("args_str", "{\"city\": \"Paris\"}")):
            for with_tools in (True, False):
                ctx = {"messages": tool_conversation(args), "add_generation_prompt": True,
                       "bos_token": "<s>", "eos_token": "</s>"}
                if with_tools:
                    ctx["tools"] = TOOLS
                    ctx["functions"] = json.dumps(TOOLS)
                    ctx["datetime"] = "2026-11-22"
                out, err = render(src, ctx)
                cases.append({"name": f"{name}/{label}/tools={with_tools}", "template_file": name,
                              "context": ctx, "expected": out, "expected_error": err})
    with open("python_cases.json", "w") as f:
        json.dump({"renderer": f"python jinja2 {jinja2.__version__}, Hugging Face conventions",
                   "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(cases)} cases, {sum(c['expected_error'] is not None for c in cases)} errors")

main()
