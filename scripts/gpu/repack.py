#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Repackage an installed cuDNN as an NVIDIA-layout redist archive plus a manifest.

    repack.py --lib-dir DIR --include-dir DIR --mirror MIRROR --build 90 --cuda 13
              [--label 9.19.0] [--platform linux-x86_64]
              [--zero-fatbin engines|all] [--truncate LIBNAME] [--print]

Reads libcudnn*.so* from --lib-dir in any of the layouts found on machines (NVIDIA/apt:
libX.so -> libX.so.9 -> libX.so.9.M.P; pip wheels and the pip-layout CUDA toolkit: a regular
libX.so.9, no versioned file) and cudnn*.h from --include-dir (cudnn_version.h or the apt
cudnn_version_v9.h), and writes what NVIDIA publishes:
  MIRROR/cudnn/<platform>/cudnn-<platform>-<M.m.p.B>_cuda<C>-archive.tar.xz
      cudnn-...-archive/{LICENSE, include/cudnn*.h (+ _vN twins), lib/libX.so -> libX.so.N ->
      libX.so.N.m.p}
  MIRROR/redistrib_<label>.json   (schema B: "cudnn" -> platform -> "cuda<C>" -> package)
The version is the header's M.m.p plus --build (not NVIDIA's real build number).

Defects for the GPU test (ELF headers, SONAMEs and versions stay intact):
  --zero-fatbin engines   zero the .nv_fatbin section of libcudnn_engines_* (the GPU kernels)
  --zero-fatbin all       ... of every library that has one
  --truncate LIB          cut LIB's real file to half its size (caught before the switch)
  --slow-shim SO          a deliberately slow build for the perf gate: the real shim becomes
                          lib/slowreal.bin and SO (scripts/gpu/slow_shim.c: SONAME
                          libcudnn.so.N, DT_NEEDED slowreal.bin, RUNPATH $ORIGIN) takes its
                          place, delaying every execute/convolution call on the host. The
                          name must not look like a library to ldconfig ("lib*.so*"): it keeps
                          the shim's SONAME, and `ldconfig` over lib/ would point
                          libcudnn.so.N at it instead of the wrapper
Python stdlib only; compresses with `xz -T0 -0` when xz is installed (else Python's lzma).
"""
import argparse
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time


def die(msg):
    sys.stderr.write("repack: %s\n" % msg)
    sys.exit(2)


def header_version(include_dir):
    for name in ("cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h"):
        p = os.path.join(include_dir, name)
        if not os.path.exists(p):
            continue
        text = open(p, encoding="latin-1").read()
        v = []
        for macro in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
            m = re.search(r"^\s*#\s*define\s+%s\s+(\d+)" % macro, text, re.M)
            if not m:
                die("%s has no #define %s" % (p, macro))
            v.append(int(m.group(1)))
        return tuple(v), p
    die("no cudnn_version.h (or _v9/_v8) in %s" % include_dir)


def find_libraries(lib_dir, major):
    """{base: real file path} for every libcudnn* library in lib_dir."""
    libs = {}
    for name in sorted(os.listdir(lib_dir)):
        m = re.fullmatch(r"(libcudnn[a-z_]*)\.so(\.\d+)*", name)
        if not m or name.endswith(".a"):
            continue
        base = m.group(1)
        path = os.path.join(lib_dir, name)
        real = os.path.realpath(path)
        if not os.path.isfile(real):
            continue
        libs.setdefault(base, real)
    # Prefer the file the .so.N name resolves to.
    for base in list(libs):
        p = os.path.join(lib_dir, "%s.so.%d" % (base, major))
        if os.path.exists(p):
            libs[base] = os.path.realpath(p)
    if "libcudnn" not in libs:
        die("no libcudnn.so.%d in %s" % (major, lib_dir))
    return libs


def elf_sections(path):
    """[(name, offset, size, type)] of a 64-bit little-endian ELF file."""
    with open(path, "rb") as f:
        ehdr = f.read(64)
        if ehdr[:4] != b"\x7fELF" or ehdr[4] != 2 or ehdr[5] != 1:
            die("%s is not a 64-bit little-endian ELF file" % path)
        shoff, = struct.unpack_from("<Q", ehdr, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ehdr, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        hdrs = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        stroff = hdrs[shstrndx][4]
        out = []
        for h in hdrs:
            f.seek(stroff + h[0])
            name = f.read(64).split(b"\0")[0].decode("ascii", "replace")
            out.append((name, h[4], h[5], h[1]))
        return out


def zero_fatbin(path):
    """Zero every .nv_fatbin section of path in place; returns the bytes zeroed."""
    total = 0
    for name, off, size, typ in elf_sections(path):
        if name != ".nv_fatbin" or typ == 8:  # SHT_NOBITS has no bytes in the file
            continue
        with open(path, "r+b") as f:
            f.seek(off)
            left = size
            while left:
                n = min(left, 1 << 24)
                f.write(b"\0" * n)
                left -= n
        total += size
    return total


def build_tree(args, v, stage):
    top = "cudnn-%s-%d.%d.%d.%s_cuda%d-archive" % ((args.platform,) + v + (args.build, args.cuda))
    root = os.path.join(stage, top)
    inc = os.path.join(root, "include")
    lib = os.path.join(root, "lib")
    os.makedirs(inc)
    os.makedirs(lib)
    with open(os.path.join(root, "LICENSE"), "w") as f:
        f.write("NVIDIA cuDNN repackaged by cudnnctl scripts/gpu/repack.py for a local test.\n"
                "The libraries and headers are NVIDIA's, under NVIDIA's cuDNN license.\n")
    major = v[0]
    # Headers: every cudnn*.h, with the _vN twins NVIDIA ships both ways.
    for name in sorted(os.listdir(args.include_dir)):
        if re.fullmatch(r"cudnn[a-z_]*(_v\d+)?\.h", name):
            shutil.copyfile(os.path.join(args.include_dir, name), os.path.join(inc, name))
    for name in sorted(os.listdir(inc)):
        m = re.fullmatch(r"(cudnn[a-z_]*?)(_v%d)?\.h" % major, name)
        if not m:
            continue
        twin = m.group(1) + (".h" if m.group(2) else "_v%d.h" % major)
        if not os.path.exists(os.path.join(inc, twin)):
            shutil.copyfile(os.path.join(inc, name), os.path.join(inc, twin))
    # Libraries: the real file under its full version, then the chain of links.
    report = {"libraries": {}, "zeroed": {}, "truncated": None}
    for base, real in sorted(find_libraries(args.lib_dir, major).items()):
        full = "%s.so.%d.%d.%d" % ((base,) + v)
        dst = os.path.join(lib, full)
        shutil.copyfile(real, dst)
        os.chmod(dst, 0o755)
        os.symlink(full, os.path.join(lib, "%s.so.%d" % (base, major)))
        os.symlink("%s.so.%d" % (base, major), os.path.join(lib, base + ".so"))
        report["libraries"][base] = {"from": real, "size": os.path.getsize(dst)}
        zero = (args.zero_fatbin == "all" or
                (args.zero_fatbin == "engines" and base.startswith("libcudnn_engines")))
        if zero:
            report["zeroed"][full] = zero_fatbin(dst)
        if args.truncate == base:
            size = os.path.getsize(dst)
            os.truncate(dst, size // 2)
            report["truncated"] = {"file": full, "from": size, "to": size // 2}
    if args.slow_shim:
        full = "libcudnn.so.%d.%d.%d" % v
        os.replace(os.path.join(lib, full), os.path.join(lib, "slowreal.bin"))
        shutil.copyfile(args.slow_shim, os.path.join(lib, full))
        os.chmod(os.path.join(lib, full), 0o755)
        report["slow_shim"] = {"wrapper": args.slow_shim, "real": "lib/slowreal.bin"}
    if args.zero_fatbin and not any(report["zeroed"].values()):
        die("--zero-fatbin %s: no .nv_fatbin section found" % args.zero_fatbin)
    if args.truncate and not report["truncated"]:
        die("--truncate %s: no such library" % args.truncate)
    return top, report


def write_archive(stage, top, out_path):
    """tar (sorted, root:root) piped through xz."""
    tmp = out_path + ".tmp"
    xz = shutil.which("xz")
    if xz:
        sink = open(tmp, "wb")
        proc = subprocess.Popen([xz, "-T0", "-0", "-c"], stdin=subprocess.PIPE, stdout=sink)
        stream = proc.stdin
    else:
        proc = None
        stream = lzma.open(tmp, "wb", preset=0)
    with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tf:
        paths = [top]
        for d, dirs, files in os.walk(os.path.join(stage, top)):
            dirs.sort()
            for n in sorted(dirs + files):
                paths.append(os.path.relpath(os.path.join(d, n), stage))
        for rel in sorted(set(paths)):
            ti = tf.gettarinfo(os.path.join(stage, rel), arcname=rel)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            if ti.isfile():
                with open(os.path.join(stage, rel), "rb") as f:
                    tf.addfile(ti, f)
            else:
                tf.addfile(ti)
    stream.close()
    if proc:
        if proc.wait() != 0:
            die("xz failed")
        sink.close()
    os.replace(tmp, out_path)


def file_digests(path):
    h256, hmd5, size = hashlib.sha256(), hashlib.md5(), 0
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h256.update(b)
            hmd5.update(b)
            size += len(b)
    return h256.hexdigest(), hmd5.hexdigest(), size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--include-dir", required=True)
    ap.add_argument("--mirror", required=True)
    ap.add_argument("--build", default="90", help="4th version component (default 90)")
    ap.add_argument("--cuda", type=int, required=True, help="CUDA major of the build")
    ap.add_argument("--label", help="release label (default: the header's M.m.p)")
    ap.add_argument("--platform", default="linux-x86_64")
    ap.add_argument("--zero-fatbin", choices=["engines", "all"])
    ap.add_argument("--truncate", metavar="LIB", help="e.g. libcudnn_ops")
    ap.add_argument("--slow-shim", metavar="SO", help="scripts/gpu/slow_shim.c built")
    ap.add_argument("--print", action="store_true", dest="print_json")
    args = ap.parse_args()
    t0 = time.time()
    v, header = header_version(args.include_dir)
    version = "%d.%d.%d.%s" % (v + (args.build,))
    label = args.label or "%d.%d.%d" % v
    os.makedirs(args.mirror, exist_ok=True)
    # Staged beside the mirror (same filesystem, never served from it).
    stage = tempfile.mkdtemp(prefix=".repack.", dir=os.path.dirname(os.path.abspath(args.mirror)))
    try:
        top, report = build_tree(args, v, stage)
        rel = "cudnn/%s/%s.tar.xz" % (args.platform, top)
        out = os.path.join(args.mirror, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        write_archive(stage, top, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    sha, md5, size = file_digests(out)
    manifest = {
        "release_date": time.strftime("%Y-%m-%d"),
        "release_label": label,
        "release_product": "cudnn",
        "cudnn": {
            "name": "NVIDIA CUDA Deep Neural Network library",
            "license": "cudnn",
            "license_path": "cudnn/LICENSE.txt",
            "version": version,
            args.platform: {"cuda%d" % args.cuda: {"relative_path": rel, "sha256": sha,
                                                   "md5": md5, "size": str(size)}},
            "cuda_variant": [str(args.cuda)],
        },
    }
    mpath = os.path.join(args.mirror, "redistrib_%s.json" % label)
    with open(mpath, "w") as f:
        f.write(json.dumps(manifest, indent=4))
    summary = {"label": label, "version": version, "header": header, "archive": out,
               "sha256": sha, "size": size, "manifest": mpath,
               "seconds": round(time.time() - t0, 1)}
    summary.update(report)
    if args.print_json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
