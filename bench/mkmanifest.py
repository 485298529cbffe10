#!/usr/bin/env python3
"""Writes an NVIDIA-schema (per CUDA variant) redistrib manifest for one cuDNN archive.

    mkmanifest.py --label L --version V --cuda N --platform P --relative-path R --archive FILE
"""
import argparse
import hashlib
import json
import os
import sys

ap = argparse.ArgumentParser()
for opt in ("--label", "--version", "--cuda", "--platform", "--relative-path", "--archive"):
    ap.add_argument(opt, required=True)
a = ap.parse_args()
sha, md5 = hashlib.sha256(), hashlib.md5()
with open(a.archive, "rb") as f:
    for b in iter(lambda: f.read(1 << 20), b""):
        sha.update(b)
        md5.update(b)
pkg = {"relative_path": a.relative_path, "sha256": sha.hexdigest(), "md5": md5.hexdigest(),
       "size": str(os.path.getsize(a.archive))}
doc = {
    "release_date": "2025-01-01",
    "release_label": a.label,
    "release_product": "cudnn",
    "cudnn": {
        "name": "NVIDIA CUDA Deep Neural Network library",
        "license": "cudnn",
        "license_path": "cudnn/LICENSE.txt",
        "version": a.version,
        a.platform: {"cuda" + a.cuda: pkg},
        "cuda_variant": [a.cuda],
    },
}
sys.stdout.write(json.dumps(doc, indent=4))
