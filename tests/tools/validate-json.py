#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# validate-json.py SCHEMA FILE: checks each non-empty line of FILE (the
# output of truestat -j) against the JSON Schema SCHEMA (itself checked
# against its metaschema first). Prints up to five errors per bad line as
# "line N: /json/path: message", then "N lines, N valid". Exits 0 only if
# there was at least one line and every line was valid.
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
validator = cls(schema)
n = bad = 0
for i, line in enumerate(open(sys.argv[2]), 1):
    if not line.strip():
        continue
    n += 1
    try:
        doc = json.loads(line)
    except ValueError as e:
        print(f"line {i}: not JSON: {e}")
        bad += 1
        continue
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    for e in errors[:5]:
        path = "/".join(map(str, e.absolute_path))
        print(f"line {i}: /{path}: {e.message[:200]}")
    bad += bool(errors)
print(f"{n} lines, {n - bad} valid")
sys.exit(1 if bad or not n else 0)
