#!/usr/bin/env python3
"""Read YAML documents the way docker-compose v1.29 reads a compose file, many documents per process.

Compose v1 opens the file in binary mode and calls yaml.safe_load (PyYAML's pure-Python SafeLoader, YAML 1.1); on a
YAML or decoding error it reads the file once more as text, decoded as utf-8-sig with universal newlines. This does
the same.

stdin:  one document per line, its UTF-8 bytes in base64.
stdout: one JSON object per line, in the same order:
        {"ok": <value>, "retry": <bool>}    retry: the first (binary) read failed and the text re-read succeeded
        {"error": "<Exception>: <message>"}

Values JSON cannot carry are tagged so a difference shows instead of being hidden:
        {"!!float": "1000.0" | "inf" | "-inf" | "nan"}   floats with an integral value, and infinities/NaN
        {"!!int": "<digits>"}                            ints beyond 2**53
        {"!!timestamp": "<iso>"} {"!!binary": "<base64>"} {"!!set": [...]} {"!!python": "<repr>"}
Mapping keys that are not strings become "!!<type> <repr>" (e.g. "!!bool True", "!!int 1", "!!null None"); string
keys that start with "!!" get a "!!str " prefix so they cannot be mistaken for one.
"""

import base64
import datetime
import io
import json
import math
import sys

import yaml

SAFE_INT = 2**53 - 1


def float_tag(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def encode_key(k):
    if isinstance(k, str):
        return "!!str " + k if k.startswith("!!") else k
    if isinstance(k, bool):
        return "!!bool " + repr(k)
    if k is None:
        return "!!null None"
    if isinstance(k, int):
        return "!!int " + repr(k)
    if isinstance(k, float):
        return "!!float " + float_tag(k)
    if isinstance(k, (datetime.date, datetime.datetime)):
        return "!!timestamp " + k.isoformat()
    if isinstance(k, bytes):
        return "!!binary " + base64.b64encode(k).decode("ascii")
    return "!!python " + repr(k)


def encode(v):
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, int):
        return v if -SAFE_INT <= v <= SAFE_INT else {"!!int": str(v)}
    if isinstance(v, float):
        if math.isfinite(v) and not v.is_integer():
            return v
        return {"!!float": float_tag(v)}
    if isinstance(v, (datetime.date, datetime.datetime)):
        return {"!!timestamp": v.isoformat()}
    if isinstance(v, bytes):
        return {"!!binary": base64.b64encode(v).decode("ascii")}
    if isinstance(v, (set, frozenset)):
        return {"!!set": sorted((encode_key(x) for x in v), key=str)}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        return {encode_key(k): encode(x) for k, x in v.items()}
    return {"!!python": repr(v)}


def describe(e):
    return "{}: {}".format(type(e).__name__, e)


def read(data):
    # compose v1: binary read first ...
    try:
        return {"ok": encode(yaml.load(io.BytesIO(data), Loader=yaml.SafeLoader)), "retry": False}
    except (yaml.YAMLError, UnicodeDecodeError) as first:
        # ... then once more as text (utf-8-sig, universal newlines)
        try:
            text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig")
            return {"ok": encode(yaml.load(text, Loader=yaml.SafeLoader)), "retry": True}
        except Exception:  # noqa: BLE001 - compose reports the error of the second read; the first is clearer here
            return {"error": describe(first)}
    except Exception as e:  # noqa: BLE001
        return {"error": describe(e)}


def main():
    out = sys.stdout
    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        result = read(base64.b64decode(line))
        try:
            text = json.dumps(result, ensure_ascii=True, allow_nan=False)
        except (TypeError, ValueError) as e:
            text = json.dumps({"error": "cannot encode result: " + describe(e)})
        out.write(text + "\n")
    out.flush()


if __name__ == "__main__":
    main()
