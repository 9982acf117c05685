"""Checks recorded HTTP answers against the answers an OpenAPI 3.0 document defines.

Usage: validate_answers.py OPENAPI_JSON ANSWERS_JSON
ANSWERS_JSON is a list of {"method", "path", "status", "content_type", "body"} (body: the JSON
text). Every answer must be one its operation defines for its status, application/json, and
valid against that answer's schema (openapi-schema-validator, OpenAPI 3.0 rules: nullable,
formats). Prints one line per answer; exits 1 when any answer does not validate.
"""
import json
import sys

from openapi_schema_validator import OAS30Validator
from openapi_schema_validator import oas30_format_checker


def resolve(document, node):
    """The object a local `$ref` names, or the node itself."""
    while isinstance(node, dict) and "$ref" in node:
        target = document
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def problem(document, answer):
    """Why `answer` is not one the document defines; None when it is."""
    operation = document["paths"].get(answer["path"], {}).get(answer["method"].lower())
    if operation is None:
        return "no such operation"
    defined = operation["responses"].get(str(answer["status"]))
    if defined is None:
        return "status %d is not defined for this operation" % answer["status"]
    content = resolve(document, defined).get("content", {})
    if not answer["content_type"].split(";")[0].strip() in content:
        return "content type %r is not %s" % (answer["content_type"], ", ".join(content))
    try:
        body = json.loads(answer["body"])
    except ValueError as error:
        return "the body is not JSON: %s" % error
    schema = dict(content["application/json"]["schema"])
    schema["components"] = document["components"]
    errors = sorted(OAS30Validator(schema, format_checker=oas30_format_checker).iter_errors(body), key=str)
    return "; ".join(e.message for e in errors) or None


def main():
    with open(sys.argv[1]) as file:
        document = json.load(file)
    with open(sys.argv[2]) as file:
        answers = json.load(file)
    failed = 0
    for answer in answers:
        why = problem(document, answer)
        label = "%s %s %d" % (answer["method"], answer["path"], answer["status"])
        if why:
            failed += 1
            print("FAIL %s: %s" % (label, why))
        else:
            print("ok %s" % label)
    print("%d of %d answers valid" % (len(answers) - failed, len(answers)))
    sys.exit(1 if failed else 0)


main()
