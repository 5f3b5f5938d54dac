"""Makes the PTX variants that scripts/pdl-gs.cu times: the one-cell streaming kernels of the
Rust build (`kernels.grayscott_streaming_c1.ptx`, sm_70) retargeted to sm_90 with
`griddepcontrol` at several places. docs/performance.md, "programmatic dependent launch".

    python3 scripts/pdl-gs-patch.py target/release/build/simulations-images/*/out/kernels.grayscott_streaming_c1.ptx DIR
    (on the GPU machine) cd DIR && nvcc -O2 -o /tmp/pdl-gs ../scripts/pdl-gs.cu -lcuda && /tmp/pdl-gs

Writes DIR/orig.ptx (as built), wait.ptx (griddepcontrol.wait as each kernel's first
instruction), trig.ptx (the wait, then griddepcontrol.launch_dependents), late.ptx (the trigger
first, the wait before the first global access) and latenotrig.ptx (that wait alone).
"""
import os
import sys

src_path, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
src = open(src_path).read()
sm90 = src.replace(".version 7.0", ".version 7.8").replace(".target sm_70", ".target sm_90")
WAIT, TRIGGER = "\tgriddepcontrol.wait;", "\tgriddepcontrol.launch_dependents;"


def patched(wait_late, trigger):
    """Each entry gets the wait as its first instruction (then the trigger, if any), or with
    `wait_late` the trigger (if any) at its first block and the wait before its first global
    access."""
    res, state = [], 0
    for line in sm90.split("\n"):
        s = line.strip()
        if s.startswith(".visible .entry"):
            state = 1
        elif state == 1 and not wait_late and s == "{":
            state = 2
        elif state == 1 and wait_late and s.startswith("// %bb.0"):
            res.append(line)
            res += [TRIGGER] if trigger else []
            state = 2
            continue
        elif state == 2 and not wait_late and s and not s.startswith((".reg", ".local", ".shared", "//")):
            res += [WAIT] + ([TRIGGER] if trigger else [])
            state = 0
        elif state == 2 and wait_late and s.startswith(("ld.global", "st.global")):
            res.append(WAIT)
            state = 0
        res.append(line)
    return "\n".join(res)


for name, text in [("orig", src), ("wait", patched(False, False)), ("trig", patched(False, True)),
                   ("late", patched(True, True)), ("latenotrig", patched(True, False))]:
    open(os.path.join(out, name + ".ptx"), "w").write(text)
    print(name, text.count("griddepcontrol.wait"), "waits,", text.count("launch_dependents"), "triggers")
