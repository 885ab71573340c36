#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Static throughput estimate of attngen's NEON microkernels with llvm-mca (no ARM hardware needed).

For each model, the NEON microkernels (attngen_qk_*, attngen_pv_*, attngen_qkdot_* ... __neon) are cut out of
generated/<model>/attngen_<cname>.c (they use NEON intrinsics only) into one translation unit that also takes the
address of each, so every one keeps an out-of-line copy, and compiled for aarch64 (-O2 -S). For the out-of-line
Q.K^T microkernels, this gives the same instructions as compiling the whole file (checked for llama-3-8b with gcc
12). gcc inlines the P.V microkernels into the attention kernels; their inner loop body is the same. Not needing
the runtime headers or the rest of the file keeps this independent of work in progress elsewhere in the tree. The
microkernels' assembly is then cut into measured regions:

  - a function without loops (the fully unrolled Q.K^T microkernels attngen_qk_* and attngen_qkdot_*) is measured
    whole, from its first instruction to its `ret`: accumulator init, every FMA, the stores, and the register spills
    the compiler added, i.e. one call;
  - a function with loops (the P.V microkernels attngen_pv_*) is measured per innermost loop (from the backward
    branch's target label to the branch): the `for j` body of one column block, i.e. one key for PVV*4 columns.

Each region goes to llvm-mca for every -mcpu asked for, with enough iterations to reach the steady state. The FMA
bound of a region is its fmla count divided by the number of FMA pipes, which is read from llvm-mca itself (a probe
block of independent fmla; N1 has 2 ASIMD pipes, V1 and V2 four 128-bit ones in LLVM 19's models). "% FMA peak" is
that bound over llvm-mca's cycles per iteration (Total Cycles / Iterations). The bottleneck is read from the
resource pressure per iteration: the pipe group with the highest per-pipe pressure, or "latency" when the cycles
are well above every pipe's pressure.

This is a model, not a measurement: llvm-mca assumes every load hits L1, knows nothing of the caller, and its
scheduling models are approximations of the real cores. qemu (make test-neon) proves the NEON kernels correct,
never fast.

Usage: bench/neon_model.py [--models m1,m2] [--cc aarch64-linux-gnu-gcc] [--mca llvm-mca-19]
                           [--cpus neoverse-n1,neoverse-v1,neoverse-v2] [--out build/bench] [--rev HEAD]
                           [--markdown]
(the environment variables NEON_MODEL_CC, NEON_MODEL_MCA, NEON_MODEL_CPUS and NEON_MODEL_REV set the defaults;
--cc 'clang --target=aarch64-linux-gnu' measures clang's code instead of gcc's)
Writes <out>/neon_model.txt (the printed table), <out>/neon_model.md (the same as Markdown),
<out>/neon_model.csv (one row per region and CPU) and keeps the assembly in <out>/neon_model/<model>/.
Python 3 standard library only.
"""

import argparse
import csv
import os
import re
import shlex
import shutil
import subprocess
import sys

DEFAULT_MODELS = ["llama-3-8b", "gemma-2-2b", "qwen2-5-0-5b", "gpt2"]
DEFAULT_CPUS = ["neoverse-n1", "neoverse-v1", "neoverse-v2"]
SHORT = {"neoverse-n1": "N1", "neoverse-v1": "V1", "neoverse-v2": "V2", "neoverse-n2": "N2"}

# (ATTNGEN_NOINLINE: microkernels are never inlined, runtime/attngen_kernel.h)
MK_RE = re.compile(r"^static\s+(?:ATTNGEN_NOINLINE\s+)?(?:__attribute__\s*\(\(.*?\)\)\s+)?void\s+(attngen_(?:qk|qkdot|pv)_\w+__neon)\s*\(",
                   re.M)
BRANCH_RE = re.compile(r"^(b|b\.?(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)|cbn?z|tbn?z)$")


def die(msg):
    print("neon_model: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def find_mca(asked):
    names = [asked] if asked else ["llvm-mca-19", "/usr/lib/llvm-19/bin/llvm-mca", "llvm-mca"]
    for n in names:
        p = shutil.which(n) or (n if os.path.isfile(n) and os.access(n, os.X_OK) else None)
        if p:
            return p
    die("no llvm-mca found (tried %s); make bench-neon-model installs llvm-19 (tools/deps.sh neon-model)"
        % ", ".join(names))


def mca_version(mca):
    out = run([mca, "--version"]).stdout
    m = re.search(r"LLVM version ([\d.]+)", out)
    return m.group(1) if m else "?"


def cpu_known(mca, cpu):
    """llvm-mca only warns on an unknown -mcpu and then uses a generic model: treat the warning as 'absent'."""
    r = run([mca, "-mtriple=aarch64", "-mcpu=" + cpu, "-iterations=1"], input="nop\n")
    return r.returncode == 0 and "not a recognized processor" not in r.stderr


def mca(mca_bin, cpu, asm_text, iterations):
    r = run([mca_bin, "-mtriple=aarch64", "-mcpu=" + cpu, "-iterations=%d" % iterations,
             "-instruction-info=false", "-resource-pressure=true", "-bottleneck-analysis"], input=asm_text)
    if r.returncode != 0:
        die("llvm-mca -mcpu=%s failed:\n%s" % (cpu, r.stderr[-2000:]))
    return parse_mca(r.stdout)


def parse_mca(out):
    res = {}
    for key, pat in (("iterations", r"^Iterations:\s+(\d+)"), ("instructions", r"^Instructions:\s+(\d+)"),
                     ("cycles", r"^Total Cycles:\s+(\d+)"), ("uops", r"^Total uOps:\s+(\d+)"),
                     ("rthroughput", r"^Block RThroughput:\s+([\d.]+)")):
        m = re.search(pat, out, re.M)
        res[key] = float(m.group(1)) if m else float("nan")
    # Resources: "[5]   - N1UnitV0" / "[1.0] - N1UnitD"
    names = {}
    sec = out.split("Resources:", 1)[1] if "Resources:" in out else ""
    for m in re.finditer(r"^\[([\d.]+)\]\s+-\s+(\S+)", sec.split("Resource pressure per iteration:")[0], re.M):
        names[m.group(1)] = m.group(2)
    press = {}
    m = re.search(r"Resource pressure per iteration:\n(.*)\n(.*)\n", out)
    if m:
        cols = re.findall(r"\[([\d.]+)\]", m.group(1))
        vals = m.group(2).split()
        for c, v in zip(cols, vals):
            press[names.get(c, c)] = 0.0 if v == "-" else float(v)
    res["pressure"] = press
    m = re.search(r"Data Dependencies:\s+\[\s*([\d.]+)%", out)
    res["dep_pct"] = float(m.group(1)) if m else 0.0
    m = re.search(r"Resource Pressure\s+\[\s*([\d.]+)%", out)
    res["res_pct"] = float(m.group(1)) if m else 0.0
    return res


def group_pressure(press):
    """Unit name -> group: N1UnitV0 -> V, V1UnitL01 -> L, V2UnitS3 -> S. Returns {group: (total, pipes)}."""
    groups = {}
    for name, v in press.items():
        g = re.sub(r"^[A-Za-z0-9]*?Unit", "", name)
        g = re.sub(r"\d+$", "", g) or name
        tot, n = groups.get(g, (0.0, 0))
        groups[g] = (tot + v, n + 1)
    return groups


GROUP_DESC = {"V": "FP/ASIMD", "L": "load/store", "D": "store data", "S": "integer", "M": "integer multi-cycle",
              "B": "branch", "I": "integer"}


def probe_fma_pipes(mca_bin, cpu):
    body = "".join("fmla v%d.4s, v30.4s, v31.4s\n" % (i % 24) for i in range(48))
    r = mca(mca_bin, cpu, body, 100)
    return (int(round(48 / r["rthroughput"])) if r["rthroughput"] > 0 else 1), tuple(sorted(r["pressure"]))


# ---- assembly parsing

def strip_comment(line):
    for c in ("//", "@ "):
        i = line.find(c)
        if i >= 0:
            line = line[:i]
    return line.rstrip()


def functions(asm, wanted):
    """{name: [lines]} of the functions in `wanted`: from the label to `.size name` (or the next .type)."""
    out, cur = {}, None
    for raw in asm.splitlines():
        line = strip_comment(raw)
        m = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if m and m.group(1) in wanted:
            cur = m.group(1)
            out[cur] = []
            continue
        if cur is None:
            continue
        if re.match(r"^\s*\.size\s+" + re.escape(cur) + r"\b", line):
            cur = None
            continue
        out[cur].append(line)
    return out


def items(lines):
    """Labels and instructions of a function: [('label', name) | ('insn', text, mnemonic)]."""
    res = []
    for line in lines:
        s = line.strip()
        if not s:
            continue
        m = re.match(r"^([A-Za-z_.$][\w.$]*):\s*(.*)$", s)
        if m:
            res.append(("label", m.group(1)))
            s = m.group(2).strip()
            if not s:
                continue
        if s.startswith("."):
            continue  # directive
        res.append(("insn", s, s.split()[0].lower()))
    return res


def target(insn):
    ops = insn.split(None, 1)[1] if len(insn.split(None, 1)) > 1 else ""
    return ops.split(",")[-1].strip()


def regions(name, lines):
    """[(kind, description, [insn text])]: the whole function if it has no loop, else each innermost loop with fmla."""
    its = items(lines)
    label_at = {it[1]: i for i, it in enumerate(its) if it[0] == "label"}
    loops = []
    for i, it in enumerate(its):
        if it[0] == "insn" and BRANCH_RE.match(it[2]):
            t = target(it[1])
            if t in label_at and label_at[t] < i:
                loops.append((label_at[t], i))
    if not loops:
        body = [it[1] for it in its if it[0] == "insn"]
        return [("function", "whole function (straight line, one call)", body)]
    inner = [lp for lp in loops if not any(o != lp and lp[0] <= o[0] and o[1] <= lp[1] for o in loops)]
    out = []
    for a, b in sorted(inner):
        body = [it[1] for it in its[a:b + 1] if it[0] == "insn"]
        if any(x.split()[0].lower() == "fmla" for x in body):
            out.append(("loop", "innermost loop", body))
    return out


def count(body, pred):
    return sum(1 for x in body if pred(x))


def is_fmla(x):
    return x.split()[0].lower() == "fmla"


def is_mem(x):
    return re.match(r"^(ldr|ldp|ldur|str|stp|stur|ld1|st1|ld1r)\b", x.split()[0].lower()) is not None


def is_spill(x):
    return is_mem(x) and re.search(r"\[sp\b", x) is not None


def is_load(x):
    return re.match(r"^(ldr|ldp|ldur|ld1|ld1r)\b", x.split()[0].lower()) is not None


# ---- one model

def extract(src_text, names):
    """The source of each microkernel: from its `static void name(` line to the first `}` alone on a line."""
    lines = src_text.splitlines()
    out = []
    for name in names:
        start = next(i for i, l in enumerate(lines) if re.match(r"^static\s.*\b%s\s*\(" % re.escape(name), l))
        end = next(i for i in range(start, len(lines)) if lines[i] == "}")
        out.append("\n".join(lines[start:end + 1]))
    return out


def translation_unit(model, src, funcs, names):
    """The microkernels alone, with their address taken so each keeps an out-of-line copy. They use only NEON
    intrinsics, so they need neither the runtime's headers nor the rest of the generated file."""
    lines = ["/* bench/neon_model.py: the NEON microkernels of %s (%s), for llvm-mca */" % (model, src),
             "#include <stddef.h>", "#include <arm_neon.h>",
             "#define ATTNGEN_NOINLINE __attribute__((noinline)) /* as runtime/attngen_kernel.h defines them */",
             "#define ATTNGEN_RELOAD() __asm__ __volatile__(\"\" ::: \"memory\")", ""]
    lines += [f + "\n" for f in funcs]
    lines += ["__attribute__((used)) void (*const attngen_neon_model_keep[])(void) = {"]
    lines += ["  (void (*)(void))%s," % n for n in names]
    lines += ["};", ""]
    return "\n".join(lines)


def compile_model(cc, model, src, src_text, names, outdir):
    os.makedirs(outdir, exist_ok=True)
    tu = os.path.join(outdir, "microkernels.c")
    with open(tu, "w") as f:
        f.write(translation_unit(model, src, extract(src_text, names), names))
    asm = os.path.join(outdir, "microkernels.%s.s" % os.path.basename(shlex.split(cc)[0]))
    cmd = shlex.split(cc) + ["-O2", "-std=c99", "-Werror=implicit-function-declaration", "-S", tu, "-o", asm]
    r = run(cmd)
    if r.returncode != 0:
        die("compile failed: %s\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    with open(asm) as f:
        return f.read(), " ".join(cmd)


def kind_of(name):
    return {"qk": "prefill Q.K^T", "qkdot": "decode Q.K^T", "pv": None}[name.split("_")[1]] or \
        ("decode P.V" if re.search(r"_(p|t)\d+__neon$", name) else "prefill P.V")


def classify(cycles, fmla, pipes, groups):
    """Name the limiting resource: the pipe group with the highest per-pipe pressure (and a second one within 5% of
    it), or latency when every group's pressure is well below the cycles."""
    ranked = sorted(((tot / n if n else 0.0, g) for g, (tot, n) in groups.items()), reverse=True)
    if not ranked or ranked[0][0] < 0.8 * cycles:
        return "latency", ranked[0][1] if ranked else None, ranked[0][0] if ranked else 0.0
    bound = fmla / pipes if pipes else 0.0

    def name(per, g):
        if g == "V":
            if bound >= 0.9 * per:
                return "FMA pipes"
            # V-pipe cycles spent on non-fmla uops (ld1r's dup, mov, movi, fmul, faddp, ...)
            return "V pipes, +%d non-FMA uops" % round(groups["V"][0] - fmla)
        return "%s pipes" % GROUP_DESC.get(g, g)
    top_v, top = ranked[0]
    names = [name(top_v, top)]
    if len(ranked) > 1 and ranked[1][0] >= 0.95 * top_v:
        names.append(name(*ranked[1]))
    return " = ".join(names), top, top_v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--cc", default=os.environ.get("NEON_MODEL_CC", "aarch64-linux-gnu-gcc"))
    ap.add_argument("--mca", default=os.environ.get("NEON_MODEL_MCA", ""))
    ap.add_argument("--cpus", default=os.environ.get("NEON_MODEL_CPUS", ",".join(DEFAULT_CPUS)))
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--rev", default=os.environ.get("NEON_MODEL_REV", ""),
                    help="read generated/<model>/*.c as committed at this git revision (default: the work tree)")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    args = ap.parse_args()

    mca_bin = find_mca(args.mca)
    ver = mca_version(mca_bin)
    cpus = []
    for c in [c for c in args.cpus.split(",") if c]:
        if cpu_known(mca_bin, c):
            cpus.append(c)
        else:
            print("neon_model: llvm-mca %s has no model for -mcpu=%s: skipped" % (ver, c), file=sys.stderr)
    if not cpus:
        die("no usable -mcpu")
    if not shutil.which(shlex.split(args.cc)[0]):
        die("compiler %s not found (make deps-test installs gcc-aarch64-linux-gnu)" % args.cc)
    cc_ver = run(shlex.split(args.cc) + ["--version"]).stdout.splitlines()[0]
    probes = {c: probe_fma_pipes(mca_bin, c) for c in cpus}
    pipes = {c: probes[c][0] for c in cpus}
    for i, c in enumerate(cpus):
        same = [d for d in cpus[:i] if probes[d][1] == probes[c][1]]
        if same:  # e.g. llvm-mca 14: every Neoverse falls back to the Cortex-A57 model
            print("neon_model: warning: llvm-mca %s models -mcpu=%s with the same units as %s (%s): no model of "
                  "its own, the numbers will be the same" % (ver, c, same[0], " ".join(probes[c][1])), file=sys.stderr)

    rows, table = [], []
    cmds = []
    for model in [m for m in args.models.split(",") if m]:
        cname = model.replace("-", "_")
        src = os.path.join("generated", model, "attngen_%s.c" % cname)
        if args.rev:
            r = run(["git", "show", "%s:%s" % (args.rev, src)])
            if r.returncode != 0:
                print("neon_model: %s not in git revision %s: skipped" % (src, args.rev), file=sys.stderr)
                continue
            src_text, src_name = r.stdout, "%s:%s" % (args.rev, src)
        elif os.path.isfile(src):
            with open(src) as f:
                src_text, src_name = f.read(), src
        else:
            print("neon_model: %s not found: skipped" % src, file=sys.stderr)
            continue
        names = MK_RE.findall(src_text)
        if not names:
            print("neon_model: %s has no NEON microkernel: skipped" % src, file=sys.stderr)
            continue
        asm, cmd = compile_model(args.cc, model, src_name, src_text, names,
                                 os.path.join(args.out, "neon_model", model))
        cmds.append(cmd)
        funcs = functions(asm, set(names))
        for name in names:
            if name not in funcs:
                die("%s: %s not found in the assembly" % (model, name))
            regs = regions(name, funcs[name])
            if not regs:
                die("%s: %s: no region with fmla found" % (model, name))
            per = []  # per region: {cpu: result}
            for kind, desc, body in regs:
                text = "\n".join(body) + "\n"
                iters = 10 if len(body) > 1000 else (50 if len(body) > 200 else 300)
                r = {c: mca(mca_bin, c, text, iters) for c in cpus}
                per.append((kind, desc, body, r))
            # the main region (most fmla; the first of equals), and for several loops their sum (per key, all columns)
            main_i = max(range(len(per)), key=lambda i: (count(per[i][2], is_fmla), -i))
            sigs = [count(p[2], is_fmla) for p in per]
            same = sum(1 for s in sigs if s == sigs[main_i])
            variants = [("main", [main_i])]
            if len(per) > 1:
                variants.append(("all", list(range(len(per)))))
            for label, idx in variants:
                body_all = [x for i in idx for x in per[i][2]]
                fmla = count(body_all, is_fmla)
                loads = count(body_all, is_load)
                spills = count(body_all, is_spill)
                if per[idx[0]][0] == "function":
                    region = "function body, 1 call"
                elif label == "main":
                    region = "main j-loop, 1 key%s" % (" (%d of %d loops)" % (same, len(per)) if len(per) > 1 else "")
                else:
                    region = "all %d j-loops (1 key, all columns)" % len(idx)
                trow = {"model": model, "microkernel": name, "kind": kind_of(name), "region": region,
                        "insns": len(body_all), "fmla": fmla, "loads": loads, "spills": spills, "cpu": {}}
                for c in cpus:
                    cyc = sum(per[i][3][c]["cycles"] / per[i][3][c]["iterations"] for i in idx)
                    rth = sum(per[i][3][c]["rthroughput"] for i in idx)
                    press = {}
                    for i in idx:
                        for k, v in per[i][3][c]["pressure"].items():
                            press[k] = press.get(k, 0.0) + v
                    groups = group_pressure(press)
                    bound = fmla / pipes[c]
                    why, top, top_v = classify(cyc, fmla, pipes[c], groups)
                    pct = 100.0 * bound / cyc if cyc > 0 else 0.0
                    trow["cpu"][c] = (cyc, pct, why)
                    rows.append({
                        "model": model, "microkernel": name, "kind": kind_of(name), "region": region,
                        "compiler": cc_ver, "llvm_mca": ver, "cpu": c, "instructions": len(body_all),
                        "fmla": fmla, "loads": loads, "sp_spills": spills, "fma_pipes": pipes[c],
                        "fma_bound_cycles": "%.2f" % bound, "mca_cycles": "%.2f" % cyc,
                        "block_rthroughput": "%.2f" % rth, "fma_peak_pct": "%.1f" % pct,
                        "bottleneck": why, "top_group": top or "",
                        "top_group_cycles_per_pipe": "%.2f" % top_v,
                        "pressure_per_pipe": " ".join("%s=%.2f" % (g, t / n) for g, (t, n) in sorted(groups.items())),
                    })
                table.append(trow)

    if not table:
        die("nothing measured")
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "neon_model.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    head = ["model", "microkernel", "region", "fmla", "sp ld/st"]
    for c in cpus:
        s = SHORT.get(c, c)
        head += ["%s cyc" % s, "%s %%peak" % s]
    head += ["bottleneck"]
    body = []
    for t in table:
        r = [t["model"], t["microkernel"].replace("__neon", ""), t["region"], str(t["fmla"]), str(t["spills"])]
        for c in cpus:
            cyc, pct, _ = t["cpu"][c]
            r += ["%.1f" % cyc, "%.0f%%" % pct]
        whys = [t["cpu"][c][2] for c in cpus]
        r.append(whys[0] if len(set(whys)) == 1 else
                 "; ".join("%s: %s" % (SHORT.get(c, c), w) for c, w in zip(cpus, whys)))
        body.append(r)
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    num = set(range(3, len(head) - 1))

    def fmt(r):
        return "  ".join((x.rjust(widths[i]) if i in num else x.ljust(widths[i])) for i, x in enumerate(r)).rstrip()

    lines = ["NEON microkernels: llvm-mca %s static estimate, %s -O2" % (ver, cc_ver),
             "FMA pipes per llvm-mca model: " + ", ".join("%s %d" % (SHORT.get(c, c), pipes[c]) for c in cpus) +
             "; cyc = llvm-mca cycles per iteration (function: one call; loop: one key);",
             "%peak = (fmla / FMA pipes) / cyc; sp ld/st = loads/stores to the stack in the region (register spills, and",
             "callee-saved d8-d15); bottleneck = pipe group with the most cycles per pipe (llvm-mca resource pressure)",
             "", fmt(head), fmt(["-" * w for w in widths])]
    lines += [fmt(r) for r in body]
    lines += ["", "compiled: " + cmds[0] + (" (and the same for each model)" if len(cmds) > 1 else ""),
              "static model only (all loads hit L1, no caller context); qemu proves correctness, never speed"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "neon_model.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    md = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if i in num else "---" for i in range(len(head))) + "|"]
    md += ["| " + " | ".join(x.replace("|", "/") for x in r) + " |" for r in body]
    md_path = os.path.join(args.out, "neon_model.md")
    with open(md_path, "w") as f:
        f.write("\n".join(md) + "\n")
    if args.markdown:
        print()
        print("\n".join(md))
    print("neon_model: table %s (Markdown: %s), CSV %s" % (os.path.join(args.out, "neon_model.txt"), md_path, csv_path))


if __name__ == "__main__":
    main()
