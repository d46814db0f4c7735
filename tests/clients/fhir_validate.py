"""Validates FHIR R4 NDJSON with an independent validator: PyPI's `fhir.resources` 6.4.0 (its
root package is R4, 4.0.1; it needs pydantic 1, so scripts/test.sh gives it a venv of its own),
plus the rules it does not check: a time carries its zone and seconds, ids keep to
[A-Za-z0-9.-]{1,64}, no empty array, null or empty string, numbers are numbers.

    <venv>/bin/python fhir_validate.py <file.ndjson>

Prints {"resources": n, "by_type": {...}, "errors": [...]} and exits 1 on any error.
"""

import json
import re
import sys

from fhir.resources import get_fhir_model_class

ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def own_rules(value, path, errors):
    if value is None or value == "" or value == [] or value == {}:
        errors.append(f"{path}: empty")
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in ("effectiveDateTime", "start", "end") and isinstance(v, str) and "T" in v:
                if not DATETIME.match(v):
                    errors.append(f"{path}.{k}: a time without its zone or seconds: {v}")
            if k == "value" and path.endswith("Quantity") and not isinstance(v, (int, float)):
                errors.append(f"{path}.value: not a number")
            own_rules(v, f"{path}.{k}", errors)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            own_rules(v, f"{path}[{i}]", errors)


def main(path):
    errors, by_type, n = [], {}, 0
    for line_no, line in enumerate(open(path, encoding="utf-8"), 1):
        if not line.strip():
            continue
        n += 1
        try:
            data = json.loads(line)
            kind = data["resourceType"]
            by_type[kind] = by_type.get(kind, 0) + 1
            if not ID.match(data.get("id", "")):
                errors.append(f"line {line_no}: id {data.get('id')!r}")
            own_rules(data, f"line {line_no}", errors)
            get_fhir_model_class(kind).parse_obj(data)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            errors.append(f"line {line_no}: {e}")
    print(json.dumps({"resources": n, "by_type": by_type, "errors": errors[:20]}))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main(sys.argv[1])
